"""ClientScopedRateThrottle: DRF's sliding log per client, stored compactly."""

from array import array

import pytest
from django.core.cache import cache

from diagnosis.models import ProjectAPIKey
from selfeval_site.api.throttling import ClientScopedRateThrottle
from tests.feedback.helpers import make_session, post_json

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def three_per_minute(monkeypatch):
    monkeypatch.setattr(ClientScopedRateThrottle, "THROTTLE_RATES", {"feedback": "3/min"})
    cache.clear()
    yield
    cache.clear()


def log_key(api_key):
    return ClientScopedRateThrottle.cache_format % {"scope": "feedback", "ident": f"key:{api_key.pk}"}


def vote(client):
    return post_json(client, "/api/feedback", {"sessionId": "s-20261129-0001", "feedback": "useful"})


def test_rate_is_enforced_per_client_and_the_log_is_an_array(api, other_api, project, other_project):
    make_session(project)
    make_session(other_project)

    statuses = [vote(api).status_code for _ in range(4)]

    assert statuses == [200, 200, 200, 429]
    assert vote(other_api).status_code == 200  # another key has its own log
    logs = [cache.get(log_key(key)) for key in ProjectAPIKey.objects.all()]
    assert [len(log) for log in logs] == [3, 1] or [len(log) for log in logs] == [1, 3]
    assert all(isinstance(log, array) for log in logs)


def test_a_list_log_left_by_an_older_process_still_counts(api, project, api_key):
    make_session(project)
    assert vote(api).status_code == 200
    key = log_key(ProjectAPIKey.objects.get(project=project))
    cache.set(key, list(cache.get(key)) * 2)  # two earlier requests, as DRF's list

    assert vote(api).status_code == 200  # third request of the minute
    assert vote(api).status_code == 429

"""Evolution endpoints and projects: verification is stateless per call, but its log is per project.

Neither endpoint addresses a project's object (there is nothing to 404), so isolation means: the
cache is per project (a hit would tell one project what another asked), each call is logged under
the caller's own project, and another project's key cannot change the shared thresholds.
"""

import json

import pytest

from evolution.models import ThresholdChange, VerificationLog
from evolution.selectors import thresholds_get
from tests.evolution.samples import NEW_STUDY_ANSWER, OLD_STUDY_ANSWER, STUDY_QUERY

pytestmark = pytest.mark.django_db

VERIFY = "/api/evolution/verify"
THRESHOLDS = "/api/evolution/thresholds"
BODY = {"query": STUDY_QUERY, "oldResponse": OLD_STUDY_ANSWER, "newResponse": NEW_STUDY_ANSWER, "userFeedback": None}


def verify(client):
    response = client.post(VERIFY, data=json.dumps(BODY), content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


def test_the_cache_is_per_project_and_each_call_is_logged_under_its_project(api, other_api, project, other_project):
    first = verify(api)
    second = verify(other_api)  # the same input from another project: computed again, not A's hit
    again = verify(api)  # A's own repeat: from A's cache

    assert first == second == again
    logs = list(VerificationLog.objects.order_by("id").values_list("project__slug", "cached"))
    assert logs == [(project.slug, False), (other_project.slug, False), (project.slug, True)]


def test_staff_calls_share_no_cache_with_a_project(api, staff_api, project):
    verify(api)
    verify(staff_api)

    assert list(VerificationLog.objects.order_by("id").values_list("cached", flat=True)) == [False, False]


def test_verify_response_names_no_project_log_or_user(api, other_api):
    verify(api)
    body = json.dumps(verify(other_api))

    assert set(json.loads(body)) == {"is_valid", "confidence", "reasons", "suggestions", "metrics"}
    assert "acme-chat" not in body and "log" not in json.loads(body)


def test_another_projects_key_cannot_change_the_thresholds(api, other_api):
    before = thresholds_get().to_dict()
    response = other_api.put(
        THRESHOLDS, data=json.dumps({"thresholds": {"min_length": 5}}), content_type="application/json"
    )

    assert response.status_code == 403
    assert thresholds_get().to_dict() == before
    assert not ThresholdChange.objects.exists()
    assert api.get(THRESHOLDS).json() == other_api.get(THRESHOLDS).json()

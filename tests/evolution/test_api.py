"""POST /api/evolution/verify and GET/PUT /api/evolution/thresholds."""

import json

import pytest
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from core.api.throttling import ClientScopedRateThrottle
from evolution.models import ThresholdChange, VerificationLog, VerificationThresholds
from evolution.selectors import thresholds_get
from evolution.services.types import Thresholds
from tests.evolution.samples import NEW_STUDY_ANSWER, OLD_STUDY_ANSWER, ONE_LINE_ANSWER, STUDY_QUERY
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

VERIFY = "/api/evolution/verify"
THRESHOLDS = "/api/evolution/thresholds"


def body(**overrides):
    payload = {
        "query": STUDY_QUERY,
        "oldResponse": OLD_STUDY_ANSWER,
        "newResponse": NEW_STUDY_ANSWER,
        "userFeedback": None,
    }
    payload.update(overrides)
    return payload


def post(client, payload, **extra):
    return client.post(VERIFY, data=json.dumps(payload), content_type="application/json", **extra)


def put(client, payload):
    return client.put(THRESHOLDS, data=json.dumps(payload), content_type="application/json")


def test_verify_returns_seed_document_004_s_result_shape_and_logs_the_call(api, project, django_assert_num_queries):
    with django_assert_num_queries(3):  # API key, thresholds, log insert
        response = post(api, body())

    assert response.status_code == 200, response.content
    data = response.json()
    assert data.keys() == {"is_valid", "confidence", "reasons", "suggestions", "metrics"}
    assert data["is_valid"] is True and data["confidence"] == 0.8
    assert data["metrics"]["structure"]["meets_threshold"] is True
    log = VerificationLog.objects.get()
    assert (log.source, log.project, log.cached) == ("api", project, False)


def test_verify_with_user_feedback(api):
    response = post(api, body(userFeedback={"satisfaction": 4.5, "comments": "非常有帮助，感谢！"}))

    feedback = response.json()["metrics"]["user_feedback"]
    assert feedback["satisfaction"] == 4.5 and feedback["comments"] == "非常有帮助，感谢！"
    assert response.json()["confidence"] == 1.0


def test_one_line_answer_is_rejected_with_reasons_and_suggestions(api):
    data = post(api, body(newResponse=ONE_LINE_ANSWER)).json()

    assert data["is_valid"] is False
    assert data["reasons"] and data["suggestions"]


def test_language_follows_the_body_then_accept_language(api):
    assert post(api, body(lang="en")).json()["reasons"][0].startswith("basic.new_length: the new answer")
    english = post(api, body(), HTTP_ACCEPT_LANGUAGE="en")
    assert english.json()["reasons"][0].startswith("basic.new_length: the new answer")
    chinese = post(api, body(query="How to focus?"), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert chinese.json()["reasons"][0].startswith("basic.new_length: 新回答")


def test_repeated_verify_is_served_from_cache(api):
    post(api, body())
    post(api, body())

    assert list(VerificationLog.objects.order_by("id").values_list("cached", flat=True)) == [False, True]


def test_staff_session_may_verify(staff_api, superuser):
    response = post(staff_api, body())

    assert response.status_code == 200
    assert VerificationLog.objects.get().requested_by == superuser


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        (body(query=""), "query"),
        (body(query=12), "query"),
        ({"oldResponse": "a", "newResponse": "b"}, "query"),
        (body(oldResponse=None), "oldResponse"),
        (body(newResponse="   \n"), "newResponse"),
        (body(newResponse=["x"]), "newResponse"),
        (body(userFeedback={"satisfaction": 6}), "userFeedback.satisfaction"),
        (body(userFeedback={"satisfaction": "5"}), "userFeedback.satisfaction"),
        (body(userFeedback={"satisfaction": True}), "userFeedback.satisfaction"),
        (body(userFeedback={"comments": "x"}), "userFeedback.satisfaction"),
        (body(userFeedback={"satisfaction": 4, "comments": 3}), "userFeedback.comments"),
        (body(lang="fr"), "lang"),
        (body(compareCompetitors="yes"), "compareCompetitors"),
    ],
)
def test_verify_validation_names_the_field(api, payload, field):
    response = post(api, payload)

    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]
    assert not VerificationLog.objects.exists()


def test_verify_refuses_non_json_body(api):
    response = api.post(VERIFY, data="not json", content_type="application/json")

    assert response.status_code == 400


def test_verify_needs_authentication(anonymous, client_for, outsider):
    assert post(anonymous, body()).status_code == 401
    assert post(client_for("not-a-key"), body()).status_code == 401
    anonymous.force_authenticate(outsider)
    assert post(anonymous, body()).status_code == 403
    assert not VerificationLog.objects.exists()


def test_verify_allows_only_post(api):
    assert api.get(VERIFY).status_code == 405
    assert api.put(VERIFY, data="{}", content_type="application/json").status_code == 405


def test_machine_client_may_read_thresholds(api, django_assert_num_queries):
    with django_assert_num_queries(2):  # API key, row with updater
        response = api.get(THRESHOLDS)

    assert response.status_code == 200
    assert response.json()["thresholds"] == {
        "min_confidence": 0.7,
        "min_improvement_ratio": 1.2,
        "min_length": 500,
        "min_user_satisfaction": 4.0,
        "max_competitor_rank": 2,
        "min_structure_score": 0.6,
    }


def test_a_missing_thresholds_row_reads_as_the_defaults_without_writing_it(api):
    VerificationThresholds.objects.all().delete()

    response = api.get(THRESHOLDS)

    assert response.status_code == 200
    assert response.json() == {"thresholds": Thresholds().to_dict(), "updatedAt": None, "updatedBy": None}
    assert not VerificationThresholds.objects.exists()


def test_staff_with_permission_changes_thresholds(staff_api, superuser):
    response = put(staff_api, {"thresholds": {"min_confidence": 0.8, "min_length": 800}})

    assert response.status_code == 200, response.content
    data = response.json()
    assert data["thresholds"]["min_confidence"] == 0.8 and data["thresholds"]["min_length"] == 800
    assert data["updatedBy"] == "alice"
    change = ThresholdChange.objects.get()
    assert change.changed_by == superuser and change.source == "api"


def test_staff_with_only_the_change_permission_may_write():
    user = UserFactory(username="tuner")
    user.user_permissions.add(Permission.objects.get(codename="change_verificationthresholds"))
    client = APIClient()
    client.force_authenticate(user)

    assert put(client, {"thresholds": {"max_competitor_rank": 3}}).status_code == 200
    assert thresholds_get().max_competitor_rank == 3


def test_thresholds_write_is_forbidden_without_permission(api, anonymous, outsider):
    plain_staff = APIClient()
    plain_staff.force_authenticate(UserFactory(username="bob"))

    assert put(api, {"thresholds": {"min_length": 800}}).status_code == 403  # machine keys read only
    assert put(plain_staff, {"thresholds": {"min_length": 800}}).status_code == 403
    assert put(anonymous, {"thresholds": {"min_length": 800}}).status_code == 401
    assert anonymous.get(THRESHOLDS).status_code == 401
    assert thresholds_get().min_length == 500


@pytest.mark.parametrize(
    ("thresholds", "field"),
    [
        ({"min_confidence": 2}, "thresholds.min_confidence"),
        ({"min_length": "800"}, "thresholds.min_length"),
        ({"min_length": 1.5}, "thresholds.min_length"),
        ({"max_competitor_rank": 0}, "thresholds.max_competitor_rank"),
        ({"min_structure_score": False}, "thresholds.min_structure_score"),
        ({"bogus": 1}, "thresholds.bogus"),
    ],
)
def test_invalid_thresholds_are_400_naming_the_field(staff_api, thresholds, field):
    response = put(staff_api, {"thresholds": thresholds})

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == [field]
    assert not ThresholdChange.objects.exists()


def test_thresholds_body_must_be_an_object(staff_api):
    response = put(staff_api, {"thresholds": [1]})

    assert response.status_code == 400
    assert "thresholds" in response.json()["error"]["fields"]


def test_thresholds_allow_get_and_put_only(staff_api):
    assert staff_api.post(THRESHOLDS, data="{}", content_type="application/json").status_code == 405
    assert staff_api.delete(THRESHOLDS).status_code == 405


def test_verify_is_throttled_per_client_in_the_evolution_scope(api, other_api, monkeypatch):
    monkeypatch.setitem(ClientScopedRateThrottle.THROTTLE_RATES, "evolution", "2/min")

    statuses = [post(api, body(newResponse=f"{NEW_STUDY_ANSWER}{i}")).status_code for i in range(3)]

    assert statuses == [200, 200, 429]
    assert post(other_api, body()).status_code == 200

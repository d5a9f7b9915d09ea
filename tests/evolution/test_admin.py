"""Admin: verification log (list, per-dimension change view) and the thresholds editor."""

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from evolution.models import ThresholdChange, VerificationLog, VerificationThresholds
from evolution.selectors import thresholds_get
from evolution.services.thresholds import thresholds_update
from evolution.services.types import Thresholds
from evolution.services.verification import evolution_verify
from tests.evolution.samples import NEW_STUDY_ANSWER, OLD_STUDY_ANSWER, ONE_LINE_ANSWER, STUDY_QUERY
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

LOG_LIST = reverse("admin:evolution_verificationlog_changelist")
THRESHOLDS_LIST = reverse("admin:evolution_verificationthresholds_changelist")
THRESHOLDS_CHANGE = reverse("admin:evolution_verificationthresholds_change", args=[1])


@pytest.fixture
def admin_client_(superuser) -> Client:
    client = Client()
    client.force_login(superuser)
    return client


def _threshold_form(**values):
    data = {**thresholds_get().to_dict(), **values}
    count = ThresholdChange.objects.count()
    data.update(
        {
            "changes-TOTAL_FORMS": str(count),
            "changes-INITIAL_FORMS": str(count),
            "changes-MIN_NUM_FORMS": "0",
            "changes-MAX_NUM_FORMS": "0",
        }
    )
    for index, change in enumerate(ThresholdChange.objects.order_by("-changed_at", "-id")):
        data[f"changes-{index}-id"] = str(change.pk)
        data[f"changes-{index}-thresholds"] = "1"
    return data


def test_log_list_shows_decision_confidence_and_dimension_metrics(admin_client_, django_assert_max_num_queries):
    evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)
    evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=ONE_LINE_ANSWER)

    with django_assert_max_num_queries(12) as captured:
        response = admin_client_.get(LOG_LIST)

    assert response.status_code == 200
    page = response.content.decode()
    assert "se-evo-yes" in page and "se-evo-no" in page
    assert "0.75" in page  # the structure score column
    first_count = len(captured.captured_queries)
    for _ in range(5):
        evolution_verify(
            query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=ONE_LINE_ANSWER + "!", lang="en"
        )
    with django_assert_max_num_queries(first_count):  # no per-row queries
        assert admin_client_.get(LOG_LIST).status_code == 200


def test_log_list_filters_by_decision(admin_client_):
    evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)
    evolution_verify(query="另一个问题", old_response=OLD_STUDY_ANSWER, new_response=ONE_LINE_ANSWER)

    page = admin_client_.get(LOG_LIST, {"is_valid__exact": "0"}).content.decode()

    assert "另一个问题" in page and STUDY_QUERY not in page


def test_log_change_view_shows_each_dimension_and_escapes_answers(admin_client_):
    result = evolution_verify(
        query="<script>alert(1)</script>", old_response=OLD_STUDY_ANSWER, new_response=ONE_LINE_ANSWER + "<b>x</b>"
    )

    response = admin_client_.get(reverse("admin:evolution_verificationlog_change", args=[result.log_id]))

    page = response.content.decode()
    assert response.status_code == 200
    for label in ("Basic metrics", "Structure", "Content quality", "Competitor comparison", "User feedback"):
        assert label.lower() in page.lower()
    assert "Structure score" in page and "Overall quality" in page
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>x</b>" not in page


def test_log_is_read_only(admin_client_):
    result = evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)

    assert admin_client_.get(reverse("admin:evolution_verificationlog_add")).status_code == 403
    url = reverse("admin:evolution_verificationlog_change", args=[result.log_id])
    admin_client_.post(url, {"is_valid": "", "confidence": "0"})
    assert VerificationLog.objects.get().is_valid


def test_thresholds_list_opens_the_single_editor(admin_client_):
    response = admin_client_.get(THRESHOLDS_LIST)

    assert response.status_code == 302 and response.url == THRESHOLDS_CHANGE
    page = admin_client_.get(THRESHOLDS_CHANGE).content.decode()
    assert "min_confidence" in page and "history of changes" in page.lower()


def test_thresholds_edit_goes_through_the_service_and_is_recorded(admin_client_, superuser):
    thresholds_update(changes={"min_length": 600}, source="api")

    response = admin_client_.post(THRESHOLDS_CHANGE, _threshold_form(min_confidence="0.8"))

    assert response.status_code == 302, response.content.decode()[:2000]
    assert thresholds_get().min_confidence == 0.8
    change = ThresholdChange.objects.first()
    assert (change.source, change.changed_by, change.changes) == (
        "admin",
        superuser,
        {"min_confidence": {"old": 0.7, "new": 0.8}},
    )
    page = admin_client_.get(THRESHOLDS_CHANGE).content.decode()
    assert "alice" in page and "0.7" in page and "0.8" in page


def test_thresholds_editor_refuses_out_of_range_values(admin_client_):
    response = admin_client_.post(THRESHOLDS_CHANGE, _threshold_form(min_confidence="2", min_length="abc"))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors.keys() == {"min_confidence", "min_length"}
    assert thresholds_get().min_confidence == 0.7
    assert not ThresholdChange.objects.exists()


def test_a_missing_thresholds_row_is_edited_as_the_defaults_and_stored_on_save(admin_client_, superuser):
    VerificationThresholds.objects.all().delete()

    page = admin_client_.get(THRESHOLDS_CHANGE)
    assert page.status_code == 200
    assert page.context["adminform"].form.initial["min_length"] == 500
    assert not VerificationThresholds.objects.exists()  # viewing writes nothing

    response = admin_client_.post(THRESHOLDS_CHANGE, _threshold_form(min_length="800"))

    assert response.status_code == 302, response.content.decode()[:2000]
    assert thresholds_get() == Thresholds(min_length=800)
    change = ThresholdChange.objects.get()
    assert (change.changed_by, change.changes) == (superuser, {"min_length": {"old": 500, "new": 800}})


def test_thresholds_cannot_be_added_or_deleted(admin_client_):
    assert admin_client_.get(reverse("admin:evolution_verificationthresholds_add")).status_code == 403
    assert admin_client_.get(reverse("admin:evolution_verificationthresholds_delete", args=[1])).status_code == 403


def test_staff_without_evolution_permissions_is_refused():
    client = Client()
    client.force_login(UserFactory(username="bob"))

    assert client.get(LOG_LIST).status_code == 403
    assert client.get(THRESHOLDS_CHANGE).status_code == 403


def _role_client(group_name: str) -> Client:
    user = UserFactory(username=f"user-{group_name}", is_staff=True)
    user.groups.add(Group.objects.get(name=group_name))
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("group_name", ["Reviewer", "Case approver"])
def test_reviewers_and_approvers_read_the_log_and_thresholds_but_change_nothing(group_name):
    result = evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)
    thresholds_update(changes={"min_length": 600}, source="api")
    client = _role_client(group_name)

    dashboard = client.get(reverse("admin:index")).content.decode()
    assert LOG_LIST in dashboard and THRESHOLDS_LIST in dashboard  # the navigation links them
    assert client.get(LOG_LIST).status_code == 200
    detail = client.get(reverse("admin:evolution_verificationlog_change", args=[result.log_id]))
    assert detail.status_code == 200
    page = client.get(THRESHOLDS_CHANGE)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="min_confidence"' not in html  # shown, not editable
    assert "600" in html  # the history of changes is visible too

    assert client.post(THRESHOLDS_CHANGE, _threshold_form(min_confidence="0.9")).status_code == 403
    assert thresholds_get().min_confidence == 0.7
    assert client.get(reverse("admin:evolution_verificationlog_delete", args=[result.log_id])).status_code == 403


def test_the_roles_get_view_permissions_only_on_evolution():
    for group in Group.objects.filter(name__in=["Reviewer", "Case approver"]):
        codenames = set(
            group.permissions.filter(content_type__app_label="evolution").values_list("codename", flat=True)
        )
        assert codenames == {"view_verificationlog", "view_verificationthresholds", "view_thresholdchange"}


def test_log_detail_shows_the_answers_side_by_side_and_one_compact_dimension_table(admin_client_):
    result = evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)

    response = admin_client_.get(reverse("admin:evolution_verificationlog_change", args=[result.log_id]))

    html = response.content.decode()
    answers = html[html.index('class="se-evo-answers"') :]
    assert answers.index("Old answer") < answers.index("New answer")
    table = html[html.index('class="se-evo-dimensions"') : html.index("</table>", html.index("se-evo-dimensions"))]
    assert "<table" not in table  # no nested key tables
    assert "Length (characters)" in table and "≥ 500" in table
    assert "Structure score" in table and "0.75" in table
    assert "Overall quality" in table and "+8.4" in table
    assert "Confidence" in table and "0.8" in table


def test_log_detail_speaks_chinese(admin_client_):
    result = evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)

    html = admin_client_.get(
        reverse("admin:evolution_verificationlog_change", args=[result.log_id]), HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).content.decode()

    for label in ("维度", "指标", "达标", "结构分", "总体质量", "旧回答", "新回答", "置信度"):
        assert label in html
    assert "Overall quality" not in html and "Old answer" not in html

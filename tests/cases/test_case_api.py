"""GET /api/cases: search by text, category, service and error code, scoped to the caller's project."""

import pytest

from cases.services import case_create_from_session
from tests.factories import aiops_payload, chat_payload
from tests.feedback.helpers import make_session

pytestmark = pytest.mark.django_db

URL = "/api/cases"


@pytest.fixture
def cases(project, other_project):
    db_case = case_create_from_session(session=make_session(project))
    aiops_case = case_create_from_session(session=make_session(project, payload=aiops_payload()))
    other = case_create_from_session(session=make_session(other_project, payload=chat_payload(sessionId="elsewhere")))
    return db_case, aiops_case, other


def ids(response):
    assert response.status_code == 200, response.content
    return {row["caseId"] for row in response.json()["results"]}


def test_list_is_scoped_to_the_keys_project(api, cases):
    db_case, aiops_case, _other = cases

    assert ids(api.get(URL)) == {str(db_case.pk), str(aiops_case.pk)}


def test_staff_sees_every_project(staff_api, cases):
    assert len(ids(staff_api.get(URL))) == 3


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"q": "连接池"}, {0}),
        ({"q": "pool size"}, {1}),
        ({"errorCode": "http 5XX"}, {0}),
        ({"service": "order-service"}, {0, 1}),
        ({"faultCategory": "DATABASE", "q": "alert"}, {1}),
        ({"status": "approved"}, set()),
    ],
)
def test_search_criteria(api, cases, params, expected):
    assert ids(api.get(URL, params)) == {str(cases[i].pk) for i in expected}


def test_case_detail_and_other_projects_case_is_404(api, cases):
    db_case, _aiops, other = cases

    body = api.get(f"{URL}/{db_case.pk}").json()
    assert (body["diagnosisId"], body["sourceType"], body["createdBy"]) == ("s-20261129-0001", "AUTO", "system")
    assert api.get(f"{URL}/{other.pk}").status_code == 404


def test_invalid_category_is_400(api, cases):
    response = api.get(URL, {"faultCategory": "WEATHER"})

    assert response.status_code == 400
    assert "faultCategory" in response.json()["error"]["fields"]


def test_anonymous_is_401_and_post_is_405(anonymous, api):
    assert anonymous.get(URL).status_code == 401
    assert api.post(URL, {}).status_code == 405


def test_search_query_count(api, cases, django_assert_num_queries):
    with django_assert_num_queries(2):  # API key, one page of cases with project and reviewer joined
        api.get(URL, {"q": "order"})


def test_search_never_finds_another_projects_case(api, cases):
    _db, _aiops, other = cases

    assert str(other.pk) not in ids(api.get(URL, {"q": other.title}))
    # The case search reads no project parameter: naming one is refused, never a way into another project.
    assert api.get(URL, {"project": "acme-aiops"}).json()["error"]["fields"].keys() == {"project"}


def test_malformed_case_id_is_404(api, cases):
    assert api.get(f"{URL}/not-a-uuid").status_code == 404


def test_case_detail_allows_only_get(api, cases):
    db_case, _aiops, _other = cases
    for method in ("put", "patch", "delete"):
        assert getattr(api, method)(f"{URL}/{db_case.pk}", {}).status_code == 405, method


def test_case_detail_query_count(api, cases, django_assert_num_queries):
    db_case, _aiops, _other = cases
    with django_assert_num_queries(2):  # API key, the case with project and reviewer joined
        assert api.get(f"{URL}/{db_case.pk}").status_code == 200

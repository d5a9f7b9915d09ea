"""The trace of a big session is bounded: invocations come a page at a time, long tool outputs and
ref contents as previews, each with a link that fetches the rest."""

import json

import pytest

from diagnosis.models import ToolInvocation
from tests.factories import chat_payload, with_invocations
from tests.feedback.helpers import make_session

pytestmark = pytest.mark.django_db

URL = "/api/trace/s-20261129-0001"


@pytest.fixture
def small_pages(settings):
    settings.SELFEVAL_TRACE_INVOCATIONS = 5
    settings.SELFEVAL_TRACE_PREVIEW_CHARS = 40


def _big_session(project, count: int = 12):
    payload = with_invocations(chat_payload(), count)
    payload["toolInvocations"][3]["status"] = "FAILED"
    payload["toolInvocations"][3]["error"] = "timeout"
    payload["toolInvocations"][-1]["status"] = "FAILED"
    return make_session(project, payload=payload)


def test_invocations_come_a_page_at_a_time_with_links(api, project, small_pages):
    _big_session(project)

    first = api.get(URL).json()
    second = api.get(first["toolInvocationsPage"]["next"]).json()
    last = api.get(second["toolInvocationsPage"]["next"]).json()

    assert [inv["invocationId"] for inv in first["toolInvocations"]] == [f"inv-{n}" for n in range(1, 6)]
    assert first["toolInvocationsPage"] == {
        "offset": 0,
        "limit": 5,
        "total": 12,
        "next": "http://testserver/api/trace/s-20261129-0001?invocationOffset=5",
        "previous": None,
    }
    assert [inv["invocationId"] for inv in second["toolInvocations"]] == [f"inv-{n}" for n in range(6, 11)]
    assert [inv["invocationId"] for inv in last["toolInvocations"]] == ["inv-11", "inv-12"]
    assert last["toolInvocationsPage"]["next"] is None
    assert last["toolInvocationsPage"]["previous"] == "http://testserver/api/trace/s-20261129-0001?invocationOffset=5"
    # The execution view counts every invocation, not the page.
    for body in (first, last):
        assert body["views"]["execution"]["invocationCount"] == 12
        assert body["views"]["execution"]["failedInvocationCount"] == 2


def test_the_client_chooses_the_page_size_up_to_the_maximum(api, project, small_pages):
    _big_session(project)

    body = api.get(URL, {"invocationLimit": 12}).json()

    assert len(body["toolInvocations"]) == 12 and body["toolInvocationsPage"]["next"] is None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"invocationOffset": -1}, "invocationOffset"),
        ({"invocationOffset": "x"}, "invocationOffset"),
        ({"invocationOffset": 2**31}, "invocationOffset"),
        ({"invocationLimit": 0}, "invocationLimit"),
        ({"invocationLimit": 201}, "invocationLimit"),
        ({"invocationLimit": ""}, "invocationLimit"),
        ({"invocationOffset": ""}, "invocationOffset"),
    ],
)
def test_malformed_paging_parameters_are_a_400(api, project, params, field):
    make_session(project)

    response = api.get(URL, params)

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == [field]


def test_a_long_output_is_previewed_with_a_link_to_the_whole(api, project, small_pages):
    payload = chat_payload()
    long_output = {"rows": [{"service": "order-service", "value": n} for n in range(50)]}
    payload["toolInvocations"][0]["output"] = long_output
    make_session(project, payload=payload)

    invocation = api.get(URL).json()["toolInvocations"][0]

    # The preview is of the output as stored (PostgreSQL's jsonb orders the keys its own way).
    text = json.dumps(ToolInvocation.objects.get().output, ensure_ascii=False)
    assert invocation["output"] == text[:40]
    assert (invocation["outputTruncated"], invocation["outputChars"]) == (True, len(text))
    whole = api.get(invocation["outputUrl"])
    assert whole.status_code == 200
    assert whole.json() == {"invocationId": "inv-1", "output": long_output}


def test_a_short_output_is_shown_as_is(api, project, small_pages):
    make_session(project)

    invocation = api.get(URL).json()["toolInvocations"][0]

    assert (invocation["output"], invocation["outputTruncated"], invocation["outputChars"]) == ("1 chunk", False, 7)
    assert invocation["outputUrl"].endswith("/api/trace/s-20261129-0001/invocations/0/output")


def test_a_long_ref_content_is_previewed_with_a_link_to_the_whole(api, project, small_pages):
    payload = chat_payload()
    content = "当 order-service 的数据库连接池耗尽时，请求排队超时并返回 5xx。" * 5
    payload["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]["content"] = content
    make_session(project, payload=payload)

    ref = api.get(URL).json()["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]

    assert ref["content"] == content[:40]
    assert (ref["contentTruncated"], ref["contentChars"]) == (True, len(content))
    whole = api.get(ref["contentUrl"]).json()
    assert whole["content"] == content and whole["refId"] == "inv-1#1"
    assert whole["contentSha256"] == ref["contentSha256"]


def test_the_whole_output_and_ref_stay_in_the_callers_project(api, other_api, project):
    make_session(project)
    base = URL + "/invocations/0"

    assert other_api.get(base + "/output").status_code == 404
    assert other_api.get(base + "/refs/0").status_code == 404
    assert api.get(URL + "/invocations/7/output").status_code == 404
    assert api.get(base + "/refs/3").status_code == 404
    assert api.get(base + "/output").status_code == 200


def test_links_keep_the_staff_callers_project(staff_api, project, other_project, small_pages):
    make_session(project)
    make_session(other_project)

    invocation = staff_api.get(URL, {"project": "acme-aiops"}).json()["toolInvocations"][0]

    assert invocation["outputUrl"].endswith("/invocations/0/output?project=acme-aiops")
    assert staff_api.get(invocation["outputUrl"]).status_code == 200


def test_the_trace_of_a_thousand_invocations_is_a_bounded_answer(api, project, settings):
    settings.SELFEVAL_TRACE_INVOCATIONS = 50
    payload = with_invocations(chat_payload(), 1000)
    for inv in payload["toolInvocations"]:
        inv["output"] = "x" * 3000
        inv["retrievalDetails"]["evidenceRefs"][0]["content"] = "连接池耗尽 " * 300
    make_session(project, payload=payload)

    response = api.get(URL)

    assert response.status_code == 200
    assert len(response.content) < 400_000  # 50 previews of 2,000 characters each, not 1,000 x 6,300
    assert response.json()["toolInvocationsPage"]["total"] == 1000

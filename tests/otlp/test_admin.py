"""Buffered traces in the admin: reviewers see partial and expired traces, the spans waiting, and the
traces some of whose spans were refused (the dashboard counts them)."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, Permission
from django.urls import reverse
from django.utils import timezone

from otlp.config import ReceiverConfig
from otlp.models import BufferedTrace, TraceState
from otlp.selectors import Refusals
from otlp.services.sweep import otlp_sweep
from tests.admin.conftest import logged_in
from tests.factories import UserFactory
from tests.otlp.conftest import answer, export
from tests.otlp.sdk import Recorder, openinference_agent, protobuf_body, request_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewer_client(db):
    reviewer = UserFactory(username="bob", is_staff=True)
    reviewer.groups.add(Group.objects.get(name="Reviewer"))  # granted by otlp's migration 0002
    return logged_in(reviewer)


@pytest.fixture
def traces(api):
    """One ingested trace, one ingested by the sweep without its root (partial), one buffering."""
    recorder = Recorder()
    for number in range(3):
        openinference_agent(recorder.tracer, session_id=f"s-admin-{number}")
    spans = recorder.take()
    roots = [span for span in spans if span.parent is None]
    export(api, protobuf_body([s for s in spans if s is not roots[1] and s is not roots[2]]))
    otlp_sweep(config=ReceiverConfig.from_settings(), now=timezone.now() + timedelta(minutes=31))
    # A third trace's children arrive after the sweep: still buffering.
    recorder_late = Recorder()
    openinference_agent(recorder_late.tracer, session_id="s-admin-late")
    export(api, protobuf_body([s for s in recorder_late.take() if s.parent is not None]))
    return {trace.state: trace for trace in BufferedTrace.objects.all()}


def test_reviewer_finds_partial_traces_and_their_sessions(reviewer_client, traces, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        response = reviewer_client.get("/admin/otlp/bufferedtrace/", {"state": "PARTIAL"})

    assert response.status_code == 200
    page = response.content.decode()
    partial = list(BufferedTrace.objects.filter(state=TraceState.PARTIAL))
    assert len(partial) == 2
    for trace in partial:
        assert trace.trace_id in page
        assert f"/admin/diagnosis/diagnosissession/{trace.session.pk}/change/" in page
    assert "Partial: no root span" in page
    assert traces[TraceState.INGESTED].trace_id not in page


def test_trace_page_lists_the_buffered_spans(reviewer_client, traces):
    trace = traces[TraceState.BUFFERING]

    response = reviewer_client.get(f"/admin/otlp/bufferedtrace/{trace.pk}/change/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "lookup_knowledge" in page and "vector_search" in page and "RETRIEVER" in page
    assert ">Buffering<" in page


def test_staff_without_the_permission_see_no_trace(traces):
    client = logged_in(UserFactory(username="erin", is_staff=True))

    assert client.get("/admin/otlp/bufferedtrace/").status_code == 403


# --- refused spans: counted on their trace, listed with the reason, a figure on the dashboard -------


@pytest.fixture
def partly_refused(api):
    """A trace ingested whole but for one span over the attribute limit, and a trace kept whole."""
    recorder = Recorder()
    openinference_agent(recorder.tracer, session_id="s-refused")
    spans = recorder.take()
    message = request_of(spans)
    plan = next(span for span in message.resource_spans[0].scope_spans[0].spans if span.name == "plan")
    plan.end_time_unix_nano = plan.start_time_unix_nano - 1
    assert answer(export(api, message.SerializeToString())).partial_success.rejected_spans == 1
    openinference_agent(recorder.tracer, session_id="s-whole")
    assert not answer(export(api, protobuf_body(recorder.take()))).HasField("partial_success")
    return BufferedTrace.objects.get(ingested_as="s-refused")


def test_the_refused_filter_lists_partly_refused_traces_with_their_reason(reviewer_client, partly_refused):
    response = reviewer_client.get("/admin/otlp/bufferedtrace/", {"refused": "yes"})

    assert response.status_code == 200
    assert [trace.ingested_as for trace in response.context["cl"].result_list] == ["s-refused"]
    page = response.content.decode()
    assert "ends before it starts" in page and "Some spans refused" in page
    none_refused = reviewer_client.get("/admin/otlp/bufferedtrace/", {"refused": "no"}).context["cl"].result_list
    assert [trace.ingested_as for trace in none_refused] == ["s-whole"]

    detail = reviewer_client.get(f"/admin/otlp/bufferedtrace/{partly_refused.pk}/change/").content.decode()
    assert "Last refusal" in detail and "ends before it starts" in detail


def test_the_dashboard_counts_refused_spans_and_links_to_their_traces(reviewer_client, partly_refused):
    response = reviewer_client.get(reverse("admin:index"))

    assert response.context["refusals"] == Refusals(traces=1, spans=1)
    assert "spans refused over OTLP (1 trace)" in response.content.decode()
    listed = reviewer_client.get(response.context["links"]["refused_traces"])
    assert [trace.ingested_as for trace in listed.context["cl"].result_list] == ["s-refused"]

    yesterday = (timezone.localdate() - timedelta(days=1)).isoformat()
    earlier = reviewer_client.get(reverse("admin:index"), {"start": yesterday, "end": yesterday})
    assert earlier.context["refusals"] == Refusals(traces=0, spans=0)

    chinese = reviewer_client.get(reverse("admin:index"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "经 OTLP 被拒收的 span（1 条 trace）" in chinese


def test_the_refusal_figure_is_left_out_for_staff_who_may_not_see_traces(partly_refused):
    analyst = UserFactory(username="frank", is_staff=True)
    analyst.user_permissions.add(Permission.objects.get(codename="view_diagnosissession"))

    response = logged_in(analyst).get(reverse("admin:index"))

    assert response.status_code == 200
    assert response.context["refusals"] is None
    assert "spans refused over OTLP" not in response.content.decode()

"""Buffered traces in the admin: reviewers see partial and expired traces and the spans waiting."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from otlp.config import ReceiverConfig
from otlp.models import BufferedTrace, TraceState
from otlp.services.sweep import otlp_sweep
from tests.admin.conftest import logged_in
from tests.factories import UserFactory
from tests.otlp.conftest import export
from tests.otlp.sdk import Recorder, openinference_agent, protobuf_body

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

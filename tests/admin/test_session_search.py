"""The session list: a query column, and a text search on query and answer bounded by the date range."""

import pytest
from django.db import connection
from django.urls import reverse

from diagnosis.models import DiagnosisSession
from diagnosis.selectors import (
    SEARCH_DEFAULT_DAYS,
    SEARCH_MAX_DAYS,
    SEARCH_SHORT_MAX_DAYS,
    session_text_matches,
    session_text_search,
)
from tests import clock
from tests.factories import evaluated_session

pytestmark = pytest.mark.django_db

LIST = "admin:diagnosis_diagnosissession_changelist"


def _listed(client, **params) -> list[str]:
    response = client.get(reverse(LIST), params)
    assert response.status_code == 200
    return [s.session_id for s in response.context["cl"].result_list]


@pytest.fixture
def texts(project):
    evaluated_session(project, "s-cert", query="支付网关证书过期了吗？")
    evaluated_session(project, "s-pool", query="订单服务 5xx 突增，原因是什么？")
    evaluated_session(project, "s-en", query="Why did checkout time out?", answer="The Redis Connection pool was full.")
    evaluated_session(
        project, "s-cert-old", query="证书吊销怎么处理？", created_at=clock.ago(days=SEARCH_DEFAULT_DAYS + 5)
    )


def test_chinese_text_in_the_query_is_found(reviewer_client, texts):
    assert _listed(reviewer_client, q="证书") == ["s-cert"]  # two characters: no trigram, a bounded scan
    assert _listed(reviewer_client, q="证书过期") == ["s-cert"]


def test_the_answer_is_searched_case_insensitively(reviewer_client, texts):
    assert _listed(reviewer_client, q="redis connection") == ["s-en"]
    assert _listed(reviewer_client, q="CHECKOUT") == ["s-en"]


def test_search_is_bounded_by_the_lists_date_range(reviewer_client, texts):
    old = clock.ago(days=SEARCH_DEFAULT_DAYS + 10)
    # No range chosen: the last SEARCH_DEFAULT_DAYS days only.
    assert "s-cert-old" not in _listed(reviewer_client, q="证书")
    # The range the dashboard's links and the date filter send.
    wide = _listed(reviewer_client, q="证书", created_at__gte=old.isoformat(sep=" "))
    assert wide == ["s-cert", "s-cert-old"]
    only_old = _listed(
        reviewer_client,
        q="证书",
        created_at__gte=old.isoformat(sep=" "),
        created_at__lt=clock.ago(days=SEARCH_DEFAULT_DAYS).isoformat(sep=" "),
    )
    assert only_old == ["s-cert-old"]


@pytest.mark.parametrize(("term", "longest"), [("证书过期", SEARCH_MAX_DAYS), ("证书", SEARCH_SHORT_MAX_DAYS)])
def test_a_long_range_is_cut(project, term, longest):
    """A year at most; a month for a term too short for the trigram index (it scans the range)."""
    evaluated_session(project, "s-inside", query="证书过期", created_at=clock.ago(days=longest - 2))
    evaluated_session(project, "s-outside", query="证书过期", created_at=clock.ago(days=longest + 2))

    found = session_text_search(
        sessions=DiagnosisSession.objects.all(),
        term=term,
        since=clock.ago(days=longest + 40),
        until=None,
        now=clock.ago(seconds=0),
    )

    assert [s.session_id for s in found] == ["s-inside"]


def test_an_exact_session_id_or_alert_service_wins_over_text(reviewer_client, texts, project):
    evaluated_session(project, "s-mentions", query="what happened to s-pool yesterday?")
    assert _listed(reviewer_client, q="s-pool") == ["s-pool"]
    assert _listed(reviewer_client, q="happened to s-pool") == ["s-mentions"]


def test_search_terms_are_literal(reviewer_client, texts):
    assert _listed(reviewer_client, q="%") == []
    assert _listed(reviewer_client, q="_") == []


def test_the_list_shows_a_truncated_query_column(reviewer_client, project):
    long_query = "数据库连接池耗尽的原因" * 50
    evaluated_session(project, "s-long", query=long_query)

    html = reviewer_client.get(reverse(LIST)).content.decode()

    assert 'class="se-query"' in html
    assert long_query not in html  # neither the cell nor its title holds the whole text
    assert long_query[:80] in html


def test_search_page_query_count(reviewer_client, texts, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        response = reviewer_client.get(reverse(LIST), {"q": "证书"})
    assert response.status_code == 200


@pytest.mark.postgres
def test_postgres_answers_a_long_term_from_the_trigram_indexes(texts):
    found = DiagnosisSession.objects.filter(session_text_matches("证书过期")).order_by()
    with connection.cursor() as cursor:
        # A table of four rows would be read whole otherwise.
        cursor.execute("SET enable_seqscan = off; SET enable_indexscan = off")
        try:
            plan = found.explain()
        finally:
            cursor.execute("RESET enable_seqscan; RESET enable_indexscan")
    assert "session_query_trgm" in plan and "session_answer_trgm" in plan

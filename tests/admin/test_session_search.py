"""The session list: a query column, and a text search on query and answer over the date range the
sidebar shows (every date when none is chosen), each term answered from an index on PostgreSQL."""

import pytest
from django.db import connection
from django.urls import reverse

from diagnosis.models import DiagnosisSession
from diagnosis.selectors import (
    SEARCH_UNINDEXED_DAYS,
    SearchGrams,
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
    evaluated_session(project, "s-cert-old", query="证书吊销怎么处理？", created_at=clock.ago(days=400))


def test_chinese_text_in_the_query_is_found(reviewer_client, texts):
    assert _listed(reviewer_client, q="证书") == ["s-cert", "s-cert-old"]  # two characters: the gram index
    assert _listed(reviewer_client, q="证书过期") == ["s-cert"]  # the trigram indexes


def test_the_answer_is_searched_case_insensitively(reviewer_client, texts):
    assert _listed(reviewer_client, q="redis connection") == ["s-en"]
    assert _listed(reviewer_client, q="CHECKOUT") == ["s-en"]


def test_search_honours_the_date_range_the_sidebar_shows(reviewer_client, texts):
    # No range chosen ("Any date"): every date, the short term and the long one alike.
    assert _listed(reviewer_client, q="证书") == ["s-cert", "s-cert-old"]
    assert _listed(reviewer_client, q="证书吊销") == ["s-cert-old"]
    # The sidebar's own choices and the range the dashboard's links send.
    week = _listed(reviewer_client, q="证书", created_at__gte=clock.ago(days=7).isoformat(sep=" "))
    assert week == ["s-cert"]
    only_old = _listed(
        reviewer_client,
        q="证书",
        created_at__gte=clock.ago(days=500).isoformat(sep=" "),
        created_at__lt=clock.ago(days=300).isoformat(sep=" "),
    )
    assert only_old == ["s-cert-old"]


def test_a_term_no_index_holds_is_searched_in_the_last_month_and_the_page_says_so(reviewer_client, project):
    evaluated_session(project, "s-pct-new", query="磁盘 95% 满了", created_at=clock.ago(days=SEARCH_UNINDEXED_DAYS - 2))
    evaluated_session(project, "s-pct-old", query="磁盘 95% 满了", created_at=clock.ago(days=SEARCH_UNINDEXED_DAYS + 2))

    response = reviewer_client.get(reverse(LIST), {"q": "5%"})

    assert [s.session_id for s in response.context["cl"].result_list] == ["s-pct-new"]
    assert any("too short to search every date" in str(m) for m in response.context["messages"])
    assert _listed(reviewer_client, q="95%") == ["s-pct-new", "s-pct-old"]  # three characters: every date


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


def _plan(queryset) -> str:
    with connection.cursor() as cursor:
        # A table of a few rows would be read whole otherwise.
        cursor.execute("SET enable_seqscan = off; SET enable_indexscan = off")
        try:
            return queryset.explain()
        finally:
            cursor.execute("RESET enable_seqscan; RESET enable_indexscan")


@pytest.mark.postgres
def test_postgres_answers_a_long_term_from_the_trigram_indexes(texts):
    plan = _plan(DiagnosisSession.objects.filter(session_text_matches("证书过期")).order_by())
    assert "session_query_trgm" in plan and "session_answer_trgm" in plan


@pytest.mark.postgres
@pytest.mark.parametrize("term", ["证书", "慢", "db", "5x"])
def test_postgres_answers_a_short_term_from_the_gram_index_over_every_date(texts, term):
    found = session_text_search(
        sessions=DiagnosisSession.objects.order_by(), term=term, since=None, until=None, now=clock.ago(seconds=0)
    )
    plan = _plan(found)
    assert "session_search_grams" in plan and "created_at" not in plan  # no window of days


@pytest.mark.postgres
def test_the_gram_function_holds_each_character_and_pair_of_a_run(project):
    evaluated_session(project, "s-grams", query="证书过期? db-1", answer="Slow 慢")
    grams = DiagnosisSession.objects.annotate(grams=SearchGrams()).values_list("grams", flat=True).get()
    assert set(grams) == {*"证书过期", "证书", "书过", "过期", "D", "B", "DB", "1", *"SLOW", "SL", "LO", "OW", "慢"}


@pytest.mark.postgres
def test_a_text_too_long_for_the_grams_is_still_found(project):
    answer = "x" * 100_000 + " 证书过期"  # its grams stop before the term
    evaluated_session(project, "s-long-text", query="q", answer=answer)
    grams = DiagnosisSession.objects.annotate(grams=SearchGrams()).values_list("grams", flat=True).get()
    assert "*" in grams and "证书" not in grams
    found = session_text_search(
        sessions=DiagnosisSession.objects.all(), term="证书", since=None, until=None, now=clock.ago(seconds=0)
    )
    assert [s.session_id for s in found] == ["s-long-text"]


@pytest.mark.postgres
def test_a_term_in_most_sessions_is_found_walking_the_newest_not_its_posting_list(project):
    for i in range(40):
        evaluated_session(project, f"s-common-{i}", query=f"建议扩大连接池 #{i}" if i else "证书过期了吗")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE diagnosis_diagnosissession")

    def search(term):
        return session_text_search(
            sessions=DiagnosisSession.objects.all(), term=term, since=None, until=None, now=clock.ago(seconds=0)
        )

    common, rare = search("扩大"), search("证书")
    assert "selfeval_search_grams" not in str(common.query) and common.count() == 39
    assert "selfeval_search_grams" in str(rare.query) and rare.count() == 1

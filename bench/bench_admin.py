"""Admin speed with a million sessions: dashboard, filtered session list, triage queue, inspector.

Fills a throwaway PostgreSQL database with BENCH_ADMIN_SESSIONS sessions (default 1,000,000) spread
over a year, two tool invocations, one evidence ref and one step each, plus feedback events, cases
and bad cases in realistic proportions, with fast set-based SQL (generate_series; `seed_demo
--bulk-only` generates payloads in Python, about 700 sessions/s here, which would take ~25 minutes).
Then times the server side of each page in process with Django's test Client as a logged-in
superuser: p50 / p95 over BENCH_ADMIN_REPEAT requests (default 30) after 3 warm-ups. Target: < 300 ms
p95 for every page, the dashboard's 30, 90 and 365-day ranges included; the exit status is 1 when a
page misses it. The database is dropped afterwards.
"""

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg  # noqa: E402

from bench.common import django_env, manage, percentile, print_header, throwaway_database  # noqa: E402

SESSIONS = int(os.environ.get("BENCH_ADMIN_SESSIONS", "1000000"))
REPEAT = int(os.environ.get("BENCH_ADMIN_REPEAT", "30"))
TARGET_MS = 300.0

FILL_SQL = [
    # Projects.
    """INSERT INTO diagnosis_project (slug, name, created_at)
       VALUES ('bench-chat', 'Bench chat agent', now()), ('bench-aiops', 'Bench AIOps agent', now())""",
    # Sessions: one row per g, draws in a subquery, the layered JSON built from the draws.
    """
    INSERT INTO diagnosis_diagnosissession (
        project_id, session_id, mode, language, query, answer, status, alert, alert_name, alert_service,
        active_alerts, executor_output, created_at, finished_at, ingested_at, updated_at, evidence_fingerprint,
        feedback, self_evaluation, evidence_score, verifier_verdict, groundedness_score, aiops_verdict,
        failure_attribution, evaluation_state, evaluation_attempts, evaluation_error, evaluation_requested_at,
        evaluated_at, reviewed_at, review_judgement)
    SELECT
        (SELECT id FROM diagnosis_project WHERE slug = CASE WHEN d.aiops THEN 'bench-aiops' ELSE 'bench-chat' END),
        'bench-' || lpad(d.g::text, 8, '0'),
        CASE WHEN d.aiops THEN 'aiops' ELSE 'chat' END,
        CASE WHEN d.r_lang < 0.7 THEN 'zh' ELSE 'en' END,
        -- One session in a thousand asks about a certificate: a short term's rare hits over a year.
        CASE WHEN mod(d.g, 1000) = 0 THEN '支付网关证书过期了吗？ #' ELSE '订单服务 5xx 突增，原因是什么？ #' END || d.g,
        'order-service 的数据库连接池耗尽，导致 5xx 突增。建议扩大连接池。',
        CASE WHEN d.r_state < 0.02 THEN 'FAILED' ELSE 'SUCCEEDED' END,
        CASE WHEN d.aiops THEN '{"name": "HighErrorRate", "service": "order-service"}'::jsonb END,
        CASE WHEN d.aiops THEN 'HighErrorRate' ELSE '' END,
        CASE WHEN d.aiops THEN 'svc-' || (d.g % 40) ELSE '' END,
        '[]'::jsonb, NULL,
        d.created, d.created + interval '9 seconds', d.created, d.created, '',
        d.feedback,
        jsonb_build_object(
            'rule_evaluation', jsonb_build_object('evidence_score', d.score, 'source', 'rule',
                'factors', jsonb_build_array(jsonb_build_object('rule', 'has_successful_tool_call', 'delta', 30))),
            'verifier_evaluation', jsonb_build_object('verdict', d.verdict, 'groundedness_score', d.grounded, 'round', 1)
        ) || CASE WHEN d.aiops THEN jsonb_build_object('aiops_rule_evaluation', jsonb_build_object(
            'verdict', d.aiops_verdict,
            'checks', jsonb_build_array(
                jsonb_build_object('check', 'final_report_present', 'passed', true, 'reason', 'the final report is present',
                                   'reason_code', 'aiops.report_present', 'reason_params', '{}'::jsonb),
                jsonb_build_object('check', 'evidence_tools_succeeded', 'passed', d.aiops_verdict = 'PASS', 'reason', ''),
                jsonb_build_object('check', 'unrelated_alerts_not_main_object', 'passed', d.aiops_verdict <> 'FAIL',
                                   'reason', '')))) ELSE '{}'::jsonb END,
        d.score, d.verdict, d.grounded,
        CASE WHEN d.aiops THEN d.aiops_verdict ELSE '' END,
        CASE WHEN d.verdict = 'REJECT' THEN 'CITATION_FAILURE' ELSE 'NONE' END,
        CASE WHEN d.r_state < 0.01 THEN 'FAILED' WHEN d.r_state < 0.03 THEN 'PARTIAL' ELSE 'DONE' END,
        1, '', d.created, d.created + interval '20 seconds',
        CASE WHEN d.reviewed THEN d.created + interval '1 day' END,
        CASE WHEN d.reviewed THEN (ARRAY['correct', 'partly_correct', 'wrong'])[1 + (d.g % 3)] ELSE '' END
    FROM (
        SELECT g,
               random() < 0.4 AS aiops,
               random() AS r_lang,
               random() AS r_state,
               now() - (g::float8 / %(n)s) * interval '365 days' - random() * interval '1 hour' AS created,
               (ARRAY['PASS', 'PASS', 'PASS', 'PASS', 'PASS', 'LOW_CONFID', 'LOW_CONFID', 'REJECT', 'REJECT', ''])[1 + floor(random() * 10)::int] AS verdict,
               (ARRAY['PASS', 'PASS', 'PASS', 'WARN', 'FAIL'])[1 + floor(random() * 5)::int] AS aiops_verdict,
               (ARRAY['useful', 'useful', 'useful', 'not_useful', 'not_useful', '', '', '', '', '', '', '', '', '', '', '', '', '', '', ''])[1 + floor(random() * 20)::int] AS feedback,
               (floor(random() * 11) * 10)::smallint AS score,
               round(random()::numeric, 2)::float8 AS grounded,
               -- Reviewers keep up with all but the last six weeks.
               (g::float8 / %(n)s > 0.12 AND random() < 0.9) OR random() < 0.05 AS reviewed
        FROM generate_series(1, %(n)s) AS g
    ) d
    """,
    # The AIOps check rows the evaluation writes with the layer.
    """INSERT INTO diagnosis_aiopscheck (session_id, name, passed, severity, applicable, reason, reason_code,
                                        reason_params)
       SELECT s.id, c->>'check', (c->>'passed')::boolean, 'critical', true, c->>'reason',
              coalesce(c->>'reason_code', ''), coalesce(c->'reason_params', '{}'::jsonb)
       FROM diagnosis_diagnosissession s,
            jsonb_array_elements(s.self_evaluation->'aiops_rule_evaluation'->'checks') AS c""",
    """INSERT INTO diagnosis_diagnosisstep (session_id, index, name, status, detail)
       SELECT id, 0, 'retrieve', 'SUCCEEDED', '{}'::jsonb FROM diagnosis_diagnosissession""",
    """INSERT INTO diagnosis_toolinvocation (session_id, position, invocation_id, step_index, tool_name, status,
                                             arguments, output, error, latency_ms, match_level)
       SELECT s.id, p, 'inv-' || p, 0, CASE WHEN p = 0 THEN 'lookup_knowledge' ELSE 'query_logs' END,
              CASE WHEN random() < 0.05 THEN 'FAILED' ELSE 'SUCCESS' END, '{}'::jsonb, '"ok"'::jsonb, '',
              (random() * 800)::int, CASE WHEN p = 0 THEN 'L0' ELSE '' END
       FROM diagnosis_diagnosissession s CROSS JOIN generate_series(0, 1) AS p""",
    """INSERT INTO diagnosis_evidenceref (session_id, invocation_id, position, ref_id, source, content, content_sha256)
       SELECT i.session_id, i.id, 0, 'inv-0#1', 'kb://runbooks/order-5xx.md',
              '当 order-service 的数据库连接池耗尽时，请求排队超时并返回 5xx。', md5(i.id::text) || md5(i.id::text)
       FROM diagnosis_toolinvocation i WHERE i.position = 0""",
    """INSERT INTO feedback_feedbackevent (session_id, value, comment, reviewer, client, end_user_id, created_at)
       SELECT id, feedback, '', '', 'api_key', '', created_at + interval '1 minute'
       FROM diagnosis_diagnosissession WHERE feedback <> ''""",
    """INSERT INTO cases_case (id, project_id, session_id, diagnosis_id, source_type, fault_category, title, query,
                               root_cause, solution, error_code, service, created_by, status, review_note,
                               created_at, updated_at)
       SELECT gen_random_uuid(), project_id, id, session_id, 'AUTO',
              (ARRAY['DATABASE', 'NETWORK', 'TIMEOUT', 'GENERAL'])[1 + (id % 4)::int], left(query, 100), query,
              answer, answer, 'E' || (id % 50), 'svc-' || (id % 40), 'system',
              CASE WHEN created_at > now() - interval '30 days' THEN 'pending'
                   WHEN id % 4 = 0 THEN 'rejected' ELSE 'approved' END, '',
              created_at + interval '1 minute', created_at + interval '1 minute'
       FROM diagnosis_diagnosissession WHERE feedback = 'useful'""",
    """INSERT INTO cases_badcase (session_id, project_id, source, status, category, notes, verifier_verdict,
                                  feedback_count, created_at, updated_at)
       SELECT id, project_id, 'feedback',
              CASE WHEN created_at > now() - interval '30 days' THEN 'open'
                   WHEN id % 3 = 0 THEN 'wont_fix' ELSE 'fixed' END,
              '', '', verifier_verdict, 1, created_at + interval '1 minute', created_at + interval '1 minute'
       FROM diagnosis_diagnosissession WHERE feedback = 'not_useful'""",
]


def fill(database: str, sessions: int) -> None:
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("SELECT setseed(0.42)")
        for statement in FILL_SQL:
            started = time.perf_counter()
            cursor = conn.execute(statement.replace("%(n)s", str(sessions)))
            table = statement.split("INTO", 1)[1].split()[0]
            print(f"   {table:<32} {cursor.rowcount:>9} rows in {time.perf_counter() - started:5.1f}s", flush=True)
        conn.execute("VACUUM ANALYZE")


def measure() -> list[tuple[str, float, float, float]]:
    """Set up Django against the filled database (environment already set) and time each page."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.test import Client

    from diagnosis.models import DiagnosisSession, Project
    from tests import clock
    from tests.factories import evaluated_session  # ingested and evaluated by the real services

    clock.configure(at=None, ahead_days=0)  # the factories date sessions relative to it

    user = get_user_model().objects.create_superuser("bench-admin", "bench@example.com", "bench-password-123")
    project = Project.objects.get(slug="bench-chat")
    inspected = evaluated_session(project, "bench-inspected", verdict="REJECT", feedback="not_useful")
    middle = (
        DiagnosisSession.objects.filter(session_id=f"bench-{SESSIONS // 2:08d}").values_list("pk", flat=True).first()
    )
    # A session in the middle of the not-useful part of the triage queue (oldest first).
    waiting = DiagnosisSession.objects.filter(needs_review=True, feedback="not_useful").order_by("created_at", "id")
    queued = waiting.values_list("pk", flat=True)[waiting.count() // 2]
    rejected = (
        DiagnosisSession.objects.filter(verifier_verdict="REJECT", session_id__gte=f"bench-{SESSIONS // 2:08d}")
        .order_by("session_id")
        .values_list("pk", flat=True)
        .first()
    )
    client = Client()
    client.force_login(user)
    ninety = "?start=" + _days_ago(89) + "&end=" + _days_ago(0)
    year = "?start=" + _days_ago(364) + "&end=" + _days_ago(0)
    # Every page is held to the target. "Cold cache": Django's cache is cleared before each request
    # (the dashboard no longer caches; past days come from the rollups, today is counted live).
    pages = [
        ("dashboard (30 days, cold cache)", "/admin/", True),
        ("dashboard (30 days)", "/admin/"),
        ("dashboard (90 days, cold cache)", "/admin/" + ninety, True),
        ("dashboard (90 days)", "/admin/" + ninety),
        ("dashboard (365 days, cold cache)", "/admin/" + year, True),
        ("dashboard (365 days)", "/admin/" + year),
        ("session list, verdict=REJECT", "/admin/diagnosis/diagnosissession/?verifier_verdict__exact=REJECT"),
        (
            "session list, verdict=REJECT, page 50",
            "/admin/diagnosis/diagnosissession/?verifier_verdict__exact=REJECT&p=50",
        ),
        ("session list, unfiltered", "/admin/diagnosis/diagnosissession/"),
        (
            "session list, failed AIOps check",
            "/admin/diagnosis/diagnosissession/?aiops_failed_check=evidence_tools_succeeded",
        ),
        # Text search on query and answer over every date (no range chosen): a two-character term one
        # session in a thousand holds (the gram index), one every session holds (扩大: the planner may
        # walk created_at instead), a four-character term no session holds and a three-character one
        # every session holds (the trigram indexes).
        ("session list, search 证书 (2 chars, 0.1 %)", "/admin/diagnosis/diagnosissession/?q=%E8%AF%81%E4%B9%A6"),
        ("session list, search 扩大 (2 chars, all)", "/admin/diagnosis/diagnosissession/?q=%E6%89%A9%E5%A4%A7"),
        (
            "session list, search 证书吊销 (none)",
            "/admin/diagnosis/diagnosissession/?q=%E8%AF%81%E4%B9%A6%E5%90%8A%E9%94%80",
        ),
        ("session list, search 连接池 (all)", "/admin/diagnosis/diagnosissession/?q=%E8%BF%9E%E6%8E%A5%E6%B1%A0"),
        ("triage queue", "/admin/backoffice/triageitem/"),
        ("triage queue, reason=not_useful", "/admin/backoffice/triageitem/?reason=not_useful"),
        ("triage queue, my queue", "/admin/backoffice/triageitem/?assigned=me"),
        ("session inspector (rich session)", f"/admin/diagnosis/diagnosissession/{inspected.pk}/change/"),
        ("session inspector (bulk session)", f"/admin/diagnosis/diagnosissession/{middle}/change/"),
        # Inside a list: its place ("7 / 125"), previous and next by keyset, capped counts.
        (
            "inspector in the triage queue, not_useful",
            f"/admin/diagnosis/diagnosissession/{queued}/change/?_list=triage&_changelist_filters=reason%3Dnot_useful",
        ),
        (
            "inspector in the session list, REJECT",
            f"/admin/diagnosis/diagnosissession/{rejected}/change/"
            "?_list=sessions&_changelist_filters=verifier_verdict__exact%3DREJECT",
        ),
        ("calibration (last 30 days)", "/admin/calibration/"),
        ("calibration (365 days, cold cache)", "/admin/calibration/" + year, True),
        ("case list, pending", "/admin/cases/case/?status__exact=pending"),
        ("bad case list, open", "/admin/cases/badcase/?status__exact=open"),
    ]
    results = []
    for label, url, *cold in pages:
        for _ in range(3):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
        timings = []
        for _ in range(REPEAT):
            if cold:
                cache.clear()  # nothing of these pages may depend on a warm cache
            started = time.perf_counter()
            response = client.get(url)
            timings.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200
        results.append((label, percentile(timings, 50), percentile(timings, 95), statistics.fmean(timings)))
        print(f"   {label:<40} p50 {results[-1][1]:7.1f} ms   p95 {results[-1][2]:7.1f} ms", flush=True)
    from django.db import connections

    connections.close_all()
    return results


def _days_ago(days: int) -> str:
    import datetime as dt

    return (dt.date.today() - dt.timedelta(days=days)).isoformat()


def main() -> int:
    print_header(
        "Admin pages with a big sessions table (server time, in-process test Client)",
        sessions=f"{SESSIONS:,}",
        requests_per_page=REPEAT,
        target=f"p95 < {TARGET_MS:.0f} ms",
    )
    with throwaway_database("admin") as database:
        started = time.perf_counter()
        manage(database, "migrate", "--noinput")
        fill(database, SESSIONS)
        print(f"   filled in {time.perf_counter() - started:.0f}s", flush=True)
        # The fill is raw SQL, past the services that keep the per-day rollups: rebuild them, as an
        # operator does after a bulk load or the upgrade that introduces them.
        started = time.perf_counter()
        manage(database, "rollups_rebuild")
        print(f"   rollups rebuilt in {time.perf_counter() - started:.0f}s", flush=True)
        os.environ.update(django_env(database, ALLOWED_HOSTS="testserver,127.0.0.1"))
        results = measure()
    slow = [label for label, _p50, p95, _mean in results if p95 >= TARGET_MS]
    print(f"   {'all pages under target' if not slow else 'OVER TARGET: ' + ', '.join(slow)}")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())

"""seed_demo: deterministic generation, every evidence case, idempotent bulk seeding on both databases."""

import copy
import random
import re
from datetime import UTC, datetime

import pytest
from django.core.management import call_command

from demo.catalogue import TOPICS
from demo.generator import (
    LANGUAGES,
    SCENARIO_BY_NAME,
    SCENARIOS,
    demo_payload_build,
    demo_session_build,
    payload_digest,
)
from demo.seeding import demo_sessions_seed
from diagnosis.constants import NO_EVIDENCE_REF, Layer
from diagnosis.models import (
    DiagnosisSession,
    DiagnosisStep,
    EvaluationState,
    EvidenceRef,
    Project,
    ToolInvocation,
)
from diagnosis.serializers import session_ingest_from_body
from diagnosis.services.evaluation_config import evaluation_config, evaluation_judge
from diagnosis.services.evaluation_data import session_data_from_payload
from diagnosis.services.ingestion import session_upsert
from diagnosis.services.producers.pipeline import evaluate

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
PROJECTS = ("acme-chat", "acme-aiops")
FULL_CYCLE = 2 * len(SCENARIOS)
# Scenarios the judge gets wrong today (issue 20 is open): strict, so a fix shows as XPASS.
JUDGE_MISSES = {
    "aiops_unrelated_alert": "the learned judge gives P(supported) 0.37 (threshold 0.32) to a root-cause claim none of "
    "whose units but one glossary word align with the excerpt it cites: the regression's overlap features cancel",
}


def build(count: int, seed: int = 1, start: int = 0):
    return [
        demo_session_build(seed=seed, index=i, now=NOW, days=30, projects=PROJECTS) for i in range(start, start + count)
    ]


def refs_of(payload):
    return {
        ref["refId"]: (inv, ref)
        for inv in payload["toolInvocations"]
        if inv["retrievalDetails"]
        for ref in inv["retrievalDetails"]["evidenceRefs"]
    }


def bindings(payload):
    output = payload["executorOutput"] or {}
    claims = output.get("claims") if isinstance(output.get("claims"), list) else []
    for claim in claims:
        for evidence in claim.get("evidence") if isinstance(claim.get("evidence"), list) else []:
            yield claim, evidence


def intended(scenario_name):
    scenario = SCENARIO_BY_NAME[scenario_name]
    return scenario.verdict, scenario.aiops_verdict, scenario.attribution


def verdicts(session):
    return session.verifier_verdict, session.aiops_verdict, session.failure_attribution


def test_same_seed_gives_the_same_sessions_and_content():
    first, second = build(80), build(80)
    assert [d.session_id for d in first] == [d.session_id for d in second]
    assert [payload_digest(d.payload) for d in first] == [payload_digest(d.payload) for d in second]
    assert len({d.session_id for d in first}) == 80


def test_session_content_does_not_depend_on_the_run_size_but_on_the_seed():
    assert payload_digest(build(1, start=57)[0].payload) == payload_digest(build(60)[57].payload)
    other_seed = build(80, seed=2)
    assert {d.session_id for d in other_seed}.isdisjoint({d.session_id for d in build(80)})
    assert [payload_digest(d.payload) for d in other_seed[FULL_CYCLE:]] != [
        payload_digest(d.payload) for d in build(80)[FULL_CYCLE:]
    ]


def test_every_generated_payload_is_accepted_by_the_ingestion_payload():
    for demo in build(FULL_CYCLE + 60):
        session_ingest_from_body(demo.payload)  # valid, or ValidationError


def test_a_full_cycle_covers_every_evidence_case_in_both_languages_and_modes():
    demos = build(FULL_CYCLE)
    payloads = [d.payload for d in demos]
    found: set[str] = set()
    for demo, p in zip(demos, payloads, strict=True):
        found.add(f"{p['mode']}:{demo.language}")
        calls = p["toolInvocations"]
        levels = {(c["retrievalDetails"] or {}).get("matchLevel") for c in calls}
        found |= {f"match:{level}" for level in levels if level}
        found.add(f"status:{p['status']}")
        if not calls:
            found.add("no_tool_calls")
        elif all(c["status"] == "FAILED" for c in calls):
            found.add("all_calls_failed")
        elif any(c["status"] == "FAILED" for c in calls):
            found.add("some_call_failed")
        refs = refs_of(p)
        for claim, evidence in bindings(p):
            ref_id, excerpt = evidence["refId"], evidence["excerpt"]
            if ref_id == NO_EVIDENCE_REF:
                found.add("no_evidence")
                if re.search(r"已排除|确认没有", claim["text"]) or re.search(
                    r"ruled out|Confirmed there is no", claim["text"]
                ):
                    found.add(f"absence_claim:{demo.language}")
            elif ref_id not in refs:
                found.add("unknown_ref")
            else:
                invocation, ref = refs[ref_id]
                if invocation["status"] == "FAILED":
                    found.add("ref_from_failed_call")
                elif excerpt in ref["content"]:
                    found.add("verbatim_excerpt")
                    claim_numbers = re.findall(r"(\d+)%", claim["text"])
                    excerpt_numbers = re.findall(r"(\d+)%", excerpt)
                    if (
                        claim_numbers
                        and excerpt_numbers
                        and claim_numbers[0] == excerpt_numbers[0][::-1] != excerpt_numbers[0]
                    ):
                        found.add("altered_number")
                        if p["mode"] == "aiops":
                            found.add("aiops:altered_number")
                else:
                    found.add("fabricated_excerpt")
        output = p["executorOutput"]
        if output is not None and (
            output.get("version") != "executor_evidence_v2"
            or not all(isinstance(c, dict) and "text" in c for c in output.get("claims", [None]))
        ):
            found.add("invalid_executor_output")
        if p["mode"] == "aiops" and output and output.get("version") == "executor_evidence_v2":
            found.add("aiops:executor_claims")
        legacy = p.get("selfEvaluation") or {}
        if "evidence_score" in legacy and "verdict" in legacy:
            found.add("legacy_self_evaluation")
        if p["mode"] == "aiops" and p["answer"]:
            root_cause = p["answer"].split("\n")[1]
            if any(a["service"] in root_cause for a in p["activeAlerts"]) and p["alert"]["service"] not in root_cause:
                found.add("unrelated_alert_diagnosed")
        if re.search(r"^(## 根因|## Root cause|\*\*根因分析\*\*|\*\*Root cause analysis\*\*)$", p["answer"], re.M):
            found.add("markdown_root_cause")
        if "`" in p["answer"]:
            found.add("error_code")
    expected = {
        "chat:zh", "chat:en", "aiops:zh", "aiops:en", "match:L0", "match:L1", "match:NONE",
        "status:FAILED", "status:RUNNING", "status:SUCCEEDED", "no_tool_calls", "all_calls_failed",
        "some_call_failed", "no_evidence", "absence_claim:zh", "absence_claim:en", "unknown_ref",
        "ref_from_failed_call", "verbatim_excerpt", "altered_number", "fabricated_excerpt",
        "invalid_executor_output", "legacy_self_evaluation", "unrelated_alert_diagnosed",
        "markdown_root_cause", "error_code", "aiops:executor_claims", "aiops:altered_number",
    }  # fmt: skip
    assert expected <= found, expected - found


def test_sessions_go_to_the_chat_and_aiops_projects_and_spread_over_the_days():
    demos = build(200)
    assert {d.project_slug for d in demos if d.payload["mode"] == "chat"} == {"acme-chat"}
    assert {d.project_slug for d in demos if d.payload["mode"] == "aiops"} == {"acme-aiops"}
    created = sorted(datetime.fromisoformat(d.payload["createdAt"]) for d in demos)
    assert created[0] >= NOW.replace(day=30, month=10) and created[-1] <= NOW
    assert (created[-1] - created[0]).days >= 25


def _stored(session: DiagnosisSession):
    skip = {"id", "project", "ingested_at", "updated_at", "evaluation_requested_at", "needs_review"}
    columns = {f.attname: getattr(session, f.attname) for f in session._meta.concrete_fields if f.name not in skip}
    steps = list(DiagnosisStep.objects.filter(session=session).values_list("index", "name", "status", "detail"))
    invocations = list(
        ToolInvocation.objects.filter(session=session).values_list(
            "position", "invocation_id", "step_index", "tool_name", "status", "arguments", "output", "error",
            "latency_ms", "match_level",
        )
    )  # fmt: skip
    refs = list(
        EvidenceRef.objects.filter(session=session)
        .order_by("invocation__position", "position")
        .values_list("invocation__invocation_id", "position", "ref_id", "source", "content", "content_sha256")
    )
    return columns, steps, invocations, refs


@pytest.mark.django_db
def test_bulk_seeding_stores_exactly_what_the_ingestion_api_stores():
    result = demo_sessions_seed(sessions=FULL_CYCLE, seed=4, now=NOW, keep_sessions=True)
    assert result.created == FULL_CYCLE
    mirror = Project.objects.create(slug="mirror", name="Mirror")
    for demo in result.sessions:
        via_api = session_upsert(project=mirror, data=session_ingest_from_body(demo.payload)).session
        bulk = DiagnosisSession.objects.get(project__slug=demo.project_slug, session_id=demo.session_id)
        via_api.refresh_from_db()
        assert _stored(bulk) == _stored(via_api), demo.scenario


@pytest.mark.django_db
def test_seed_demo_is_idempotent_and_extends_a_smaller_run(capsys):
    call_command("seed_demo", sessions=30, seed=5, evaluate=False)
    first = dict(DiagnosisSession.objects.values_list("session_id", "pk"))
    children = (DiagnosisStep.objects.count(), ToolInvocation.objects.count(), EvidenceRef.objects.count())
    call_command("seed_demo", sessions=30, seed=5, evaluate=False)
    assert dict(DiagnosisSession.objects.values_list("session_id", "pk")) == first
    assert (DiagnosisStep.objects.count(), ToolInvocation.objects.count(), EvidenceRef.objects.count()) == children
    assert "0 created, 30 already there" in capsys.readouterr().out

    call_command("seed_demo", sessions=45, seed=5, evaluate=False)
    assert DiagnosisSession.objects.count() == 45
    expected = {d.session_id for d in build(45, seed=5)}
    assert set(DiagnosisSession.objects.values_list("session_id", flat=True)) == expected
    assert set(Project.objects.values_list("slug", flat=True)) == set(PROJECTS)
    assert set(DiagnosisSession.objects.values_list("evaluation_state", flat=True)) == {EvaluationState.PENDING}


@pytest.mark.django_db
def test_seed_demo_uses_the_given_projects_and_days():
    call_command("seed_demo", sessions=20, seed=6, evaluate=False, projects=["bot-a", "bot-b", "bot-c"], days=2)
    by_project = dict(
        DiagnosisSession.objects.values_list("project__slug", "mode")
        .distinct()
        .order_by()
        .values_list("project__slug", "mode")
    )
    assert by_project["bot-b"] == "aiops"
    assert {"bot-a", "bot-c"} <= set(by_project) and by_project["bot-a"] == by_project["bot-c"] == "chat"
    oldest = DiagnosisSession.objects.order_by("created_at").first().created_at
    newest = DiagnosisSession.objects.order_by("-created_at").first().created_at
    assert (newest - oldest).total_seconds() <= 2 * 86400


@pytest.mark.django_db
def test_bulk_only_mode_fills_the_mirrored_evaluation_columns():
    call_command("seed_demo", sessions=FULL_CYCLE, seed=7, bulk_only=True)
    sessions = {s.session_id: s for s in DiagnosisSession.objects.all()}
    assert {s.evaluation_state for s in sessions.values()} == {EvaluationState.DONE}
    demos = build(FULL_CYCLE, seed=7)
    for demo in demos:
        stored = sessions[demo.session_id]
        assert verdicts(stored) == intended(demo.scenario), demo.scenario
    by_scenario = {d.scenario: sessions[d.session_id] for d in demos}
    assert by_scenario["grounded_l0"].evidence_score == 65
    assert by_scenario["grounded_l0"].self_evaluation["rule_evaluation"]["evidence_score"] == 65
    assert by_scenario["no_tool_calls"].evidence_score == 0
    assert by_scenario["all_calls_failed"].evidence_score == 0
    assert by_scenario["no_hit"].evidence_score == 20
    assert DiagnosisSession.objects.filter(needs_review=True).exists()
    assert DiagnosisSession.objects.exclude(feedback="").exists()


def test_bulk_rule_score_is_the_rule_producers_even_for_a_failed_call_reporting_a_hit():
    from dataclasses import replace

    from demo.mirrored import plausible_evaluation
    from diagnosis.services.rows import session_rows_from_payload

    failed = next(d for d in build(FULL_CYCLE) if d.scenario == "all_calls_failed")
    payload = copy.deepcopy(failed.payload)
    payload["toolInvocations"][0]["retrievalDetails"] = {
        "matchLevel": "L0",
        "evidenceRefs": [{"refId": "inv-1#1", "source": "kb://x", "content": "partial chunk"}],
    }
    rows = session_rows_from_payload(data=session_ingest_from_body(payload))

    # 15 if the failed call's hit counted (+35 - 20)
    assert plausible_evaluation(replace(failed, payload=payload), rows, now=NOW)["evidence_score"] == 0


@pytest.mark.django_db
def test_seed_demo_with_evaluation_fills_every_layer_and_the_back_office(capsys):
    pytest.importorskip("diagnosis.services.producers.pipeline")
    from cases.models import BadCase, Case
    from diagnosis.models import ClaimCheck, SessionReview
    from feedback.models import FeedbackEvent

    call_command("seed_demo", sessions=120, seed=1)
    out = capsys.readouterr().out
    assert "120 created" in out
    assert not DiagnosisSession.objects.filter(evaluation_state=EvaluationState.PENDING).exists()
    chat_done = DiagnosisSession.objects.filter(mode="chat", status="SUCCEEDED")
    assert not chat_done.filter(verifier_verdict="").exists()
    assert not DiagnosisSession.objects.filter(mode="aiops", aiops_verdict="").exists()
    assert set(chat_done.values_list("verifier_verdict", flat=True)) >= {"PASS", "REJECT"}
    demos_with_feedback = [d for d in build(120) if d.feedback]
    assert FeedbackEvent.objects.count() == len(demos_with_feedback)
    assert Case.objects.filter(status="approved").exists()
    assert BadCase.objects.exists()
    assert SessionReview.objects.exists()
    # The evolution log has rows to read: newer answers checked against an older version of them.
    from evolution.models import VerificationLog

    logged = VerificationLog.objects.all()
    assert logged.count() == 6 and {log.lang for log in logged} == {"zh", "en"}
    assert all(log.new_response and log.old_response != log.new_response for log in logged)
    # Every session gets what its scenario was built to provoke: PASS scenarios pass, REJECT ones reject.
    stored = {s.session_id: s for s in DiagnosisSession.objects.all()}
    missed = {demo.scenario for demo in build(120) if verdicts(stored[demo.session_id]) != intended(demo.scenario)}
    assert missed <= set(JUDGE_MISSES)
    # A good share of AIOps reports carry executor claims and are judged claim by claim.
    aiops_judged = DiagnosisSession.objects.filter(mode="aiops").exclude(verifier_verdict="")
    assert aiops_judged.count() >= DiagnosisSession.objects.filter(mode="aiops").count() // 2
    assert set(aiops_judged.values_list("verifier_verdict", flat=True)) >= {"PASS", "REJECT"}
    aiops_claims = ClaimCheck.objects.filter(session__mode="aiops")
    assert set(aiops_claims.values_list("verdict", flat=True)) >= {"SUPPORTED", "CONTRADICTED"}


@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=JUDGE_MISSES[s.name]))
        if s.name in JUDGE_MISSES
        else s
        for s in SCENARIOS
    ],
    ids=lambda scenario: scenario.name,
)
def test_the_pipeline_gives_each_scenario_its_verdicts_for_every_topic_and_language(scenario):
    # The catalogue's supported claims must be stated by their evidence in every topic and language.
    config, judge = evaluation_config(), evaluation_judge()
    for topic in TOPICS:
        for language in LANGUAGES:
            payload = demo_payload_build(
                scenario=scenario,
                topic=topic,
                language=language,
                created=NOW,
                session_id="s-1",
                rng=random.Random(f"{scenario.name}:{topic.key}:{language}"),
            )
            result = evaluate(
                session_data_from_payload(data=session_ingest_from_body(payload)), config=config, judge=judge
            )
            verifier, aiops = result.layers.get(Layer.VERIFIER), result.layers.get(Layer.AIOPS)
            got = (verifier.verdict if verifier else "", aiops.verdict if aiops else "", result.failure_attribution)
            claims = [(c.claim_id, c.verdict, c.rationale) for c in result.claim_results if c.verdict != "SUPPORTED"]
            assert got == intended(scenario.name), (topic.key, language, claims)


@pytest.mark.postgres
@pytest.mark.django_db
def test_large_raw_seed_rebuilds_the_indexes_it_deferred(monkeypatch):
    from django.db import connection

    from demo import seeding

    monkeypatch.setattr(seeding, "DEFER_INDEXES_FROM", 10)
    call_command("seed_demo", sessions=FULL_CYCLE, seed=8, bulk_only=True)
    assert DiagnosisSession.objects.filter(evaluation_state=EvaluationState.DONE).count() == FULL_CYCLE
    expected = {
        index.name for model in (DiagnosisSession, ToolInvocation, EvidenceRef) for index in model._meta.indexes
    }
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE indexname = ANY(%s)", [sorted(expected)])
        assert {row[0] for row in cursor.fetchall()} == expected

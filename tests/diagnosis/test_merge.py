import json
import threading

import pytest
from django.db import connection
from django.utils import timezone

from diagnosis.constants import AiOpsVerdict, Layer, VerifierVerdict
from diagnosis.evaluation_layers import (
    AiOpsCheckEntry,
    AiOpsRuleEvaluation,
    RuleEvaluation,
    VerifierEvaluation,
    layer_json,
    self_evaluation_read,
)
from diagnosis.models import DiagnosisSession
from diagnosis.services.merge import self_evaluation_merge
from tests.factories import chat_payload

AIOPS_WARN = AiOpsRuleEvaluation(verdict=AiOpsVerdict.WARN)

MIRRORED = ("evidence_score", "verifier_verdict", "groundedness_score", "aiops_verdict")


def make_session(project, session_id="s-merge", **fields) -> DiagnosisSession:
    return DiagnosisSession.objects.create(
        project=project,
        session_id=session_id,
        mode=fields.pop("mode", "chat"),
        query="q",
        status="SUCCEEDED",
        created_at=timezone.now(),
        **fields,
    )


def assert_mirrors_in_sync(session: DiagnosisSession) -> None:
    session.refresh_from_db()
    expected = self_evaluation_read(session.self_evaluation).mirrored_columns()
    assert {name: getattr(session, name) for name in MIRRORED} == expected


# --- legacy layout (the reader's own tests are in test_evaluation_layers.py) -------------------


@pytest.mark.django_db
def test_merge_migrates_stored_legacy_json_and_keeps_other_layers(project):
    session = make_session(project, self_evaluation={"evidence_score": 40, "verdict": "LOW_CONFID"})

    self_evaluation_merge(session_pk=session.pk, layers={Layer.AIOPS: AIOPS_WARN}, extra_fields=None)

    session.refresh_from_db()
    assert session.self_evaluation == {
        Layer.RULE: {"evidence_score": 40, "source": "legacy"},
        Layer.VERIFIER: {"verdict": "LOW_CONFID", "source": "legacy"},
        Layer.AIOPS: {"verdict": "WARN", "checks": [], "failed_checks": []},
    }
    # Legacy layers are the agent's history: only the producer's layer fills a column.
    assert (session.evidence_score, session.verifier_verdict, session.aiops_verdict) == (None, "", "WARN")


@pytest.mark.django_db
def test_ingested_legacy_json_is_layered_and_mirrored(api):
    payload = chat_payload(selfEvaluation={"evidence_score": 65, "verdict": "PASS", "groundedness_score": 0.8})

    # Without running the callbacks: what ingestion itself stored, before any evaluation.
    response = api.post("/api/sessions", data=json.dumps(payload), content_type="application/json")

    assert response.status_code == 201, response.content
    session = DiagnosisSession.objects.get()
    assert session.self_evaluation[Layer.RULE] == {"evidence_score": 65, "source": "legacy"}
    assert session.self_evaluation[Layer.VERIFIER] == {"verdict": "PASS", "groundedness_score": 0.8, "source": "legacy"}
    # The agent's own verdict is not SelfEval's: no verdict, score or groundedness column shows it.
    assert (session.evidence_score, session.verifier_verdict, session.groundedness_score) == (None, "", None)


# --- one layer per producer, mirrored columns ---------------------------------------------------


@pytest.mark.django_db
def test_merge_replaces_only_the_given_layer(project):
    session = make_session(project)
    verifier = VerifierEvaluation(verdict=VerifierVerdict.PASS, round=1)
    self_evaluation_merge(session_pk=session.pk, layers={Layer.RULE: RuleEvaluation(evidence_score=65, source="rule")})
    self_evaluation_merge(session_pk=session.pk, layers={Layer.VERIFIER: verifier})

    self_evaluation_merge(session_pk=session.pk, layers={Layer.RULE: RuleEvaluation(evidence_score=30, source="rule")})

    session.refresh_from_db()
    assert session.self_evaluation == {
        Layer.RULE: layer_json(RuleEvaluation(evidence_score=30, source="rule")),
        Layer.VERIFIER: layer_json(verifier),
    }
    assert_mirrors_in_sync(session)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("layers", "expected"),
    [
        ({Layer.RULE: RuleEvaluation(evidence_score=250)}, {"evidence_score": 100}),
        ({Layer.RULE: RuleEvaluation(evidence_score=-5)}, {"evidence_score": 0}),
        (
            {Layer.VERIFIER: VerifierEvaluation(verdict=VerifierVerdict.REJECT, groundedness_score=0.2)},
            {"verifier_verdict": "REJECT", "groundedness_score": 0.2},
        ),
        ({Layer.AIOPS: AiOpsRuleEvaluation(verdict=AiOpsVerdict.PASS)}, {"aiops_verdict": "PASS"}),
    ],
)
def test_mirrored_columns_follow_the_layers(project, layers, expected):
    session = make_session(project)

    self_evaluation_merge(session_pk=session.pk, layers=layers)

    session.refresh_from_db()
    for name, value in expected.items():
        assert getattr(session, name) == value
    assert_mirrors_in_sync(session)


@pytest.mark.django_db
def test_unknown_layer_is_refused_and_nothing_is_written(project):
    session = make_session(project, self_evaluation={Layer.RULE: {"evidence_score": 30}}, evidence_score=30)

    with pytest.raises(ValueError, match="unknown self_evaluation layers"):
        self_evaluation_merge(
            session_pk=session.pk,
            layers={Layer.RULE: RuleEvaluation(evidence_score=90), "my_layer": RuleEvaluation()},
            extra_fields=None,
        )

    session.refresh_from_db()
    assert session.self_evaluation == {Layer.RULE: {"evidence_score": 30}}
    assert session.evidence_score == 30


@pytest.mark.django_db
def test_none_removes_a_layer_and_clears_its_mirrored_columns(project):
    session = make_session(
        project,
        self_evaluation={
            Layer.RULE: {"evidence_score": 65},
            Layer.VERIFIER: {"verdict": "REJECT", "groundedness_score": 0.2},
            Layer.AIOPS: {"verdict": "FAIL"},
        },
        evidence_score=65,
        verifier_verdict="REJECT",
        groundedness_score=0.2,
        aiops_verdict="FAIL",
    )

    passed = AiOpsRuleEvaluation(verdict=AiOpsVerdict.PASS)
    self_evaluation_merge(session_pk=session.pk, layers={Layer.VERIFIER: None, Layer.AIOPS: passed})

    session.refresh_from_db()
    assert session.self_evaluation == {Layer.RULE: {"evidence_score": 65}, Layer.AIOPS: layer_json(passed)}
    assert (session.verifier_verdict, session.groundedness_score, session.aiops_verdict) == ("", None, "PASS")
    assert_mirrors_in_sync(session)


@pytest.mark.django_db
def test_removing_an_absent_layer_or_a_legacy_one(project):
    # The legacy root "verdict" belongs to the verifier layer, which no producer replaced: it stays.
    session = make_session(project, self_evaluation={"evidence_score": 40, "verdict": "PASS"})

    self_evaluation_merge(session_pk=session.pk, layers={Layer.VERIFIER: None, Layer.AIOPS: None})

    session.refresh_from_db()
    assert session.self_evaluation == {
        Layer.RULE: {"evidence_score": 40, "source": "legacy"},
        Layer.VERIFIER: {"verdict": "PASS", "source": "legacy"},
    }
    assert_mirrors_in_sync(session)


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["PASS", {"verdict": "PASS"}, RuleEvaluation(evidence_score=1)])
def test_a_value_that_is_not_the_layers_type_or_none_is_refused(project, value):
    session = make_session(project, self_evaluation={Layer.RULE: {"evidence_score": 30}}, evidence_score=30)

    with pytest.raises(ValueError, match="must be their layer's type or None"):
        self_evaluation_merge(session_pk=session.pk, layers={Layer.RULE: None, Layer.VERIFIER: value})

    session.refresh_from_db()
    assert session.self_evaluation == {Layer.RULE: {"evidence_score": 30}}


@pytest.mark.django_db
def test_merge_writes_extra_fields_in_the_same_update(project, django_assert_num_queries):
    session = make_session(project)
    now = timezone.now()

    # SAVEPOINT, SELECT ... FOR UPDATE, UPDATE, the day mark's INSERT (reporting), RELEASE.
    with django_assert_num_queries(5):
        self_evaluation_merge(
            session_pk=session.pk,
            layers={Layer.RULE: RuleEvaluation(evidence_score=65)},
            extra_fields={"evaluation_state": "DONE", "evaluated_at": now, "failure_attribution": "NONE"},
        )

    session.refresh_from_db()
    assert (session.evaluation_state, session.evaluated_at, session.failure_attribution) == ("DONE", now, "NONE")
    assert session.evidence_score == 65


# --- concurrency (PostgreSQL: real row locks) ---------------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_merges_of_different_layers_never_lose_one(project):
    session = make_session(project, self_evaluation={"evidence_score": 5})  # legacy, migrated on first merge
    rounds = 15
    producers = {
        Layer.RULE: lambda i: RuleEvaluation(evidence_score=i, source="rule"),
        Layer.VERIFIER: lambda i: VerifierEvaluation(verdict=list(VerifierVerdict)[i % 3], groundedness_score=i / 100),
        Layer.AIOPS: lambda i: AiOpsRuleEvaluation(
            verdict=list(AiOpsVerdict)[i % 3], checks=[AiOpsCheckEntry(check=f"check-{i}", passed=True)]
        ),
    }
    barrier = threading.Barrier(len(producers))
    errors: list[BaseException] = []

    def produce(layer, build):
        try:
            for i in range(1, rounds + 1):
                barrier.wait(timeout=10)  # every round, all producers merge at the same moment
                self_evaluation_merge(session_pk=session.pk, layers={layer: build(i)})
        except BaseException as exc:  # surfaced below: an assertion in a thread would be lost
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=produce, args=item) for item in producers.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not errors, errors
    session.refresh_from_db()
    assert session.self_evaluation == {layer: layer_json(build(rounds)) for layer, build in producers.items()}
    assert_mirrors_in_sync(session)
    assert (session.evidence_score, session.verifier_verdict, session.aiops_verdict) == (rounds, "PASS", "PASS")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_real_producers_merging_concurrently_keep_every_layer(project):
    from diagnosis.models import EvidenceRef, ToolInvocation
    from diagnosis.services.evaluation_config import evaluation_config, evaluation_judge
    from diagnosis.services.evaluation_data import session_data_from_models
    from diagnosis.services.producers.aiops import aiops_rule_evaluation
    from diagnosis.services.producers.pipeline import evaluate
    from diagnosis.services.producers.rules import rule_evaluation
    from tests.factories import aiops_payload, session_ingest

    # An AIOps report with structured claims qualifies for all three layers.
    stored = session_ingest(project, aiops_payload(executorOutput=chat_payload()["executorOutput"]))
    data = session_data_from_models(
        session=DiagnosisSession.objects.get(pk=stored.pk),
        invocations=list(ToolInvocation.objects.filter(session=stored)),
        refs=list(EvidenceRef.objects.filter(session=stored)),
    )
    producers = {
        Layer.RULE: lambda: rule_evaluation(session=data),
        Layer.VERIFIER: lambda: evaluate(data, config=config, judge=evaluation_judge()).layers[Layer.VERIFIER],
        Layer.AIOPS: lambda: aiops_rule_evaluation(session=data, tool_categories=config.tool_categories),
    }
    config = evaluation_config()
    expected = {layer: layer_json(produce()) for layer, produce in producers.items()}
    barrier = threading.Barrier(len(producers))
    errors: list[BaseException] = []

    def run(layer, produce):
        try:
            for _ in range(5):
                layer_value = produce()  # each producer computes its own layer, then merges only it
                barrier.wait(timeout=10)
                self_evaluation_merge(session_pk=stored.pk, layers={layer: layer_value})
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=item) for item in producers.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not errors, errors
    stored.refresh_from_db()
    assert stored.self_evaluation == expected
    assert_mirrors_in_sync(stored)
    assert stored.verifier_verdict and stored.aiops_verdict and stored.evidence_score is not None


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_concurrent_removal_loses_no_other_layer(project):
    session = make_session(project, self_evaluation={Layer.VERIFIER: {"verdict": "PASS"}})
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def run(layers):
        try:
            barrier.wait(timeout=10)
            self_evaluation_merge(session_pk=session.pk, layers=layers)
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=run, args=({Layer.VERIFIER: None},)),
        threading.Thread(target=run, args=({Layer.AIOPS: AIOPS_WARN},)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not errors, errors
    session.refresh_from_db()
    assert session.self_evaluation == {Layer.AIOPS: layer_json(AIOPS_WARN)}
    assert (session.verifier_verdict, session.aiops_verdict) == ("", "WARN")

"""The typed self_evaluation reader and writer: round trips, legacy layout, unreadable layers."""

import copy

import msgspec
import pytest

from diagnosis.constants import Layer
from diagnosis.evaluation_layers import (
    AiOpsRuleEvaluation,
    RuleEvaluation,
    VerifierEvaluation,
    layer_json,
    migrate_legacy_layout,
    self_evaluation_read,
    self_evaluation_write,
)
from tests.factories import aiops_payload, chat_payload, diagnosis_payload, session_ingest_evaluated

pytestmark = pytest.mark.django_db

# Sessions whose layers cover every optional part: retry context, fallback, failed checks, ...
PAYLOADS = {
    "pass": lambda: chat_payload(sessionId="s-pass"),
    "low_confid": lambda: diagnosis_payload("s-low", verdict="LOW_CONFID"),
    "reject": lambda: diagnosis_payload("s-reject", verdict="REJECT"),
    "no_output": lambda: chat_payload(sessionId="s-none", executorOutput=None),
    "invalid_output": lambda: chat_payload(sessionId="s-bad", executorOutput={"version": "v0", "claims": [1]}),
    "running": lambda: chat_payload(sessionId="s-run", status="RUNNING", finishedAt=None),
    "aiops": lambda: aiops_payload(),
    "aiops_failed_check": lambda: diagnosis_payload("a-f", mode="aiops", aiops_failure="evidence_tools_succeeded"),
    "aiops_unrelated": lambda: diagnosis_payload("a-u", mode="aiops", aiops_failure="unrelated_alerts_not_main_object"),
}


@pytest.mark.parametrize("name", PAYLOADS)
def test_reading_what_the_pipeline_stored_and_writing_it_back_gives_the_same_json(project, name):
    stored = session_ingest_evaluated(project, PAYLOADS[name]()).self_evaluation

    evaluation = self_evaluation_read(stored)

    assert evaluation.invalid == ()
    assert {layer: layer_json(evaluation.layer(layer)) for layer in Layer if layer in stored} == stored
    rewritten = self_evaluation_write({}, {layer: evaluation.layer(layer) for layer in Layer if layer in stored})
    assert rewritten.container == stored


def test_every_layer_the_pipeline_writes_is_typed(project):
    payload = diagnosis_payload("a-all", mode="aiops", verdict="LOW_CONFID")
    evaluation = self_evaluation_read(session_ingest_evaluated(project, payload).self_evaluation)

    assert isinstance(evaluation.rule, RuleEvaluation) and evaluation.rule.factors
    verifier = evaluation.verifier
    assert isinstance(verifier, VerifierEvaluation)
    assert verifier.composer_output.retry_context.claims[0].claim_id == "c2"
    summary = verifier.gatekeeper_result.summary
    assert (summary.total, summary.verified, summary.excerpt_mismatch, summary.passed) == (2, 1, 1, False)
    assert {fact.claim_id for fact in verifier.facts_checked} <= {"c1", "c2"}
    assert isinstance(evaluation.aiops, AiOpsRuleEvaluation) and evaluation.aiops.checks


# --- legacy layout ------------------------------------------------------------------------------


def test_legacy_root_keys_are_wrapped_into_their_layers():
    layered = migrate_legacy_layout({"evidence_score": 65, "verdict": "PASS", "groundedness_score": 0.8})

    assert layered == {
        Layer.RULE: {"evidence_score": 65, "source": "legacy"},
        Layer.VERIFIER: {"verdict": "PASS", "groundedness_score": 0.8, "source": "legacy"},
    }


def test_value_inside_the_layer_wins_over_legacy_root_value():
    layered = migrate_legacy_layout(
        {"evidence_score": 10, Layer.RULE: {"evidence_score": 65, "source": "rule", "factors": []}}
    )

    assert layered[Layer.RULE] == {"evidence_score": 65, "source": "rule", "factors": []}
    assert "evidence_score" not in layered


def test_an_already_layered_value_is_not_labelled_legacy():
    layered = migrate_legacy_layout({"evidence_score": 40, Layer.RULE: {"evidence_score": 70}})

    assert layered == {Layer.RULE: {"evidence_score": 70}}


def test_a_legacy_root_value_fills_only_what_the_layer_lacks():
    layered = migrate_legacy_layout(
        {"verdict": "REJECT", "groundedness_score": 0.2, Layer.VERIFIER: {"verdict": "PASS"}}
    )

    assert layered == {Layer.VERIFIER: {"verdict": "PASS", "groundedness_score": 0.2}}


def test_unknown_root_keys_are_kept_and_input_is_not_mutated():
    legacy = {"verdict": "REJECT", "agent_note": "kept"}

    layered = migrate_legacy_layout(legacy)

    assert layered == {"agent_note": "kept", Layer.VERIFIER: {"verdict": "REJECT", "source": "legacy"}}
    assert legacy == {"verdict": "REJECT", "agent_note": "kept"}


@pytest.mark.parametrize("empty", [None, {}])
def test_empty_container_stays_empty(empty):
    assert migrate_legacy_layout(empty) == {}


def test_legacy_json_reads_as_layers_with_defaults_and_mirrors_nothing():
    evaluation = self_evaluation_read({"evidence_score": 65, "verdict": "PASS", "groundedness_score": 0.8})

    assert evaluation.rule == RuleEvaluation(evidence_score=65, source="legacy")
    verifier = evaluation.verifier
    assert (verifier.source, verifier.verdict, verifier.groundedness_score) == ("legacy", "PASS", 0.8)
    assert verifier.claim_checks == [] and verifier.round is None
    # The agent's own verdict is not SelfEval's: no column shows it.
    assert evaluation.mirrored_columns() == {
        "evidence_score": None,
        "verifier_verdict": "",
        "groundedness_score": None,
        "aiops_verdict": "",
    }


def test_a_legacy_layer_is_kept_when_its_producer_does_not_apply_but_replaced_when_it_does():
    legacy = {"verdict": "PASS", "groundedness_score": 0.9}

    kept = self_evaluation_write(legacy, {Layer.VERIFIER: None})
    replaced = self_evaluation_write(legacy, {Layer.VERIFIER: VerifierEvaluation(verdict="REJECT")})

    assert kept.container == {Layer.VERIFIER: {**legacy, "source": "legacy"}}
    assert replaced.verifier.source is msgspec.UNSET and replaced.mirrored_columns()["verifier_verdict"] == "REJECT"


# --- what does not have this shape ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("stored", "layer", "path"),
    [
        ({Layer.RULE: "not a dict"}, Layer.RULE, "Expected `object`, got `str`"),
        ({Layer.RULE: {"evidence_score": "high"}}, Layer.RULE, "$.evidence_score"),
        ({Layer.VERIFIER: {"verdict": "MAYBE", "groundedness_score": 0.5}}, Layer.VERIFIER, "$.verdict"),
        ({Layer.VERIFIER: {"claim_checks": [1, None, {"claimId": 5}]}}, Layer.VERIFIER, "$.claim_checks[0]"),
        ({Layer.AIOPS: {"verdict": "OK"}}, Layer.AIOPS, "$.verdict"),
        ({Layer.AIOPS: {"checks": "nope"}}, Layer.AIOPS, "$.checks"),
    ],
)
def test_an_unreadable_layer_is_reported_with_its_error_and_raw_json_and_mirrors_nothing(stored, layer, path):
    evaluation = self_evaluation_read(stored)

    (invalid,) = evaluation.invalid
    assert (invalid.name, invalid.raw) == (layer, stored[layer])
    assert path in invalid.error
    assert evaluation.layer(layer) is None
    assert evaluation.mirrored_columns() == {
        "evidence_score": None,
        "verifier_verdict": "",
        "groundedness_score": None,
        "aiops_verdict": "",
    }
    assert evaluation.container == stored


@pytest.mark.parametrize("stored", [None, [], "x", 3])
def test_a_container_that_is_not_an_object_reads_as_empty(stored):
    evaluation = self_evaluation_read(stored)

    assert (evaluation.container, evaluation.rule, evaluation.invalid) == ({}, None, ())


def test_the_writer_keeps_what_it_does_not_replace_exactly_as_stored(project):
    stored = session_ingest_evaluated(project, aiops_payload()).self_evaluation
    stored = {
        **stored,
        "agent_note": "kept",
        Layer.RULE: {**stored[Layer.RULE], "written_by": "a newer version"},
        Layer.VERIFIER: "unreadable, kept for the reviewer",
    }
    before = copy.deepcopy(stored)

    written = self_evaluation_write(stored, {Layer.AIOPS: None})

    assert written.container == {key: value for key, value in before.items() if key != Layer.AIOPS}
    assert written.rule.evidence_score == before[Layer.RULE]["evidence_score"]  # the unknown key is ignored
    assert [invalid.name for invalid in written.invalid] == [Layer.VERIFIER]
    assert stored == before

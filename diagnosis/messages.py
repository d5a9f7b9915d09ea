"""Machine text: the one table of the messages the producers write, each a code with named parameters.

A producer builds a `Message` (`message(code, **params)`); its layer stores the English text (for
API clients, as before) beside the code and the parameters: `{"reason": "call inv-2 failed",
"reason_code": "gatekeeper.ref_from_failed_call", "reason_params": {"invocation": "inv-2"}}`.
The English text is formatted from this table, so text and code never disagree.

The admin renders the code through gettext (`message_render`): the table's format string is the
msgid (marked with `gettext_noop`, translated in the .po), its named parameters are filled in, and
the parameters the table marks as labels (statuses, categories, ...) are translated through
`LABELS`. An unknown code, or a translation that does not format, shows the stored English text.
A parameter may itself be a message (a judge's rationale inside the cascade's), stored as
`{"code": ..., "params": ...}`; a list parameter is joined with ", ".
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from django.utils.translation import gettext, gettext_noop

from diagnosis.constants import AiOpsVerdict, ClaimVerdict, VerifierVerdict


class Spec(NamedTuple):
    template: str  # str.format with named parameters
    labels: tuple[str, ...] = ()  # parameters whose values are `LABELS` keys
    sep: str = ", "  # between the items of a list parameter


_SUMMARY = "{supported}/{total} claims supported, groundedness {groundedness:.2f}"

MESSAGES: dict[str, Spec] = {
    # gatekeeper: one reason per binding status
    "gatekeeper.no_evidence": Spec(gettext_noop("the query retrieved no matching evidence")),
    "gatekeeper.ref_not_found": Spec(gettext_noop("no evidence ref or call has this id")),
    "gatekeeper.ref_from_failed_call": Spec(gettext_noop("call {invocation} failed")),
    "gatekeeper.empty_excerpt": Spec(gettext_noop("empty excerpt")),
    "gatekeeper.excerpt_mismatch": Spec(gettext_noop("excerpt does not occur in the ref content")),
    "gatekeeper.verified": Spec(gettext_noop("excerpt found in the ref content")),
    # verifier: a claim decided before any judge
    "claim.no_binding": Spec(gettext_noop("the claim cites no evidence")),
    "claim.absence_no_evidence": Spec(
        gettext_noop("absence claim bound only to $.no_evidence: retrieving nothing does not prove absence")
    ),
    "claim.no_evidence": Spec(gettext_noop("bound only to $.no_evidence: no evidence was retrieved for it")),
    "claim.gatekeeper_failed": Spec(
        gettext_noop("no cited evidence passed the gatekeeper ({statuses})"), labels=("statuses",)
    ),
    # judges
    "judge.nothing_aligned": Spec(gettext_noop("nothing in the claim could be aligned to the evidence")),
    "judge.error": Spec(gettext_noop("the judge could not analyse this claim ({error}); left unsupported")),
    # the deterministic judge: the band its calibrated scores fall in, and every unit (a "unit.*"
    # message each; `more` is "; …" when some were left out)
    "judge.decided": Spec(
        gettext_noop("{band}: P(supported) {p_supported}, P(contradicted) {p_contradicted} | units: {units}{more}"),
        labels=("band",),
        sep="; ",
    ),
    # the same, weighed with the sentence encoder: the cosine of claim and evidence is one more feature
    "judge.decided_encoded": Spec(
        gettext_noop(
            "{band}: P(supported) {p_supported}, P(contradicted) {p_contradicted}, meaning similarity {similarity} "
            "| units: {units}{more}"
        ),
        labels=("band",),
        sep="; ",
    ),
    "judge.llm": Spec("{rationale}"),  # the LLM's own words, in its language
    # the deterministic judge's units: a word of the claim or a check of its clause, and the detail
    "unit.word": Spec(gettext_noop("{text}: {detail}")),
    "unit.check": Spec(gettext_noop("{text}: {detail}"), labels=("text",)),
    "unit.word_status": Spec(gettext_noop("{text}: {status} ({detail})"), labels=("status",)),
    "unit.check_status": Spec(gettext_noop("{text}: {status} ({detail})"), labels=("text", "status")),
    "unit.in_negation": Spec(gettext_noop("stated inside a negation («{clause}»)")),
    "unit.where": Spec(gettext_noop("{how} «{word}»"), labels=("how",)),
    "unit.how": Spec("{how}", labels=("how",)),
    "unit.antonym_nearby": Spec(gettext_noop("antonym: «{word}» stands by the claim's words in «{clause}»")),
    "unit.failed_search": Spec(
        gettext_noop("the evidence only reports a failed search («{clause}»): not found is not absent")
    ),
    "unit.antonym_states": Spec(gettext_noop("antonym: evidence «{clause}» states «{word}»")),
    "unit.negation": Spec(gettext_noop("negation: the evidence {said} it in «{clause}»"), labels=("said",)),
    "unit.opposite_polarity": Spec(gettext_noop("stated only with the opposite polarity elsewhere")),
    "unit.named_by_ref": Spec(gettext_noop("named by the cited ref")),
    "unit.causal_link": Spec(gettext_noop("the evidence states a causal link")),
    "unit.no_causal_link": Spec(gettext_noop("the evidence states no causal link")),
    "unit.converse": Spec(gettext_noop("converse «{word}» (roles checked)")),
    "unit.direction_says": Spec(gettext_noop("direction: evidence «{clause}» says «{word}»")),
    "unit.direction_of": Spec(gettext_noop("direction of «{source} -> {target}»")),
    "unit.direction_goes": Spec(gettext_noop("direction: evidence goes «{source} -> {target}»")),
    "unit.slot_value": Spec(gettext_noop("{key}: evidence says «{value}» («{clause}»)")),
    "unit.value_of": Spec(gettext_noop("stated as the value of «{owner}» («{clause}»)")),
    "unit.another_entity": Spec(gettext_noop("another entity in its place: «{other}» («{clause}»)")),
    "unit.not_in_evidence": Spec(gettext_noop("not in the cited evidence")),
    "unit.bounds_only": Spec(gettext_noop("the evidence only bounds or approximates it («{clause}»)")),
    "unit.other_value": Spec(gettext_noop("other value: evidence says «{value}» («{clause}»)")),
    "unit.zero_absence": Spec(gettext_noop("zero stated as absence")),
    "unit.stated_for": Spec(gettext_noop("stated for «{owner}» («{clause}»)")),
    "unit.stated_for_other": Spec(gettext_noop("stated for «something else» («{clause}»)")),
    "unit.qualifies": Spec(gettext_noop("the evidence qualifies it: «{clause}»")),
    "unit.hedges": Spec(gettext_noop("the evidence only hedges («{clause}»)")),
    "unit.mood": Spec(gettext_noop("the evidence states it only as {mood} («{clause}»)"), labels=("mood",)),
    "unit.exception": Spec(gettext_noop("the evidence makes an exception («{clause}»)")),
    "unit.no_frequency": Spec(gettext_noop("the evidence states no frequency («{clause}»)")),
    "unit.other_frequency": Spec(gettext_noop("another frequency in «{clause}»")),
    "unit.rank": Spec(gettext_noop("the claim ranks «{head}» {rank}, the evidence {other}")),
    "unit.quantifier": Spec(
        gettext_noop("the claim says {want}, the evidence «{clause}» {have}"), labels=("want", "have")
    ),
    "unit.roles_from_to": Spec(gettext_noop("from {source} to {target}, evidence «{clause}»")),
    "unit.roles_swapped": Spec(gettext_noop("{a} / {b} swapped in «{clause}»")),
    "unit.before_verb": Spec(gettext_noop("«{word}» {verb}, in «{clause}»")),
    "unit.said_of_not": Spec(gettext_noop("«{clause}» is said of «{said}», not of «{word}»")),
    "unit.said_of": Spec(gettext_noop("«{word}» is said of «{said}» («{clause}»)")),
    "unit.arguments_apart": Spec(gettext_noop("its arguments stand by different «{word}» in «{clause}»")),
    "unit.subject_of_other": Spec(gettext_noop("the subject of another verb or phrase in «{clause}»")),
    "unit.not_agent": Spec(gettext_noop("after «{word}», not as its agent, in «{clause}»")),
    "unit.object_of_other": Spec(gettext_noop("the object of another verb in «{clause}»")),
    "unit.agent_of_other": Spec(gettext_noop("the agent of another verb («by {word}») in «{clause}»")),
    "unit.says_phrase": Spec(gettext_noop("the evidence says «{words}» («{clause}»)")),
    "unit.share_only": Spec(gettext_noop("the evidence states only «{share}» of it («{clause}»)")),
    "unit.another_role": Spec(
        gettext_noop("another role: the evidence says it {stated}, the claim {wanted} («{clause}»)"),
        labels=("stated", "wanted"),
    ),
    "unit.another_place": Spec(
        gettext_noop("another place or role in «{clause}» ({stated}, not {wanted})"), labels=("stated", "wanted")
    ),
    "unit.elsewhere_only": Spec(gettext_noop("stated only elsewhere; «{other}» holds its place in «{clause}»")),
    "unit.another_event": Spec(gettext_noop("the evidence names it for another event («{clause}»)")),
    "unit.alternative": Spec(gettext_noop("the evidence offers it as one of alternatives («{clause}»)")),
    "unit.total": Spec(gettext_noop("the evidence states it as a total, not as the count («{clause}»)")),
    "unit.only_unstated": Spec(gettext_noop("stated only as {mood} («{clause}»)"), labels=("mood",)),
    "unit.other_clause": Spec(gettext_noop("stated in another clause («{clause}»), beside «{word}»")),
    "unit.verb_elsewhere": Spec(gettext_noop("«{clause}» says «{own}»; «{word}» stands in another clause")),
    "judge.llm_fallback": Spec(gettext_noop("LLM judge unavailable ({reason}); {judge} fallback: {rationale}")),
    "judge.escalated": Spec(gettext_noop("{rationale} [escalated by the {judge} judge: {first}]")),
    # verifier: the session verdict
    "verifier.no_claims": Spec(gettext_noop("no claim could be judged")),
    "verifier.summary": Spec(gettext_noop(_SUMMARY)),
    "verifier.critical_contradicted": Spec(
        gettext_noop(_SUMMARY + "; critical claim contradicted by evidence: {claims}")
    ),
    "verifier.below_reject": Spec(gettext_noop(_SUMMARY + "; below the reject threshold {threshold}")),
    "verifier.needs_evidence": Spec(gettext_noop(_SUMMARY + "; claims needing evidence: {claims}")),
    "verifier.below_pass": Spec(gettext_noop(_SUMMARY + "; below the pass threshold {threshold}")),
    "verifier.needs_evidence_below_pass": Spec(
        gettext_noop(_SUMMARY + "; claims needing evidence: {claims}; below the pass threshold {threshold}")
    ),
    "verifier.executor_output_unreadable": Spec(
        gettext_noop("{rationale}: executor output {status} ({errors})"), labels=("status",)
    ),
    # executor output parse fallback
    "executor_output.missing": Spec(gettext_noop("structured executor output missing")),
    "executor_output.invalid": Spec(gettext_noop("structured executor output invalid")),
    # composer: retry context
    "composer.executor_output_missing": Spec(gettext_noop("executor output missing")),
    "composer.executor_output_invalid": Spec(gettext_noop("executor output invalid")),
    "composer.executor_output_valid": Spec(gettext_noop("executor output valid")),
    "composer.rerun_executor": Spec(
        gettext_noop("re-run the executor and return executor_evidence_v2 claims bound to evidence refs")
    ),
    "composer.claims_need_evidence": Spec(gettext_noop("claims need more evidence")),
    "composer.cited_call_failed": Spec(gettext_noop("the cited call failed")),
    "composer.category_evidence": Spec(gettext_noop("{category} evidence for the claim"), labels=("category",)),
    # rule evaluation: one detail per rule
    "rule.execution_failed": Spec(gettext_noop("session status is FAILED")),
    "rule.no_tool_call": Spec(gettext_noop("no tool was called")),
    "rule.has_successful_tool_call": Spec(gettext_noop("{succeeded}/{total} calls succeeded")),
    "rule.l0_exact_match": Spec(gettext_noop("L0 exact hit")),
    "rule.l1_semantic_match": Spec(gettext_noop("L1 semantic hit, no L0")),
    "rule.retrieval_no_hit": Spec(gettext_noop("{count} retrieval calls, no L0/L1 hit")),
    "rule.all_tool_calls_failed": Spec(gettext_noop("all {count} calls failed")),
    # seed_demo --bulk-only: the verdict of a scenario, no judge ran
    "demo.bulk_verdict": Spec(gettext_noop("demo data (bulk mode): verdict set by the generator, not by a judge")),
    # AIOps rule checks
    "aiops.report_present": Spec(gettext_noop("the final report is present")),
    "aiops.no_report": Spec(gettext_noop("no final report")),
    "aiops.names_alert": Spec(gettext_noop("the report names the input alert ({named})")),
    "aiops.names_neither": Spec(
        gettext_noop("the report names neither the alert service {service!r} nor the alert {alert!r}")
    ),
    "aiops.not_payload_mode": Spec(gettext_noop("no input alert (not payload mode)")),
    "aiops.evidence_succeeded": Spec(gettext_noop("at least one evidence tool call succeeded")),
    "aiops.no_evidence_succeeded": Spec(gettext_noop("no evidence tool call succeeded")),
    "aiops.category_succeeded": Spec(
        gettext_noop("{succeeded}/{called} {category} calls succeeded"), labels=("category",)
    ),
    "aiops.category_all_failed": Spec(gettext_noop("all {called} {category} calls failed"), labels=("category",)),
    "aiops.category_not_called": Spec(
        gettext_noop("no {category} tool was called (tools: {tools})"), labels=("category",)
    ),
    "aiops.no_input_alert": Spec(gettext_noop("no input alert")),
    "aiops.no_other_alert": Spec(gettext_noop("no other active alert")),
    "aiops.main_is_input": Spec(gettext_noop("the report's main diagnosis is about the input alert")),
    "aiops.main_is_other": Spec(gettext_noop("the report's main diagnosis is about another active alert ({named})")),
    "aiops.no_other_is_main": Spec(gettext_noop("no other active alert is the main diagnosis object")),
}

# The machine literals the admin shows (stored values, codes and names), with their labels.
LABELS: dict[str, str] = {
    VerifierVerdict.PASS: gettext_noop("Pass"),
    VerifierVerdict.LOW_CONFID: gettext_noop("Low confidence"),
    VerifierVerdict.REJECT: gettext_noop("Reject"),
    AiOpsVerdict.WARN: gettext_noop("Warn"),
    AiOpsVerdict.FAIL: gettext_noop("Fail"),
    ClaimVerdict.SUPPORTED: gettext_noop("Supported"),
    ClaimVerdict.UNSUPPORTED: gettext_noop("Unsupported"),
    ClaimVerdict.CONTRADICTED: gettext_noop("Contradicted"),
    ClaimVerdict.NO_EVIDENCE: gettext_noop("No evidence"),
    # the bands of the judge's scores (judge.verdicts.Band)
    "supported": gettext_noop("supported"),
    "undecided": gettext_noop("undecided"),
    "unsupported": gettext_noop("unsupported"),
    "contradicted": gettext_noop("contradicted"),
    # gatekeeper binding statuses (NO_EVIDENCE is shared with the claim verdict)
    "VERIFIED": gettext_noop("Excerpt found"),  # the quote is in the ref; says nothing of the claim
    "REF_NOT_FOUND": gettext_noop("Ref not found"),
    "REF_FROM_FAILED_CALL": gettext_noop("Ref from a failed call"),
    "EXCERPT_MISMATCH": gettext_noop("Excerpt mismatch"),
    # fact check statuses
    "STATED": gettext_noop("stated"),
    "MISMATCH": gettext_noop("mismatch"),
    "ABSENT": gettext_noop("absent"),
    # executor output parse statuses
    "VALID": gettext_noop("valid"),
    "INVALID": gettext_noop("invalid"),
    "MISSING": gettext_noop("missing"),
    # fact kinds
    "identifier": gettext_noop("identifier"),
    "number": gettext_noop("number"),
    "quantity": gettext_noop("quantity"),
    "error_code": gettext_noop("error code"),
    "negation": gettext_noop("negation"),
    "quoted": gettext_noop("quoted text"),
    "time": gettext_noop("time"),
    "ip": gettext_noop("IP address"),
    # AIOps tool categories
    "knowledge": gettext_noop("knowledge"),
    "logs": gettext_noop("logs"),
    "metrics": gettext_noop("metrics"),
    # rule factors
    "execution_failed": gettext_noop("Execution failed"),
    "no_tool_call": gettext_noop("No tool call"),
    "has_successful_tool_call": gettext_noop("A tool call succeeded"),
    "l0_exact_match": gettext_noop("L0 exact match"),
    "l1_semantic_match": gettext_noop("L1 semantic match"),
    "retrieval_no_hit": gettext_noop("Retrieval without a hit"),
    "all_tool_calls_failed": gettext_noop("All tool calls failed"),
    # AIOps checks
    "final_report_present": gettext_noop("Final report present"),
    "focuses_on_input_alert": gettext_noop("Focuses on the input alert"),
    "evidence_tools_succeeded": gettext_noop("An evidence tool succeeded"),
    "evidence_knowledge": gettext_noop("Knowledge lookup"),
    "evidence_logs": gettext_noop("Log query"),
    "evidence_metrics": gettext_noop("Metric query"),
    "unrelated_alerts_not_main_object": gettext_noop("Unrelated alerts not the main object"),
    # judges, as people call them (the LLM judge is named by its model: "llm:<model>"); the
    # deterministic judge weighs its checks with a fitted model
    "rule": gettext_noop("rules"),
    "llm": gettext_noop("LLM"),
    "deterministic": gettext_noop("learned judge"),
    "cascade": gettext_noop("cascade"),
    # the deterministic judge: unit statuses, checks, how a word aligned, moods, quantifiers
    "aligned": gettext_noop("aligned"),
    "unaligned": gettext_noop("unaligned"),
    "structure": gettext_noop("structure gap"),
    "conflict": gettext_noop("conflict"),
    "cause": gettext_noop("cause"),
    "roles": gettext_noop("roles"),
    "quantifier": gettext_noop("quantifier"),
    "modality": gettext_noop("modality"),
    "mood": gettext_noop("mood"),
    "frequency": gettext_noop("frequency"),
    "rank": gettext_noop("rank"),
    "verbatim": gettext_noop("verbatim"),
    "lemma": gettext_noop("lemma"),
    "glossary": gettext_noop("glossary"),
    "conversion": gettext_noop("conversion"),
    "substring": gettext_noop("substring"),
    "antonym": gettext_noop("antonym"),
    "denies": gettext_noop("denies"),
    "affirms": gettext_noop("affirms"),
    "a condition": gettext_noop("a condition"),
    "a plan, belief, expectation or instruction": gettext_noop("a plan, belief, expectation or instruction"),
    "an open question (whether)": gettext_noop("an open question (whether)"),
    "an open question": gettext_noop("an open question"),
    "the future": gettext_noop("the future"),
    "a past state": gettext_noop("a past state"),
    "a denial or a report shown false": gettext_noop("a denial or a report shown false"),
    "all": gettext_noop("all"),
    "most": gettext_noop("most"),
    "some": gettext_noop("some"),
    "few": gettext_noop("few"),
    "none": gettext_noop("none"),
    "it plainly": gettext_noop("it plainly"),
    # the roles of a preposition or localizer (judges/cues.py PREPOSITION_CLASS, LOCALIZER_CLASS)
    "source": gettext_noop("from (source)"),
    "goal": gettext_noop("to (goal)"),
    "above": gettext_noop("above"),
    "under": gettext_noop("under"),
    "on": gettext_noop("on"),
    "inside": gettext_noop("inside"),
    "outside": gettext_noop("outside"),
    "before": gettext_noop("before"),
    "after": gettext_noop("after"),
    "near": gettext_noop("near"),
    "behind": gettext_noop("behind"),
    "left": gettext_noop("left of"),
    "right": gettext_noop("right of"),
    "against": gettext_noop("against"),
    "for": gettext_noop("for"),
    "with": gettext_noop("with"),
    "without": gettext_noop("without"),
    "does not": gettext_noop("does not"),
    # composer modes
    "full": gettext_noop("full answer"),
    "low_confidence": gettext_noop("low confidence"),
    "degraded": gettext_noop("degraded"),
    "unverified": gettext_noop("unverified"),
}


@dataclass(frozen=True, slots=True)
class Message:
    code: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The English text, as stored."""
        return message_render(self.code, self.json(), fallback="")

    def fields(self, name: str) -> dict[str, Any]:
        """The stored fields of this message as `<name>`: its text, `<name>_code`, `<name>_params`."""
        return {name: self.text, f"{name}_code": self.code, f"{name}_params": self.json()}

    def json(self) -> dict[str, Any]:
        """The parameters as stored: a nested message becomes {"code", "params"}."""
        return {key: _param_json(value) for key, value in self.params.items()}


def _param_json(value: Any) -> Any:
    if isinstance(value, Message):
        return {"code": value.code, "params": value.json()}
    return [_param_json(item) for item in value] if isinstance(value, list | tuple) else value


def message(code: str, **params: Any) -> Message:
    """A message of the table; raises KeyError for a code it lacks (a producer's bug)."""
    if code not in MESSAGES:
        raise KeyError(f"unknown message code {code!r}")
    return Message(code, params)


def label_render(value: Any, *, translate: Callable[[str], str]) -> str:
    """A machine literal's label (`LABELS`), translated; anything else as it is."""
    text = "" if value is None else str(value)
    return translate(LABELS[text]) if text in LABELS else text


def message_render(
    code: str, params: Mapping[str, Any] | None, *, fallback: str, translate: Callable[[str], str] | None = None
) -> str:
    """The message `code` with `params`: translated by `translate` (gettext), its label parameters
    too; without it, the English text as stored (label parameters as they are).

    `fallback` (the stored English text) when the code is unknown or the parameters do not fit.
    """
    spec = MESSAGES.get(code or "")
    if spec is None or not isinstance(params, Mapping):
        return fallback

    def shown(key: str, value: Any) -> Any:
        if isinstance(value, Mapping) and "code" in value:
            return message_render(value["code"], value.get("params"), fallback="", translate=translate)
        return label_render(value, translate=translate) if translate and key in spec.labels else value

    values = {
        key: spec.sep.join(str(shown(key, item)) for item in value)
        if isinstance(value, list | tuple)
        else shown(key, value)
        for key, value in params.items()
    }
    template = translate(spec.template) if translate else spec.template
    try:
        return template.format_map(values)
    except (KeyError, IndexError, ValueError, TypeError):
        return fallback


def machine_label(value: Any) -> str:
    """A machine literal as the admin shows it, in the active language."""
    return label_render(value, translate=gettext)


def machine_text(code: str, params: Mapping[str, Any] | None, fallback: str) -> str:
    """A stored message as the admin shows it, in the active language (`fallback`: its stored text)."""
    return message_render(code, params, fallback=fallback, translate=gettext)

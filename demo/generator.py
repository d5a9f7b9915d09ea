"""Deterministic demo sessions in the camelCase ingestion format (pure: no ORM).

Session `index` of seed `seed` depends on nothing else: the same index and seed give the same
payload whatever the number of sessions, so a bigger run extends a smaller one and a re-run
finds the same sessionIds. The first sessions cycle through every scenario in both languages,
so any run of at least `len(SCENARIOS) * 2` sessions holds every evidence case.
"""

import hashlib
import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from demo.catalogue import TOPICS, UNRELATED_ALERTS, UNRELATED_DIAGNOSIS, Topic, TopicText
from diagnosis.constants import NO_EVIDENCE_REF, AiOpsVerdict, FailureAttribution, VerifierVerdict


@dataclass(frozen=True)
class Scenario:
    """An evidence case, and what the evaluation concludes about it whatever the topic and language:
    the verifier verdict, the AIOps rule verdict ("" where that producer does not judge the
    session) and the failure attribution. A test holds the pipeline to it; the raw bulk mode
    stores it as is."""

    name: str
    mode: str
    weight: int
    description: str
    verdict: str
    aiops_verdict: str
    attribution: str


V, A, F = VerifierVerdict, AiOpsVerdict, FailureAttribution
# Verdicts follow the verifier's thresholds: a critical claim contradicted, or groundedness under
# 0.4, rejects; a critical claim unsupported (one of the two, the rest supported: 0.6) is LOW_CONFID.
SCENARIOS: tuple[Scenario, ...] = (
    Scenario("grounded_l0", "chat", 26, "L0 hit, every excerpt verbatim", V.PASS, "", F.NONE),
    Scenario("grounded_l1", "chat", 10, "L1 semantic hit only, excerpts verbatim", V.PASS, "", F.NONE),
    Scenario(
        "no_hit", "chat", 5, "retrieval with no hit; claims bound to $.no_evidence", V.REJECT, "", F.RETRIEVAL_MISS
    ),
    Scenario(
        "absence_claim",
        "chat",
        4,
        "a critical claim of absence ('ruled out', '已排除') bound to $.no_evidence",
        V.LOW_CONFID,
        "",
        F.RETRIEVAL_MISS,
    ),
    Scenario("fabricated_excerpt", "chat", 5, "an excerpt that occurs in no ref", V.LOW_CONFID, "", F.CITATION_FAILURE),
    Scenario("unknown_ref", "chat", 4, "a claim citing a refId no call returned", V.LOW_CONFID, "", F.CITATION_FAILURE),
    Scenario(
        "ref_from_failed_call", "chat", 3, "a claim citing a ref of a failed call", V.LOW_CONFID, "", F.TOOL_ERROR
    ),
    Scenario(
        "altered_number", "chat", 4, "claim says 95% where the evidence says 59%", V.REJECT, "", F.UNSUPPORTED_REASONING
    ),
    Scenario("partial_failure", "chat", 5, "one call failed, the others succeeded", V.PASS, "", F.NONE),
    Scenario("all_calls_failed", "chat", 3, "every tool call failed", V.REJECT, "", F.TOOL_ERROR),
    Scenario("no_tool_calls", "chat", 3, "answered without any tool call", V.REJECT, "", F.RETRIEVAL_MISS),
    # Without executor output no claim can be judged: LOW_CONFID, never a pass.
    Scenario("failed_session", "chat", 2, "the session itself FAILED", V.LOW_CONFID, "", F.TOOL_ERROR),
    Scenario("running_session", "chat", 2, "the session is still RUNNING", V.LOW_CONFID, "", F.CITATION_FAILURE),
    Scenario(
        "legacy_self_evaluation", "chat", 3, "legacy root-level evidence_score / verdict JSON", V.PASS, "", F.NONE
    ),
    Scenario(
        "invalid_executor_output",
        "chat",
        3,
        "executor output that is not executor_evidence_v2",
        V.LOW_CONFID,
        "",
        F.CITATION_FAILURE,
    ),
    Scenario(
        "aiops_focused", "aiops", 14, "report focused on the input alert, evidence tools called", V.PASS, A.PASS, F.NONE
    ),
    Scenario(
        "aiops_unrelated_alert",
        "aiops",
        5,
        "an unrelated active alert made the diagnosis",
        V.REJECT,
        A.FAIL,
        F.UNSUPPORTED_REASONING,
    ),
    Scenario(
        "aiops_no_evidence_tools",
        "aiops",
        3,
        "no knowledge, log or metric tool called",
        "",
        A.FAIL,
        F.UNSUPPORTED_REASONING,
    ),
    Scenario("aiops_no_report", "aiops", 2, "no final report", "", A.FAIL, F.UNSUPPORTED_REASONING),
    Scenario("aiops_failed", "aiops", 2, "the AIOps session FAILED", "", A.FAIL, F.TOOL_ERROR),
    Scenario(
        "aiops_misread_metric",
        "aiops",
        4,
        "report focused on the alert but misreads a metric (95% for 59%)",
        V.REJECT,
        A.PASS,
        F.UNSUPPORTED_REASONING,
    ),
    Scenario(
        "aiops_metrics_failed",
        "aiops",
        3,
        "report focused on the alert from the runbook and logs; the metrics query failed",
        V.PASS,
        A.WARN,
        F.TOOL_ERROR,
    ),
)
SCENARIO_BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}
_WEIGHTS = [scenario.weight for scenario in SCENARIOS]
LANGUAGES = ("zh", "en")
# AIOps reports that come with executor_evidence_v2 claims, so the verifier judges them claim by claim.
AIOPS_WITH_CLAIMS = frozenset(
    {"aiops_focused", "aiops_unrelated_alert", "aiops_misread_metric", "aiops_metrics_failed"}
)
# The claim (and the answer) states the digit swap of the number the evidence gives.
ALTERED_NUMBER = frozenset({"altered_number", "aiops_misread_metric"})
# Answers a user would mostly call not useful.
_BAD_ANSWERS = frozenset(
    {
        "fabricated_excerpt",
        "altered_number",
        "absence_claim",
        "all_calls_failed",
        "aiops_unrelated_alert",
        "aiops_no_report",
        "aiops_misread_metric",
        "invalid_executor_output",
    }
)


@dataclass(frozen=True)
class DemoSession:
    index: int
    scenario: str
    language: str
    project_slug: str
    payload: dict[str, Any]
    feedback: str  # what a user of this answer would say: "useful", "not_useful" or ""

    @property
    def session_id(self) -> str:
        return self.payload["sessionId"]


def demo_session_id(*, seed: int, index: int, mode: str) -> str:
    return f"{'chat' if mode == 'chat' else 'ops'}-demo{seed}-{index:07d}"


def payload_digest(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def demo_session_build(*, seed: int, index: int, now: datetime, days: int, projects: tuple[str, ...]) -> DemoSession:
    """The demo session number `index` (0-based) for `seed`, created within `days` before `now`."""
    rng = random.Random(f"selfeval-demo:{seed}:{index}")
    cycle = len(SCENARIOS)
    if index < 2 * cycle:
        scenario = SCENARIOS[index % cycle]
        language = LANGUAGES[index // cycle]
    else:
        scenario = rng.choices(SCENARIOS, weights=_WEIGHTS)[0]
        language = "zh" if rng.random() < 0.6 else "en"
    topic = TOPICS[rng.randrange(len(TOPICS))]
    created = now - timedelta(seconds=rng.randrange(max(1, days * 86400)))
    payload = demo_payload_build(
        scenario=scenario,
        topic=topic,
        language=language,
        created=created.replace(microsecond=0),
        session_id=demo_session_id(seed=seed, index=index, mode=scenario.mode),
        rng=rng,
    )
    chat_projects, aiops_projects = projects[0::2], projects[1::2] or projects
    pool = chat_projects if scenario.mode == "chat" else aiops_projects
    return DemoSession(
        index=index,
        scenario=scenario.name,
        language=language,
        project_slug=pool[index % len(pool)],
        payload=payload,
        feedback=_feedback(scenario, rng),
    )


def demo_payload_build(
    *, scenario: Scenario, topic: Topic, language: str, created: datetime, session_id: str, rng: random.Random
) -> dict[str, Any]:
    """The payload of `scenario` about `topic` in `language`; `rng` draws the rest (numbers, pods)."""
    return _Builder(rng, scenario, topic, language, created).build(session_id)


def _pct(rng: random.Random) -> tuple[int, int]:
    """A percentage and its digit swap (59 -> 95), never equal."""
    tens = rng.randint(5, 8)
    ones = rng.choice([d for d in range(1, 10) if d != tens])
    return tens * 10 + ones, ones * 10 + tens


class _Builder:
    def __init__(self, rng: random.Random, scenario: Scenario, topic: Topic, language: str, created: datetime):
        self.rng = rng
        self.scenario = scenario
        self.name = scenario.name
        self.topic = topic
        self.language = language
        self.text: TopicText = topic.text(language)
        self.created = created
        self.pct, self.altered = _pct(rng)
        self.pod = f"{topic.service}-{rng.randrange(16**6):06x}-{rng.randrange(36**5):05x}"[:48]
        self.unrelated = rng.choice(UNRELATED_ALERTS)

    def fmt(self, template: str, *, altered: bool = False) -> str:
        return template.format(pct=self.altered if altered else self.pct, pod=self.pod)

    # --- payload -------------------------------------------------------------------------------

    def build(self, session_id: str) -> dict[str, Any]:
        invocations = self.invocations()
        status = {"failed_session": "FAILED", "aiops_failed": "FAILED", "running_session": "RUNNING"}.get(
            self.name, "SUCCEEDED"
        )
        duration = self.rng.randint(4, 95)
        payload: dict[str, Any] = {
            "sessionId": session_id,
            "mode": self.scenario.mode,
            "query": self.text.query if self.scenario.mode == "chat" else self.text.alert_query,
            "answer": "" if status != "SUCCEEDED" or self.name == "aiops_no_report" else self.answer(),
            "status": status,
            "createdAt": _iso(self.created),
            "finishedAt": None if status == "RUNNING" else _iso(self.created + timedelta(seconds=duration)),
            "alert": None,
            "activeAlerts": [],
            "steps": self.steps(status),
            "toolInvocations": invocations,
            "executorOutput": self.executor_output(status),
        }
        if self.scenario.mode == "aiops":
            payload["alert"] = {
                "name": self.topic.alert,
                "service": self.topic.service,
                "severity": self.topic.severity,
                "labels": {"namespace": "prod", "cluster": self.rng.choice(["sh-1", "bj-2", "fra-1"])},
                "startsAt": _iso(self.created - timedelta(minutes=self.rng.randint(1, 30))),
            }
            others = self.rng.sample(UNRELATED_ALERTS, self.rng.randint(0, 2))
            if self.name == "aiops_unrelated_alert" and self.unrelated not in others:
                others.append(self.unrelated)
            payload["activeAlerts"] = [{**alert, "labels": {}} for alert in others]
        if self.name == "legacy_self_evaluation":
            payload["selfEvaluation"] = {
                "evidence_score": self.rng.choice([35, 45, 65]),
                "verdict": self.rng.choice(["PASS", "LOW_CONFID"]),
                "groundedness_score": round(self.rng.uniform(0.4, 0.95), 2),
            }
        return payload

    def steps(self, status: str) -> list[dict[str, Any]]:
        names = ["plan", "retrieve", "analyze", "compose"]
        if self.scenario.mode == "aiops":
            names = ["parse_alert", "collect_evidence", "diagnose", "report"]
        steps = [{"index": i, "name": name, "status": "SUCCEEDED", "detail": {}} for i, name in enumerate(names)]
        if status == "RUNNING":
            steps = steps[:3]
            steps[-1]["status"] = "RUNNING"
        elif status == "FAILED":
            steps = steps[:3]
            steps[-1]["status"] = "FAILED"
            steps[-1]["detail"] = {"error": "LLM request timed out after 60s"}
        return steps

    def invocations(self) -> list[dict[str, Any]]:
        name, t = self.name, self.topic
        if name == "no_tool_calls":
            return []
        match = "L1" if name == "grounded_l1" else "L0"
        if name == "no_hit":
            match = "NONE"
        knowledge = self._retrieval("inv-1", "lookup_knowledge", {"query": self.text.query[:60]}, match, 0)
        logs = self._retrieval("inv-2", "query_logs", {"service": t.service, "since": "30m"}, "L1", 1)
        if name == "no_hit":
            logs = self._retrieval("inv-2", "query_logs", {"service": t.service, "since": "30m"}, "NONE", 1)
        metrics = self._call(
            "inv-3",
            2,
            "query_metrics",
            {"metric": t.metric, "service": t.service},
            {"metric": t.metric, "value": self.pct},
        )
        if name == "aiops_no_evidence_tools":
            return [
                self._call("inv-1", 1, "get_topology", {"service": t.service}, {"upstream": ["api-gateway"]}),
                self._call("inv-2", 1, "list_deployments", {"service": t.service}, {"latest": "v2.3.1"}),
            ]
        calls = [knowledge, logs, metrics]
        if name == "ref_from_failed_call":
            _fail(logs, "context deadline exceeded (partial results returned)")
        elif name in {"partial_failure", "aiops_metrics_failed"}:
            _fail(metrics, "prometheus: query timed out after 15s")
        elif name in {"all_calls_failed", "failed_session", "aiops_failed"}:
            for call, error in zip(
                calls,
                ("knowledge base unavailable: 503", "loki: 502 Bad Gateway", "prometheus: connection refused"),
                strict=True,
            ):
                _fail(call, error)
                if call.get("retrievalDetails"):
                    call["retrievalDetails"] = {"matchLevel": "NONE", "evidenceRefs": []}
            if name != "all_calls_failed":
                calls = calls[:2]
        return calls

    def _retrieval(self, inv_id: str, tool: str, args: dict, match: str, chunk: int) -> dict[str, Any]:
        refs = []
        if match != "NONE":
            source = f"kb://runbooks/{self.topic.key}.md" if chunk == 0 else f"loki://prod/{self.topic.service}"
            refs.append({"refId": f"{inv_id}#1", "source": source, "content": self.fmt(self.text.chunks[chunk])})
        call = self._call(inv_id, 1, tool, args, f"{len(refs)} chunk(s)")
        call["retrievalDetails"] = {"matchLevel": match, "evidenceRefs": refs}
        return call

    def _call(self, inv_id: str, step: int, tool: str, args: dict, output: Any) -> dict[str, Any]:
        return {
            "invocationId": inv_id,
            "stepIndex": step,
            "toolName": tool,
            "status": "SUCCESS",
            "arguments": args,
            "output": output,
            "error": None,
            "latencyMs": self.rng.randint(40, 2500),
            "retrievalDetails": None,
        }

    # --- executor claims and answer ------------------------------------------------------------

    def claims(self) -> list[dict[str, Any]]:
        name, text = self.name, self.text
        ref_of_chunk = ("inv-1#1", "inv-2#1")
        claims = []
        for number, claim in enumerate(text.claims, start=1):
            excerpt = self.fmt(claim.excerpt)
            ref_id = ref_of_chunk[claim.chunk]
            claim_text = self.fmt(claim.text, altered=name in ALTERED_NUMBER)
            if number == 1 and name == "fabricated_excerpt":
                excerpt = text.fabricated_excerpt
            if number == 2 and name == "unknown_ref":
                ref_id = f"inv-{self.rng.randint(5, 9)}#{self.rng.randint(2, 4)}"
            if name in {"no_hit", "all_calls_failed", "no_tool_calls"}:
                ref_id, excerpt = NO_EVIDENCE_REF, ""
            if name == "grounded_l1" and ref_id == "inv-1#1":
                excerpt = excerpt[: max(8, len(excerpt) * 2 // 3)]
            claims.append(
                {
                    "claimId": f"c{number}",
                    "text": claim_text,
                    "critical": claim.critical,
                    "evidence": [{"refId": ref_id, "excerpt": excerpt}],
                }
            )
        if name == "aiops_unrelated_alert":
            # The report blames the unrelated alert and cites the input service's logs for it.
            log_claim = next(claim for claim in claims if claim["evidence"][0]["refId"] == "inv-2#1")
            diagnosis = UNRELATED_DIAGNOSIS[self.language].format(**self.unrelated)
            return [{**log_claim, "claimId": "c1", "text": diagnosis, "critical": True}]
        if name in {"no_hit", "all_calls_failed", "no_tool_calls"}:
            claims.append(
                {
                    "claimId": "c4",
                    "text": text.no_hit_claim,
                    "critical": False,
                    "evidence": [{"refId": NO_EVIDENCE_REF, "excerpt": ""}],
                }
            )
        if name == "absence_claim":
            claims.append(
                {
                    "claimId": "c4",
                    "text": text.absence_claim,
                    "critical": True,
                    "evidence": [{"refId": NO_EVIDENCE_REF, "excerpt": ""}],
                }
            )
        return claims

    def executor_output(self, status: str) -> dict[str, Any] | None:
        if status != "SUCCEEDED" or (self.scenario.mode == "aiops" and self.name not in AIOPS_WITH_CLAIMS):
            return None
        if self.name == "invalid_executor_output":
            variant = self.rng.randrange(3)
            if variant == 0:
                return {"version": "executor_evidence_v1", "claims": "c1: " + self.fmt(self.text.claims[0].text)}
            if variant == 1:
                return {"version": "executor_evidence_v2", "claims": [{"claimId": "c1", "evidence": "inv-1#1"}]}
            return {"raw": '```json\n{"version": "executor_evidence_v2", "claims": [{"claimId": "c1",'}
        return {"version": "executor_evidence_v2", "claims": self.claims(), "finalAnswer": self.answer()}

    def answer(self) -> str:
        zh = self.language == "zh"
        text, t = self.text, self.topic
        altered = self.name in ALTERED_NUMBER
        root = self.fmt(text.claims[0].text)
        fact = self.fmt(text.claims[1].text, altered=altered)
        if self.name == "aiops_unrelated_alert":
            root = UNRELATED_DIAGNOSIS[self.language].format(**self.unrelated)
            fact = ""
        heading_root, heading_fix = ("## 根因", "## 处理建议") if zh else ("## Root cause", "## Fix")
        if self.rng.random() < 0.3:
            heading_root, heading_fix = (
                ("**根因分析**", "**修复方案**") if zh else ("**Root cause analysis**", "**Remediation**")
            )
        lines = [heading_root, f"{root}{'。' if zh else '.'}"]
        if fact:
            lines.append(f"{fact}{'。' if zh else '.'}")
        if self.name == "absence_claim":
            lines.append(f"{text.absence_claim}{'。' if zh else '.'}")
        if self.name in {"no_hit", "all_calls_failed", "no_tool_calls"}:
            lines.append(
                "（注意：本次未检索到直接证据，以上结论置信度较低。）"
                if zh
                else "(Note: no direct evidence was retrieved; this conclusion has low confidence.)"
            )
        lines += ["", heading_fix, f"1. {text.fix_steps[0]}", f"2. {text.fix_steps[1]}", ""]
        lines.append(
            f"**错误码**：`{t.error_code}`  **服务**：{t.service}"
            if zh
            else f"**Error code**: `{t.error_code}`  **Service**: {t.service}"
        )
        if self.scenario.mode == "aiops":
            lines.append(f"**告警**：{t.alert}" if zh else f"**Alert**: {t.alert}")
        return "\n".join(lines)


def _feedback(scenario: Scenario, rng: random.Random) -> str:
    """Roughly a quarter of finished answers get feedback; bad evidence earns 'not_useful'."""
    if scenario.name in {"running_session", "failed_session", "aiops_failed"} or rng.random() > 0.28:
        return ""
    if scenario.name in _BAD_ANSWERS:
        return "not_useful" if rng.random() < 0.8 else "useful"
    return "useful" if rng.random() < 0.85 else "not_useful"


def _fail(call: dict[str, Any], error: str) -> None:
    call["status"] = "FAILED"
    call["output"] = None
    call["error"] = error


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")

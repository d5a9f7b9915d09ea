"""Plain-data builders for the producer tests: no database, no factories."""

import hashlib
from typing import Any

from core.text import detect_language
from diagnosis.evaluation_layers import layer_json
from diagnosis.services.evaluation_config import evaluation_config, evaluation_judge
from diagnosis.services.producers import pipeline
from diagnosis.services.producers.judges import Judge
from diagnosis.services.producers.types import InvocationData, PipelineResult, RefData, SessionData


def evaluate(data: SessionData, *, judge: Judge | None = None) -> PipelineResult:
    """The pipeline as production runs it: this process's settings and judge, unless `judge` is given."""
    return pipeline.evaluate(data, config=evaluation_config(), judge=judge or evaluation_judge())


def layer_of(result: PipelineResult, name: str) -> dict[str, Any]:
    """One layer of the result as it is stored (JSON)."""
    return layer_json(result.layers[name])


def ref(ref_id: str, content: str, *, source: str = "kb://doc", invocation_id: str = "") -> RefData:
    digest = hashlib.sha256(content.encode()).hexdigest()
    return RefData(ref_id=ref_id, source=source, content=content, content_sha256=digest, invocation_id=invocation_id)


def inv(
    invocation_id: str = "inv-1",
    *,
    tool: str = "lookup_knowledge",
    status: str = "SUCCESS",
    match_level: str = "",
    refs: tuple[RefData, ...] = (),
    output: Any = "",
    latency_ms: int | None = 100,
    step_index: int | None = 1,
) -> InvocationData:
    return InvocationData(
        invocation_id=invocation_id,
        step_index=step_index,
        tool_name=tool,
        status=status,
        arguments={},
        output=output,
        error="" if status == "SUCCESS" else "boom",
        latency_ms=latency_ms,
        match_level=match_level,
        refs=refs,
    )


def retrieval(
    invocation_id: str, content: str, *, level: str = "L0", status: str = "SUCCESS", **kw: Any
) -> InvocationData:
    """A retrieval call with one ref `<invocation_id>#1` holding `content`."""
    return inv(
        invocation_id,
        status=status,
        match_level=level,
        refs=(ref(f"{invocation_id}#1", content, invocation_id=invocation_id, source=kw.pop("source", "kb://doc")),),
        **kw,
    )


def claim(claim_id: str, text: str, *evidence: tuple[str, str], critical: bool = True) -> dict[str, Any]:
    return {
        "claimId": claim_id,
        "text": text,
        "critical": critical,
        "evidence": [{"refId": r, "excerpt": e} for r, e in evidence],
    }


def executor(*claims: dict[str, Any], final_answer: str = "debug only") -> dict[str, Any]:
    return {"version": "executor_evidence_v2", "claims": list(claims), "finalAnswer": final_answer}


def session(
    *,
    invocations: tuple[InvocationData, ...] | list[InvocationData] = (),
    executor_output: dict[str, Any] | None = None,
    mode: str = "chat",
    status: str = "SUCCEEDED",
    query: str = "订单服务 5xx 突增，原因是什么？",
    answer: str = "answer",
    language: str | None = None,
    alert: dict[str, Any] | None = None,
    active_alerts: list[dict[str, Any]] | None = None,
    fingerprint: str = "fp-1",
    previous_round: int = 0,
    previous_fingerprint: str = "",
) -> SessionData:
    return SessionData(
        session_id="s-1",
        mode=mode,
        language=language or detect_language(query),
        query=query,
        answer=answer,
        status=status,
        alert=alert,
        active_alerts=active_alerts or [],
        executor_output=executor_output,
        invocations=tuple(invocations),
        evidence_fingerprint=fingerprint,
        previous_round=previous_round,
        previous_evidence_fingerprint=previous_fingerprint,
    )


class ScriptedJudge:
    """Decides each claim by its text, for tests of what the verifier does with the verdicts (the
    session verdict, attribution, composer), not of the judge itself (tests/judge, the gate)."""

    name = "deterministic"

    def __init__(self, verdicts: dict[str, str]) -> None:
        self.verdicts = verdicts

    def close(self) -> None:
        pass

    def judge(self, item):
        from diagnosis.messages import message
        from diagnosis.services.producers.judges import Judgement
        from diagnosis.services.producers.judges.base import band_of

        verdict = self.verdicts[item.text]
        why = message("judge.nothing_aligned")
        return Judgement(verdict, why, self.name, band=band_of(verdict), reasons=(why,))

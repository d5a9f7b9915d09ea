"""Values the evaluation producers and the models share, each defined once, importable without the ORM.

The producers (`diagnosis.services.producers`) and the typed layers (`diagnosis.evaluation_layers`)
compare with these enums; `diagnosis.models` builds its `TextChoices` from the same values and
adds the labels, so a stored value and the producers' value can never drift apart.
"""

from enum import StrEnum

from judge.verdicts import Band as ClaimBand
from judge.verdicts import Decider as ClaimDecider

__all__ = ["ClaimBand", "ClaimDecider"]  # the judge's own enums, stored on claim checks

# An evidence binding to this refId says "the query retrieved no matching evidence".
NO_EVIDENCE_REF = "$.no_evidence"


class Layer(StrEnum):
    """The layers of the `self_evaluation` container, one per producer (seed document 000, section 3)."""

    RULE = "rule_evaluation"
    VERIFIER = "verifier_evaluation"
    AIOPS = "aiops_rule_evaluation"


class Mode(StrEnum):
    CHAT = "chat"
    AIOPS = "aiops"


class VerifierVerdict(StrEnum):
    PASS = "PASS"  # noqa: S105 (a verdict, not a secret)
    LOW_CONFID = "LOW_CONFID"
    REJECT = "REJECT"


class AiOpsVerdict(StrEnum):
    PASS = "PASS"  # noqa: S105
    WARN = "WARN"
    FAIL = "FAIL"


class ClaimVerdict(StrEnum):
    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"
    CONTRADICTED = "CONTRADICTED"
    NO_EVIDENCE = "NO_EVIDENCE"


class AiOpsCheckSeverity(StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"


class FailureAttribution(StrEnum):
    NONE = "NONE"
    RETRIEVAL_MISS = "RETRIEVAL_MISS"
    TOOL_ERROR = "TOOL_ERROR"
    CITATION_FAILURE = "CITATION_FAILURE"
    UNSUPPORTED_REASONING = "UNSUPPORTED_REASONING"

"""A unit of the claim and what the checks found for it: aligned, unaligned, a structure gap or a conflict."""

from dataclasses import dataclass

from ..verdicts import Reason, UnitStatus, reason

# Units that name a check of the clause rather than a word of the claim (their names are labels).
CHECK_UNITS = frozenset({"cause", "roles", "quantifier", "modality", "mood", "frequency", "rank"})


@dataclass(frozen=True, slots=True)
class Unit:
    text: str
    status: UnitStatus
    why: Reason  # the detail: a "unit.*" reason

    def described(self) -> Reason:
        """ "text: detail" """
        return reason("unit.check" if self.text in CHECK_UNITS else "unit.word", text=self.text, detail=self.why)

    def shown(self) -> Reason:
        """ "text: detail" when aligned, else "text: status (detail)" """
        if self.status == UnitStatus.ALIGNED:
            return self.described()
        code = "unit.check_status" if self.text in CHECK_UNITS else "unit.word_status"
        return reason(code, text=self.text, status=self.status, detail=self.why)

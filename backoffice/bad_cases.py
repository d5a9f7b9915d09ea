"""The bad-case form with its session beside it: query, answer, verdict and rationale, the claims
the verifier did not accept, the users' feedback and the failure attribution.

The triage rules (fields, actions, "Save & next open", the suggested category) are the cases
app's `BadCaseAdmin`; the panel reads feedback, which the cases app may not import, so the back
office registers the admin with the panel added.
"""

from dataclasses import dataclass

from django.contrib import admin
from django.db.models import Subquery

from cases.admin import BadCaseAdmin
from cases.models import BadCase
from core.adminkit.display import verdict_badge
from diagnosis.evaluation_layers import self_evaluation_read
from diagnosis.messages import machine_text
from diagnosis.models import ClaimCheck, ClaimVerdict, DiagnosisSession
from feedback.models import FeedbackEvent

# The claims a reviewer triaging a bad case needs to see: those the verifier did not accept.
DOUBTED_VERDICTS = [ClaimVerdict.UNSUPPORTED, ClaimVerdict.CONTRADICTED]
FEEDBACK_SHOWN = 20


@dataclass
class BadCaseContext:
    session: DiagnosisSession
    verdict_badge: str
    rationale: str  # in the admin's language
    claims: list[ClaimCheck]  # unsupported and contradicted, of the latest verifier round
    feedback_events: list[FeedbackEvent]  # newest first, at most FEEDBACK_SHOWN


def bad_case_context_get(*, bad_case: BadCase) -> BadCaseContext:
    """The session behind `bad_case`, shaped for the side panel, in three queries."""
    session = DiagnosisSession.objects.get(pk=bad_case.session_id)
    latest_round = ClaimCheck.objects.filter(session=session).order_by("-round").values("round")[:1]
    claims = list(
        ClaimCheck.objects.filter(session=session, verdict__in=DOUBTED_VERDICTS, round=Subquery(latest_round)).order_by(
            "-critical", "id"
        )
    )
    verifier = self_evaluation_read(session.self_evaluation).verifier
    return BadCaseContext(
        session=session,
        verdict_badge=verdict_badge(session.verifier_verdict, session.get_verifier_verdict_display()),
        rationale=machine_text(verifier.rationale_code, verifier.rationale_params, verifier.rationale or "")
        if verifier
        else "",
        claims=claims,
        feedback_events=list(FeedbackEvent.objects.filter(session=session).select_related("user")[:FEEDBACK_SHOWN]),
    )


@admin.register(BadCase)
class BadCaseTriageAdmin(BadCaseAdmin):
    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["bad_case_context"] = bad_case_context_get(bad_case=obj)
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)

"""What a reviewer does to sessions, from the session list and from the triage queue alike.

Each action calls a service, declares its permission and logs what it did per session.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from cases.models import BadCaseSource
from cases.services import bad_case_open_for_session
from diagnosis.models import ReviewJudgement
from diagnosis.services.evaluation import session_evaluation_request
from diagnosis.services.reviews import session_mark_reviewed
from selfeval_site.backoffice.forms import VERIFIER_RIGHT_CHOICES, verifier_was_right_value

# An action never touches more rows than this at once: a reviewer narrows the filters instead.
MAX_ACTION_ROWS = 1000


class SessionActionForm(helpers.ActionForm):
    """The action menu plus what "Mark reviewed" records for every selected session."""

    judgement = forms.ChoiceField(label=_("Judgement"), required=False, choices=[("", "—"), *ReviewJudgement.choices])
    verifier_was_right = forms.ChoiceField(
        label=_("Verifier right?"), required=False, choices=[("", "—"), *VERIFIER_RIGHT_CHOICES]
    )
    notes = forms.CharField(label=_("Notes"), required=False, max_length=5000)


class SessionActionsMixin:
    """Re-run the evaluation, open bad cases, mark reviewed; for admins of DiagnosisSession rows."""

    action_form = SessionActionForm
    actions = ["rerun_evaluation", "open_bad_cases", "mark_reviewed"]

    def has_reevaluate_permission(self, request) -> bool:
        return request.user.has_perm("diagnosis.reevaluate_session")

    def has_review_permission(self, request) -> bool:
        return request.user.has_perm("diagnosis.review_session")

    def has_open_bad_case_permission(self, request) -> bool:
        return request.user.has_perm("cases.add_badcase")

    @admin.action(permissions=["reevaluate"], description=_("Re-run the evaluation"))
    def rerun_evaluation(self, request, queryset):
        sessions = list(queryset.select_related(None).only("pk", "session_id")[:MAX_ACTION_ROWS])
        count = session_evaluation_request(session_pks=[session.pk for session in sessions])
        for session in sessions:
            self.log_change(request, session, gettext("Requested re-evaluation"))
        self.message_user(
            request,
            ngettext("Re-evaluation requested for %(n)d session.", "Re-evaluation requested for %(n)d sessions.", count)
            % {"n": count},
            messages.SUCCESS,
        )

    @admin.action(permissions=["open_bad_case"], description=_("Open bad cases"))
    def open_bad_cases(self, request, queryset):
        sessions = list(
            queryset.select_related(None).only("pk", "session_id", "project_id", "verifier_verdict")[:MAX_ACTION_ROWS]
        )
        for session in sessions:
            bad_case_open_for_session(session=session, source=BadCaseSource.REVIEWER)
            self.log_change(request, session, gettext("Opened a bad case"))
        self.message_user(
            request,
            ngettext("Bad case open for %(n)d session.", "Bad cases open for %(n)d sessions.", len(sessions))
            % {"n": len(sessions)},
            messages.SUCCESS,
        )

    @admin.action(permissions=["review"], description=_("Mark reviewed (judgement above)"))
    def mark_reviewed(self, request, queryset):
        judgement = request.POST.get("judgement", "")
        if judgement not in ReviewJudgement.values:
            self.message_user(request, gettext("Choose a judgement for the selected sessions first."), messages.ERROR)
            return
        verifier_was_right = verifier_was_right_value(request.POST.get("verifier_was_right", ""))
        notes = request.POST.get("notes", "")[:5000]
        sessions = list(queryset.select_related(None).only("pk", "session_id")[:MAX_ACTION_ROWS])
        for session in sessions:
            session_mark_reviewed(
                session=session,
                reviewer=request.user,
                judgement=judgement,
                verifier_was_right=verifier_was_right,
                notes=notes,
            )
            self.log_change(request, session, gettext("Marked reviewed: %(judgement)s") % {"judgement": judgement})
        self.message_user(
            request,
            ngettext("%(n)d session marked reviewed.", "%(n)d sessions marked reviewed.", len(sessions))
            % {"n": len(sessions)},
            messages.SUCCESS,
        )

"""What a reviewer does to sessions, from the session list and from the triage queue alike.

Each action calls a service, declares its permission and logs what it did per session.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db import transaction
from django.template.response import TemplateResponse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from backoffice.forms import BulkReviewFormSet
from backoffice.listing import inspector_url
from backoffice.models import ReviewLock
from backoffice.services.sharing import lock_holder_name, review_locks_held_by_others
from cases.models import BadCaseSource
from cases.services import bad_case_open_for_session
from diagnosis.models import DiagnosisSession
from diagnosis.services.evaluation import session_evaluation_request
from diagnosis.services.reviews import session_mark_reviewed

# An action never touches more rows than this at once: a reviewer narrows the filters instead.
MAX_ACTION_ROWS = 1000
# The bulk review page lists at most this many sessions, each with its own judgement.
MAX_REVIEW_ROWS = 100
# A warning about reviews recorded over other reviewers' holds names at most this many sessions.
MAX_NAMED_HOLDS = 10
BULK_REVIEW_FIELDS = [
    "pk",
    "session_id",
    "project__slug",
    "project__name",
    "mode",
    "query",
    "answer",
    "verifier_verdict",
    "feedback",
    "evaluation_state",
    "groundedness_score",
    "created_at",
]


class SessionActionForm(helpers.ActionForm):
    """The action menu; it carries the labels of the selection kept across pages (selection.js)."""

    action = forms.ChoiceField(
        label=_("Action:"),
        widget=forms.Select(
            attrs={
                "data-kept-label": _("Selected on other pages: %(n)s"),
                "data-clear-label": _("Clear the selection"),
            }
        ),
    )


class SessionActionsMixin:
    """Re-run the evaluation, open bad cases, review; for admins of DiagnosisSession rows (with
    `InspectorListMixin`'s `list_label`). The selection is kept across pages (selection.js)."""

    action_form = SessionActionForm

    class Media:
        js = ["selfeval/selection.js"]

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

    @admin.action(permissions=["review"], description=_("Review selected sessions one by one…"))
    def mark_reviewed(self, request, queryset):
        """A page listing each selected session with its own judgement; applying it records one
        review per session given a judgement, all or none."""
        sessions = list(
            queryset.select_related(None)
            .select_related("project")
            .only(*BULK_REVIEW_FIELDS)
            .order_by("created_at", "id")[: MAX_REVIEW_ROWS + 1]
        )
        more = len(sessions) > MAX_REVIEW_ROWS
        sessions = sessions[:MAX_REVIEW_ROWS]
        by_pk = {session.pk: session for session in sessions}
        applying = "apply" in request.POST
        formset = BulkReviewFormSet(
            request.POST if applying else None,
            prefix="review",
            initial=[{"session": pk, "judgement": ""} for pk in by_pk],
        )
        if applying and formset.is_valid():
            chosen = [form for form in formset if form.cleaned_data.get("judgement")]
            if any(form.cleaned_data["session"] not in by_pk for form in chosen):
                self.message_user(
                    request, gettext("A reviewed session is not among the selected ones."), messages.ERROR
                )
                return None
            held = review_locks_held_by_others(
                session_pks=[form.cleaned_data["session"] for form in chosen], user=request.user
            )
            with transaction.atomic():
                for form in chosen:
                    session = by_pk[form.cleaned_data["session"]]
                    judgement = form.cleaned_data["judgement"]
                    session_mark_reviewed(
                        session=session,
                        reviewer=request.user,
                        judgement=judgement,
                        verifier_was_right=form.cleaned_verifier_was_right(),
                        notes=form.cleaned_data["notes"],
                    )
                    self.log_change(
                        request, session, gettext("Marked reviewed: %(judgement)s") % {"judgement": judgement}
                    )
            skipped = len(formset.forms) - len(chosen)
            self.message_user(
                request,
                gettext("Reviews recorded: %(reviewed)d; skipped: %(skipped)d.")
                % {"reviewed": len(chosen), "skipped": skipped},
                messages.SUCCESS,
            )
            if held:  # the lock is soft: the reviews stand, and their author learns whose holds they crossed
                self.message_user(
                    request, _held_warning([(by_pk[pk], lock) for pk, lock in held.items()]), messages.WARNING
                )
            return None
        rows = [(form, by_pk.get(_as_int(form["session"].value()))) for form in formset]
        context = {
            **self.admin_site.each_context(request),
            "title": ngettext("Review %(n)d session", "Review %(n)d sessions", len(sessions)) % {"n": len(sessions)},
            "opts": self.opts,
            "list_label": self.list_label,
            "list_url": request.get_full_path(),
            "formset": formset,
            "rows": [(form, session) for form, session in rows if session is not None],
            "more": more,
            "max_rows": MAX_REVIEW_ROWS,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "action": "mark_reviewed",
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, "admin/backoffice/bulk_review.html", context, status=400 if applying else 200)


def _held_warning(held: list[tuple[DiagnosisSession, ReviewLock]]) -> str:
    """ "2 sessions were open in other reviewers' inspectors ...: s-1 (alice), s-4 (bob)", each
    session a link to its inspector; past `MAX_NAMED_HOLDS` the list ends with "…"."""
    held = sorted(held, key=lambda pair: pair[0].session_id)
    named = format_html_join(
        ", ",
        '<a href="{}">{}</a> ({})',
        (
            (inspector_url(session.pk), session.session_id, lock_holder_name(lock))
            for session, lock in held[:MAX_NAMED_HOLDS]
        ),
    )
    if len(held) > MAX_NAMED_HOLDS:
        named = format_html("{}, …", named)
    template = ngettext(
        "{n} session was open in another reviewer's inspector: your review was recorded over their hold ({sessions}). "
        "Tell them, so that it is not reviewed twice.",
        "{n} sessions were open in other reviewers' inspectors: your reviews were recorded over their holds "
        "({sessions}). Tell them, so that they are not reviewed twice.",
        len(held),
    )
    return format_html(template, n=len(held), sessions=named)


def _as_int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None

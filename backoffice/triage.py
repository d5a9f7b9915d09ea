"""The triage queue: the admin's own changelist over sessions waiting for a reviewer.

Oldest first; filters by assignee ("My queue"), reason, mode and project; the session list's
actions (re-run, open bad cases, review one by one) plus take and release; the capped paginator.
A row opens the session inspector, which walks this queue with its filters (`listing`).
"""

import copy
import datetime as dt

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import HttpResponseRedirect, QueryDict
from django.urls import path, reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html, format_html_join
from django.utils.timesince import timesince
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from backoffice.actions import MAX_ACTION_ROWS, SessionActionsMixin
from backoffice.listing import FILTERS_VAR, InspectorListMixin, inspector_url
from backoffice.models import ReviewLock, TriageItem
from backoffice.services.sharing import (
    lock_holder_name,
    lock_is_live,
    triage_assignments_release,
    triage_assignments_take,
    triage_assignments_take_next,
)
from core.adminkit.display import query_cell, verdict_badge
from core.adminkit.mixins import ReadOnlyAdminMixin, TenantAdminMixin
from core.adminkit.paging import CappedCountPaginator
from diagnosis.admin import HEAVY_SESSION_FIELDS
from diagnosis.models import EvaluationState, Feedback, VerifierVerdict
from diagnosis.selectors import sessions_needing_review

TRIAGE_CHANGELIST = "admin:backoffice_triageitem_changelist"
# Why a session waits, as a filter: each reason is one of the terms of `needs_review`.
REASONS = {
    "not_useful": (_("Not useful feedback"), Q(feedback=Feedback.NOT_USEFUL)),
    "reject": (_("Verdict REJECT"), Q(verifier_verdict=VerifierVerdict.REJECT)),
    "low_confid": (_("Verdict LOW_CONFID"), Q(verifier_verdict=VerifierVerdict.LOW_CONFID)),
    "evaluation_failed": (
        _("Evaluation failed or partial"),
        Q(evaluation_state__in=[EvaluationState.PARTIAL, EvaluationState.FAILED]),
    ),
}


def presence_label(lock: ReviewLock | None, *, viewer) -> str:
    """ "Alice is reviewing this (opened 2 minutes ago)" for a live lock of someone else, else ""."""
    if not lock_is_live(lock) or lock.holder_id == viewer.pk:
        return ""
    name = lock_holder_name(lock)
    if timezone.now() - lock.opened_at < dt.timedelta(minutes=1):
        return gettext("%(name)s is reviewing this (opened just now)") % {"name": name}
    ago = timesince(lock.opened_at, timezone.now(), depth=1)
    return gettext("%(name)s is reviewing this (opened %(ago)s ago)") % {"name": name, "ago": ago}


class AssigneeFilter(admin.SimpleListFilter):
    """ "Assigned to me" is the reviewer's own queue (the "My queue" link)."""

    title = _("assignee")
    parameter_name = "assigned"

    def lookups(self, request, model_admin):
        return [("me", _("Assigned to me")), ("nobody", _("Unassigned")), ("others", _("Assigned to others"))]

    def queryset(self, request, queryset):
        value = self.value()
        if value == "me":
            return queryset.filter(triage_assignment__assignee=request.user)
        if value == "nobody":
            return queryset.filter(triage_assignment__isnull=True)
        if value == "others":
            return queryset.filter(triage_assignment__isnull=False).exclude(triage_assignment__assignee=request.user)
        return queryset


class ReasonFilter(admin.SimpleListFilter):
    title = _("reason")
    parameter_name = "reason"

    def lookups(self, request, model_admin):
        return [(key, label) for key, (label, _condition) in REASONS.items()]

    def queryset(self, request, queryset):
        reason = REASONS.get(self.value() or "")
        return queryset.filter(reason[1]) if reason else queryset


@admin.register(TriageItem)
class TriageQueueAdmin(InspectorListMixin, SessionActionsMixin, TenantAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_key = "triage"
    list_label = _("Triage queue")
    list_display = ["session", "project", "why", "verdict", "evidence_score", "question", "who", "created_at"]
    # The session id opens the inspector, which keeps this queue's filters and walks it.
    list_display_links = ["session"]
    list_filter = [AssigneeFilter, ReasonFilter, "mode", "project"]
    list_select_related = ["project", "triage_assignment__assignee", "review_lock__holder"]
    actions = [*SessionActionsMixin.actions, "take", "release"]
    list_per_page = 50
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    paginator = CappedCountPaginator
    ordering = ["created_at", "id"]
    change_list_template = "admin/backoffice/triageitem/change_list.html"

    def has_view_permission(self, request, obj=None) -> bool:
        return request.user.has_perm("diagnosis.view_diagnosissession")

    def get_queryset(self, request):
        # The dashboard's "need review" counts the same queryset (`sessions_needing_review`).
        queued = sessions_needing_review(access=self.access(request), queryset=super().get_queryset(request))
        return queued.defer(*HEAVY_SESSION_FIELDS)

    def get_urls(self):
        name = f"{self.opts.app_label}_{self.opts.model_name}_take_next"
        take_next = self.admin_site.admin_view(require_POST(self.take_next_view))
        return [path("take-next/", take_next, name=name), *super().get_urls()]

    def changelist_view(self, request, extra_context=None):
        context = {"can_take_next": self.has_review_permission(request), "take_next": settings.SELFEVAL_TAKE_NEXT}
        return super().changelist_view(request, {**context, **(extra_context or {})})

    def take_next_view(self, request):
        """ "Take next N": the oldest sessions nobody has taken, of the queue as filtered, become the
        reviewer's; then their queue ("My queue") with the same filters."""
        if not self.has_review_permission(request):
            raise PermissionDenied
        filters = QueryDict(request.POST.get(FILTERS_VAR, ""), mutable=True)
        filters.pop("p", None)
        filters.pop(AssigneeFilter.parameter_name, None)
        queue = self._filtered_queue(request, filters)
        taken = triage_assignments_take_next(queue=queue, user=request.user, count=settings.SELFEVAL_TAKE_NEXT)
        for session in queue.model.objects.filter(pk__in=taken).only("pk", "session_id"):
            self.log_change(request, session, gettext("Took the session for review"))
        if taken:
            self.message_user(
                request,
                ngettext("%(n)d session is now in your queue.", "%(n)d sessions are now in your queue.", len(taken))
                % {"n": len(taken)},
                messages.SUCCESS,
            )
        else:
            self.message_user(request, gettext("No session is left to take in this list."), messages.INFO)
        filters[AssigneeFilter.parameter_name] = "me"
        return HttpResponseRedirect(
            f"{reverse(TRIAGE_CHANGELIST, current_app=self.admin_site.name)}?{filters.urlencode()}"
        )

    def _filtered_queue(self, request, filters: QueryDict):
        """The queue with the list's filters, search and access, as the changelist builds it."""
        list_request = copy.copy(request)
        list_request.GET = filters
        list_request.list_place_only = True
        try:
            return self.get_changelist_instance(list_request).queryset
        except IncorrectLookupParameters:
            return self.get_queryset(request)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # A queue item is a session: its page is the inspector, walking this queue.
        filters = request.GET.get(FILTERS_VAR, "")
        return HttpResponseRedirect(inspector_url(object_id, list_key=self.list_key, filters=filters))

    @admin.display(description=_("session"), ordering="session_id")
    def session(self, obj):
        return obj.session_id

    @admin.display(description=_("why"))
    def why(self, obj):
        reasons = []
        if obj.feedback == Feedback.NOT_USEFUL:
            reasons.append(gettext("not useful"))
        if obj.verifier_verdict in (VerifierVerdict.REJECT, VerifierVerdict.LOW_CONFID):
            reasons.append(gettext("verdict %(verdict)s") % {"verdict": obj.get_verifier_verdict_display()})
        if obj.evaluation_state in (EvaluationState.PARTIAL, EvaluationState.FAILED):
            reasons.append(gettext("evaluation %(state)s") % {"state": obj.get_evaluation_state_display().lower()})
        return format_html_join(" ", '<span class="se-badge se-reason">{}</span>', ((reason,) for reason in reasons))

    @admin.display(description=_("verdict"), ordering="verifier_verdict")
    def verdict(self, obj):
        return verdict_badge(obj.verifier_verdict, obj.get_verifier_verdict_display())

    @admin.display(description=_("query"))
    def question(self, obj):
        return query_cell(obj.query)

    @admin.display(description=_("who"))
    def who(self, obj):
        """The assignee, and whoever has the session open right now."""
        assignment = getattr(obj, "triage_assignment", None)
        lock = getattr(obj, "review_lock", None)
        parts = []
        if assignment is not None:
            parts.append(format_html('<span class="se-badge">{}</span>', assignment.assignee.get_username()))
        if lock_is_live(lock):
            parts.append(
                format_html(
                    '<span class="se-badge se-badge-needs" title="{}">{}</span>',
                    gettext("reviewing since %(time)s")
                    % {"time": date_format(timezone.localtime(lock.opened_at), "H:i")},
                    gettext("%(name)s reviewing") % {"name": lock.holder.get_username()},
                )
            )
        return format_html_join(" ", "{}", ((part,) for part in parts)) if parts else "—"

    @admin.action(permissions=["review"], description=_("Take the selected sessions"))
    def take(self, request, queryset):
        pks = list(queryset.select_related(None).values_list("pk", flat=True)[:MAX_ACTION_ROWS])
        result = triage_assignments_take(session_pks=pks, user=request.user)
        self.message_user(
            request,
            gettext("In your queue: %(taken)d; taken by other reviewers: %(others)d.")
            % {"taken": result.taken, "others": result.held_by_others},
            messages.SUCCESS if result.taken else messages.WARNING,
        )

    @admin.action(permissions=["review"], description=_("Release the selected sessions"))
    def release(self, request, queryset):
        pks = list(queryset.select_related(None).values_list("pk", flat=True)[:MAX_ACTION_ROWS])
        released = triage_assignments_release(session_pks=pks, user=request.user)
        self.message_user(
            request,
            ngettext("%(n)d session released.", "%(n)d sessions released.", released) % {"n": released},
            messages.SUCCESS,
        )

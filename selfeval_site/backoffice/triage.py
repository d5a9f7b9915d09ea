"""The triage queue: the admin's own changelist over sessions waiting for a reviewer.

Oldest first; filters by reason, mode and project; the session list's actions (re-run, open bad
cases, mark reviewed); the capped paginator. A row opens the session inspector, which returns here.
"""

from django.contrib import admin
from django.db.models import Q
from django.http import HttpResponseRedirect
from django.utils.html import format_html_join
from django.utils.text import Truncator
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from diagnosis.admin import HEAVY_SESSION_FIELDS
from diagnosis.models import EvaluationState, Feedback, VerifierVerdict
from selfeval_site.adminkit.display import verdict_badge
from selfeval_site.adminkit.mixins import ReadOnlyAdminMixin, TenantAdminMixin
from selfeval_site.adminkit.paging import CappedCountPaginator
from selfeval_site.backoffice.actions import SessionActionsMixin
from selfeval_site.backoffice.listing import FILTERS_VAR, InspectorListMixin, inspector_url
from selfeval_site.backoffice.models import TriageItem

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
    list_display = ["session", "project", "why", "verdict", "evidence_score", "question", "created_at"]
    # The session id opens the inspector, which keeps this queue's filters and walks it.
    list_display_links = ["session"]
    list_filter = [ReasonFilter, "mode", "project"]
    list_select_related = ["project"]
    list_per_page = 50
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    paginator = CappedCountPaginator
    ordering = ["created_at", "id"]
    change_list_template = "admin/backoffice/triageitem/change_list.html"

    def has_view_permission(self, request, obj=None) -> bool:
        return request.user.has_perm("diagnosis.view_diagnosissession")

    def get_queryset(self, request):
        return super().get_queryset(request).filter(needs_review=True).defer(*HEAVY_SESSION_FIELDS)

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
        return Truncator(obj.query).chars(90)

"""The session admin of the back office: the changelist, the read-only session inspector and the triage queue.

Sessions are written only by the ingestion API and the evaluation services, so the admin never
edits one: the change view is the inspector, and every action goes through a service.
"""

import datetime as dt

from django.contrib import admin, messages
from django.contrib.admin.views.main import SEARCH_VAR
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Exists, OuterRef, Q
from django.http import Http404, HttpResponseBadRequest, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from backoffice import bad_cases  # noqa: F401 (registers the bad-case admin)
from backoffice.actions import SessionActionsMixin
from backoffice.forms import ClaimCorrectionForm, ReviewForm
from backoffice.inspector import inspection_get
from backoffice.listing import InspectorListMixin, ListContext, inspector_url, list_context_get
from backoffice.models import TriageItem
from backoffice.services.sharing import (
    HEARTBEAT_SECONDS,
    REASSIGN_PERMISSION,
    lock_holder_name,
    review_lock_held_by_other,
    review_lock_refresh,
    review_lock_release,
    triage_assignments_release,
    triage_assignments_take,
)
from backoffice.triage import TRIAGE_CHANGELIST, presence_label
from cases import services as case_services
from cases.models import BadCase, BadCaseSource, Case
from core.adminkit.csv_export import CSVExportMixin
from core.adminkit.display import query_cell, verdict_badge
from core.adminkit.mixins import ReadOnlyAdminMixin, TenantAdminMixin
from core.adminkit.paging import CappedCountPaginator
from diagnosis.admin import HEAVY_SESSION_FIELDS
from diagnosis.messages import machine_label
from diagnosis.models import (
    AiOpsCheck,
    AiOpsVerdict,
    DiagnosisSession,
    ReviewJudgement,
)
from diagnosis.selectors import session_has_claim_and_source, session_text_search, session_text_search_floor
from diagnosis.services import evaluation
from diagnosis.services.reviews import claim_correction_record, session_mark_reviewed
from feedback.models import FeedbackEvent


class AiOpsFailedCheckFilter(admin.SimpleListFilter):
    """Sessions where a named AIOps check failed (the dashboard links here), from the check rows."""

    title = _("failed AIOps check")
    parameter_name = "aiops_failed_check"

    def lookups(self, request, model_admin):
        # Only the chosen check: the dashboard names the others, with their counts.
        value = self.value()
        return [(value, machine_label(value))] if value else []

    def queryset(self, request, queryset):
        name = self.value()
        if not name:
            return queryset
        failed = AiOpsCheck.objects.filter(session=OuterRef("pk"), name=name, passed=False)
        # A failed check makes the verdict WARN or FAIL: the verdict index narrows the sessions first.
        return queryset.filter(Exists(failed), aiops_verdict__in=[AiOpsVerdict.WARN, AiOpsVerdict.FAIL])


class FixedChoicesFilter(admin.SimpleListFilter):
    """A filter whose choices are constants: the default one for a plain column runs SELECT DISTINCT
    over the whole table on every page view."""

    field_name = ""
    options: list[tuple[str, str]] = []

    def lookups(self, request, model_admin):
        return self.options

    def queryset(self, request, queryset):
        value = self.value()
        if value is None:
            return queryset
        return queryset.filter(**{self.field_name: self.cast(value)})

    def cast(self, value: str):
        return value


class NeedsReviewFilter(FixedChoicesFilter):
    title = _("needs review")
    parameter_name = "needs_review"
    field_name = "needs_review"
    options = [("1", _("Yes")), ("0", _("No"))]

    def cast(self, value: str) -> bool:
        return value == "1"


class LanguageFilter(FixedChoicesFilter):
    title = _("language")
    parameter_name = "language"
    field_name = "language"
    options = [("zh", _("Chinese")), ("en", _("English"))]


SEARCH_COUNT_CAP = 1000  # a searched list counts up to here ("1,000+")


def _instant(raw: str | None):
    """A changelist date bound (`created_at__gte=2026-11-01` or a full ISO datetime), or None."""
    if not raw:
        return None
    try:
        value = parse_datetime(raw)
        if value is None and (day := parse_date(raw)) is not None:
            value = dt.datetime.combine(day, dt.time.min)
    except ValueError:
        return None
    if value is not None and timezone.is_naive(value):
        value = timezone.make_aware(value)
    return value


@admin.register(DiagnosisSession)
class DiagnosisSessionAdmin(
    InspectorListMixin, SessionActionsMixin, TenantAdminMixin, ReadOnlyAdminMixin, CSVExportMixin, admin.ModelAdmin
):
    list_key = "sessions"
    list_label = _("Sessions")
    list_display = [
        "session_id",
        "query_short",
        "project",
        "mode",
        "status",
        "verdict",
        "evidence_score",
        "groundedness",
        "aiops",
        "feedback",
        "needs_review_display",
        "created",
    ]
    list_display_links = ["session_id"]
    list_filter = [
        "verifier_verdict",
        "aiops_verdict",
        "feedback",
        "status",
        "mode",
        "evaluation_state",
        "failure_attribution",
        ("created_at", admin.DateFieldListFilter),
        NeedsReviewFilter,
        LanguageFilter,
        "project",
        AiOpsFailedCheckFilter,
    ]
    list_select_related = ["project"]
    list_per_page = 50
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    paginator = CappedCountPaginator
    search_fields = ["session_id"]
    search_help_text = _(
        "An exact session id or alert service, else text in the query or the answer, over the chosen creation "
        "dates (every date when none are chosen)."
    )
    actions = [*SessionActionsMixin.actions, "export_csv"]
    csv_columns = {
        "session_id": "session_id",
        "project": "project__slug",
        "mode": "mode",
        "language": "language",
        "status": "status",
        "query": "query",
        "verifier_verdict": "verifier_verdict",
        "groundedness_score": "groundedness_score",
        "evidence_score": "evidence_score",
        "aiops_verdict": "aiops_verdict",
        "failure_attribution": "failure_attribution",
        "evaluation_state": "evaluation_state",
        "feedback": "feedback",
        "needs_review": "needs_review",
        "alert_name": "alert_name",
        "alert_service": "alert_service",
        "created_at": "created_at",
        "finished_at": "finished_at",
        "evaluated_at": "evaluated_at",
        "reviewed_at": "reviewed_at",
        "review_judgement": "review_judgement",
    }
    inspector_template = "admin/diagnosis/diagnosissession/inspector.html"

    def has_create_case_permission(self, request) -> bool:
        return request.user.has_perm("cases.add_case")

    def has_record_miscitation_permission(self, request) -> bool:
        """Opening the bad case if need be, and triaging it."""
        return self.has_open_bad_case_permission(request) and request.user.has_perm("cases.change_badcase")

    def get_queryset(self, request):
        return super().get_queryset(request).defer(*HEAVY_SESSION_FIELDS)

    def get_paginator(self, request, queryset, per_page, orphans=0, allow_empty_first_page=True):
        paginator = super().get_paginator(request, queryset, per_page, orphans, allow_empty_first_page)
        if request.GET.get(SEARCH_VAR, "").strip():
            # A row a text search reads without its index costs a function call (the gram index's
            # expression): the count stops sooner.
            paginator.cap = SEARCH_COUNT_CAP
        return paginator

    def get_search_results(self, request, queryset, search_term):
        """An exact session id or alert service first (two index lookups); else the text search over the
        list's date range (`session_text_search`), saying so when the term is too short for an index."""
        term = search_term.strip()
        if not term:
            return queryset, False
        exact = queryset.filter(Q(session_id=term) | Q(alert_service=term))
        if exact.exists():
            return exact, False
        since, until, now = (
            _instant(request.GET.get("created_at__gte")),
            _instant(request.GET.get("created_at__lt")),
            timezone.now(),
        )
        floor = session_text_search_floor(term=term, since=since, until=until, now=now)
        if floor != since and not getattr(request, "list_place_only", False):  # not for the inspector's walk
            self.message_user(
                request,
                gettext("“%(term)s” is too short to search every date: sessions created since %(day)s are searched.")
                % {"term": term, "day": date_format(timezone.localtime(floor), "Y-m-d")},
                messages.INFO,
            )
        return session_text_search(sessions=queryset, term=term, since=since, until=until, now=now), False

    @admin.display(description=_("created at"), ordering="created_at")
    def created(self, obj):
        # Compact and the same in both languages, so the column fits at 1440 px.
        return date_format(timezone.localtime(obj.created_at), "Y-m-d H:i")

    @admin.display(description=_("query"))
    def query_short(self, obj):
        return query_cell(obj.query)

    @admin.display(description=_("verdict"), ordering="verifier_verdict")
    def verdict(self, obj):
        return verdict_badge(obj.verifier_verdict, obj.get_verifier_verdict_display())

    @admin.display(description=_("AIOps"), ordering="aiops_verdict")
    def aiops(self, obj):
        return verdict_badge(obj.aiops_verdict, obj.get_aiops_verdict_display())

    # A GeneratedField is not shown as a boolean by the admin: its value would read True / False.
    @admin.display(description=_("needs review"), boolean=True, ordering="needs_review")
    def needs_review_display(self, obj):
        return obj.needs_review

    @admin.display(description=_("groundedness"), ordering="groundedness_score")
    def groundedness(self, obj):
        return "—" if obj.groundedness_score is None else f"{obj.groundedness_score:.2f}"

    # -- URLs ----------------------------------------------------------------------------------

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        wrap = self.admin_site.admin_view

        def post_route(route: str, view, name: str):
            """An inspector action: POST only (405 otherwise), after the admin's login check."""
            return path(f"<path:object_id>/{route}/", wrap(require_POST(view)), name=f"{info[0]}_{info[1]}_{name}")

        return [
            # The triage queue moved to its own changelist; old links keep working.
            path("triage/", wrap(self.triage_moved_view), name="{}_{}_triage".format(*info)),
            post_route("rerun", self.rerun_view, "rerun"),
            post_route("review", self.review_view, "review"),
            post_route("correct-claim", self.correct_claim_view, "correct_claim"),
            post_route("open-bad-case", self.open_bad_case_view, "open_bad_case"),
            post_route("create-case", self.create_case_view, "create_case"),
            post_route("take", self.take_view, "take"),
            post_route("release", self.release_view, "release"),
            post_route("presence", self.presence_view, "presence"),
            post_route("miscited", self.miscited_view, "miscited"),
            *super().get_urls(),
        ]

    def triage_moved_view(self, request):
        return HttpResponseRedirect(reverse(TRIAGE_CHANGELIST, current_app=self.admin_site.name))

    def _inspector_url(self, session, list_context: ListContext | None = None) -> str:
        if list_context is None:
            return inspector_url(session.pk)
        return inspector_url(session.pk, list_key=list_context.key, filters=list_context.filters)

    def _list_context(self, request, params, session) -> ListContext | None:
        """The list the inspector came from (`_list`): this one or the triage queue."""
        admins = {self.list_key: self, "triage": self.admin_site.get_model_admin(TriageItem)}
        return list_context_get(request=request, params=params, admins=admins, session=session)

    def _session_for_post(self, request, object_id, allowed: bool) -> DiagnosisSession:
        """The session a POST action acts on (get_urls lets only POST reach those views)."""
        if not allowed:
            raise PermissionDenied
        try:
            pk = int(object_id)
        except ValueError:
            raise Http404 from None
        return get_object_or_404(self.get_queryset(request), pk=pk)

    # -- inspector -------------------------------------------------------------------------

    def change_view(self, request, object_id, form_url="", extra_context=None):
        session = self.get_object(request, object_id)
        if session is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_view_permission(request, session):
            raise PermissionDenied
        return self._render_inspector(
            request, session, review_form=ReviewForm(), list_context=self._list_context(request, request.GET, session)
        )

    def get_object(self, request, object_id, from_field=None):
        # The inspector needs every column; the list's deferral does not apply here.
        try:
            return (
                DiagnosisSession.objects.visible_to(self.access(request))
                .select_related("project", "triage_assignment__assignee", "review_lock__holder")
                .get(pk=int(object_id))
            )
        except (ValueError, DiagnosisSession.DoesNotExist):
            return None

    def _render_inspector(self, request, session, *, review_form, list_context, status=200):
        inspection = inspection_get(
            session=session,
            feedback_events=list(FeedbackEvent.objects.filter(session=session).select_related("user")[:50]),
            cases=list(Case.objects.filter(session=session)),
            bad_cases=list(BadCase.objects.filter(session=session).select_related("assignee")),
        )
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Session %(session_id)s") % {"session_id": session.session_id},
            "subtitle": None,
            "opts": self.opts,
            "original": session,
            "has_view_permission": True,
            "inspection": inspection,
            "review_form": review_form,
            "can_review": self.has_review_permission(request),
            "can_reevaluate": self.has_reevaluate_permission(request),
            "can_open_bad_case": self.has_open_bad_case_permission(request),
            "can_create_case": self.has_create_case_permission(request),
            "can_record_miscitation": self.has_record_miscitation_permission(request),
            "verdict_badge": verdict_badge(session.verifier_verdict, session.get_verifier_verdict_display()),
            "aiops_badge": verdict_badge(session.aiops_verdict, session.get_aiops_verdict_display()),
            "review_judgement": dict(ReviewJudgement.choices).get(session.review_judgement, session.review_judgement),
            "preserved_filters": self.get_preserved_filters(request),
            "list_context": list_context,
            "assignment": getattr(session, "triage_assignment", None),
            "can_reassign": request.user.has_perm(REASSIGN_PERMISSION),
            "presence_label": presence_label(getattr(session, "review_lock", None), viewer=request.user),
            "heartbeat_seconds": HEARTBEAT_SECONDS,
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, self.inspector_template, context, status=status)

    def rerun_view(self, request, object_id):
        session = self._session_for_post(request, object_id, self.has_reevaluate_permission(request))
        evaluation.session_evaluation_request(session_pks=[session.pk])
        self.log_change(request, session, gettext("Requested re-evaluation"))
        self.message_user(request, gettext("Re-evaluation requested."), messages.SUCCESS)
        return HttpResponseRedirect(self._inspector_url(session))

    def review_view(self, request, object_id):
        session = self._session_for_post(request, object_id, self.has_review_permission(request))
        form = ReviewForm(request.POST)
        if not form.is_valid():
            session = self.get_object(request, object_id)
            list_context = self._list_context(request, request.POST, session)
            return self._render_inspector(request, session, review_form=form, list_context=list_context, status=400)
        held = review_lock_held_by_other(session=session, user=request.user)
        session_mark_reviewed(
            session=session,
            reviewer=request.user,
            judgement=form.cleaned_data["judgement"],
            verifier_was_right=form.cleaned_verifier_was_right(),
            notes=form.cleaned_data["notes"],
        )
        review_lock_release(session=session, user=request.user)
        self.log_change(
            request, session, gettext("Marked reviewed: %(judgement)s") % {"judgement": form.cleaned_data["judgement"]}
        )
        self.message_user(request, gettext("Review recorded; the session left the triage queue."), messages.SUCCESS)
        if held is not None:  # the lock is soft: the review stands, and its author learns whose hold it crossed
            self.message_user(
                request,
                gettext(
                    "%(name)s had this session open in the inspector: your review was recorded over their hold. "
                    "Tell them, so that the session is not reviewed twice."
                )
                % {"name": lock_holder_name(held)},
                messages.WARNING,
            )
        # Placed after the review: in the triage queue the session has just left the list.
        list_context = self._list_context(request, request.POST, session)
        if request.POST.get("next") == "next" and list_context is not None:
            if list_context.next_url:
                return HttpResponseRedirect(list_context.next_url)
            self.message_user(request, gettext("That was the last session of the list."), messages.INFO)
            return HttpResponseRedirect(list_context.list_url)
        return HttpResponseRedirect(self._inspector_url(session, list_context))

    def correct_claim_view(self, request, object_id):
        """A reviewer's verdict on one claim: the judge confirmed or corrected (a ClaimCorrection row)."""
        session = self._session_for_post(request, object_id, self.has_review_permission(request))
        form = ClaimCorrectionForm(request.POST)
        if not form.is_valid():
            return HttpResponseBadRequest(" ".join(e for errors in form.errors.values() for e in errors))
        claim_id = form.cleaned_data["claim_id"]
        try:
            correction = claim_correction_record(
                session=session,
                reviewer=request.user,
                claim_id=claim_id,
                verdict=form.cleaned_data["verdict"],
                note=form.cleaned_data["note"],
            )
        except ValidationError:
            return HttpResponseBadRequest(gettext("This session's latest verifier round has no such claim."))
        if correction.judge_right:
            message = gettext("Claim %(claim)s: the judge was right (%(verdict)s).")
        else:
            message = gettext("Claim %(claim)s: corrected to %(verdict)s.")
        verdict = correction.get_verdict_display()
        self.log_change(request, session, message % {"claim": claim_id, "verdict": verdict})
        self.message_user(request, message % {"claim": claim_id, "verdict": verdict}, messages.SUCCESS)
        list_context = self._list_context(request, request.POST, session)
        return HttpResponseRedirect(f"{self._inspector_url(session, list_context)}#claim-{claim_id}")

    def open_bad_case_view(self, request, object_id):
        session = self._session_for_post(request, object_id, self.has_open_bad_case_permission(request))
        bad_case = case_services.bad_case_open_for_session(session=session, source=BadCaseSource.REVIEWER)
        self.log_change(request, session, gettext("Opened a bad case"))
        self.message_user(
            request, gettext("Bad case #%(id)s is open for this session.") % {"id": bad_case.pk}, messages.SUCCESS
        )
        return HttpResponseRedirect(self._inspector_url(session))

    def miscited_view(self, request, object_id):
        """A candidate of the inspector was the claim's evidence: record "evidence existed, cited wrong"."""
        session = self._session_for_post(request, object_id, self.has_record_miscitation_permission(request))
        claim_id, ref_id = request.POST.get("claim_id", ""), request.POST.get("ref_id", "")
        if not session_has_claim_and_source(session=session, claim_id=claim_id, ref_id=ref_id):
            return HttpResponseBadRequest(gettext("This session has no such claim or evidence."))
        bad_case = case_services.bad_case_record_miscitation(
            session=session, user=request.user, claim_id=claim_id, ref_id=ref_id
        )
        self.log_change(
            request,
            session,
            gettext("Claim %(claim)s: evidence existed in %(ref)s, cited wrong") % {"claim": claim_id, "ref": ref_id},
        )
        self.message_user(
            request,
            gettext("Recorded on bad case #%(id)s: the evidence of claim %(claim)s existed in %(ref)s.")
            % {"id": bad_case.pk, "claim": claim_id, "ref": ref_id},
            messages.SUCCESS,
        )
        return HttpResponseRedirect(f"{self._inspector_url(session)}#claim-{claim_id}")

    def create_case_view(self, request, object_id):
        session = self._session_for_post(request, object_id, self.has_create_case_permission(request))
        case = case_services.case_create_from_session(session=session, created_by=request.user.get_username())
        self.log_change(request, session, gettext("Created a case"))
        self.message_user(
            request,
            gettext("Case “%(title)s” is in the case library, pending approval.") % {"title": case.title},
            messages.SUCCESS,
        )
        return HttpResponseRedirect(self._inspector_url(session))

    # -- sharing the work ------------------------------------------------------------------

    def take_view(self, request, object_id):
        session = self._session_for_post(request, object_id, self.has_review_permission(request))
        result = triage_assignments_take(session_pks=[session.pk], user=request.user)
        if result.taken:
            self.log_change(request, session, gettext("Took the session for review"))
            self.message_user(request, gettext("The session is in your queue."), messages.SUCCESS)
        else:
            self.message_user(request, gettext("Another reviewer has taken this session."), messages.WARNING)
        return HttpResponseRedirect(self._inspector_url(session, self._list_context(request, request.POST, session)))

    def release_view(self, request, object_id):
        session = self._session_for_post(request, object_id, self.has_review_permission(request))
        if triage_assignments_release(session_pks=[session.pk], user=request.user):
            self.log_change(request, session, gettext("Released the session"))
            self.message_user(request, gettext("The session is free for any reviewer."), messages.SUCCESS)
        else:
            self.message_user(request, gettext("Only its assignee can release this session."), messages.WARNING)
        return HttpResponseRedirect(self._inspector_url(session, self._list_context(request, request.POST, session)))

    def presence_view(self, request, object_id):
        """The open inspector's heartbeat (and, with `release`, its goodbye): JSON naming whoever
        else is reviewing the session."""
        session = self._session_for_post(request, object_id, self.has_view_permission(request))
        if request.POST.get("release"):
            review_lock_release(session=session, user=request.user)
            return JsonResponse({"label": ""})
        lock = review_lock_refresh(session=session, user=request.user)
        return JsonResponse({"label": presence_label(lock, viewer=request.user)})

"""Case curation (approve / reject with cases.approve_case).

An approver decides on the case form ("Save & approve" / "Save & reject": the edits and the
decision in one transaction) and moves on to the next pending case; the list's approve / reject
actions are for bulk decisions on the stored fields.
"""

import uuid

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import FieldDoesNotExist, PermissionDenied, ValidationError
from django.db.models import Count, OuterRef, Q, Subquery
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.text import capfirst
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from cases import services as case_services
from cases.models import Case, CaseRevision, CaseStatus
from cases.services.library import EDITABLE_FIELDS
from core.adminkit.csv_export import CSVExportMixin
from core.adminkit.display import session_inspector_link, status_badge, verdict_badge
from core.adminkit.mixins import TenantAdminMixin
from core.adminkit.navigation import change_url, changelist_next, changelist_url
from core.adminkit.paging import CappedCountPaginator
from diagnosis.admin import HEAVY_SESSION_FIELDS
from diagnosis.models import DiagnosisSession, VerifierVerdict

# The case form's decide buttons: the POST name -> the status it decides.
DECISIONS = {"_approve": CaseStatus.APPROVED, "_reject": CaseStatus.REJECTED}
# Approving a case from a session its own evaluation doubted needs an explicit confirmation.
WEAK_VERDICTS = {VerifierVerdict.LOW_CONFID, VerifierVerdict.REJECT}


def _weak_session(case: Case | None) -> bool:
    return case is not None and case.session is not None and case.session.verifier_verdict in WEAK_VERDICTS


class DuplicatesFilter(admin.SimpleListFilter):
    """Cases that have duplicates (`duplicate_key`), or the group of one case (its id: the list's
    "×N" links); grouped together by `CaseAdmin.get_ordering`."""

    title = _("duplicates")
    parameter_name = "duplicates"

    def lookups(self, request, model_admin):
        return [("yes", _("With duplicates"))]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(copies__gt=1)
        if self.value():
            group = Case.objects.filter(pk=_uuid_or_none(self.value()))
            return queryset.filter(
                project_id=Subquery(group.values("project_id")[:1]),
                duplicate_key=Subquery(group.values("duplicate_key")[:1]),
            )
        return queryset


def _uuid_or_none(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


class FirstValuesFilter(admin.AllValuesFieldListFilter):
    """The first 50 distinct values only: DISTINCT ... ORDER BY ... LIMIT stops early on the index."""

    limit = 50

    def __init__(self, field, request, params, model, model_admin, field_path):
        super().__init__(field, request, params, model, model_admin, field_path)
        self.lookup_choices = self.lookup_choices[: self.limit]


def _case_field(name: str):
    try:
        return Case._meta.get_field(name)
    except FieldDoesNotExist:
        return None


def _shown_value(field, value) -> str:
    """A stored value as the form shows it: a choice by its label."""
    if value is None:
        return ""
    if field is not None and field.choices:
        return dict(field.flatchoices).get(value, value)
    return value


class CaseRevisionInline(admin.TabularInline):
    """Who changed the case, when and what; written only by the case services."""

    model = CaseRevision
    fields = ["created_at", "editor", "action", "changes_display"]
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    verbose_name = _("revision")
    verbose_name_plural = _("history of changes")

    @admin.display(description=_("changes"))
    def changes_display(self, obj):
        changes = obj.changes if isinstance(obj.changes, dict) else {}
        rows = []
        for name, pair in changes.items():
            old, new = (pair + [None, None])[:2] if isinstance(pair, list) else (None, pair)
            field = _case_field(name)
            label = capfirst(field.verbose_name) if field is not None else name
            rows.append((label, _shown_value(field, old), _shown_value(field, new)))
        if not rows:
            return "—"
        return format_html(
            '<dl class="se-diff">{}</dl>',
            format_html_join("", "<dt>{}</dt><dd><del>{}</del> → <ins>{}</ins></dd>", rows),
        )

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("editor")


class CaseForm(forms.ModelForm):
    decision_note = forms.CharField(
        label=_("Review note"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("Stored with “Save & approve” or “Save & reject”."),
    )
    confirm_weak_session = forms.BooleanField(
        label=_("Approve despite the session's verdict"),
        required=False,
        help_text=_("The session's self-evaluation was Low confidence or Reject: tick to approve anyway."),
    )
    approving = False  # set by CaseAdmin.get_form when the POST is a "Save & approve"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["decision_note"].initial = self.instance.review_note

    def clean(self):
        """The case services' rules on the edited fields: a refused save shows the form again."""
        data = super().clean()
        changes = {name: data[name] for name in self.changed_data if name in EDITABLE_FIELDS and name in data}
        try:
            case_services.case_fields_clean(changes)
        except ValidationError as error:
            for name, messages_ in error.message_dict.items():
                self.add_error(name if name in self.fields else None, messages_)
        if self.approving and _weak_session(self.instance) and not data.get("confirm_weak_session"):
            self.add_error(
                "confirm_weak_session",
                gettext("This case's session was judged Low confidence or Reject: confirm to approve it."),
            )
        return data


@admin.register(Case)
class CaseAdmin(TenantAdminMixin, CSVExportMixin, admin.ModelAdmin):
    list_display = [
        "title",
        "status_display",
        "fault_category",
        "service",
        "error_code",
        "source_type",
        "created_by",
        "verdict_display",
        "groundedness_display",
        "duplicates_display",
        "session_display",
        "created_at",
    ]
    list_filter = [
        "status",
        DuplicatesFilter,
        "fault_category",
        "source_type",
        ("service", FirstValuesFilter),
        ("error_code", FirstValuesFilter),
        "project",
    ]
    search_fields = ["title", "root_cause", "solution", "=service", "=error_code", "=diagnosis_id"]
    list_select_related = ["session", "project"]
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    paginator = CappedCountPaginator
    list_per_page = 50
    raw_id_fields = ["session"]
    inlines = [CaseRevisionInline]
    change_form_template = "admin/cases/case/change_form.html"
    form = CaseForm
    actions = ["approve_cases", "reject_cases", "merge_duplicates", "export_csv"]
    csv_columns = {
        "case_id": "id",
        "project": "project__slug",
        "session_id": "diagnosis_id",
        "status": "status",
        "fault_category": "fault_category",
        "title": "title",
        "service": "service",
        "error_code": "error_code",
        "root_cause": "root_cause",
        "solution": "solution",
        "query": "query",
        "source_type": "source_type",
        "created_by": "created_by",
        "reviewed_by": "reviewed_by__username",
        "reviewed_at": "reviewed_at",
        "review_note": "review_note",
        "created_at": "created_at",
        "updated_at": "updated_at",
    }
    fieldsets = [
        (
            _("Extracted fields"),
            {"fields": ["title", "fault_category", "service", "error_code", "root_cause", "solution", "query"]},
        ),
        (
            _("Review"),
            {"fields": ["status", "reviewed_by", "reviewed_at", "review_note"]},
        ),
        (
            _("Origin"),
            {
                "classes": ["collapse"],
                "fields": [
                    "id",
                    "project",
                    "session",
                    "diagnosis_id",
                    "source_type",
                    "created_by",
                    "created_at",
                    "updated_at",
                ],
            },
        ),
    ]

    def get_readonly_fields(self, request, obj=None):
        # Status and review fields change only through approve / reject; origin never changes.
        return [
            "id",
            "project",
            "session",
            "diagnosis_id",
            "source_type",
            "created_by",
            "created_at",
            "updated_at",
            "status",
            "reviewed_by",
            "reviewed_at",
            "review_note",
        ]

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        # A subclass per request: the ModelAdmin instance is shared, the form class is not.
        return type(form.__name__, (form,), {"approving": "_approve" in request.POST})

    def get_queryset(self, request):
        # How many cases of the project share this one's duplicate key (itself included): one
        # subquery on the (project, duplicate_key) index, no query per row.
        copies = (
            Case.objects.filter(project_id=OuterRef("project_id"), duplicate_key=OuterRef("duplicate_key"))
            .order_by()
            .values("duplicate_key")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return (
            super()
            .get_queryset(request)
            .defer(*(f"session__{name}" for name in HEAVY_SESSION_FIELDS))
            .annotate(copies=Subquery(copies[:1]))
        )

    def get_ordering(self, request):
        if request.GET.get(DuplicatesFilter.parameter_name):
            return ["duplicate_key", "-created_at"]  # each group together
        return super().get_ordering(request)

    def has_add_permission(self, request):
        # Cases are created from sessions (feedback or the inspector's "create case").
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_approve_permission(self, request) -> bool:
        return request.user.has_perm("cases.approve_case")

    @admin.display(description=_("status"), ordering="status")
    def status_display(self, obj):
        return status_badge(obj.status, obj.get_status_display())

    # The session's self-evaluation, so an approver sees how trustworthy the source was; read
    # from the joined session (list_select_related), no query per row.
    @admin.display(description=_("verdict"), ordering="session__verifier_verdict")
    def verdict_display(self, obj):
        if obj.session is None:
            return "—"
        return verdict_badge(obj.session.verifier_verdict, obj.session.get_verifier_verdict_display())

    @admin.display(description=_("groundedness"), ordering="session__groundedness_score")
    def groundedness_display(self, obj):
        if obj.session is None or obj.session.groundedness_score is None:
            return "—"
        return f"{obj.session.groundedness_score:.2f}"

    @admin.display(description=_("duplicates"), ordering="duplicate_key")
    def duplicates_display(self, obj):
        if (obj.copies or 0) < 2:
            return "—"
        url = f"{reverse('admin:cases_case_changelist')}?{DuplicatesFilter.parameter_name}={obj.pk}"
        return format_html(
            '<a href="{}" title="{}">×{}</a>',
            url,
            gettext("The cases with the same question, service and error code"),
            obj.copies,
        )

    @admin.display(description=_("session"), ordering="diagnosis_id")
    def session_display(self, obj):
        return session_inspector_link(obj.session) if obj.session else "—"

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        # Checked before the form is even read: without the permission nothing is saved either.
        if request.method == "POST" and self._decision(request) and not self.has_approve_permission(request):
            raise PermissionDenied
        return super().changeform_view(request, object_id, form_url, extra_context)

    @staticmethod
    def _decision(request) -> str | None:
        return next((status for name, status in DECISIONS.items() if name in request.POST), None)

    def save_model(self, request, obj, form, change):
        """Edits go through case_update, which records the revision (who, when, old -> new); with a
        decide button, through case_approve / case_reject, which save them and decide in one transaction."""
        changes = {name: form.cleaned_data[name] for name in form.changed_data if name in EDITABLE_FIELDS}
        decision = self._decision(request)
        note = form.cleaned_data.get("decision_note", "")
        try:
            if decision is not None:
                service = case_services.case_approve if decision == CaseStatus.APPROVED else case_services.case_reject
                service(case=obj, user=request.user, note=note, changes=changes)
                obj.decision_saved = decision  # read by response_change, on this request's instance only
            elif changes:
                case_services.case_update(case=obj, user=request.user, changes=changes)
        except PermissionDenied:
            raise
        except ValidationError as error:
            # The form's clean() ran the same rules; only a concurrent change gets here.
            self.message_user(request, "; ".join(error.messages), messages.ERROR)
            obj.save_refused = True  # read by response_change: stay on the form, decide nothing
            return
        if decision is None and "decision_note" in form.changed_data:
            self.message_user(
                request,
                gettext("The review note was not stored: it is stored with “Save & approve” or “Save & reject”."),
                messages.WARNING,
            )

    def response_change(self, request, obj):
        if getattr(obj, "save_refused", False):
            return HttpResponseRedirect(change_url(self, request, obj))
        decision = getattr(obj, "decision_saved", None)
        if decision is None:
            return super().response_change(request, obj)
        self.log_change(request, obj, gettext("Approved") if decision == CaseStatus.APPROVED else gettext("Rejected"))
        done = (
            gettext("Case “%(title)s” saved and approved.")
            if decision == CaseStatus.APPROVED
            else gettext("Case “%(title)s” saved and rejected.")
        ) % {"title": obj.title}
        self.message_user(request, done, messages.SUCCESS)
        following = changelist_next(model_admin=self, request=request, obj=obj, condition=Q(status=CaseStatus.PENDING))
        if following is None:
            self.message_user(request, gettext("No more pending cases in this list."), messages.INFO)
            return HttpResponseRedirect(changelist_url(self, request))
        return HttpResponseRedirect(change_url(self, request, following))

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        session = obj.session if obj is not None else None
        context.update(
            {
                "case_session": session,
                "case_session_verdict": verdict_badge(session.verifier_verdict, session.get_verifier_verdict_display())
                if session
                else "",
                "case_session_weak": _weak_session(obj),
                "case_status_badge": status_badge(obj.status, obj.get_status_display()) if obj else "",
                "can_decide": obj is not None and self.has_approve_permission(request),
            }
        )
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)

    def get_object(self, request, object_id, from_field=None):
        # The side-by-side view shows the session's answer, so load it whole here.
        obj = super().get_object(request, object_id, from_field)
        if obj is not None and obj.session_id:
            obj.session = DiagnosisSession.objects.filter(pk=obj.session_id).first()
        return obj

    def _review(self, request, queryset, service, done_message):
        count = 0
        for case in queryset:
            service(case=case, user=request.user)
            self.log_change(request, case, done_message)
            count += 1
        return count

    # List actions only: on the case form they would decide on the stored fields and drop unsaved
    # edits; the form has its own "Save & approve" / "Save & reject".
    @admin.action(permissions=["approve"], description=_("Approve as stored"))
    def approve_cases(self, request, queryset):
        count = self._review(request, queryset, case_services.case_approve, gettext("Approved"))
        self.message_user(
            request,
            ngettext(
                "%(n)d case approved with its stored fields.", "%(n)d cases approved with their stored fields.", count
            )
            % {"n": count},
            messages.SUCCESS,
        )

    @admin.action(permissions=["approve"], description=_("Merge duplicates (keep one, reject the others)"))
    def merge_duplicates(self, request, queryset):
        try:
            kept, rejected = case_services.cases_merge(cases=list(queryset), user=request.user)
        except ValidationError as error:
            self.message_user(request, "; ".join(error.messages), messages.ERROR)
            return
        for case in rejected:
            self.log_change(request, case, gettext("Rejected as a duplicate of %(id)s") % {"id": kept.pk})
        self.message_user(
            request,
            ngettext(
                "Kept “%(title)s”; %(n)d duplicate rejected.",
                "Kept “%(title)s”; %(n)d duplicates rejected.",
                len(rejected),
            )
            % {"title": kept.title, "n": len(rejected)},
            messages.SUCCESS,
        )

    @admin.action(permissions=["approve"], description=_("Reject as stored"))
    def reject_cases(self, request, queryset):
        count = self._review(request, queryset, case_services.case_reject, gettext("Rejected"))
        self.message_user(
            request,
            ngettext(
                "%(n)d case rejected with its stored fields.", "%(n)d cases rejected with their stored fields.", count
            )
            % {"n": count},
            messages.SUCCESS,
        )

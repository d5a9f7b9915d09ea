"""Case curation (approve / reject with cases.approve_case) and bad-case triage.

An approver decides on the case form ("Save & approve" / "Save & reject": the edits and the
decision in one transaction) and moves on to the next pending case; the list's approve / reject
actions are for bulk decisions on the stored fields.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import FieldDoesNotExist, PermissionDenied, ValidationError
from django.db.models import Q
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.text import capfirst
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from cases import services as case_services
from cases.models import CATEGORY_FOR_ATTRIBUTION, BadCaseCategory, BadCaseStatus, Case, CaseRevision, CaseStatus
from cases.services.library import EDITABLE_FIELDS
from core.adminkit.csv_export import CSVExportMixin
from core.adminkit.display import query_cell, verdict_badge
from core.adminkit.mixins import TenantAdminMixin
from core.adminkit.navigation import change_url, changelist_next, changelist_url
from core.adminkit.paging import CappedCountPaginator
from diagnosis.admin import HEAVY_SESSION_FIELDS
from diagnosis.models import DiagnosisSession

TRIAGE_FIELDS = ["status", "category", "assignee", "notes"]
TRIAGE_NEXT = "_triagenext"  # the bad-case form's "Triage & next": an open bad case becomes triaged
# The case form's decide buttons: the POST name -> the status it decides.
DECISIONS = {"_approve": CaseStatus.APPROVED, "_reject": CaseStatus.REJECTED}


class FirstValuesFilter(admin.AllValuesFieldListFilter):
    """The first 50 distinct values only: DISTINCT ... ORDER BY ... LIMIT stops early on the index."""

    limit = 50

    def __init__(self, field, request, params, model, model_admin, field_path):
        super().__init__(field, request, params, model, model_admin, field_path)
        self.lookup_choices = self.lookup_choices[: self.limit]


def session_link(session) -> str:
    if session is None:
        return "—"
    url = reverse("admin:diagnosis_diagnosissession_change", args=[session.pk])
    return format_html('<a href="{}">{}</a>', url, session.session_id)


def status_badge(value: str, label: str) -> str:
    return format_html('<span class="se-badge se-status-{}">{}</span>', value, label)


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
        "session_display",
        "created_at",
    ]
    list_filter = [
        "status",
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
    actions = ["approve_cases", "reject_cases", "export_csv"]
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

    def get_queryset(self, request):
        return super().get_queryset(request).defer(*(f"session__{name}" for name in HEAVY_SESSION_FIELDS))

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

    @admin.display(description=_("session"), ordering="diagnosis_id")
    def session_display(self, obj):
        return session_link(obj.session)

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


MAX_BULK_ROWS = 500  # the bulk triage page lists the selection up to here


class BulkTriageForm(forms.Form):
    """What "Triage selected…" sets on every selected bad case; a blank choice keeps each one's own."""

    category = forms.ChoiceField(
        label=_("Category"), required=False, choices=[("", _("Keep each one's")), *BadCaseCategory.choices]
    )
    status = forms.ChoiceField(
        label=_("Status"), required=False, choices=[("", _("Keep each one's")), *BadCaseStatus.choices]
    )
    note = forms.CharField(
        label=_("Note"),
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("Added to the notes of each bad case."),
    )

    def clean(self):
        data = super().clean()
        if not (data.get("category") or data.get("status") or data.get("note", "").strip()):
            raise forms.ValidationError(_("Choose a category or a status, or write a note."))
        return data


class AssignForm(forms.Form):
    assignee = forms.ModelChoiceField(label=_("Assign to"), queryset=get_user_model().objects.none())


class BadCaseForm(forms.ModelForm):
    def clean(self):
        """The triage rules (`bad_case_update_errors`), e.g. no reopening while another bad case of the
        session is open: a refused save shows the form again with what was typed."""
        data = super().clean()
        if self.instance.pk:
            fields = {name: data[name] for name in self.changed_data if name in TRIAGE_FIELDS and name in data}
            for name, message in case_services.bad_case_update_errors(bad_case=self.instance, fields=fields).items():
                self.add_error(name if name in self.fields else None, message)
        return data

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        bad_case = self.instance
        # Only shown, never stored by itself: the unbound form offers the attribution's category
        # while nobody has chosen one; saving it is the reviewer's choice (a bound form's initial
        # stays the stored blank, so the suggestion counts as a change).
        if self.is_bound or not bad_case.pk or bad_case.category or "category" not in self.fields:
            return
        attribution = bad_case.session.failure_attribution
        suggested = CATEGORY_FOR_ATTRIBUTION.get(attribution)
        if suggested:
            self.initial["category"] = suggested
            self.fields["category"].help_text = gettext(
                "Suggested from the failure attribution (%(attribution)s); change it if it does not fit."
            ) % {"attribution": bad_case.session.get_failure_attribution_display()}


class BadCaseAdmin(TenantAdminMixin, CSVExportMixin, admin.ModelAdmin):
    """Bad-case triage. Registered by the back office, which adds the session panel
    (`backoffice/bad_cases.py`: it reads feedback, which this app may not import)."""

    list_display = [
        "id",
        "session_display",
        "question",
        "status_display",
        "category",
        "source",
        "assignee",
        "feedback_count",
        "verdict_display",
        "created_at",
    ]
    list_display_links = ["id"]
    list_filter = ["status", "category", "source", "project", ("assignee", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["=session__session_id"]
    list_select_related = ["session", "assignee", "project"]
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    paginator = CappedCountPaginator
    list_per_page = 50
    # What the reviewer sets first, next to the buttons; the bookkeeping after it.
    fields = [
        "status",
        "category",
        "assignee",
        "notes",
        "session",
        "project",
        "source",
        "verifier_verdict",
        "feedback_count",
        "created_at",
        "updated_at",
        "closed_at",
    ]
    readonly_fields = [
        "session",
        "project",
        "source",
        "verifier_verdict",
        "feedback_count",
        "created_at",
        "updated_at",
        "closed_at",
    ]
    actions = [
        "triage_selected",
        "assign_to_me",
        "assign_to_user",
        "mark_triaged",
        "mark_fixed",
        "mark_wont_fix",
        "reopen",
        "export_csv",
    ]
    csv_columns = {
        "bad_case_id": "id",
        "project": "project__slug",
        "session_id": "session__session_id",
        "status": "status",
        "category": "category",
        "source": "source",
        "assignee": "assignee__username",
        "verifier_verdict": "verifier_verdict",
        "feedback_count": "feedback_count",
        "notes": "notes",
        "created_at": "created_at",
        "updated_at": "updated_at",
        "closed_at": "closed_at",
    }
    triage_fields = TRIAGE_FIELDS
    form = BadCaseForm
    change_form_template = "admin/cases/badcase/change_form.html"
    change_list_template = "admin/cases/badcase/change_list.html"

    def get_queryset(self, request):
        return super().get_queryset(request).defer(*(f"session__{name}" for name in HEAVY_SESSION_FIELDS))

    def has_add_permission(self, request):
        return False  # opened from feedback, the verifier or the session inspector

    def has_delete_permission(self, request, obj=None):
        return False

    def has_triage_permission(self, request) -> bool:
        return request.user.has_perm("cases.change_badcase")

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "assignee":
            kwargs["queryset"] = get_user_model().objects.filter(is_staff=True, is_active=True).order_by("username")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    @admin.display(description=_("session"), ordering="session__session_id")
    def session_display(self, obj):
        return session_link(obj.session)

    @admin.display(description=_("status"), ordering="status")
    def status_display(self, obj):
        return status_badge(obj.status, obj.get_status_display())

    @admin.display(description=_("query"))
    def question(self, obj):
        return query_cell(obj.session.query)

    @admin.display(description=_("verdict when opened"), ordering="verifier_verdict")
    def verdict_display(self, obj):
        return verdict_badge(obj.verifier_verdict, obj.get_verifier_verdict_display())

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        context["category_keys"] = BadCaseCategory.choices  # the keys' legend: a digit per category
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)

    def save_model(self, request, obj, form, change):
        """Triage edits go through bad_case_update (permission, closed_at, one open per session).
        "Triage & next" marks a bad case left open triaged."""
        fields = {name: form.cleaned_data[name] for name in form.changed_data if name in self.triage_fields}
        if TRIAGE_NEXT in request.POST and fields.get("status", obj.status) == BadCaseStatus.OPEN:
            fields["status"] = BadCaseStatus.TRIAGED
        if fields:
            try:
                case_services.bad_case_update(bad_case=obj, user=request.user, **fields)
            except ValidationError as error:
                # The form's clean() ran the same rules; only a concurrent reopening gets here.
                self.message_user(request, "; ".join(error.messages), messages.ERROR)
                obj.save_refused = True  # read by response_change: stay on the form

    def response_change(self, request, obj):
        if getattr(obj, "save_refused", False):
            return HttpResponseRedirect(change_url(self, request, obj))
        if "_savenext" not in request.POST and TRIAGE_NEXT not in request.POST:
            return super().response_change(request, obj)
        self.message_user(request, gettext("Bad case #%(id)s saved.") % {"id": obj.pk}, messages.SUCCESS)
        following = changelist_next(model_admin=self, request=request, obj=obj, condition=Q(status=BadCaseStatus.OPEN))
        if following is None:
            self.message_user(request, gettext("No more open bad cases in this list."), messages.INFO)
            return HttpResponseRedirect(changelist_url(self, request))
        return HttpResponseRedirect(change_url(self, request, following))

    def _update_all(self, request, queryset, done, **fields) -> None:
        count, failed = 0, []
        for bad_case in queryset:
            try:
                case_services.bad_case_update(bad_case=bad_case, user=request.user, **fields)
            except ValidationError as error:
                failed.append(f"#{bad_case.pk}: {'; '.join(error.messages)}")
                continue
            self.log_change(request, bad_case, done)
            count += 1
        self.message_user(
            request,
            ngettext("%(n)d bad case updated.", "%(n)d bad cases updated.", count) % {"n": count},
            messages.SUCCESS if count else messages.WARNING,
        )
        for message in failed:
            self.message_user(request, message, messages.ERROR)

    @admin.action(permissions=["triage"], description=_("Triage selected…"))
    def triage_selected(self, request, queryset):
        """One category, status and note for every selected bad case (a page to choose them first)."""
        applying = "apply" in request.POST
        form = BulkTriageForm(request.POST if applying else None)
        # The page lists the selection (a "select all" one up to MAX_BULK_ROWS); applying posts those ids.
        listed = list(queryset.select_related("session")[: MAX_BULK_ROWS + 1])
        if applying and form.is_valid():
            fields = {name: form.cleaned_data[name] for name in ("category", "status") if form.cleaned_data[name]}
            self._update_all(
                request, queryset, gettext("Triaged in bulk"), add_note=form.cleaned_data["note"], **fields
            )
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Triage bad cases"),
            "opts": self.opts,
            "form": form,
            "bad_cases": listed[:MAX_BULK_ROWS],
            "more": len(listed) > MAX_BULK_ROWS,
            "max_rows": MAX_BULK_ROWS,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            "action": "triage_selected",
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, "admin/cases/badcase/triage.html", context, status=400 if applying else 200)

    @admin.action(permissions=["triage"], description=_("Assign to me"))
    def assign_to_me(self, request, queryset):
        self._update_all(
            request,
            queryset,
            gettext("Assigned to %(user)s") % {"user": request.user.get_username()},
            assignee=request.user,
        )

    @admin.action(permissions=["triage"], description=_("Assign to a user…"))
    def assign_to_user(self, request, queryset):
        form = AssignForm(request.POST if "apply" in request.POST else None)
        form.fields["assignee"].queryset = (
            get_user_model().objects.filter(is_staff=True, is_active=True).order_by("username")
        )
        if "apply" in request.POST and form.is_valid():
            user = form.cleaned_data["assignee"]
            self._update_all(
                request, queryset, gettext("Assigned to %(user)s") % {"user": user.get_username()}, assignee=user
            )
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Assign bad cases"),
            "opts": self.opts,
            "form": form,
            "queryset": queryset,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            "action": "assign_to_user",
        }
        return TemplateResponse(request, "admin/cases/badcase/assign.html", context)

    @admin.action(permissions=["triage"], description=_("Mark triaged"))
    def mark_triaged(self, request, queryset):
        self._update_all(request, queryset, gettext("Marked triaged"), status=BadCaseStatus.TRIAGED)

    @admin.action(permissions=["triage"], description=_("Mark fixed"))
    def mark_fixed(self, request, queryset):
        self._update_all(request, queryset, gettext("Marked fixed"), status=BadCaseStatus.FIXED)

    @admin.action(permissions=["triage"], description=_("Mark won't fix"))
    def mark_wont_fix(self, request, queryset):
        self._update_all(request, queryset, gettext("Marked won't fix"), status=BadCaseStatus.WONT_FIX)

    @admin.action(permissions=["triage"], description=_("Reopen"))
    def reopen(self, request, queryset):
        self._update_all(request, queryset, gettext("Reopened"), status=BadCaseStatus.OPEN)

"""Bad-case triage: the list and its actions, and the form with its session beside it (query,
answer, verdict and rationale, the claims the verifier did not accept, the users' feedback and the
failure attribution).

The form's panel reads feedback, which the cases app may not import, so the admin lives here,
defined and registered (the README's rule for admin homes). The triage rules themselves are the
cases app's services (`bad_case_update`).
"""

from dataclasses import dataclass

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db.models import Q, Subquery
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from cases import services as case_services
from cases.models import CATEGORY_FOR_ATTRIBUTION, BadCase, BadCaseCategory, BadCaseStatus
from core.adminkit.csv_export import CSVExportMixin
from core.adminkit.display import query_cell, session_inspector_link, status_badge, verdict_badge
from core.adminkit.mixins import TenantAdminMixin
from core.adminkit.navigation import change_url, changelist_next, changelist_url
from core.adminkit.paging import CappedCountPaginator
from diagnosis.admin import HEAVY_SESSION_FIELDS
from diagnosis.evaluation_layers import self_evaluation_read
from diagnosis.messages import machine_text
from diagnosis.models import ClaimCheck, ClaimVerdict, DiagnosisSession
from feedback.models import FeedbackEvent

TRIAGE_FIELDS = ["status", "category", "assignee", "notes"]
TRIAGE_NEXT = "_triagenext"  # the form's "Triage & next": an open bad case becomes triaged
MAX_BULK_ROWS = 500  # the bulk triage page lists the selection up to here
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


class AssignForm(forms.Form):
    assignee = forms.ModelChoiceField(label=_("Assign to"), queryset=get_user_model().objects.none())


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


@admin.register(BadCase)
class BadCaseAdmin(TenantAdminMixin, CSVExportMixin, admin.ModelAdmin):
    """Bad-case triage: the list, its actions and the form with the session panel beside it."""

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
        return session_inspector_link(obj.session)

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
        if obj is not None:
            context["bad_case_context"] = bad_case_context_get(bad_case=obj)
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

"""Forms of the reviewer's actions on sessions (inspector and triage queue)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from diagnosis.models import ReviewJudgement

VERIFIER_RIGHT_CHOICES = [("yes", _("Yes")), ("no", _("No")), ("unsure", _("Can't tell"))]


class ReviewForm(forms.Form):
    judgement = forms.ChoiceField(
        label=_("Your judgement of the answer"), choices=ReviewJudgement.choices, widget=forms.RadioSelect
    )
    verifier_was_right = forms.ChoiceField(
        label=_("Was the verifier's verdict right?"), choices=VERIFIER_RIGHT_CHOICES, widget=forms.RadioSelect
    )
    notes = forms.CharField(label=_("Notes"), required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 3}))

    def cleaned_verifier_was_right(self) -> bool | None:
        return {"yes": True, "no": False}.get(self.cleaned_data["verifier_was_right"])


TRIAGE_REASONS = [
    ("not_useful", _("Not useful feedback")),
    ("reject", _("Verdict REJECT")),
    ("low_confid", _("Verdict LOW_CONFID")),
    ("evaluation_failed", _("Evaluation failed or partial")),
]


class TriageFilterForm(forms.Form):
    reason = forms.ChoiceField(label=_("Reason"), required=False, choices=[("", _("Any reason")), *TRIAGE_REASONS])
    mode = forms.ChoiceField(
        label=_("Mode"), required=False, choices=[("", _("Any mode")), ("chat", _("Chat")), ("aiops", _("AIOps"))]
    )
    project = forms.IntegerField(label=_("Project"), required=False, widget=forms.Select)
    page = forms.IntegerField(required=False, min_value=1)

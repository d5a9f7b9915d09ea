"""Forms of the reviewer's actions on sessions (inspector and triage queue)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from diagnosis.models import ClaimVerdict, ReviewJudgement
from diagnosis.services.reviews import JUDGE_RIGHT

VERIFIER_RIGHT_CHOICES = [("yes", _("Yes")), ("no", _("No")), ("unsure", _("Can't tell"))]


def verifier_was_right_value(choice: str) -> bool | None:
    """ "yes" / "no" / anything else ("Can't tell") as stored: True / False / None."""
    return {"yes": True, "no": False}.get(choice)


class ReviewForm(forms.Form):
    judgement = forms.ChoiceField(
        label=_("Your judgement of the answer"), choices=ReviewJudgement.choices, widget=forms.RadioSelect
    )
    verifier_was_right = forms.ChoiceField(
        label=_("Was the verifier's verdict right?"), choices=VERIFIER_RIGHT_CHOICES, widget=forms.RadioSelect
    )
    notes = forms.CharField(label=_("Notes"), required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 3}))

    def cleaned_verifier_was_right(self) -> bool | None:
        return verifier_was_right_value(self.cleaned_data["verifier_was_right"])


class ClaimCorrectionForm(forms.Form):
    """A person's verdict on one claim of the inspector: the judge's confirmed, or another."""

    claim_id = forms.CharField(max_length=128, widget=forms.HiddenInput)
    verdict = forms.ChoiceField(
        label=_("The claim is"),
        choices=[
            (JUDGE_RIGHT, _("Judge right")),
            (ClaimVerdict.SUPPORTED, _("Supported")),
            (ClaimVerdict.UNSUPPORTED, _("Unsupported")),
            (ClaimVerdict.CONTRADICTED, _("Contradicted")),
        ],
    )
    note = forms.CharField(label=_("Note"), required=False, max_length=2000)


class BulkReviewForm(forms.Form):
    """One selected session's review on the bulk review page; no judgement skips the session."""

    session = forms.IntegerField(widget=forms.HiddenInput)
    judgement = forms.ChoiceField(
        label=_("Judgement"),
        required=False,
        choices=[("", _("Skip")), *ReviewJudgement.choices],
        widget=forms.RadioSelect,
    )
    verifier_was_right = forms.ChoiceField(
        label=_("Verifier right?"), required=False, choices=VERIFIER_RIGHT_CHOICES, widget=forms.RadioSelect
    )
    notes = forms.CharField(
        label=_("Notes"), required=False, max_length=5000, widget=forms.TextInput(attrs={"placeholder": _("Notes")})
    )

    def clean(self):
        data = super().clean()
        if data.get("judgement") and not data.get("verifier_was_right"):
            self.add_error("verifier_was_right", _("Say whether the verifier was right, or “Can't tell”."))
        return data

    def cleaned_verifier_was_right(self) -> bool | None:
        return verifier_was_right_value(self.cleaned_data["verifier_was_right"])


BulkReviewFormSet = forms.formset_factory(BulkReviewForm, extra=0)

"""Evolution pages: the verification log (view only) and the thresholds editor with its history.

Thresholds are saved through `thresholds_update`, so an admin edit is validated and recorded
exactly like an API change.
"""

from typing import Any

from django.contrib import admin
from django.core.exceptions import FieldDoesNotExist
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from core.adminkit.content import markdown_html
from core.adminkit.paging import CappedCountPaginator
from evolution.models import (
    THRESHOLD_SPECS,
    CompetitorStatus,
    ThresholdChange,
    VerificationLog,
    VerificationThresholds,
)
from evolution.services.thresholds import thresholds_update


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return format_html('<span class="se-evo-{}">{}</span>', "yes" if value else "no", "✔" if value else "✘")
    if value is None or value == "":
        return "—"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return _table(value)
    if isinstance(value, list):
        if not value:
            return "—"
        return format_html("<ul>{}</ul>", format_html_join("", "<li>{}</li>", ((_value(item),) for item in value)))
    return str(value)


def _table(data: dict[str, Any]) -> str:
    if not data:
        return "—"
    rows = ((key, _value(value)) for key, value in data.items())
    return format_html(
        '<table class="se-evo-table"><tbody>{}</tbody></table>',
        format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", rows),
    )


def _threshold_label(name: str) -> str:
    """A threshold by its field's label ("minimum confidence"), an unknown key as stored."""
    try:
        return capfirst(VerificationThresholds._meta.get_field(name).verbose_name)
    except FieldDoesNotExist:
        return name


def _at_least(value: Any) -> str:
    return "—" if value is None else f"≥ {_value(value)}"


def _delta(value: Any) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "—"
    return f"{value:+.4g}"


QUALITY_MEASURES = (
    ("completeness", _("Completeness")),
    ("usefulness", _("Usefulness")),
    ("clarity", _("Clarity")),
    ("overall", _("Overall quality")),
)
STRUCTURE_FEATURES = (
    ("has_headings", "headings", _("headings")),
    ("has_lists", "lists", _("lists")),
    ("has_paragraphs", "paragraphs", _("paragraphs")),
    ("has_code", "code_blocks", _("code")),
)


def dimension_rows(metrics: dict[str, Any]) -> list[tuple[str, str, Any, Any, str, str, Any]]:
    """The five dimensions and the decision as rows of one table: (dimension, measure, old, new,
    change, required, met). Reads what a log row stored; a missing key shows as a dash."""

    def part(key: str) -> dict[str, Any]:
        value = (metrics or {}).get(key)
        return value if isinstance(value, dict) else {}

    basic, structure, quality = part("basic"), part("structure"), part("quality")
    competitors, feedback, decision = part("competitors"), part("user_feedback"), part("decision")
    old_scores, new_scores = quality.get("old_scores") or {}, quality.get("new_scores") or {}
    improvement, keywords = quality.get("improvement") or {}, quality.get("keywords") or {}
    counts = structure.get("counts") or {}
    features = ", ".join(
        f"{'✔' if structure.get(flag) else '✘'} {label} ({counts.get(count, 0)})"
        for flag, count, label in STRUCTURE_FEATURES
    )
    rank = competitors.get("rank")
    participants = competitors.get("participants")
    status = competitors.get("status")
    status_label = CompetitorStatus(status).label if status in CompetitorStatus.values else status
    rank_text = f"#{rank} / {participants}" if rank is not None else str(status_label or "—")
    has_feedback = feedback.get("has_feedback")
    return [
        (
            _("Basic metrics"),
            _("Length (characters)"),
            basic.get("old_length"),
            basic.get("new_length"),
            "",
            _at_least(basic.get("min_length")),
            basic.get("meets_min_length"),
        ),
        (
            "",
            _("Length ratio"),
            None,
            basic.get("length_ratio"),
            "",
            _at_least(basic.get("min_improvement_ratio")),
            basic.get("length_improved"),
        ),
        (
            _("Structure"),
            _("Structure score"),
            structure.get("old_structure_score"),
            structure.get("structure_score"),
            "",
            _at_least(structure.get("threshold")),
            structure.get("meets_threshold"),
        ),
        ("", _("Features"), None, features, "", "", None),
        *(
            (
                _("Content quality") if index == 0 else "",
                label,
                old_scores.get(key),
                new_scores.get(key),
                _delta(improvement.get(f"{key}_delta")),
                "",
                improvement.get(f"{key}_improved"),
            )
            for index, (key, label) in enumerate(QUALITY_MEASURES)
        ),
        (
            "",
            _("Keyword coverage"),
            keywords.get("old_coverage"),
            keywords.get("coverage"),
            "",
            ", ".join(keywords.get("missing") or []),
            None,
        ),
        (
            _("Competitor comparison"),
            _("Rank"),
            None,
            rank_text,
            "",
            "—" if competitors.get("threshold") is None else f"≤ #{competitors.get('threshold')}",
            competitors.get("meets_threshold") if competitors.get("has_competitor_data") else None,
        ),
        (
            _("User feedback"),
            _("Satisfaction"),
            None,
            feedback.get("satisfaction"),
            feedback.get("comments") or "",
            _at_least(feedback.get("threshold")),
            feedback.get("meets_threshold") if has_feedback else None,
        ),
        (
            _("Decision"),
            _("Confidence"),
            None,
            decision.get("confidence"),
            "",
            _at_least(decision.get("min_confidence")),
            decision.get("meets_confidence"),
        ),
    ]


@admin.register(VerificationLog)
class VerificationLogAdmin(admin.ModelAdmin):
    list_display = [
        "created_at",
        "query_excerpt",
        "decision",
        "confidence",
        "new_length",
        "structure_score",
        "quality_overall",
        "quality_delta",
        "competitors",
        "adoption",
        "source",
        "cached",
        "duration_ms",
    ]
    list_display_links = ["created_at", "query_excerpt"]
    list_filter = ["is_valid", "adoption", "source", "competitor_status", "cached", "lang"]
    date_hierarchy = "created_at"
    list_select_related = False
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER  # facet counts would scan the whole log
    paginator = CappedCountPaginator
    list_per_page = 50
    readonly_fields = [
        "decision",
        "reasons_display",
        "suggestions_display",
        "thresholds_display",
        "dimensions_display",
        "answers_display",
    ]
    fieldsets = [
        (
            _("Decision"),
            {
                "fields": [
                    "decision",
                    "confidence",
                    "adoption",
                    "reasons_display",
                    "suggestions_display",
                    "created_at",
                    "source",
                    "project",
                    "requested_by",
                    "cached",
                    "duration_ms",
                    "lang",
                ]
            },
        ),
        (_("Metrics per dimension"), {"fields": ["dimensions_display"]}),
        (_("Answers"), {"fields": ["query", "answers_display", "user_feedback", "fingerprint"]}),
        (_("Thresholds used"), {"fields": ["thresholds_display"]}),
    ]

    def get_queryset(self, request):
        # The change list never needs the answers; they can be large.
        queryset = super().get_queryset(request)
        if request.resolver_match and request.resolver_match.url_name.endswith("_changelist"):
            queryset = queryset.defer("old_response", "new_response", "reasons", "suggestions", "metrics")
        return queryset

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description=_("query"))
    def query_excerpt(self, obj: VerificationLog) -> str:
        return obj.query if len(obj.query) <= 60 else obj.query[:60] + "…"

    @admin.display(description=_("decision"), ordering="is_valid")
    def decision(self, obj: VerificationLog) -> str:
        label = _("valid") if obj.is_valid else _("invalid")
        return format_html('<span class="se-evo-{}">{}</span>', "yes" if obj.is_valid else "no", label)

    @admin.display(description=_("competitors"), ordering="competitor_status")
    def competitors(self, obj: VerificationLog) -> str:
        if obj.competitor_rank:
            return format_html("{} (#{})", obj.get_competitor_status_display(), obj.competitor_rank)
        return obj.get_competitor_status_display()

    @admin.display(description=_("reasons"))
    def reasons_display(self, obj: VerificationLog) -> str:
        return _value(obj.reasons)

    @admin.display(description=_("suggestions"))
    def suggestions_display(self, obj: VerificationLog) -> str:
        return _value(obj.suggestions)

    @admin.display(description=_("thresholds"))
    def thresholds_display(self, obj: VerificationLog) -> str:
        return _table({_threshold_label(name): value for name, value in (obj.thresholds or {}).items()})

    @admin.display(description=_("dimensions"))
    def dimensions_display(self, obj: VerificationLog) -> str:
        rows = (
            (dimension, measure, _value(old), _value(new), change, required, _value(met))
            for dimension, measure, old, new, change, required, met in dimension_rows(obj.metrics)
        )
        return format_html(
            '<table class="se-evo-dimensions"><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th>'
            "<th>{}</th><th>{}</th></tr></thead><tbody>{}</tbody></table>",
            pgettext_lazy("dimension table", "Dimension"),
            pgettext_lazy("dimension table", "Measure"),
            pgettext_lazy("dimension table", "Old"),
            pgettext_lazy("dimension table", "New"),
            pgettext_lazy("dimension table", "Change"),
            pgettext_lazy("dimension table", "Required"),
            pgettext_lazy("dimension table", "Met"),
            format_html_join(
                "",
                '<tr><th scope="row">{}</th><td>{}</td><td class="se-num">{}</td><td class="se-num">{}</td>'
                '<td class="se-num">{}</td><td>{}</td><td>{}</td></tr>',
                rows,
            ),
        )

    @admin.display(description=_("old and new answers"))
    def answers_display(self, obj: VerificationLog) -> str:
        return format_html(
            '<div class="se-evo-answers"><section><h3>{}</h3><div class="se-markdown">{}</div></section>'
            '<section><h3>{}</h3><div class="se-markdown">{}</div></section></div>',
            _("Old answer"),
            markdown_html(obj.old_response) if obj.old_response else "—",
            _("New answer"),
            markdown_html(obj.new_response),
        )


class ThresholdChangeInline(admin.TabularInline):
    """Every change of the thresholds: who, when, from where, old and new values."""

    model = ThresholdChange
    fields = ["changed_at", "changed_by", "source", "changes_display"]
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    verbose_name_plural = _("history of changes")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("changed_by")

    @admin.display(description=_("changes"))
    def changes_display(self, obj: ThresholdChange) -> str:
        rows = (
            (_threshold_label(name), pair.get("old"), pair.get("new")) for name, pair in (obj.changes or {}).items()
        )
        return format_html_join("", "<div>{}: <del>{}</del> → <ins>{}</ins></div>", rows)

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(VerificationThresholds)
class VerificationThresholdsAdmin(admin.ModelAdmin):
    fields = [*THRESHOLD_SPECS, "updated_at", "updated_by"]
    readonly_fields = ["updated_at", "updated_by"]
    inlines = [ThresholdChangeInline]

    def changelist_view(self, request, extra_context=None):
        """There is one set of thresholds: the list is its editor."""
        return HttpResponseRedirect(reverse("admin:evolution_verificationthresholds_change", args=[1]))

    def get_object(self, request, object_id, from_field=None):
        # Reading never writes (evolution.selectors): a missing row is edited as the defaults,
        # and saving it through thresholds_update stores it.
        row = super().get_object(request, object_id, from_field)
        return row if row is not None or str(object_id) != "1" else VerificationThresholds()

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        changes = {name: form.cleaned_data[name] for name in form.changed_data if name in THRESHOLD_SPECS}
        thresholds_update(changes=changes, user=request.user, source="admin")

"""Server-rendered bar charts: SVG markup and the table of the figures, built here.

No script and no third-party asset. Every label, title and URL goes through `html.escape`
(quotes too) as the markup is joined here: a year of days is a few thousand elements, which the
template language would take most of a second to loop over. `admin/selfeval/chart.html` places the two, the table
behind a <details>.
"""

from dataclasses import dataclass, field
from functools import cached_property
from html import escape

from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

WIDTH = 540
HEIGHT = 150
AXIS = 34  # room on the left for the scale's labels


@dataclass(frozen=True)
class Series:
    key: str  # CSS class suffix: se-chart-<key>
    label: str


@dataclass
class Column:
    label: str  # e.g. the day, 2026-11-30
    values: list[float | None]  # one per series; None: nothing to show (no feedback that day)
    url: str = ""


@dataclass
class Chart:
    title: str
    series: list[Series]
    columns: list[Column]
    percent: bool = False  # values are rates from 0 to 100, not counts
    value_header: list[str] = field(default_factory=list)  # the table's column headers after the label

    @property
    def width(self) -> int:
        return WIDTH

    @property
    def height(self) -> int:
        return HEIGHT

    @cached_property
    def top(self) -> float:
        if self.percent:
            return 100.0
        return max((sum(v or 0 for v in column.values) for column in self.columns), default=0) or 1

    @property
    def scale(self) -> list[dict]:
        """Gridlines at 0, half and the top, with their labels."""
        lines = []
        for fraction in (0.0, 0.5, 1.0):
            value = self.top * fraction
            text = f"{value:.0f}%" if self.percent else f"{value:,.0f}" if value >= 10 or value == 0 else f"{value:.1f}"
            lines.append({"y": f"{HEIGHT - fraction * (HEIGHT - 8):.1f}", "label": text})
        return lines

    @cached_property
    def bars(self) -> list[dict]:
        """One <rect> per series value, stacked from the bottom; each with its tooltip text."""
        slot = (WIDTH - AXIS) / max(1, len(self.columns))
        gap = min(2.0, slot * 0.2)
        drawn = []
        for index, column in enumerate(self.columns):
            bottom = float(HEIGHT)
            for series, value in zip(self.series, column.values, strict=True):
                if not value:
                    continue
                height = value / self.top * (HEIGHT - 8)
                bottom -= height
                drawn.append(
                    {
                        "x": f"{AXIS + index * slot + gap / 2:.2f}",
                        "y": f"{bottom:.2f}",
                        "width": f"{max(0.5, slot - gap):.2f}",
                        "height": f"{height:.2f}",
                        "key": series.key,
                        "title": f"{column.label} · {series.label}: {self._text(value)}",
                        "url": column.url,
                    }
                )
        return drawn

    @property
    def first_label(self) -> str:
        return self.columns[0].label if self.columns else ""

    @property
    def last_label(self) -> str:
        return self.columns[-1].label if self.columns else ""

    @property
    def rows(self) -> list[dict]:
        return [
            {"label": column.label, "cells": [self._text(value) for value in column.values], "url": column.url}
            for column in self.columns
        ]

    @property
    def headers(self) -> list[str]:
        return self.value_header or [series.label for series in self.series]

    @cached_property
    def svg(self) -> SafeString:
        parts = [
            f'<svg class="se-chart-svg" viewBox="0 0 {WIDTH} {HEIGHT + 18}" role="img" '
            f'aria-label="{escape(self.title)}">'
        ]
        for line in self.scale:
            parts.append(
                f'<line class="se-chart-grid" x1="{AXIS}" x2="{WIDTH}" y1="{line["y"]}" y2="{line["y"]}"></line>'
                f'<text class="se-chart-tick" x="{AXIS - 4}" y="{line["y"]}" text-anchor="end" '
                f'dominant-baseline="middle">{escape(line["label"])}</text>'
            )
        for bar in self.bars:
            rect = (
                f'<rect class="se-chart-{escape(bar["key"])}" x="{bar["x"]}" y="{bar["y"]}" width="{bar["width"]}" '
                f'height="{bar["height"]}"><title>{escape(bar["title"])}</title></rect>'
            )
            parts.append(f'<a href="{escape(bar["url"])}">{rect}</a>' if bar["url"] else rect)
        parts.append(
            f'<text class="se-chart-tick" x="{AXIS}" y="{HEIGHT + 14}">{escape(self.first_label)}</text>'
            f'<text class="se-chart-tick" x="{WIDTH}" y="{HEIGHT + 14}" text-anchor="end">'
            f"{escape(self.last_label)}</text></svg>"
        )
        return mark_safe("".join(parts))  # noqa: S308 (every label and URL above is escaped)

    @cached_property
    def table(self) -> SafeString:
        parts = [f'<table><thead><tr><th scope="col">{escape(gettext("Period"))}</th>']
        parts.extend(f'<th scope="col">{escape(header)}</th>' for header in self.headers)
        parts.append("</tr></thead><tbody>")
        for row in self.rows:
            label = escape(row["label"])
            if row["url"]:
                label = f'<a href="{escape(row["url"])}">{label}</a>'
            cells = "".join(f'<td class="se-num">{escape(cell)}</td>' for cell in row["cells"])
            parts.append(f'<tr><th scope="row">{label}</th>{cells}</tr>')
        parts.append("</tbody></table>")
        return mark_safe("".join(parts))  # noqa: S308 (every label and URL above is escaped)

    def _text(self, value: float | None) -> str:
        if value is None:
            return "—"
        return f"{value:.1f}%" if self.percent else f"{value:,.0f}"

"""Server-rendered bar charts: geometry computed here, drawn as SVG by `admin/selfeval/chart.html`.

No script and no third-party asset; every label reaches the page through the template's
autoescaping. Each chart carries the table of its figures, shown behind a <details>.
"""

from dataclasses import dataclass, field

WIDTH = 720
HEIGHT = 160
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

    @property
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

    @property
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

    def _text(self, value: float | None) -> str:
        if value is None:
            return "—"
        return f"{value:.1f}%" if self.percent else f"{value:,.0f}"

"""Small pieces of markup the admin lists share; every value escaped by format_html."""

from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator
from django.utils.translation import gettext

QUERY_COLUMN_CHARS = 90  # a list's question column; the cell's title holds more
QUERY_TITLE_CHARS = 400


def verdict_badge(value: str, label: str) -> str:
    if not value:
        return format_html('<span class="se-badge se-badge-none">{}</span>', "—")
    return format_html('<span class="se-badge se-badge-{}">{}</span>', value.lower(), label)


def status_badge(value: str, label: str) -> str:
    """A workflow status (a case's, a bad case's) as a badge coloured by its value."""
    return format_html('<span class="se-badge se-status-{}">{}</span>', value, label)


def session_inspector_link(session) -> str:
    """A link to the session inspector, labelled with the session's external id (escaped)."""
    url = reverse("admin:diagnosis_diagnosissession_change", args=[session.pk])
    return format_html('<a href="{}">{}</a>', url, session.session_id)


def yes_no(value: bool | None) -> str:
    """A boolean as words of the active language (是 / 否), "—" for unknown."""
    if value is None:
        return "—"
    return gettext("yes") if value else gettext("no")


def query_cell(query: str) -> str:
    """A list's question cell: the start of the query, more of it in the title (`.se-query`)."""
    return format_html(
        '<span class="se-query" title="{}">{}</span>',
        Truncator(query).chars(QUERY_TITLE_CHARS),
        Truncator(query).chars(QUERY_COLUMN_CHARS),
    )

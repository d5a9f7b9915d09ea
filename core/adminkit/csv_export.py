"""CSV export of an admin list: an action on the selected rows and a link exporting the whole filtered list.

Both stream the rows (StreamingHttpResponse, the csv module, the rows read in chunks with
`values_list`), so memory stays flat whatever the list's length, and both read the changelist's
own queryset: the user's filters, search, sort order and access (the admin's `get_queryset`, which
scopes by project). The file is UTF-8 with a byte-order mark, so Excel opens Chinese text as such,
and a text cell that a spreadsheet would run as a formula (= + - @, tab, carriage return) is
prefixed with a quote.
"""

import csv
import datetime as dt
import io
import logging
from collections.abc import Iterator, Sequence
from typing import Any

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponseRedirect, StreamingHttpResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

logger = logging.getLogger("selfeval.admin.export")

CHUNK_ROWS = 1000
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """One value as the csv module should write it: formula-safe text, ISO instants, "" for None."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return timezone.localtime(value).isoformat() if timezone.is_aware(value) else value.isoformat()
    if isinstance(value, (int, float)):
        return value
    text = str(value)
    return f"'{text}" if text.startswith(_FORMULA_STARTS) else text


def csv_rows(*, header: Sequence[str], rows: Iterator[Sequence[Any]], chunk_rows: int = CHUNK_ROWS) -> Iterator[str]:
    """The CSV text in pieces of `chunk_rows` rows, beginning with the byte-order mark and the header."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    buffer.write("\ufeff")
    writer.writerow(header)
    for count, row in enumerate(rows, start=1):
        writer.writerow([csv_cell(value) for value in row])
        if count % chunk_rows == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


class CSVExportMixin:
    """Adds the "Export selected as CSV" action and an "Export CSV" link (the filtered list) to a ModelAdmin.

    `csv_columns` maps each column's header to its field path (`"project": "project__slug"`); the
    headers are plain names, not translated, so a script reading the file does not depend on the
    admin's language. List "export_csv" in the admin's `actions`.
    """

    csv_columns: dict[str, str] = {}

    @admin.action(permissions=["view"], description=_("Export selected as CSV"))
    def export_csv(self, request: HttpRequest, queryset: QuerySet) -> StreamingHttpResponse:
        return self._csv_response(request, queryset, scope="selection")

    def csv_export_view(self, request: HttpRequest):
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            changelist = self.get_changelist_instance(request)
        except IncorrectLookupParameters:
            return HttpResponseRedirect(f"{self._changelist_url()}?e=1")
        return self._csv_response(request, changelist.queryset, scope="filtered list")

    def get_urls(self):
        name = f"{self.opts.app_label}_{self.opts.model_name}_export_csv"
        return [path("export.csv", self.admin_site.admin_view(self.csv_export_view), name=name), *super().get_urls()]

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None):
        params = request.GET.copy()
        params.pop("p", None)  # the page: the export is the whole list
        url = reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_export_csv", current_app=self.admin_site.name
        )
        context = {"csv_export_url": f"{url}?{params.urlencode()}" if params else url, **(extra_context or {})}
        return super().changelist_view(request, context)

    def _changelist_url(self) -> str:
        return reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist", current_app=self.admin_site.name
        )

    def _csv_response(self, request: HttpRequest, queryset: QuerySet, *, scope: str) -> StreamingHttpResponse:
        filename = f"{self.opts.model_name}-{timezone.now():%Y%m%d-%H%M%S}.csv"
        response = StreamingHttpResponse(self._logged(request, queryset, scope), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response

    def _logged(self, request: HttpRequest, queryset: QuerySet, scope: str) -> Iterator[str]:
        exported = 0

        def rows() -> Iterator[tuple]:
            nonlocal exported
            for row in queryset.values_list(*self.csv_columns.values()).iterator(chunk_size=CHUNK_ROWS):
                exported += 1
                yield row

        try:
            yield from csv_rows(header=list(self.csv_columns), rows=rows())
        finally:
            # Once the last row went out, or the download stopped: who exported how much of what.
            logger.info(
                "%s exported %d %s as CSV (%s%s)",
                request.user.get_username(),
                exported,
                self.opts.verbose_name_plural,
                scope,
                f": {request.GET.urlencode()}" if request.GET else "",
            )

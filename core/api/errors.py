"""One error type for the application and one envelope for every API error.

Every error body is `{"error": {"code": ..., "message": ..., "fields": {...}}}`; `fields` maps
each invalid input field (camelCase, dotted for nested items) to its messages.

An unreachable database (or one that refused the connection) is a transient condition, answered
503 with `Retry-After` everywhere: in the envelope by the API, by /healthz, and with the 503 page
by the admin (DatabaseUnavailableMiddleware, and handler500 for what fails outside a view).
"""

import sys
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

# Seconds a client (or a load balancer's health check) waits before retrying during an outage.
DATABASE_RETRY_AFTER_SECONDS = 5
DATABASE_UNAVAILABLE_MESSAGE = "The database is unavailable; retry later."


def is_database_unavailable(exc: BaseException | None) -> bool:
    """Connection lost or refused, pool timeout, server shutting down; errors of a statement itself
    (DataError, IntegrityError) are not, and stay what they are."""
    return isinstance(exc, (OperationalError, InterfaceError))


def database_unavailable_response(request: HttpRequest) -> HttpResponse:
    """503 with Retry-After: the envelope under /api/, the 503 page anywhere else."""
    if request.path.startswith("/api/"):
        response = JsonResponse(error_body("database_unavailable", DATABASE_UNAVAILABLE_MESSAGE), status=503)
    else:
        response = render(request, "503.html", status=503)
    response["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
    return response


class ApplicationError(Exception):
    """A business rule refused the request; carries the HTTP status and a stable code."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "invalid",
        status_code: int = status.HTTP_400_BAD_REQUEST,
        fields: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status_code = status_code
        self.fields = fields or {}


def flatten_field_errors(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """Turn DRF's nested ValidationError detail into {"toolInvocations.2.status": [...]}."""
    flat: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            flat.update(flatten_field_errors(value, name))
    elif isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            flat[prefix or "non_field_errors"] = [str(item) for item in detail]
        else:
            for index, item in enumerate(detail):
                if item:
                    flat.update(flatten_field_errors(item, f"{prefix}.{index}" if prefix else str(index)))
    else:
        flat[prefix or "non_field_errors"] = [str(detail)]
    return flat


def error_body(code: str, message: str, fields: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if fields:
        body["fields"] = fields
    return {"error": body}


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        return Response(error_body(exc.code, exc.message, exc.fields), status=exc.status_code)
    if is_database_unavailable(exc):
        return Response(
            error_body("database_unavailable", DATABASE_UNAVAILABLE_MESSAGE),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(DATABASE_RETRY_AFTER_SECONDS)},
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)  # a service's reason, else the default

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        fields = flatten_field_errors(exc.detail)
        names = ", ".join(sorted(fields))
        response.data = error_body("invalid", f"Invalid input: {names}", fields)
    elif isinstance(exc, exceptions.APIException):
        detail = exc.detail
        message = str(detail) if not isinstance(detail, (dict, list)) else str(detail)
        code = exc.get_codes() if isinstance(exc.get_codes(), str) else exc.default_code
        response.data = error_body(code, message)
    return response


@csrf_exempt  # a POST to a mistyped address is a 404 in the envelope, not the CSRF failure page
def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """Every address under /api/ that no route serves, whatever the method."""
    return JsonResponse(error_body("not_found", "No API endpoint at this address."), status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500 (DEBUG off): a 503 for an unavailable database that failed outside a view (in a
    middleware), else the envelope under /api/ and Django's page elsewhere."""
    if is_database_unavailable(sys.exc_info()[1]):
        return database_unavailable_response(request)
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("server_error", "Server error"), status=500)
    return defaults.server_error(request)

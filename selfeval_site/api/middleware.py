from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from .errors import error_body


class RequestBodyLimitMiddleware:
    """Answer 413 for an oversized API body before anything reads or parses it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/"):
            limit = settings.SELFEVAL_MAX_BODY_BYTES
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                return JsonResponse(error_body("invalid", "Content-Length is not a number"), status=400)
            if length > limit:
                return JsonResponse(
                    error_body(
                        "payload_too_large", f"Request body of {length} bytes exceeds the limit of {limit} bytes"
                    ),
                    status=413,
                )
        return self.get_response(request)

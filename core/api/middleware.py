import logging
from collections.abc import Callable
from urllib.parse import unquote_plus

from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.middleware.csp import ContentSecurityPolicyMiddleware

from .errors import database_unavailable_response, error_body, is_database_unavailable
from .throttling import rate_limit_of

logger = logging.getLogger(__name__)


class NulInURLMiddleware:
    """Answer 400 for a NUL character in the path or the query string, before any view runs.

    No text column can be compared with NUL on PostgreSQL (the query fails), so `/api/trace/%00`
    or `?project=%00` would reach the database as a 500; SQLite answers them alike.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" in request.path or "\x00" in unquote_plus(request.META.get("QUERY_STRING", "")):
            message = "The URL contains a NUL character (%00)."
            if request.path.startswith("/api/"):
                return JsonResponse(error_body("invalid", message), status=400)
            return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class DatabaseUnavailableMiddleware:
    """A view that meets an unreachable database answers 503 with Retry-After (the 503 page in the
    admin, the envelope under /api/) instead of a 500: the admin's login, its pages reading the
    session. The API's views answer it themselves (core.api.errors.api_exception_handler)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_database_unavailable(exception):
            return None
        logger.warning("Database unavailable at %s: %s", request.path, exception)
        return database_unavailable_response(request)


class RateLimitHeadersMiddleware:
    """`RateLimit` and `RateLimit-Policy` on every answer to a request a throttle counted
    (core.api.throttling): the client sees its budget before it runs out, not only in a 429."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        state = rate_limit_of(request)
        if state is not None:
            for name, value in state.headers().items():
                response[name] = value
        return response


MACHINE_API_PREFIXES = ("/api/", "/v1/")


def carries_own_credentials(request: HttpRequest) -> bool:
    """An API request with an `Authorization` header: an agent's API key, an end user's feedback
    token, an OTLP exporter's Basic credentials. The API authenticates it by that header alone
    (never by a session cookie), and answers it JSON that no browser renders as a page."""
    return "HTTP_AUTHORIZATION" in request.META and request.path_info.startswith(MACHINE_API_PREFIXES)


class _BrowserOnly:
    """A middleware that serves what a browser session needs (its session, user, messages, page
    policy): a request that carries its own credentials passes by it. The whole chain was a tenth
    of a vote's CPU (issue 25); these four are the part a machine client has no use for."""

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if carries_own_credentials(request):
            return self.get_response(request)
        return super().__call__(request)


class BrowserContentSecurityPolicyMiddleware(_BrowserOnly, ContentSecurityPolicyMiddleware):
    pass


class BrowserSessionMiddleware(_BrowserOnly, SessionMiddleware):
    pass


class BrowserAuthenticationMiddleware(_BrowserOnly, AuthenticationMiddleware):
    pass


class BrowserMessageMiddleware(_BrowserOnly, MessageMiddleware):
    pass

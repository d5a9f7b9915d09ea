"""Reads from a read replica (`DATABASE_REPLICA_URL`): which requests may, and the router that sends them.

A GET or HEAD of the admin's lists, its dashboard and calibration panel, or the trace API reads from
the replica; every other request, every write, and every read inside a transaction or after a write
of the same request goes to the primary. Read-your-writes across requests: a POST (PUT, PATCH,
DELETE) that wrote pins its client to the primary for DATABASE_REPLICA_PIN_SECONDS (a cookie), so a
reviewer's next page shows what they have just saved while the replica catches up. A GET that writes
(the dashboard recounting a changed day) does not pin: that is upkeep, not the client's change.

It lives in config/ because it names the views of several surfaces (the admin's, the trace API's),
which only the composition knows.
"""

import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from fnmatch import fnmatchcase

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from django.db import DEFAULT_DB_ALIAS, connections, router
from django.http import HttpRequest, HttpResponse

REPLICA = "replica"
PIN_COOKIE = "selfeval_primary_until"
# URL names of the views whose reads the replica serves ("admin:*_changelist": every admin list).
REPLICA_VIEWS = (
    "admin:index",
    "admin:calibration",
    "admin:*_changelist",
    "trace",
    "trace-invocation-output",
    "trace-ref",
)
SAFE_METHODS = frozenset({"GET", "HEAD"})
# Who is asking and what they may see is always read from the primary: a lagging replica must not
# log out a reviewer who has just signed in (sessions), let the key cache take in an API key the
# primary has already revoked (tenancy), grant a permission already withdrawn (auth) or forget a
# failed login (axes).
PRIMARY_APPS = frozenset({"auth", "sessions", "axes", "tenancy"})


@dataclass(slots=True)
class RequestReads:
    replica: bool = False  # may this request's reads use the replica (until it writes)?
    wrote: bool = False


_request_reads: ContextVar[RequestReads | None] = ContextVar("request_reads", default=None)


class ReplicaRouter:
    """Installed (DATABASE_ROUTERS) only when the `replica` alias is configured."""

    def db_for_read(self, model, **hints) -> str:
        reads = _request_reads.get()
        if (
            reads is None
            or not reads.replica
            or model._meta.app_label in PRIMARY_APPS
            # Inside a transaction the request opened: its reads must see its own writes and locks.
            or connections[DEFAULT_DB_ALIAS].in_atomic_block
        ):
            return DEFAULT_DB_ALIAS
        return REPLICA

    def db_for_write(self, model, **hints) -> str:
        reads = _request_reads.get()
        if reads is not None:
            # The rest of this request reads what it wrote, and so do the client's next ones (the pin).
            reads.replica = False
            reads.wrote = True
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints) -> bool:
        return True  # one database: a row read from the replica is the primary's row

    def allow_migrate(self, db: str, app_label: str, **hints) -> bool:
        return db == DEFAULT_DB_ALIAS  # the replica replays the primary's schema


class ReplicaReadsMiddleware:
    """Opens the replica to the reads of REPLICA_VIEWS on GET and HEAD when the client is not pinned,
    and pins a client whose POST (PUT, PATCH, DELETE) wrote. Leaves the chain when ReplicaRouter is
    not installed.

    Sits outside the session middleware, so that a session it saves after the view counts as a write.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        if not any(isinstance(installed, ReplicaRouter) for installed in router.routers):
            raise MiddlewareNotUsed("no read replica (DATABASE_REPLICA_URL)")
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        reads = RequestReads()
        token = _request_reads.set(reads)
        try:
            response = self.get_response(request)
        finally:
            _request_reads.reset(token)
        if reads.wrote and request.method not in SAFE_METHODS:
            seconds = settings.DATABASE_REPLICA_PIN_SECONDS
            response.set_cookie(
                PIN_COOKIE,
                f"{time.time() + seconds:.3f}",
                max_age=seconds,
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs) -> None:
        reads = _request_reads.get()  # set by __call__, which this runs within
        if (
            not reads.wrote
            and request.method in SAFE_METHODS
            and not _pinned(request)
            and any(fnmatchcase(request.resolver_match.view_name, name) for name in REPLICA_VIEWS)
        ):
            reads.replica = True


def _pinned(request: HttpRequest) -> bool:
    """Did this client write less than DATABASE_REPLICA_PIN_SECONDS ago? A client can only choose the
    primary for itself with this cookie, which is what every client gets without a replica."""
    try:
        return float(request.COOKIES.get(PIN_COOKIE, "")) > time.time()
    except ValueError:
        return False

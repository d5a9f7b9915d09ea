"""A trace answered from a cached body: the body, its ETag and its cache key all name one version
of the trace (`trace.selectors.TraceHead`), so a write that moves the version (see
`diagnosis.services.trace_version`) retires all three at once and nothing needs deleting."""

from collections.abc import Callable
from trace.selectors import TraceHead

from django.conf import settings
from django.core.cache import cache

from diagnosis.services.trace_version import version_etag

# One more whenever `trace.body` changes what it builds: a shared cache (Redis) and clients' ETags
# then never get a body of an older build.
TRACE_BODY_FORMAT = 1


def trace_etag(*, head: TraceHead, url: str) -> str:
    """The strong ETag of one answer: the session and its trace version, and a digest of the rest the
    body depends on (the address asked, with its page and project; the project's slug; the versions of
    the conversation's turns; the settings that shape it)."""
    rest = [
        TRACE_BODY_FORMAT,
        url,
        head.project_slug,
        [(turn["pk"], turn["trace_version"]) for turn in head.turns],
        settings.SELFEVAL_TRACE_INVOCATIONS,
        settings.SELFEVAL_TRACE_PREVIEW_CHARS,
        settings.SELFEVAL_TRACE_FEEDBACK_HISTORY,
        settings.SELFEVAL_TRACE_CONVERSATION_TURNS,
    ]
    return version_etag(route="trace", session_pk=head.session_pk, version=head.version, depends_on=rest)


def trace_json(*, etag: str, render: Callable[[], bytes]) -> bytes:
    """The JSON body named by `etag`: from the cache, else rendered and kept SELFEVAL_TRACE_CACHE_SECONDS."""
    key = f"trace:{etag.strip('"')}"
    body = cache.get(key)
    if body is None:
        body = render()
        cache.set(key, body, settings.SELFEVAL_TRACE_CACHE_SECONDS)
    return body

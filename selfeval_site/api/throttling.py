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

from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from core.api.errors import DATABASE_RETRY_AFTER_SECONDS


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the database answers a query, 503 with Retry-After when it does not (within the
    pool's timeout, DATABASE_POOL_TIMEOUT, or the connect timeout without a pool)."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        return JsonResponse(
            {"status": "unavailable", "database": str(exc.__class__.__name__)},
            status=503,
            headers={"Retry-After": str(DATABASE_RETRY_AFTER_SECONDS)},
        )
    return JsonResponse({"status": "ok"})

"""Bench-only URLs: every real route plus `POST /bench/ceiling/<pk>`, the cheapest useful write.

The ceiling view goes through the same middleware and database as the API but skips DRF,
authentication and business logic: one UPDATE of one session row by primary key.
"""

from django.http import HttpRequest, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from diagnosis.models import DiagnosisSession
from selfeval_site.urls import urlpatterns as site_urlpatterns


@csrf_exempt
@require_POST
def ceiling(request: HttpRequest, pk: int) -> JsonResponse:
    updated = DiagnosisSession.objects.filter(pk=pk).update(feedback="useful")
    return JsonResponse({"success": bool(updated)})


urlpatterns = [path("bench/ceiling/<int:pk>", ceiling), *site_urlpatterns]

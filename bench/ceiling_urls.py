"""Bench-only URLs: every real route plus two bare views that bound what an endpoint can reach.

Both go through the same middleware and database as the API but skip DRF, authentication,
validation and business logic:
- `POST /bench/ceiling/<pk>`, the cheapest useful write: one UPDATE of one session row by
  primary key, in autocommit (the ceiling every endpoint is compared with);
- `POST /bench/vote-floor/<pk>`, the database work a vote cannot do without: a transaction that
  locks the session row and appends one feedback event (BEGIN, SELECT ... FOR UPDATE, INSERT,
  COMMIT). No vote that keeps concurrent votes in order can be cheaper than this.
"""

from django.db import transaction
from django.http import HttpRequest, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from config.urls import urlpatterns as site_urlpatterns
from diagnosis.models import DiagnosisSession, Feedback
from feedback.models import FeedbackClient, FeedbackEvent


@csrf_exempt
@require_POST
def ceiling(request: HttpRequest, pk: int) -> JsonResponse:
    updated = DiagnosisSession.objects.filter(pk=pk).update(feedback="useful")
    return JsonResponse({"success": bool(updated)})


@csrf_exempt
@require_POST
def vote_floor(request: HttpRequest, pk: int) -> JsonResponse:
    with transaction.atomic():
        session = DiagnosisSession.objects.select_for_update().only("pk").get(pk=pk)
        FeedbackEvent.objects.create(session=session, value=Feedback.USEFUL, client=FeedbackClient.API_KEY)
    return JsonResponse({"success": True})


urlpatterns = [
    path("bench/ceiling/<int:pk>", ceiling),
    path("bench/vote-floor/<int:pk>", vote_floor),
    *site_urlpatterns,
]

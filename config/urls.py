from trace.api import TraceInvocationOutputView, TraceRefView, TraceView

from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import SimpleRouter

from cases.api import CaseViewSet
from core.api.errors import api_not_found
from core.health import healthz
from diagnosis.api import SessionViewSet
from evolution.api import EvolutionThresholdsView, EvolutionVerifyView
from feedback.api import FeedbackTokenView, FeedbackView
from otlp.api import LangfuseOtlpTracesView, OtlpTracesView

router = SimpleRouter(trailing_slash=False)
router.register("sessions", SessionViewSet, basename="session")
router.register("cases", CaseViewSet, basename="case")

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves Swagger UI's set-up script as a file (?script): no inline script for the CSP.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/feedback", FeedbackView.as_view(), name="feedback"),
    re_path(r"^api/sessions/(?P<session_id>[^/]+)/feedback-token$", FeedbackTokenView.as_view(), name="feedback-token"),
    re_path(r"^api/trace/(?P<session_id>[^/]+)$", TraceView.as_view(), name="trace"),
    re_path(
        r"^api/trace/(?P<session_id>[^/]+)/invocations/(?P<position>[0-9]{1,10})/output$",
        TraceInvocationOutputView.as_view(),
        name="trace-invocation-output",
    ),
    re_path(
        r"^api/trace/(?P<session_id>[^/]+)/invocations/(?P<position>[0-9]{1,10})/refs/(?P<ref_position>[0-9]{1,10})$",
        TraceRefView.as_view(),
        name="trace-ref",
    ),
    path("api/evolution/verify", EvolutionVerifyView.as_view(), name="evolution-verify"),
    path("api/evolution/thresholds", EvolutionThresholdsView.as_view(), name="evolution-thresholds"),
    # The Langfuse SDK's OTLP path (its host set to this server), before the catch-all below.
    path("api/public/otel/v1/traces", LangfuseOtlpTracesView.as_view(), name="otlp-traces-langfuse"),
    path("api/", include(router.urls)),
    re_path(r"^api/", api_not_found),
    # OTLP/HTTP's own path, where exporters post when given OTEL_EXPORTER_OTLP_ENDPOINT=<this server>.
    path("v1/traces", OtlpTracesView.as_view(), name="otlp-traces"),
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", RedirectView.as_view(pattern_name="admin:index", permanent=False)),
]

handler500 = "core.api.errors.server_error"

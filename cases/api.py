"""Case-library search API: `GET /api/cases` and `GET /api/cases/<caseId>` (read only)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets

from cases import selectors
from cases.models import CaseStatus, FaultCategory
from cases.serializers import CaseSerializer
from core.api.authentication import access_from_request
from core.api.fields import StrictCharField
from core.api.filters import KnownQueryParametersMixin
from core.api.pagination import CheckedCursorPagination
from core.api.permissions import IsProjectClientOrStaffWithCaseView
from core.api.schema import READ_ERRORS, error_responses


class CaseSearchSerializer(serializers.Serializer):
    q = StrictCharField(required=False, allow_blank=True, default="", max_length=200)
    faultCategory = serializers.ChoiceField(choices=FaultCategory.choices, required=False, default="")
    service = StrictCharField(required=False, allow_blank=True, default="", max_length=200)
    errorCode = StrictCharField(required=False, allow_blank=True, default="", max_length=100)
    status = serializers.ChoiceField(choices=CaseStatus.choices, required=False, default="")


class CaseCursorPagination(CheckedCursorPagination):
    ordering = ("-created_at", "-pk")


@extend_schema_view(
    list=extend_schema(
        summary="Search the case library",
        parameters=[
            OpenApiParameter("q", str, description="Text in title, query, root cause or solution"),
            OpenApiParameter("faultCategory", str, enum=FaultCategory.values),
            OpenApiParameter("service", str),
            OpenApiParameter("errorCode", str),
            OpenApiParameter("status", str, enum=CaseStatus.values),
        ],
        responses={200: CaseSerializer(many=True), **error_responses(*READ_ERRORS)},
    ),
    retrieve=extend_schema(summary="One case", responses={200: CaseSerializer, **error_responses(*READ_ERRORS)}),
)
class CaseViewSet(KnownQueryParametersMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = CaseSerializer
    pagination_class = CaseCursorPagination
    lookup_url_kwarg = "case_id"
    lookup_field = "pk"
    lookup_value_regex = r"[0-9a-fA-F-]{36}"
    throttle_scope = "cases"
    filter_backends: list = []
    list_query_parameters = tuple(CaseSearchSerializer().fields)
    permission_classes = [IsProjectClientOrStaffWithCaseView]

    def get_queryset(self):
        access = access_from_request(self.request, staff_permission="cases.view_case")
        if self.action != "list":
            return selectors.case_list(access=access)
        # A plain dict, not the QueryDict: DRF reads an empty field of an HTML form as left out, and
        # `?status=` is no status the schema allows (a 400), while `?q=` is an empty search.
        criteria = CaseSearchSerializer(data=self.request.query_params.dict())
        criteria.is_valid(raise_exception=True)
        data = criteria.validated_data
        return selectors.case_search(
            access=access,
            text=data["q"],
            fault_category=data["faultCategory"],
            service=data["service"],
            error_code=data["errorCode"],
            status=data["status"],
        )

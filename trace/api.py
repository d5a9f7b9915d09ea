"""`GET /api/trace/<sessionId>`: one diagnosis seen from execution, evidence and the user; and the
whole of a tool output or a ref that the trace shows only as a preview."""

from trace.invocations import TraceOutputSerializer, TraceQuerySerializer
from trace.selectors import trace_get, trace_invocation_get, trace_ref_get
from trace.serializers import TraceSerializer

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.authentication import access_from_request
from core.api.schema import READ_ERRORS, error_responses
from diagnosis.serializers import EvidenceRefSerializer

PROJECT_PARAMETER = OpenApiParameter(
    "project", str, description="Staff only: the project slug when a sessionId exists in several projects."
)


class TraceView(APIView):
    throttle_scope = "trace"

    @extend_schema(
        summary="Trace of one session: steps, invocations, feedback and the structured self-evaluation",
        description=(
            "Seed document 000's trace: session, steps, tool invocations with their evidence refs, `feedback`, "
            "`hasFeedback`, `hasVerifierEvaluation`, `hasAiOpsRuleEvaluation`, the self_evaluation layers "
            "structured (rule factors, claim checks with facts and gatekeeper bindings, AIOps checks) and "
            "three views: execution (status), evidence (rule / verifier), user (feedback, case, bad case). "
            "Invocations come a page at a time (`toolInvocationsPage` links the next and previous pages); "
            "tool outputs and ref contents longer than SELFEVAL_TRACE_PREVIEW_CHARS are previews with a link "
            "(`outputUrl`, `contentUrl`) to the whole. A fixed number of SQL queries, whatever the session's size."
        ),
        parameters=[PROJECT_PARAMETER, TraceQuerySerializer],
        responses={200: TraceSerializer, **error_responses(*READ_ERRORS)},
    )
    def get(self, request: Request, session_id: str) -> Response:
        params = TraceQuerySerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        project_slug = request.query_params.get("project")
        trace = trace_get(
            access=access_from_request(request),
            session_id=session_id,
            project_slug=project_slug,
            invocation_offset=params.validated_data["invocationOffset"],
            invocation_limit=params.validated_data["invocationLimit"],
        )
        return Response(TraceSerializer(trace, context={"request": request, "project_slug": project_slug}).data)


class TraceInvocationOutputView(APIView):
    throttle_scope = "trace"

    @extend_schema(
        summary="The whole output of one tool invocation of a trace (by its position)",
        parameters=[PROJECT_PARAMETER],
        responses={200: TraceOutputSerializer, **error_responses(*READ_ERRORS)},
    )
    def get(self, request: Request, session_id: str, position: str) -> Response:
        invocation = trace_invocation_get(
            access=access_from_request(request),
            session_id=session_id,
            position=int(position),
            project_slug=request.query_params.get("project"),
        )
        return Response(TraceOutputSerializer(invocation).data)


class TraceRefView(APIView):
    throttle_scope = "trace"

    @extend_schema(
        summary="The whole content of one evidence ref of a trace (by the positions of its invocation and itself)",
        parameters=[PROJECT_PARAMETER],
        responses={200: EvidenceRefSerializer, **error_responses(*READ_ERRORS)},
    )
    def get(self, request: Request, session_id: str, position: str, ref_position: str) -> Response:
        ref = trace_ref_get(
            access=access_from_request(request),
            session_id=session_id,
            position=int(position),
            ref_position=int(ref_position),
            project_slug=request.query_params.get("project"),
        )
        return Response(EvidenceRefSerializer(ref).data)

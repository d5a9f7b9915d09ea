"""`GET /api/trace/<sessionId>`: one diagnosis seen from execution, evidence and the user."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from selfeval_site.api.authentication import access_from_request
from selfeval_site.api.schema import ERROR_RESPONSES
from selfeval_site.backoffice.trace.selectors import trace_get
from selfeval_site.backoffice.trace.serializers import TraceSerializer


class TraceView(APIView):
    throttle_scope = "trace"

    @extend_schema(
        summary="Trace of one session: steps, invocations, feedback and the structured self-evaluation",
        description=(
            "The seed's trace: session, steps, tool invocations with their evidence refs, `feedback`, "
            "`hasFeedback`, `hasVerifierEvaluation`, `hasAiOpsRuleEvaluation`, the self_evaluation layers "
            "structured (rule factors, claim checks with facts and gatekeeper bindings, AIOps checks) and "
            "three views: execution (status), evidence (rule / verifier), user (feedback, case, bad case). "
            "A fixed number of SQL queries, whatever the number of invocations."
        ),
        parameters=[
            OpenApiParameter(
                "project", str, description="Staff only: the project slug when a sessionId exists in several projects."
            )
        ],
        responses={200: TraceSerializer, **ERROR_RESPONSES},
    )
    def get(self, request: Request, session_id: str) -> Response:
        trace = trace_get(
            access=access_from_request(request),
            session_id=session_id,
            project_slug=request.query_params.get("project"),
        )
        return Response(TraceSerializer(trace).data)

"""`GET /api/trace/<sessionId>`: one diagnosis seen from execution, evidence and the user; and the
whole of a tool output or a ref that the trace shows only as a preview."""

from functools import partial
from trace.body import TraceLinks, trace_body
from trace.cache import trace_etag, trace_json
from trace.invocations import TraceOutputSerializer, TraceQuerySerializer
from trace.selectors import TraceHead, trace_get, trace_head_get, trace_invocation_get, trace_ref_get
from trace.serializers import TraceSerializer

from django.http import HttpResponse
from django.utils.cache import get_conditional_response
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.authentication import access_from_request
from core.api.schema import READ_ERRORS, conditional_get, error_responses
from diagnosis.serializers import EvidenceRefSerializer

PROJECT_PARAMETER = OpenApiParameter(
    "project", str, description="Staff only: the project slug when a sessionId exists in several projects."
)
TRACE_CONDITIONAL_PARAMETERS, TRACE_NOT_MODIFIED = conditional_get("the trace")


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
            "(`outputUrl`, `contentUrl`) to the whole. A fixed number of SQL queries, whatever the session's size; "
            "an unchanged trace is answered from the cache in one query, or a 304 to its ETag."
        ),
        parameters=[PROJECT_PARAMETER, TraceQuerySerializer, *TRACE_CONDITIONAL_PARAMETERS],
        responses={
            200: TraceSerializer,
            **TRACE_NOT_MODIFIED,
            **error_responses(*READ_ERRORS),
        },
    )
    def get(self, request: Request, session_id: str) -> HttpResponse:
        # A plain dict, not the QueryDict: DRF reads an empty value of form data as absent
        # (`invocationLimit=` would be the default), where the schema says an integer.
        params = TraceQuerySerializer(data=request.query_params.dict())
        params.is_valid(raise_exception=True)
        project_slug = request.query_params.get("project")
        head = trace_head_get(access=access_from_request(request), session_id=session_id, project_slug=project_slug)
        etag = trace_etag(head=head, url=request.build_absolute_uri())
        response = get_conditional_response(request, etag=etag)
        if response is None:
            render = partial(
                _trace_rendered,
                request=request,
                head=head,
                project_slug=project_slug,
                invocation_offset=params.validated_data["invocationOffset"],
                invocation_limit=params.validated_data["invocationLimit"],
            )
            response = HttpResponse(trace_json(etag=etag, render=render), content_type="application/json")
        response["ETag"] = etag
        return response


def _trace_rendered(
    *,
    request: Request,
    head: TraceHead,
    project_slug: str | None,
    invocation_offset: int,
    invocation_limit: int | None,
) -> bytes:
    """The JSON of the trace of `head`, read now (after `head`)."""
    trace = trace_get(head=head, invocation_offset=invocation_offset, invocation_limit=invocation_limit)
    return JSONRenderer().render(trace_body(trace, links=TraceLinks(request=request, project_slug=project_slug)))


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

"""Invocations in the trace: a page at a time, tool outputs and ref contents as previews of
SELFEVAL_TRACE_PREVIEW_CHARS characters with links to the whole, and the query parameters."""

import json
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import ColumnIntegerField
from diagnosis.models import EvidenceRef, ToolInvocation
from diagnosis.serializers import ToolInvocationSerializer

MAX_TRACE_INVOCATIONS = 200


class TraceQuerySerializer(serializers.Serializer):
    """Query parameters of `GET /api/trace/<sessionId>`."""

    invocationOffset = ColumnIntegerField(
        column=ToolInvocation._meta.get_field("position"),
        required=False,
        default=0,
        help_text="First invocation of the page (0-based, in the agent's order).",
    )
    invocationLimit = serializers.IntegerField(
        min_value=1,
        max_value=MAX_TRACE_INVOCATIONS,
        required=False,
        default=None,
        help_text="Invocations per page (default SELFEVAL_TRACE_INVOCATIONS).",
    )


def _link(serializer: serializers.Serializer, route: str, **kwargs: Any) -> str:
    """Absolute URL of a trace route, keeping the caller's `project` choice."""
    url = serializer.context["request"].build_absolute_uri(reverse(route, kwargs=kwargs))
    project = serializer.context.get("project_slug")
    return f"{url}?{urlencode({'project': project})}" if project else url


class TraceRefSerializer(serializers.Serializer):
    """A ref whose content is previewed (SELFEVAL_TRACE_PREVIEW_CHARS); `contentUrl` has the whole."""

    refId = serializers.CharField(source="ref_id")
    source = serializers.CharField()
    content = serializers.CharField(source="content_preview")
    contentTruncated = serializers.SerializerMethodField()
    contentChars = serializers.IntegerField(source="content_chars")
    contentSha256 = serializers.CharField(source="content_sha256")
    contentUrl = serializers.SerializerMethodField()

    def get_contentTruncated(self, ref: EvidenceRef) -> bool:
        return ref.content_chars > len(ref.content_preview)

    def get_contentUrl(self, ref: EvidenceRef) -> str:
        return _link(
            self,
            "trace-ref",
            session_id=self.context["session_id"],
            position=self.context["invocation_position"][ref.invocation_id],
            ref_position=ref.position,
        )


def output_preview(output: Any, limit: int) -> tuple[Any, int]:
    """The output itself when its text (a string, else its JSON) has at most `limit` characters,
    else the first `limit` characters of that text; and the text's length."""
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    if len(text) <= limit:
        return output, len(text)
    return text[:limit], len(text)


class TraceInvocationSerializer(ToolInvocationSerializer):
    """An invocation whose output and ref contents are previewed, with links to the whole."""

    output = serializers.SerializerMethodField(
        help_text="The raw output, or the first SELFEVAL_TRACE_PREVIEW_CHARS characters of its text (its JSON for "
        "a non-string) when it is longer: then outputTruncated is true and outputUrl has it whole."
    )
    outputTruncated = serializers.SerializerMethodField()
    outputChars = serializers.SerializerMethodField()
    outputUrl = serializers.SerializerMethodField()

    def _preview(self, invocation: ToolInvocation) -> tuple[Any, int]:
        if not hasattr(invocation, "_trace_preview"):
            invocation._trace_preview = output_preview(invocation.output, settings.SELFEVAL_TRACE_PREVIEW_CHARS)
        return invocation._trace_preview

    @extend_schema_field(OpenApiTypes.ANY)
    def get_output(self, invocation: ToolInvocation) -> Any:
        return self._preview(invocation)[0]

    def get_outputTruncated(self, invocation: ToolInvocation) -> bool:
        return self._preview(invocation)[1] > settings.SELFEVAL_TRACE_PREVIEW_CHARS

    def get_outputChars(self, invocation: ToolInvocation) -> int:
        return self._preview(invocation)[1]

    def get_outputUrl(self, invocation: ToolInvocation) -> str:
        return _link(
            self, "trace-invocation-output", session_id=self.context["session_id"], position=invocation.position
        )

    def get_retrievalDetails(self, invocation: ToolInvocation) -> dict[str, Any] | None:
        if not invocation.match_level:
            return None
        return {
            "matchLevel": invocation.match_level,
            "evidenceRefs": TraceRefSerializer(invocation.evidence_refs.all(), many=True, context=self.context).data,
        }


class TraceOutputSerializer(serializers.Serializer):
    """`GET /api/trace/<sessionId>/invocations/<position>/output`: one tool output, whole."""

    invocationId = serializers.CharField(source="invocation_id")
    output = serializers.JSONField()


class TracePageSerializer(serializers.Serializer):
    offset = serializers.IntegerField()
    limit = serializers.IntegerField()
    total = serializers.IntegerField(help_text="every invocation of the session")
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)

"""Invocations in the trace: a page at a time, tool outputs and ref contents as previews of
SELFEVAL_TRACE_PREVIEW_CHARS characters with links to the whole, and the query parameters.

The shapes here document what `trace.body` builds (see `trace.serializers`)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import ColumnIntegerField
from diagnosis.models import InvocationStatus, MatchLevel, ToolInvocation

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


class TraceRefSerializer(serializers.Serializer):
    """A ref whose content is previewed (SELFEVAL_TRACE_PREVIEW_CHARS); `contentUrl` has the whole."""

    refId = serializers.CharField()
    source = serializers.CharField()
    content = serializers.CharField()
    contentTruncated = serializers.BooleanField()
    contentChars = serializers.IntegerField()
    contentSha256 = serializers.CharField()
    contentUrl = serializers.CharField()


class TraceRetrievalDetailsSerializer(serializers.Serializer):
    matchLevel = serializers.ChoiceField(choices=MatchLevel.choices)
    evidenceRefs = TraceRefSerializer(many=True)


@extend_schema_field(OpenApiTypes.ANY)
class AnyOutputField(serializers.JSONField):
    """A tool output: a string or any JSON value."""


class TraceInvocationSerializer(serializers.Serializer):
    """An invocation whose output and ref contents are previewed, with links to the whole."""

    invocationId = serializers.CharField()
    stepIndex = serializers.IntegerField(allow_null=True)
    toolName = serializers.CharField()
    status = serializers.ChoiceField(choices=InvocationStatus.choices)
    arguments = serializers.DictField()
    output = AnyOutputField(
        help_text="The raw output, or the first SELFEVAL_TRACE_PREVIEW_CHARS characters of its text (its JSON for "
        "a non-string) when it is longer: then outputTruncated is true and outputUrl has it whole."
    )
    error = serializers.CharField(allow_null=True)
    latencyMs = serializers.IntegerField(allow_null=True)
    retrievalDetails = TraceRetrievalDetailsSerializer(allow_null=True)
    outputTruncated = serializers.BooleanField()
    outputChars = serializers.IntegerField()
    outputUrl = serializers.CharField()


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

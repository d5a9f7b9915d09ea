"""OpenAPI shapes of the OTLP/JSON answers (the protobuf answers are the same messages, binary).

Schema only: the receiver encodes these messages with protobuf's own JSON mapping (codec.py).
"""

from rest_framework import serializers


class ExportTracePartialSuccessSerializer(serializers.Serializer):
    rejectedSpans = serializers.CharField(help_text="How many spans were refused (int64: a decimal string).")
    errorMessage = serializers.CharField(help_text="Why, with the number of spans refused for each reason.")


class ExportTraceServiceResponseSerializer(serializers.Serializer):
    partialSuccess = ExportTracePartialSuccessSerializer(
        required=False, help_text="Present only when some spans were refused; the others are kept."
    )


class RpcStatusSerializer(serializers.Serializer):
    """google.rpc.Status, the body of every OTLP/HTTP error."""

    code = serializers.IntegerField(required=False, help_text="google.rpc.Code; clients log it, never act on it.")
    message = serializers.CharField()
    details = serializers.ListField(child=serializers.DictField(), required=False)

"""Output shapes of the case-library API (camelCase)."""

from rest_framework import serializers

from cases.models import Case, CaseSourceType, FaultCategory


class CaseSerializer(serializers.ModelSerializer):
    caseId = serializers.UUIDField(source="id", read_only=True)
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    diagnosisId = serializers.CharField(source="diagnosis_id")
    sourceType = serializers.ChoiceField(source="source_type", choices=CaseSourceType.choices, read_only=True)
    faultCategory = serializers.ChoiceField(source="fault_category", choices=FaultCategory.choices, read_only=True)
    rootCause = serializers.CharField(source="root_cause")
    errorCode = serializers.CharField(source="error_code")
    createdBy = serializers.CharField(source="created_by")
    reviewedBy = serializers.CharField(source="reviewed_by.username", default=None, allow_null=True)
    reviewedAt = serializers.DateTimeField(source="reviewed_at", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")

    class Meta:
        model = Case
        fields = [
            "caseId",
            "project",
            "diagnosisId",
            "sourceType",
            "faultCategory",
            "title",
            "query",
            "rootCause",
            "solution",
            "errorCode",
            "service",
            "createdBy",
            "status",
            "reviewedBy",
            "reviewedAt",
            "createdAt",
            "updatedAt",
        ]
        read_only_fields = fields

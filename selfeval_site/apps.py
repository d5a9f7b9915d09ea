from django.contrib.admin.apps import AdminConfig


class SelfEvalAdminConfig(AdminConfig):
    default_site = "selfeval_site.backoffice.admin_site.SelfEvalAdminSite"

    def ready(self) -> None:
        super().ready()
        # Registers the OpenAPI description of the API-key authentication.
        from selfeval_site.api import schema  # noqa: F401

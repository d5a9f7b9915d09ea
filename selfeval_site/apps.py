from django.contrib.admin.apps import AdminConfig


class SelfEvalAdminConfig(AdminConfig):
    default_site = "selfeval_site.admin_site.SelfEvalAdminSite"

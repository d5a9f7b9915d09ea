from django.contrib import admin
from django.utils.translation import gettext_lazy as _


class SelfEvalAdminSite(admin.AdminSite):
    site_header = _("SelfEval")
    site_title = _("SelfEval admin")
    index_title = _("Dashboard")

"""Where an admin lives (the README's rule): in the `admin.py` of the app that owns the model,
defined and registered there, unless its pages read across apps, and then in `backoffice/`."""

from django.contrib import admin
from django.contrib.admin import ModelAdmin

from tests.architecture.test_import_graph import PACKAGES

BACK_OFFICE = "backoffice."


def project_admins():
    for model, model_admin in admin.site._registry.items():
        app = model._meta.app_config
        if not app.name.startswith("django."):
            yield model, type(model_admin), app.name


def test_every_admin_lives_in_its_app_or_in_the_back_office():
    strays = {
        model._meta.label: admin_class.__module__
        for model, admin_class, app in project_admins()
        if admin_class.__module__ != f"{app}.admin" and not admin_class.__module__.startswith(BACK_OFFICE)
    }
    assert not strays, strays


def test_every_admin_is_registered_where_it_is_defined():
    """No admin class defined in one module and registered, through a subclass, in another."""
    split = {
        model._meta.label: [f"{base.__module__}.{base.__qualname__}" for base in own_admin_bases(admin_class)]
        for model, admin_class, _app in project_admins()
        if own_admin_bases(admin_class)
    }
    assert not split, split


def own_admin_bases(admin_class) -> list[type]:
    return [
        base
        for base in admin_class.__mro__[1:]
        if issubclass(base, ModelAdmin) and base.__module__.partition(".")[0] in PACKAGES
    ]

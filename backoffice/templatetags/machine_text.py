"""Machine text in the admin's language: `{{ value|machine_label }}`, `{% machine_text obj "reason" %}`.

`machine_text` reads `<name>`, `<name>_code` and `<name>_params` of a stored layer entry or row
(`diagnosis.messages`); text stored before codes existed is shown as stored.
"""

from django import template

from core.adminkit.display import yes_no as _yes_no
from diagnosis.messages import machine_label as _machine_label
from diagnosis.messages import machine_text as _machine_text

register = template.Library()


@register.filter
def machine_label(value):
    return _machine_label(value)


@register.filter
def yes_no(value):
    return _yes_no(value)


@register.simple_tag
def machine_text(obj, name: str) -> str:
    fallback = getattr(obj, name, "") or ""
    return _machine_text(getattr(obj, f"{name}_code", ""), getattr(obj, f"{name}_params", None), fallback)

"""Template filters for agent content (`core.adminkit.content`): `{% load selfeval_content %}`.

`{{ answer|markdown }}` renders sanitised markdown; `{{ value|json_text }}` shows a JSON value
indented (a string as is), never a Python repr.
"""

from django import template

from core.adminkit.content import json_text, markdown_html

register = template.Library()

register.filter("markdown", markdown_html, is_safe=True)
register.filter("json_text", json_text)

"""Agent content in the admin: markdown renders inert whatever the answer holds; JSON reads as JSON."""

from html.parser import HTMLParser

import pytest
from django.urls import reverse

from core.adminkit.content import MARKDOWN_MAX_CHARS, json_text, markdown_document, markdown_html
from tests.factories import chat_payload, evaluated_session, session_ingest_evaluated

ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code",
    "em", "strong", "s", "a", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title", "target", "rel"}, "ol": {"start"}}

HOSTILE = """# Title <script>alert(1)</script>

<script>document.cookie</script>

<div onmouseover="alert(1)">an HTML block</div>

<img src=x onerror=alert(1)>

<iframe src="https://evil.test"></iframe>

[js](javascript:alert(1)) [JS](JaVaScRiPt:alert(1)) [vb](vbscript:msgbox(1)) [spaced]( javascript:alert(1))
[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) [file](file:///etc/passwd) [rel](/admin/)
![pixel](https://tracker.test/p.gif) ![inline](data:image/png;base64,iVBORw0KGgo=)
<javascript:alert(1)> [entity](&#106;avascript:alert(1)) [q](https://ok.test/" onclick="alert(1))

<a href="javascript:alert(1)">raw link</a> <svg onload=alert(1)></svg> <style>body{display:none}</style>

```html
<script>alert("in a fence")</script>
```
"""


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Collect()
    parser.feed(html)
    return parser.tags


def test_hostile_markdown_renders_inert():
    html = markdown_html(HOSTILE)

    tags = _tags(html)
    for tag, attrs in tags:
        assert tag in ALLOWED_TAGS, tag
        assert set(attrs) <= ALLOWED_ATTRIBUTES.get(tag, set()), (tag, attrs)
        if tag == "a":
            assert attrs["href"].split(":", 1)[0] in {"http", "https", "mailto"}, attrs
            assert attrs["rel"] == "noopener noreferrer nofollow" and attrs["target"] == "_blank"
    assert "<script" not in html and "<img" not in html and "<iframe" not in html and "<svg" not in html
    assert "&lt;script&gt;" in html  # raw HTML stays visible, as text
    # The one http(s) address became a link (an image is a link, never fetched); the rest stays text.
    assert [attrs["href"] for tag, attrs in tags if tag == "a"] == ["https://tracker.test/p.gif"]
    assert "[js](javascript:alert(1))" in html


def test_markdown_structure_is_rendered():
    html = markdown_html(
        "## 根因\n数据库**连接池**耗尽。\n\n1. 扩容\n2. 排查\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n`code`"
    )

    assert "<h2>根因</h2>" in html
    assert "<strong>连接池</strong>" in html
    assert "<ol>" in html and "<li>扩容</li>" in html
    assert "<table>" in html and "<td>1</td>" in html
    assert "<code>code</code>" in html


def test_a_very_long_answer_ends_in_escaped_text():
    html = markdown_html("x" * MARKDOWN_MAX_CHARS + "<script>tail</script>")

    assert "&lt;script&gt;tail&lt;/script&gt;" in html and "<script" not in html


def test_answer_blocks_are_the_rendered_text():
    blocks = markdown_document("## 根因\n数据库**连接池**耗尽，[详见](https://x.test) `E1040`。").blocks

    assert blocks == ["根因", "数据库连接池耗尽，详见 E1040。"]


def test_json_text_is_json_not_a_python_repr():
    assert json_text(["c3"]) == '[\n  "c3"\n]'
    assert json_text(None) == "null"
    assert json_text({"查询": "证书", "ok": True}) == '{\n  "查询": "证书",\n  "ok": true\n}'
    assert json_text("a log line") == "a log line"


@pytest.mark.django_db
def test_the_inspector_renders_the_answer_and_json(reviewer_client, project):
    payload = chat_payload(sessionId="s-render", answer="## 根因\n连接池耗尽 <script>alert(1)</script>")
    payload["toolInvocations"][0]["arguments"] = {"q": "证书", "ids": ["c3"], "limit": None}
    session = session_ingest_evaluated(project, payload)

    html = reviewer_client.get(reverse("admin:diagnosis_diagnosissession_change", args=[session.pk])).content.decode()

    assert "<h2>根因</h2>" in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&quot;ids&quot;: [\n    &quot;c3&quot;\n  ]" in html and "&quot;limit&quot;: null" in html
    assert "[&#x27;c3&#x27;]" not in html and "None" not in html.split('id="se-answer"')[1].split("se-raw")[0]
    assert "se-fold" not in html  # a short answer is not folded


@pytest.mark.django_db
def test_a_long_answer_is_folded(reviewer_client, project):
    session = evaluated_session(project, "s-long", answer="## 根因\n" + "数据库连接池耗尽。" * 400)

    html = reviewer_client.get(reverse("admin:diagnosis_diagnosissession_change", args=[session.pk])).content.decode()

    assert 'class="se-fold"' in html and "Show more" in html

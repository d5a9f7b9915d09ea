"""Agent content as a reviewer reads it: markdown answers rendered safely, JSON values formatted.

An agent's answer is untrusted text. `markdown_html` renders it with markdown-it-py (CommonMark,
tables, strikethrough) with raw HTML off (`<script>` or an HTML block stays visible text), images
off (no request leaves for an address an answer chose; `![x](u)` reads as a link), and links only
to http, https and mailto (others stay literal text), opening in a new tab with
rel="noopener noreferrer nofollow". The HTML is then cleaned by nh3 (ammonia) to exactly the tags
and attributes that rendering produces, so nothing else could pass even through a parser bug.
Past MARKDOWN_MAX_CHARS (markdown-it costs about 3 µs a character) the rest is escaped plain text.

`json_text` shows a stored JSON value (tool arguments and outputs, composer fields) as indented
JSON, Chinese as is; a string stays the text it is (a log excerpt reads better unquoted).

`markdown_document` also gives the plain text of each rendered block, as the browser's textContent
reads it: what a sentence highlight in the page can be looked for in.
"""

import json
from dataclasses import dataclass
from typing import Any

import nh3
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

MARKDOWN_MAX_CHARS = 20_000
LINK_SCHEMES = frozenset({"http", "https", "mailto"})
_TAGS = frozenset(
    {"p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code",
     "em", "strong", "s", "a", "table", "thead", "tbody", "tr", "th", "td"}
)  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}


def _link_allowed(url: str) -> bool:
    scheme, colon, _rest = url.strip().partition(":")
    return bool(colon) and scheme.lower() in LINK_SCHEMES


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"]).disable("image")
    md.validateLink = _link_allowed
    return md


_md = _markdown()


@dataclass(frozen=True, slots=True)
class MarkdownDocument:
    html: SafeString
    blocks: list[str]  # the plain text of each rendered block, as the browser's textContent reads it


def markdown_document(text: str | None) -> MarkdownDocument:
    """The answer as sanitised HTML (see the module docstring) and its text blocks, from one parse."""
    text = text or ""
    head, rest = text[:MARKDOWN_MAX_CHARS], text[MARKDOWN_MAX_CHARS:]
    tokens = _md.parse(head)
    html = nh3.clean(
        _md.renderer.render(tokens, _md.options, {}),
        tags=set(_TAGS),
        attributes={tag: set(names) for tag, names in _ATTRIBUTES.items()},
        url_schemes=set(LINK_SCHEMES),
        link_rel="noopener noreferrer nofollow",
        set_tag_attribute_values={"a": {"target": "_blank"}},
        strip_comments=True,
    )
    if rest:
        html += f'<p class="se-pre">{escape(rest)}</p>'
    # markdown-it escapes text and nh3 keeps only the tags above.
    return MarkdownDocument(html=mark_safe(html), blocks=_blocks(tokens))  # noqa: S308


def markdown_html(text: str | None) -> SafeString:
    """The answer as sanitised HTML: the `|markdown` template filter."""
    return markdown_document(text).html


def _blocks(tokens) -> list[str]:
    blocks = []
    for token in tokens:
        if token.type == "inline":
            blocks.append(
                "".join(
                    "\n" if child.type in {"softbreak", "hardbreak"} else child.content
                    for child in token.children or []
                    if child.type in {"text", "code_inline", "softbreak", "hardbreak"}
                )
            )
        elif token.type in {"code_block", "fence"}:
            blocks.append(token.content)
    return blocks


def json_text(value: Any) -> str:
    """A stored JSON value for reading: a string as is, anything else as indented JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)

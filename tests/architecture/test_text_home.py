"""One home for text: the segmenter, the lemmatiser and the markdown parsers are imported in one
module each (the README's layout), so every reader of words and sections shares their set-up.

`judge/analysis.py` takes jieba's part-of-speech tagger, which rides on the segmenter `core.text`
sets up (`core.text.jieba_segmenter`); markdown-it renders HTML only, pyromark reads structure.
"""

import ast
from pathlib import Path

from .test_import_graph import PACKAGES, ROOT

HOMES = {
    "jieba": {"core/text.py", "judge/analysis.py"},
    "simplemma": {"core/text.py"},
    "pyromark": {"core/markdown.py"},
    "markdown_it": {"core/adminkit/content.py"},
}


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


def test_text_libraries_are_imported_in_their_one_home():
    found: dict[str, set[str]] = {library: set() for library in HOMES}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for library in _imported_roots(path) & set(HOMES):
                found[library].add(path.relative_to(ROOT).as_posix())

    assert found == HOMES

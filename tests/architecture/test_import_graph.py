"""Layers import downward only: no cycle between the project's components, no app imports the top.

Every import of the project's own modules counts, also those inside functions (a lazy import is
still a dependency). The components and their order are the README's layout.
"""

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("selfeval_site", "diagnosis", "feedback", "cases", "evolution")
# Longest prefix first: a module belongs to the first component whose prefix it starts with.
COMPONENTS = {
    "selfeval_site.settings": "settings",
    "selfeval_site.tenancy": "tenancy",
    "selfeval_site.api": "api",
    "selfeval_site.adminkit": "adminkit",
    "selfeval_site.backoffice": "backoffice",
    "selfeval_site.demo": "demo",
    "selfeval_site.otlp": "otlp",
    "selfeval_site": "site",
    "diagnosis": "diagnosis",
    "cases": "cases",
    "feedback": "feedback",
    "evolution": "evolution",
}
# What each component may import (besides itself). Anything else is a layering error.
ALLOWED = {
    "settings": set(),
    "tenancy": set(),
    "api": {"tenancy"},
    "adminkit": {"tenancy"},
    "diagnosis": {"tenancy", "api", "adminkit"},
    "cases": {"diagnosis", "tenancy", "api", "adminkit"},
    "feedback": {"cases", "diagnosis", "tenancy", "api", "adminkit"},
    "evolution": {"tenancy", "api", "adminkit"},
    "backoffice": {"diagnosis", "cases", "feedback", "evolution", "tenancy", "api", "adminkit"},
    "demo": {"diagnosis", "cases", "feedback", "evolution", "tenancy"},
    # OpenTelemetry ingestion feeds diagnosis' ingestion; nothing but the URLs imports it.
    "otlp": {"diagnosis", "tenancy", "api", "adminkit"},
    "site": {"backoffice", "otlp", "diagnosis", "cases", "feedback", "evolution", "tenancy", "api", "adminkit"},
}


def component(module: str) -> str | None:
    for prefix, name in COMPONENTS.items():
        if module == prefix or module.startswith(prefix + "."):
            return name
    return None


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def dependencies() -> dict[str, dict[str, set[str]]]:
    """component -> imported component -> the modules that import it (for the failure message)."""
    edges: dict[str, dict[str, set[str]]] = {name: {} for name in ALLOWED}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue  # migrations name apps as strings and run in order, not by import
            source = module_name(path)
            here = component(source)
            for imported in imported_modules(path):
                there = component(imported)
                if there is not None and there != here:
                    edges[here].setdefault(there, set()).add(source)
    return edges


def test_every_module_belongs_to_a_component():
    assert set(COMPONENTS.values()) == set(ALLOWED)


def test_no_cycle_between_components():
    graph = {name: set(targets) for name, targets in dependencies().items()}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as cycle:
        raise AssertionError(f"import cycle between components: {' -> '.join(cycle.args[1])}") from None


def test_components_import_only_the_layers_below_them():
    wrong = {
        f"{here} -> {there}": sorted(modules)
        for here, targets in dependencies().items()
        for there, modules in targets.items()
        if there not in ALLOWED[here]
    }
    assert not wrong, wrong

"""Floors import downward only: no cycle between the project's components, no import from a floor to one above it.

Every import of the project's own modules counts, also those inside functions (a lazy import is
still a dependency). The components and their order are the README's layout.
"""

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "config", "core", "judge", "diagnosis", "feedback", "cases", "evolution", "reporting", "backoffice", "trace",
    "otlp", "demo",
)  # fmt: skip
# Longest prefix first: a module belongs to the first component whose prefix it starts with.
COMPONENTS = {
    "config": "config",
    "core.tenancy": "tenancy",
    "core.api": "api",
    "core.adminkit": "adminkit",
    "core.text": "text",
    "core.markdown": "markdown",
    "core.health": "health",
    "core.queries": "queries",
    "judge": "judge",
    "diagnosis": "diagnosis",
    "cases": "cases",
    "feedback": "feedback",
    "evolution": "evolution",
    "reporting": "reporting",
    "backoffice": "backoffice",
    "trace": "trace",
    "otlp": "otlp",
    "demo": "demo",
}
# The floors of the house, top first: a component imports its own floor or the floors below it,
# never one above (config is the composition, the surfaces read across the apps, core is the ground).
FLOORS = (
    ("config",),
    ("backoffice", "trace", "otlp", "demo"),
    ("diagnosis", "cases", "feedback", "evolution", "reporting"),
    ("tenancy", "api", "adminkit", "text", "markdown", "health", "queries", "judge"),
)
FLOOR_OF = {name: level for level, names in enumerate(FLOORS) for name in names}


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
    edges: dict[str, dict[str, set[str]]] = {name: {} for name in FLOOR_OF}
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


def test_every_component_has_a_floor():
    assert set(COMPONENTS.values()) == set(FLOOR_OF)


def test_every_module_belongs_to_a_component():
    top_level = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests", "bench"}
    assert top_level == set(PACKAGES)
    strays = [
        module_name(path)
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if component(module_name(path)) is None and path.read_text(encoding="utf-8").strip()
    ]
    assert not strays, strays


def test_no_cycle_between_components():
    graph = {name: set(targets) for name, targets in dependencies().items()}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as cycle:
        raise AssertionError(f"import cycle between components: {' -> '.join(cycle.args[1])}") from None


def test_no_import_from_a_lower_floor_to_a_higher_one():
    wrong = {
        f"{here} -> {there}": sorted(modules)
        for here, targets in dependencies().items()
        for there, modules in targets.items()
        if FLOOR_OF[there] < FLOOR_OF[here]
    }
    assert not wrong, wrong


def _judge_modules() -> dict[str, set[str]]:
    """judge module -> the modules it imports (relative imports resolved)."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / "judge").rglob("*.py"):
        here = module_name(path)
        package = here if path.name == "__init__.py" else here.rpartition(".")[0]
        imports = set(imported_modules(path))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                imports.add(f"{base}.{node.module}" if node.module else base)
                if not node.module:
                    imports.update(f"{base}.{alias.name}" for alias in node.names)
        found[here] = imports
    return found


def test_the_judge_is_pure_python():
    """No Django, nothing of the project's but `core.text`: the judge runs and trains anywhere."""
    wrong = {
        module: sorted(
            m
            for m in imports
            if m.split(".")[0] in {"django", "rest_framework"}
            or (m.split(".")[0] in PACKAGES and m.split(".")[0] != "judge" and m != "core.text")
        )
        for module, imports in _judge_modules().items()
    }
    assert not {module: bad for module, bad in wrong.items() if bad}


def test_no_import_cycle_inside_the_judge():
    modules = _judge_modules()
    graph = {module: {m for m in imports if m in modules and m != module} for module, imports in modules.items()}
    # A package's __init__ may gather its modules; the modules never import their package back.
    graph = {
        module: {m for m in targets if not (module.startswith(m + ".") and m in modules)}
        for module, targets in graph.items()
    }
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as cycle:
        raise AssertionError(f"import cycle inside the judge: {' -> '.join(cycle.args[1])}") from None

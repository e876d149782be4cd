"""The house's shape, from the code's own imports: the layers import downward only (app → lessons →
ui → core; `core` never imports Streamlit, `ui` or `lessons`), no two modules import each other in a
loop (an import inside a function counts: it is still a dependency), and no module in `core/`,
`ui/` or `lessons/` grows past the size a reader takes in at one sitting (docs/architecture.md, Layers)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "ui", "lessons", "bench")
LAYER = {"app": 0, "lessons": 1, "ui": 2, "core": 3}  # may import only higher numbers (or its own)
MAX_LINES = 450
DATA_TABLES = {"core/glossary_terms.py"}  # a table of terms, one record each: long by nature


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    files = {
        _module(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts
    }
    files["app"] = ROOT / "app.py"
    return files


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The project modules `path` imports, anywhere in it (top level or inside functions)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    files = _sources()
    known = set(files)
    packages = {m for m, p in files.items() if p.name == "__init__.py"}
    return {m: _imports(p, m, known) - packages for m, p in files.items()}


def test_no_import_circles():
    edges = graph()
    circles, state = [], {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                circles.append(" → ".join([*trail[trail.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = "done"

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    assert not circles, "modules importing each other in a loop:\n" + "\n".join(circles)


def test_layers_import_downward_only():
    wrong = []
    for module, targets in graph().items():
        top = module.split(".")[0]
        if top not in LAYER:
            continue
        for target in targets:
            there = target.split(".")[0]
            if there in LAYER and LAYER[there] < LAYER[top]:
                wrong.append(f"{module} imports {target}")
    for path in (ROOT / "core").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
                wrong.append(f"{path.relative_to(ROOT)} imports streamlit")
    assert not wrong, "\n".join(wrong)


def test_no_module_is_too_long_to_read():
    long = []
    for pkg in ("core", "ui", "lessons"):
        for path in (ROOT / pkg).rglob("*.py"):
            rel = str(path.relative_to(ROOT))
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_LINES and rel not in DATA_TABLES:
                long.append(f"{rel}: {lines} lines")
    assert not long, f"over {MAX_LINES} lines (split by job):\n" + "\n".join(sorted(long))

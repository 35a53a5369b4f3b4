"""The shape of the house, checked by reading the source (ast), so that it cannot quietly decay.

- Layers only import downward: base helpers -> readers -> pipeline -> render -> façade -> CLI, with no import
  circle, lazy imports inside functions included.
- The vocabulary module is the only place a level, precision or roof column is spelled.
- No ncu metric name outside `readers/` (metric formulas are data in `metrics/`).
- No module over 500 lines.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from ncu_roofline import vocabulary

PACKAGE = Path(__file__).resolve().parents[1] / "ncu_roofline"

# Lowest first. A module may import its own layer and the ones below, never one above.
LAYERS: dict[str, int] = {
    **dict.fromkeys(("errors", "vocabulary", "launch_table", "metric_names", "units", "status", "version"), 0),
    "readers": 1,
    **dict.fromkeys(("catalogue", "derive", "ceilings", "gpus", "rank", "group", "pipeline", "collect", "gates",
                     "user_ceilings"), 2),
    "render": 3,
    **dict.fromkeys(("analysis", "compare", "__init__"), 4),
    **dict.fromkeys(("cli", "cli_progress"), 5),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts)


def layer(module: str) -> int:
    head = module.split(".")[0]
    if head not in LAYERS:
        raise AssertionError(f"{module} belongs to no layer: add it to LAYERS in {Path(__file__).name}")
    return LAYERS[head]


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path) -> set[str]:
    """Modules of the package that `path` imports anywhere (top level or inside functions), package-relative."""
    known = modules()
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    if path.name == "__init__.py":
        package = here[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "ncu_roofline":
                target = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:  # `from . import analyze` may name a module or a name in one
                candidate = ".".join([*target, alias.name])
                if candidate in known or f"{candidate}.__init__" in known:
                    found.add(candidate)
                else:
                    found.add(".".join(target) or "__init__")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "ncu_roofline":
                    found.add(".".join(alias.name.split(".")[1:]) or "__init__")
    return {name.removesuffix(".__init__") if name != "__init__" else name for name in found}


def test_layers_only_import_downward():
    wrong = []
    for name, path in modules().items():
        if name.endswith("__init__") and name != "__init__":
            name = name.removesuffix(".__init__")
        for target in imports(path):
            if layer(target) > layer(name):
                wrong.append(f"{name} (layer {layer(name)}) imports {target} (layer {layer(target)})")
    assert not wrong, "\n".join(wrong)


def test_no_import_circle():
    graph = {}
    for name, path in modules().items():
        graph[name.removesuffix(".__init__") or "__init__"] = imports(path)
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, trail: list[str]) -> bool:
        state[node] = 1
        for target in sorted(graph.get(target_key(node), set())):
            target = target_key(target)
            if state.get(target) == 1:
                cycle.extend([*trail, node, target])
                return True
            if state.get(target) is None and visit(target, [*trail, node]):
                return True
        state[node] = 2
        return False

    def target_key(name: str) -> str:
        return name if name in graph else f"{name}.__init__" if f"{name}.__init__" in graph else name

    for start in sorted(graph):
        if state.get(start) is None and visit(start, []):
            break
    assert not cycle, " -> ".join(cycle)


def test_the_layer_check_can_fail(tmp_path):
    """The checker sees a lazy import inside a function, relative to its package."""
    probe = PACKAGE / "render" / "chart.py"
    source = ast.parse("def f():\n    from ..analysis import Analysis\n")
    assert any(isinstance(n, ast.ImportFrom) and n.level == 2 for n in ast.walk(source))
    fake = tmp_path / "x.py"
    fake.write_text("def f():\n    from ..analysis import Analysis\n")
    # resolve as if it sat beside chart.py
    assert "analysis" in _imports_as(fake, probe)


def _imports_as(fake: Path, where: Path) -> set[str]:
    original = where.read_text(encoding="utf-8")
    tree_text = fake.read_text()
    # parse the fake source under the real module's name
    import types

    global_path = types.SimpleNamespace()
    del global_path
    target = where.with_name("_architecture_probe.py")
    target.write_text(tree_text)
    try:
        return imports(target)
    finally:
        target.unlink()
        assert where.read_text(encoding="utf-8") == original


# ---------------------------------------------------------------------------------------------- vocabulary

def _spelled_names() -> set[str]:
    """Every column or term name the vocabulary defines (and the short level/precision keys)."""
    names = set(vocabulary.RESULT_COLUMNS) | set(vocabulary.PEAK_COLUMNS) | set(vocabulary.DEF_COLUMNS)
    names |= {vocabulary.tensor_flop_column(t) for t in vocabulary.TENSOR_TYPES}
    names |= {vocabulary.tensor_peak_column(t) for t in vocabulary.TENSOR_TYPES}
    names -= {"time_s", "status", "bound", "ceiling_source", "flop_total", "flop_per_s", "t_sol_s",
              "roofline_fraction", "headroom_s"}  # generic result names, not per level/precision
    return names


def _string_constants(path: Path) -> list[tuple[int, str]]:
    """String literals and the literal parts of f-strings, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


PER_NAME = re.compile(r"^(flop|bytes|ai|peak_flop_per_s|peak_bytes_per_s|def)_")


def test_only_the_vocabulary_spells_level_precision_and_roof_columns():
    names = _spelled_names()
    found = []
    for name, path in modules().items():
        if name in ("vocabulary",):
            continue
        for line, text in _string_constants(path):
            if text in names or PER_NAME.match(text) and text.rstrip("_") in {"flop", "bytes", "ai", "def",
                                                                                "peak_flop_per_s",
                                                                                "peak_bytes_per_s"}:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {text!r}")
    assert not found, "spell these through ncu_roofline.vocabulary:\n" + "\n".join(found)


def test_a_new_level_needs_no_change_outside_the_vocabulary(monkeypatch):
    """Columns are built from the vocabulary's tuples: a fake level appears in every derived name list."""
    assert "bytes_l3" not in vocabulary.RESULT_COLUMNS
    levels = (*vocabulary.LEVELS, "l3")
    memory = tuple(vocabulary.Term(lv, "memory", vocabulary.bytes_column(lv), vocabulary.peak_bytes_column(lv),
                                   lv != "dram") for lv in levels)
    assert [t.peak for t in memory][-1] == "peak_bytes_per_s_l3"
    assert vocabulary.ai_column("l3") == "ai_l3" and vocabulary.def_column("bytes_l3") == "def_bytes_l3"


# ------------------------------------------------------------------------------------------- metric names

METRIC = re.compile(r"[a-z0-9]+__[a-z0-9_]+")


def test_no_ncu_metric_name_outside_readers_and_metrics():
    found = []
    for name, path in modules().items():
        if name.startswith("readers") or name == "metric_names":
            continue
        for line, text in _string_constants(path):
            if METRIC.search(text):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {text!r}")
    assert not found, "metric names belong in metrics/ (data) or readers/:\n" + "\n".join(found)


# ------------------------------------------------------------------------------------------------- sizes

@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_over_500_lines(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= 500, f"{path.name} has {lines} lines"

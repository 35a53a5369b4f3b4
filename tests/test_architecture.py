"""The shape of the house, checked by reading the source (ast), so that it cannot quietly decay.

- The folders are the layers: core -> readers -> roofs -> pipeline -> compare, history, model -> render -> the
  façades at the package root -> cli. Layers only import downward, with no import circle, lazy imports inside
  functions included.
- The vocabulary module is the only place a level, precision or roof column is spelled.
- No ncu metric name outside `readers/` (metric formulas are data in `metrics/`).
- No module over 500 lines.
- Altair is imported only by `render/chart/vegalite.py` (`as_altair`, for notebooks): charts are Vega-Lite dicts.
- render/ is kits by medium (`chart/`, `text/`) under subject folders that never import each other; its top holds
  only the output registry (`outputs.py`) and the bundle (`bundle.py`).
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from ncu_roofline.core import vocabulary
PACKAGE = Path(__file__).resolve().parents[1] / "ncu_roofline"

# The folders are the layers, lowest first: a module may import its own layer and the ones below, never one above.
# Inside render/, its top (the bundle and the output registry) sits below the kits (chart/, text/), which sit below
# the subject folders (analysis/, compare/, ...).
FOLDER_LAYERS: dict[str, float] = {
    "core": 0, "readers": 1, "roofs": 2, "pipeline": 3, "compare": 4, "history": 4, "model": 4,
    "projection": 4,
    "render": 5, "cli": 7,
}
RENDER_KIT = 5.2  # render/chart/, render/text/: what every subject's views build on
RENDER_SUBJECT = 5.5  # render/<subject>/
RENDER_KITS = {"chart", "text"}
RENDER_SUBJECTS = {"analysis", "compare", "history", "model", "projection", "ceilings"}
RENDER_TOP = {"__init__.py", "bundle.py", "outputs.py"}
FACADE = 6  # the loose modules at the package root: analysis.py, comparison.py, batch.py, __init__.py
MOST_AT_ROOT = 6


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts)


def layer(module: str) -> float:
    """A module's layer, read off its folder (a module at the package root is a façade)."""
    parts = module.split(".")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if len(parts) <= 1 and (not parts or parts[0] not in FOLDER_LAYERS):
        return FACADE
    head = parts[0]
    if head not in FOLDER_LAYERS:
        raise AssertionError(f"{module} is in a folder that is no layer: add it to FOLDER_LAYERS in "
                             f"{Path(__file__).name}")
    if head == "render" and len(parts) >= 3:
        return RENDER_KIT if parts[1] in RENDER_KITS else RENDER_SUBJECT
    return FOLDER_LAYERS[head]


def test_every_folder_is_a_layer_and_the_root_stays_small():
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name not in {"__pycache__", "metrics"})
    assert folders == sorted(FOLDER_LAYERS), folders
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(loose) <= MOST_AT_ROOT, loose


def test_render_top_holds_only_the_registry_and_the_bundle_beside_kit_and_subject_folders():
    render = PACKAGE / "render"
    assert {p.name for p in render.glob("*.py")} <= RENDER_TOP, sorted(p.name for p in render.glob("*.py"))
    folders = {p.name for p in render.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == RENDER_KITS | RENDER_SUBJECTS, sorted(folders)
    for folder in folders:
        assert (render / folder / "__init__.py").is_file(), folder


def render_folder(module: str) -> str | None:
    """The render/ subfolder a module sits in ('chart', 'analysis', ...); None outside one."""
    parts = module.split(".")
    return parts[1] if len(parts) >= 3 and parts[0] == "render" else None


def test_no_render_subject_imports_another_subject():
    """A subject (analysis/, compare/, ...) builds on the kits only: what two subjects share is kit."""
    wrong = []
    for name, path in modules().items():
        here = render_folder(name)
        if here not in RENDER_SUBJECTS:
            continue
        for target in imports(path):
            there = render_folder(target) or (target.split(".")[1] if target.startswith("render.") and
                                               target.count(".") == 1 and target.split(".")[1] in RENDER_SUBJECTS
                                               else None)
            if there in RENDER_SUBJECTS and there != here:
                wrong.append(f"{name} imports {target}")
    assert not wrong, "move what subjects share into render/chart/ or render/text/:\n" + "\n".join(wrong)


def test_the_subject_check_sees_a_subject_importing_another(monkeypatch, tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from ..compare.markdown import change_text\n")
    monkeypatch.setattr(__import__(__name__), "module_name", lambda path: "render.history.probe")
    assert "render.compare.markdown" in imports(probe)
    assert render_folder("render.compare.markdown") in RENDER_SUBJECTS - {"history"}


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


# What a command may take from below the façades: the error it raises, the words it prints, its version.
CLI_MAY_IMPORT_FROM_CORE = {"core.errors", "core.vocabulary", "core.version"}


def test_the_cli_calls_facades_and_renderers_only():
    """A command parses, calls its façade (the checks of its options before a read included), writes the bundle and
    prints through render/: it never reaches into readers/, pipeline/, history/ or the other layers below."""
    wrong = []
    for name, path in modules().items():
        if not name.startswith("cli."):
            continue
        for target in imports(path):
            if (layer(target) in {FACADE, FOLDER_LAYERS["cli"]} or target.startswith("render")
                    or target in CLI_MAY_IMPORT_FROM_CORE):
                continue
            wrong.append(f"{name} imports {target}")
    assert not wrong, "give the façade (analysis.py, comparison.py, trends.py, modeling.py, batch.py, the " \
                      "package root) what the command needs:\n" + "\n".join(sorted(wrong))


def test_the_cli_check_sees_a_command_reaching_below_the_facades(monkeypatch, tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from ..history.store import parse_labels\n    from ..trends import parse_labels\n")
    monkeypatch.setattr(__import__(__name__), "module_name", lambda path: "cli.probe")
    found = imports(probe)
    assert "history.store" in found and layer("history.store") < FACADE
    assert layer("trends") == FACADE


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


def test_the_layer_check_sees_lazy_relative_imports(monkeypatch, tmp_path):
    """A render module that imported the façade inside a function would be caught: the checker reads function bodies
    and resolves `..` against the module's package."""
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from ..analysis import Analysis\n    return Analysis\n")
    monkeypatch.setattr(__import__(__name__), "module_name", lambda path: "render.probe")
    found = imports(probe)
    assert "analysis" in found and layer("analysis") > layer("render.probe")


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
        if name == "core.vocabulary":
            continue
        for line, text in _string_constants(path):
            if text in names or PER_NAME.match(text) and text.rstrip("_") in {"flop", "bytes", "ai", "def",
                                                                                "peak_flop_per_s",
                                                                                "peak_bytes_per_s"}:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {text!r}")
    assert not found, "spell these through ncu_roofline.core.vocabulary:\n" + "\n".join(found)


LAST_LEVEL = '"l1": ("L1", "l2")}'  # the end of vocabulary.MEMORY_LEVELS, where the recipes add a level


def test_a_new_level_needs_no_change_outside_the_vocabulary(tmp_path):
    """A scratch copy of the package with one more memory level in `vocabulary.LEVELS` and nothing else changed:
    the analysis, its files and summaries carry the new level's columns (null, with a run note saying the capture
    holds no counters for it), and the existing columns keep their values."""
    import shutil
    import subprocess
    import sys

    shutil.copytree(PACKAGE, tmp_path / "ncu_roofline", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PACKAGE.parent / "metrics", tmp_path / "metrics")
    vocab = tmp_path / "ncu_roofline" / "core" / "vocabulary.py"
    _edit(vocab, LAST_LEVEL, LAST_LEVEL.replace("}", ', "l0": ("L0", "l1")}'))
    example = PACKAGE.parent / "fixtures" / "example_h100_raw.csv"
    script = (
        "import json, sys; import ncu_roofline; from ncu_roofline import analyze\n"
        f"assert ncu_roofline.__file__.startswith({str(tmp_path)!r})\n"
        f"r = analyze({str(example)!r}); r.write({str(tmp_path / 'out')!r}); r.markdown()\n"
        "k = r.kernels.sort_values('kernel_name')\n"
        "print(json.dumps({'columns': list(k.columns), 'l0': bool(k['bytes_l0'].isna().all() and k['ai_l0'].isna().all()"
        " and k['peak_bytes_per_s_l0'].isna().all()), 'status': any('holds no counters for L0' in n for n in r.notes),"
        " 'ai_dram': k['ai_dram'].tolist(), 'time': k['time_s'].tolist()}))\n")
    done = subprocess.run([sys.executable, "-P", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)}, timeout=300)
    assert done.returncode == 0, done.stderr
    import json

    from ncu_roofline import analyze

    got = json.loads(done.stdout.strip().splitlines()[-1])
    for column in ("bytes_l0", "ai_l0", "peak_bytes_per_s_l0", "def_bytes_l0"):
        assert column in got["columns"], column
    assert got["l0"] and got["status"]
    normal = analyze(example).kernels.sort_values("kernel_name")
    assert got["time"] == normal["time_s"].tolist()
    assert got["ai_dram"] == pytest.approx(normal["ai_dram"].tolist(), nan_ok=True)
    assert (tmp_path / "out" / "roofline.vl.json").is_file()


# ------------------------------------------------------------------------------------------- metric names

METRIC = re.compile(r"[a-z0-9]+__[a-z0-9_]+")


def test_no_ncu_metric_name_outside_readers_and_metrics():
    found = []
    for name, path in modules().items():
        if name.startswith("readers") or name == "core.metric_names":
            continue
        for line, text in _string_constants(path):
            if METRIC.search(text):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {text!r}")
    assert not found, "metric names belong in metrics/ (data) or readers/:\n" + "\n".join(found)


# ------------------------------------------------------------------------------------------------- altair

ALTAIR_ALLOWED = {"render.chart.vegalite"}  # as_altair: the spec as an Altair chart, for notebooks


def altair_imports(path: Path) -> list[int]:
    """Lines of `path` that import altair: `import altair`, `from altair… import`, anywhere (function bodies too),
    or `importlib.import_module("altair…")` / `__import__("altair…")` with the name spelled out."""
    def is_altair(name: str | None) -> bool:
        return bool(name) and name.split(".")[0] == "altair"

    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(is_altair(alias.name) for alias in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and not node.level and is_altair(node.module):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if called in {"import_module", "__import__"} and is_altair(str(node.args[0].value)):
                lines.append(node.lineno)
    return sorted(lines)


def test_only_vegalite_imports_altair():
    """Charts are plain Vega-Lite dicts: importing and validating Altair cost 0.4 s of a 1 s run (issue #16)."""
    found = [f"{path.relative_to(PACKAGE.parent)}:{line}" for name, path in modules().items()
             if name not in ALTAIR_ALLOWED for line in altair_imports(path)]
    assert not found, "build charts with render/chart/vegalite.py, not Altair:\n" + "\n".join(found)


def test_the_altair_check_sees_every_spelling(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import altair as alt\n"
                     "def f():\n    from altair.vegalite import v6\n    return v6\n"
                     "def g():\n    import importlib\n    return importlib.import_module('altair')\n"
                     "import altair_tiles\nfrom .altair import x\n")  # neither of the last two is Altair
    assert altair_imports(probe) == [1, 3, 7]


# ------------------------------------------------------------------------------------------------- sizes

@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_over_500_lines(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= 500, f"{path.name} has {lines} lines"


# --------------------------------------------------------------------------------------- extension recipes

def _scratch_copy(tmp_path: Path) -> Path:
    """The package and its metric data copied to `tmp_path`, where a recipe of docs/architecture.md is applied."""
    import shutil

    shutil.copytree(PACKAGE, tmp_path / "ncu_roofline", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PACKAGE.parent / "metrics", tmp_path / "metrics")
    return tmp_path / "ncu_roofline"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the recipe's anchor moved in {path.name}: {old!r}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def _run_in(tmp_path: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    import os
    import sys

    return subprocess.run([sys.executable, "-P", *args], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path), "COLUMNS": "100"}, timeout=300)


def test_a_new_output_format_is_one_registry_row_and_one_writer(tmp_path):
    """docs/architecture.md's recipe for a new output, followed in a scratch copy: `kernels.csv` on
    `--format csv` is one row of render/outputs.py and one table writer in core/parquet.py. The CLI accepts the
    format, writes the file and lists it; the file holds the analysis' kernels (checked against the unchanged
    package's own table)."""
    import pandas as pd

    package = _scratch_copy(tmp_path)
    _edit(package / "render" / "outputs.py",
          '    OutputFile("analysis", "kernels.parquet", "table", "parquet", _ANALYSIS),\n',
          '    OutputFile("analysis", "kernels.parquet", "table", "parquet", _ANALYSIS),\n'
          '    OutputFile("analysis", "kernels.csv", "table", "csv", _ANALYSIS, on_request=True),\n')
    _edit(package / "core" / "parquet.py", 'TABLE_WRITERS = {"parquet": parquet_bytes}',
          'TABLE_WRITERS = {"parquet": parquet_bytes,\n'
          '                 "csv": lambda table, metadata: table.to_csv(index=False).encode()}')
    example = PACKAGE.parent / "fixtures" / "example_h100_raw.csv"
    out = tmp_path / "out"
    done = _run_in(tmp_path, ["-c", "from ncu_roofline.cli import main; main()",
                              "analyze", str(example), "-o", str(out), "--format", "csv"])
    assert done.returncode == 0, done.stderr
    assert f"wrote {out / 'kernels.csv'}" in done.stdout + done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["kernels.csv", "kernels.parquet", "launches.parquet",
                                                     "roofline.html", "roofline.vl.json"]
    from ncu_roofline import analyze

    normal = analyze(example).kernels
    written = pd.read_csv(out / "kernels.csv")
    assert written["kernel_name"].tolist() == normal["kernel_name"].tolist()
    assert written["time_s"].tolist() == pytest.approx(normal["time_s"].tolist())
    refused = _run_in(tmp_path, ["-c", "from ncu_roofline.cli import main; main()",
                                 "compare", str(example), str(example), "-o", str(tmp_path / "c"), "--format", "csv"])
    assert refused.returncode == 2 and "unknown --format csv" in refused.stderr  # compare has no csv row


def test_every_registered_output_names_a_builder_that_exists_and_each_name_once():
    import importlib

    from ncu_roofline.render.outputs import OUTPUTS

    names = [o.name for o in OUTPUTS]
    assert len(names) == len(set(names)), names
    for output in OUTPUTS:
        module, function = output.builder.split(":")
        assert callable(getattr(importlib.import_module(f"ncu_roofline.render.{module}"), function)), output
        assert output.subject == module.split(".")[0], output  # a subject's files are built in its own folder


def test_a_new_memory_level_with_values_is_one_vocabulary_entry_and_its_catalogue_rows(tmp_path):
    """docs/architecture.md's recipe for a memory level, with data: a `shared` level (no parent, so no byte-order
    check) whose bytes are half the L1 bytes and whose roof is the L1 roof, added as one MEMORY_LEVELS entry and two
    catalogue rows in a scratch copy. The analysis carries its numbers (checked by arithmetic against the unchanged
    package's L1 columns), the chart draws it in its own colour and shape, and no byte-order note names it."""
    import json

    package = _scratch_copy(tmp_path)
    _edit(package / "core" / "vocabulary.py", LAST_LEVEL, LAST_LEVEL.replace("}", ', "shared": ("Shared", None)}'))
    catalogue = tmp_path / "metrics" / "catalogue.toml"
    catalogue.write_text(catalogue.read_text(encoding="utf-8") + (
        '\n[[bytes_shared]]\nid = "half_l1tex_t_bytes"\nexpr = "0.5 * l1tex__t_bytes.sum"\nsource = "nersc"\n'
        '\n[[peak_bytes_per_s_shared]]\nid = "l1tex_t_bytes_peak"\n'
        'expr = "l1tex__t_bytes.sum.peak_sustained * l1tex__cycles_elapsed.avg.per_second"\nsource = "ncu"\n'),
        encoding="utf-8")
    example = PACKAGE.parent / "fixtures" / "example_h100_raw.csv"
    out = tmp_path / "out"
    script = (
        "import json; from ncu_roofline import analyze\n"
        f"r = analyze({str(example)!r}); r.write({str(out)!r}); r.markdown()\n"
        "k = r.kernels.sort_values('kernel_name')\n"
        "print(json.dumps({'shared': k['bytes_shared'].tolist(), 'peak': k['peak_bytes_per_s_shared'].tolist(),"
        " 'notes': r.notes, 'status': k['status'].tolist()}))\n")
    done = _run_in(tmp_path, ["-c", script])
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    from ncu_roofline import analyze

    normal = analyze(example).kernels.sort_values("kernel_name")
    assert got["shared"] == pytest.approx([0.5 * b for b in normal["bytes_l1"]])
    assert got["peak"] == pytest.approx(normal["peak_bytes_per_s_l1"].tolist())
    assert not any("shared" in str(n) and "bytes_order" in str(n) for n in got["notes"] + got["status"])
    spec = (out / "roofline.vl.json").read_text(encoding="utf-8")
    assert '"Shared"' in spec
    shapes = [s for s in json.loads(spec).get("datasets", {})] and re.findall(r'"range": \[([^\]]*)\]', spec)
    assert any('"diamond"' in r for r in shapes), "the fourth level takes the kit's fourth shape"


JSON_READER = '''"""A raw page as JSON: {"ncu_raw_page": [header, units, row, ...]} (a scratch-copy recipe)."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path


def read_json_page(path, head, wanted, progress):
    from .csv_export import read_csv_export

    rows = json.loads(Path(path).read_text(encoding="utf-8"))["ncu_raw_page"]
    text = io.StringIO()
    csv.writer(text, quoting=csv.QUOTE_ALL, lineterminator="\\n").writerows(rows)
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "page.csv"
        page.write_text(text.getvalue(), encoding="utf-8")
        return read_csv_export(page, wanted, progress)
'''


def test_a_new_input_format_is_a_reader_module_and_one_sniff_entry(tmp_path):
    """docs/architecture.md's recipe for an input format, followed in a scratch copy: a reader module for a raw
    page held in JSON and one `readers.FORMATS` entry (its sniff: the content starts with '{'). The CLI analyses
    the JSON file (its pre-check passes it on) and its kernels are the CSV export's (the unchanged package's own
    analysis of the same rows is the reference)."""
    import csv
    import json

    package = _scratch_copy(tmp_path)
    (package / "readers" / "json_page.py").write_text(JSON_READER, encoding="utf-8")
    readers = package / "readers" / "__init__.py"
    _edit(readers, "from .report_container import looks_like_ncu_rep\n",
          "from .json_page import read_json_page\nfrom .report_container import looks_like_ncu_rep\n")
    _edit(readers, '    InputFormat("csv", lambda head: True, _read_csv, _precheck_text),\n',
          '    InputFormat("json", lambda head: head.lstrip().startswith(b"{"), read_json_page),\n'
          '    InputFormat("csv", lambda head: True, _read_csv, _precheck_text),\n')
    example = PACKAGE.parent / "fixtures" / "example_h100_raw.csv"
    lines = [line for line in example.read_text(encoding="utf-8").splitlines() if not line.startswith("==PROF==")
             and line.startswith('"')]  # the table itself: ncu's banner and the program's output left out
    page = tmp_path / "run.json"
    page.write_text(json.dumps({"ncu_raw_page": list(csv.reader(lines))}), encoding="utf-8")
    done = _run_in(tmp_path, ["-c", "from ncu_roofline.cli import main; main()", "analyze", str(page),
                              "--json", str(tmp_path / "run_summary.json"), "--rows", "0"])
    assert done.returncode == 0, done.stderr
    got = json.loads((tmp_path / "run_summary.json").read_text(encoding="utf-8"))
    from ncu_roofline import analyze

    normal = analyze(example).kernels
    kernels = {k["kernel_name"]: k for k in got["kernels"]}
    assert sorted(kernels) == sorted(normal["kernel_name"])
    for row in normal.itertuples():
        assert kernels[row.kernel_name]["time_s"] == pytest.approx(row.time_s)
        assert kernels[row.kernel_name]["ai_dram"] == pytest.approx(row.ai_dram, nan_ok=True)

"""The metric catalogue (`metrics/catalogue.toml`) loaded and made executable.

Formulas live in the data file with their sources; this module only parses them into small expression trees and
evaluates them over a LaunchTable, column-wise. Expressions are a tiny safe language (parsed with `ast`, never
`eval`): numbers, ncu metric names (dots included), + - * /, `sum_of("glob")`, comparisons, and/or, isnull().
`pick_definition` chooses, per launch, the first definition of a quantity whose inputs are present: derive.py
uses it for quantities, ceilings.py for roofs and clocks.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.data import METRICS_DIR, read_data_toml

# Identity columns an expression may read (everything else is an ncu metric name).
_IDENTITY_NAMES = {"compute_capability"}



class Expr:
    """A parsed expression: knows the metric names it reads and evaluates to a float64 array (NaN = missing)."""

    def __init__(self, text: str) -> None:
        self.text = text
        try:
            self._tree = ast.parse(text, mode="eval").body
        except SyntaxError as exc:  # a catalogue bug, not user input
            raise ValueError(f"bad catalogue expression {text!r}: {exc}") from exc
        self.names: list[str] = []
        self.globs: list[str] = []
        self._collect(self._tree)

    def _collect(self, node: ast.AST) -> None:
        if isinstance(node, ast.Call):
            func = node.func.id if isinstance(node.func, ast.Name) else ""
            if func == "sum_of":
                self.globs.append(_string_arg(node))
                return
            if func not in {"isnull"}:
                raise ValueError(f"unknown function {func!r} in {self.text!r}")
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = _dotted(node)
            if name not in _IDENTITY_NAMES and name not in self.names:
                self.names.append(name)
            return
        for child in ast.iter_child_nodes(node):
            self._collect(child)

    @property
    def inputs(self) -> list[str]:
        """What a user must collect for this expression: metric names and globs, in reading order."""
        return self.names + self.globs

    def evaluate(self, frame: "pd.DataFrame | Columns") -> np.ndarray:
        columns = as_columns(frame)
        return np.asarray(_eval(self._tree, columns, columns.n), dtype="float64")

    def missing_counts(self, frame: "pd.DataFrame | Columns", rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For the given row indices, how many inputs are absent or null, and which (bit i: input i): `missing_mask`
        summed and packed, without the rows x inputs array."""
        columns = as_columns(frame)
        count, bits = np.zeros(len(rows), dtype=np.int64), np.zeros(len(rows), dtype=np.int64)
        masks = [columns.isnan(name) for name in self.names]
        masks += [np.isnan(columns.sum_of(pattern)) for pattern in self.globs]
        everywhere = len(rows) == columns.n
        for i, mask in enumerate(masks):
            mask = mask if everywhere else mask[rows]
            count += mask
            bits |= mask.astype(np.int64) << i
        return count, bits

    def missing_mask(self, frame: "pd.DataFrame | Columns", rows: np.ndarray | None = None) -> np.ndarray:
        """True where input i is absent or null (2-D: rows x inputs), for all rows or the given row indices."""
        columns = as_columns(frame)
        pick = (lambda a: a) if rows is None else (lambda a: a[rows])
        cols = [pick(columns.isnan(name)) for name in self.names]
        cols += [pick(np.isnan(columns.sum_of(pattern))) for pattern in self.globs]
        count = columns.n if rows is None else len(rows)
        return np.column_stack(cols) if cols else np.zeros((count, 0), dtype=bool)


class Columns:
    """Float64 arrays of a frame's columns, converted once: every definition reads the same few metrics."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame
        self.n = len(frame)
        self._names = [c for c in frame.columns if isinstance(c, str)]
        self._present = set(self._names)
        self._cache: dict[str, np.ndarray] = {}

    def has(self, name: str) -> bool:
        """Whether the frame holds the column (a glob is taken as possibly present)."""
        return "*" in name or name in self._present

    def column(self, name: str) -> np.ndarray:
        if name not in self._cache:
            if name in self._present:
                series = self._frame[name]
                if series.dtype != "float64":
                    series = pd.to_numeric(series, errors="coerce")
                self._cache[name] = series.to_numpy(dtype="float64", na_value=np.nan)
            else:  # one read-only array of nulls for every metric the frame lacks (a capture lacks hundreds)
                self._cache[name] = self._absent()
        return self._cache[name]

    def _absent(self) -> np.ndarray:
        key = "\x00absent"
        if key not in self._cache:
            self._cache[key] = np.full(self.n, np.nan)
            self._cache[key].flags.writeable = False
        return self._cache[key]

    def isnan(self, name: str) -> np.ndarray:
        key = f"\x00isnan:{name}" if name in self._present else "\x00isnan:\x00absent"
        if key not in self._cache:
            self._cache[key] = np.isnan(self.column(name))
        return self._cache[key]

    def holds(self, condition: Expr) -> np.ndarray:
        """Rows where a definition's condition holds; a condition is evaluated once (definitions share a few)."""
        key = f"\x00when:{condition.text}"
        if key not in self._cache:
            value = np.asarray(condition.evaluate(self), dtype=bool)
            value.flags.writeable = False
            self._cache[key] = value
        return self._cache[key]

    def sum_of(self, pattern: str) -> np.ndarray:
        """Row-wise sum of the present columns matching the glob; NaN where none has a value."""
        key = f"\x00sum_of:{pattern}"
        if key not in self._cache:
            names = [c for c in self._names if fnmatch.fnmatchcase(c, pattern)]
            if not names:
                self._cache[key] = np.full(self.n, np.nan)
            else:
                values = np.column_stack([self.column(c) for c in names])
                present = ~np.isnan(values)
                self._cache[key] = np.where(present.any(axis=1), np.nansum(values, axis=1), np.nan)
        return self._cache[key]


def as_columns(frame: "pd.DataFrame | Columns") -> Columns:
    return frame if isinstance(frame, Columns) else Columns(frame)


def _string_arg(node: ast.Call) -> str:
    if len(node.args) != 1 or not isinstance(node.args[0], ast.Constant) or not isinstance(node.args[0].value, str):
        raise ValueError("sum_of takes one string")
    return node.args[0].value


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise ValueError(f"not a name: {ast.dump(node)}")


_BINOPS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide}
_CMPOPS = {ast.Eq: np.equal, ast.NotEq: np.not_equal, ast.Lt: np.less, ast.LtE: np.less_equal,
           ast.Gt: np.greater, ast.GtE: np.greater_equal}


def _eval(node: ast.AST, frame: Columns, n: int):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return frame.column(_dotted(node))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            result = _BINOPS[type(node.op)](_eval(node.left, frame, n), _eval(node.right, frame, n))
        return np.where(np.isinf(result), np.nan, result)  # a division by zero or an overflow is no value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, frame, n)
    if isinstance(node, ast.Call):
        if node.func.id == "sum_of":  # type: ignore[attr-defined]
            return frame.sum_of(_string_arg(node))
        value = _eval(node.args[0], frame, n)
        return np.broadcast_to(np.isnan(value), (n,))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMPOPS:
        left, right = _eval(node.left, frame, n), _eval(node.comparators[0], frame, n)
        return np.broadcast_to(_CMPOPS[type(node.ops[0])](left, right), (n,))
    if isinstance(node, ast.BoolOp):
        parts = [np.asarray(_eval(v, frame, n), dtype=bool) for v in node.values]
        combine = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        result = parts[0]
        for part in parts[1:]:
            result = combine(result, part)
        return result
    raise ValueError(f"unsupported expression element: {ast.dump(node)}")


@dataclass(frozen=True)
class Definition:
    """One way to compute a quantity from ncu metrics."""

    quantity: str
    id: str
    expr: Expr
    source: str
    when: Expr | None = None
    flag: str | None = None
    for_defs: tuple[str, ...] = ()
    clocks: tuple[str, ...] = ()  # globs of clock metrics ([timing] clocks): rates that are not rate forms

    @property
    def is_rate_form(self) -> bool:
        """Reads rates other than clocks: the form for section-only reports, not what `--metrics` should ask."""
        return any((".per_second" in n and not any(fnmatch.fnmatchcase(n, g) for g in self.clocks))
                   or ".per_cycle" in n for n in self.expr.inputs)

    def applies(self, frame: "pd.DataFrame | Columns") -> np.ndarray:
        """Rows where the definition's condition holds (its inputs may still be missing)."""
        if self.when is None:
            return np.ones(as_columns(frame).n, dtype=bool)
        return as_columns(frame).holds(self.when)


@dataclass(frozen=True)
class Catalogue:
    quantities: dict[str, list[Definition]]
    sources: dict[str, str] = field(default_factory=dict)
    timing: tuple[str, ...] = ()  # globs of metrics that measure time or clocks ([timing] metrics)

    def definitions(self, quantity: str) -> list[Definition]:
        return self.quantities.get(quantity, [])

    def metric_names(self) -> set[str]:
        """Every exact metric name any definition reads (conditions included)."""
        names: set[str] = set()
        for definition in self.all_definitions():
            names.update(definition.expr.names)
            if definition.when is not None:
                names.update(definition.when.names)
        return names

    def is_timing(self, name: str) -> bool:
        """Whether metric `name` measures time or a clock ([timing] metrics): a value that must be positive."""
        return any(fnmatch.fnmatchcase(name, glob) for glob in self.timing)

    def counts_work(self, name: str, quantities: tuple[str, ...]) -> bool:
        """Whether metric `name` is a work or traffic counter of one of `quantities`: read by one of their
        definitions and not an input of a time or clock quantity (a duration alone gives no roofline)."""
        if self.is_timing(name):
            return False
        return any(name in d.expr.names or any(fnmatch.fnmatchcase(name, g) for g in d.expr.globs)
                   for q in quantities for d in self.definitions(q))

    def metric_globs(self) -> set[str]:
        return {g for d in self.all_definitions() for g in d.expr.globs}

    def all_definitions(self) -> list[Definition]:
        return [d for defs in self.quantities.values() for d in defs]

    def wants(self, name: str) -> bool:
        """Whether a reader should keep metric `name` (memory stays proportional to what is used)."""
        return name in self._names or _cached_glob_pattern(self).match(name) is not None

    @property
    def _names(self) -> set[str]:
        return _cached_names(self)

    def source_text(self, key: str) -> str:
        return self.sources.get(key, key)


@cache
def _cached_names(catalogue: Catalogue) -> frozenset[str]:
    return frozenset(catalogue.metric_names())


@cache
def _cached_globs(catalogue: Catalogue) -> frozenset[str]:
    return frozenset(catalogue.metric_globs())


@cache
def _cached_glob_pattern(catalogue: Catalogue) -> re.Pattern[str]:
    """Every glob of the catalogue as one compiled pattern: `wants` asks it once per metric name of every input
    (hundreds per report) instead of trying each glob in turn. Matches exactly where `fnmatchcase` of one does."""
    globs = sorted(_cached_globs(catalogue))
    return re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs) if globs else "(?!)")


@dataclass
class Pick:
    """The outcome of choosing a definition per row for one quantity."""

    values: np.ndarray  # float64, NaN where no definition applied
    def_codes: np.ndarray  # index into the definitions, -1 where none applied
    missing_codes: np.ndarray  # index into missing_texts where values is NaN
    missing_texts: list[str]  # "needs a, b"
    flags: list[tuple[np.ndarray, str]]

    def def_ids(self, defs: list[Definition]) -> pd.Categorical:
        return pd.Categorical.from_codes(self.def_codes, categories=[d.id for d in defs])


def pick_definition(frame: pd.DataFrame | Columns, defs: list[Definition],
                    allowed: dict[str, np.ndarray] | None = None) -> Pick:
    """Per row, the value of the first applicable definition whose inputs are all present.

    `allowed` maps a definition id to a row mask restricting where it may be used (roofs that must match how the
    traffic was measured).
    """
    columns = as_columns(frame)
    n = columns.n
    values = np.full(n, np.nan)
    def_codes = np.full(n, -1, dtype=np.int64)
    best_missing = np.full(n, np.iinfo(np.int64).max)
    best_key = np.full(n, -1, dtype=np.int64)
    flags: list[tuple[np.ndarray, str]] = []
    for index, definition in enumerate(defs):
        usable = definition.applies(columns)
        if allowed is not None and definition.id in allowed:
            usable = usable & allowed[definition.id]
        if not usable.any():
            continue
        result = definition.expr.evaluate(columns)
        take = usable & np.isnan(values) & ~np.isnan(result)
        values[take] = result[take]
        def_codes[take] = index
        if definition.flag:
            flags.append((take, definition.flag))
        # Remember, for rows still without a value, the definition that came closest (fewest missing inputs).
        rows = np.flatnonzero(usable & np.isnan(values))
        if rows.size == 0:
            continue
        absent, bits = definition.expr.missing_counts(columns, rows)
        # Ties go to the totals form. Flagged fallbacks are not what a user should collect: one is named only where
        # no other definition applies to the architecture (Volta's tensor-pipe count, say).
        count = absent * 2 + definition.is_rate_form + (1 << 20 if definition.flag else 0)
        closer = count < best_missing[rows]
        best_missing[rows[closer]] = count[closer]
        best_key[rows[closer]] = index * (1 << 32) + bits[closer]
    missing_codes, missing_texts = _missing_text(defs, best_key, np.isnan(values))
    return Pick(values, def_codes, missing_codes, missing_texts, flags)


def _missing_text(defs: list[Definition], keys: np.ndarray, unresolved: np.ndarray) -> tuple[np.ndarray, list[str]]:
    codes = np.zeros(len(keys), dtype=np.int64)
    if not unresolved.any():
        return codes, [""]
    inverse, uniques = pd.factorize(keys[unresolved], sort=True)
    texts = []
    for key in uniques:
        if key < 0:
            texts.append("no definition applies to this GPU")
            continue
        definition = defs[int(key >> 32)]
        bits = int(key & 0xFFFFFFFF)
        names = [name for i, name in enumerate(definition.expr.inputs) if bits >> i & 1]
        texts.append(f"needs {', '.join(names)}" if names
                     else f"{definition.id} gave no finite value (division by zero?)")
    codes[unresolved] = inverse
    return codes, texts


def load_catalogue(path: Path | None = None) -> Catalogue:
    """Read the catalogue once; the default is `metrics/catalogue.toml` with the limiter and instruction-roofline
    quantities of `metrics/limiters.toml` (pipeline/limiter.py), so readers keep their metrics too."""
    return _load(path) if path is not None else _load_default()


LIMITERS_FILE = "limiters.toml"
# `--clock`: the SM clock the roofs are put at, as the catalogue quantity that holds it per launch.
SM_CLOCKS = {"measured": "sm_clock_hz", "max": "max_sm_clock_hz"}


def sm_clock_hz(frame: pd.DataFrame | Columns, catalogue: Catalogue, clock: str = "measured") -> np.ndarray:
    """Per launch, the SM clock (Hz) that `clock` names: the one measured during the launch, or ('max') the
    device's maximum; NaN where the export lacks it. The one place a clock is picked (roofs, the instruction roof,
    the run notes)."""
    return pick_definition(frame, catalogue.definitions(SM_CLOCKS[clock])).values


@cache
def _load_default() -> Catalogue:
    base, extra = _load(METRICS_DIR / "catalogue.toml"), _load(METRICS_DIR / LIMITERS_FILE)
    return Catalogue(quantities={**base.quantities, **extra.quantities}, sources={**base.sources, **extra.sources},
                     timing=base.timing)


@cache
def read_toml(path: Path) -> dict:
    """A metrics/*.toml file parsed once per process (the catalogue and the limiter's settings read limiters.toml;
    callers copy before changing it)."""
    return read_data_toml(path)  # parsed once per file version (core/data.py)


@cache
def _load(path: Path) -> Catalogue:
    data = dict(read_toml(path))
    sources = data.pop("sources", {})
    timing_table = data.pop("timing", {})
    timing = tuple(timing_table.get("metrics", ()))
    clocks = tuple(timing_table.get("clocks", ()))
    quantities: dict[str, list[Definition]] = {}
    for quantity, entries in data.items():
        if not isinstance(entries, list):  # a table of settings (limiters.toml's thresholds), not definitions
            continue
        defs = []
        for entry in entries:
            defs.append(Definition(
                quantity=quantity, id=entry["id"], expr=Expr(entry["expr"]), source=entry["source"],
                when=Expr(entry["when"]) if "when" in entry else None, flag=entry.get("flag"),
                for_defs=tuple(entry.get("for_defs", ())), clocks=clocks,
            ))
        quantities[quantity] = defs
    return Catalogue(quantities=quantities, sources=sources, timing=timing)


# Catalogue is frozen but holds dicts; hash by identity so functools.cache can key on it.
Catalogue.__hash__ = object.__hash__  # type: ignore[method-assign]

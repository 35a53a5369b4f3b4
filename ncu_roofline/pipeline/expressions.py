"""The expression language of the metric catalogue, and the columns it is evaluated over.

Expressions are a tiny safe language (parsed with `ast`, never `eval`): numbers, ncu metric names (dots
included), + - * /, `sum_of("glob")`, comparisons, and/or, isnull(). They evaluate column-wise over `Columns`,
which converts each metric once and knows which masks every row agrees on (a capture collects the same metrics for
all its launches), so that catalogue.py can decide most definitions once per column.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from functools import cache

import numpy as np
import pandas as pd

# Rows of a frame as a NumPy index: every row (or sorted row numbers, an int64 array).
ALL = slice(None)

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
        # Only + - * / and sums: one null input makes the value null (no isnull, comparison or and/or reads it).
        self.arithmetic = True
        self._collect(self._tree)

    def _collect(self, node: ast.AST) -> None:
        self.arithmetic = self.arithmetic and _is_arithmetic(node)
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

    def null_everywhere(self, columns: "Columns") -> bool:
        """Whether the value is null on every row, known without evaluating it: an arithmetic expression one of
        whose inputs is absent or null on every row (a metric the capture lacks)."""
        return self.arithmetic and columns.n > 0 and any(mask is True for mask in self._nulls(columns, True))

    def _nulls(self, columns: "Columns", uniform: bool) -> list["bool | np.ndarray"]:
        """Per input (in `inputs` order): where it is absent or null (see `Columns.nulls`)."""
        return ([columns.nulls(name, uniform=uniform) for name in self.names]
                + [columns.nulls_of_sum(pattern, uniform=uniform) for pattern in self.globs])

    def missing_counts(self, frame: "pd.DataFrame | Columns", rows: "np.ndarray | slice", *,
                       uniform: bool = False) -> tuple[object, object]:
        """For the given rows (indices, or `ALL`), how many inputs are absent or null, and which (bit i: input
        i): `missing_mask` summed and packed, without the rows x inputs array. With `uniform`, an input null on
        every row or on none counts as a scalar, and both results are plain ints where every input is such."""
        columns = as_columns(frame)
        count: object = 0
        bits: object = 0
        for i, mask in enumerate(self._nulls(columns, uniform)):
            if isinstance(mask, bool):
                count, bits = count + mask, bits | (int(mask) << i)
                continue
            mask = mask if rows is ALL else mask[rows]
            count = count + mask.astype(np.int64)
            bits = bits | (mask.astype(np.int64) << i)
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
        if frame.attrs:  # pandas deep-copies a frame's attrs into every column it hands out: read a view without
            frame = frame.copy(deep=False)
            frame.attrs = {}
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
                if not pd.api.types.is_numeric_dtype(series.dtype):  # text: parsed (Float64 and Int64 are not)
                    series = pd.to_numeric(series, errors="coerce")
                self._cache[name] = series.to_numpy(dtype="float64", na_value=np.nan)
            else:  # one read-only array of nulls for every metric the frame lacks (a capture lacks hundreds)
                self._cache[name] = self.absent()
        return self._cache[name]

    def absent(self) -> np.ndarray:
        """The frame's one read-only array of nulls (what a metric it lacks reads as)."""
        key = "\x00absent"
        if key not in self._cache:
            self._cache[key] = one_value(self.n, np.nan)
        return self._cache[key]

    def isnan(self, name: str) -> np.ndarray:
        key = f"\x00isnan:{name}" if name in self._present else "\x00isnan:\x00absent"
        if key not in self._cache:
            self._cache[key] = np.isnan(self.column(name))
        return self._cache[key]

    def nulls(self, name: str, *, uniform: bool = False) -> "bool | np.ndarray":
        """Where metric `name` is absent or null; with `uniform`, one bool when every row agrees (a metric the
        capture lacks, or one it holds for every launch): most quantities are then decided once per column."""
        if not uniform:
            return self.isnan(name)
        if name not in self._present:
            return True
        return self._uniform(f"\x00isnan:{name}", lambda: self.isnan(name))

    def nulls_of_sum(self, pattern: str, *, uniform: bool = False) -> "bool | np.ndarray":
        """Where `sum_of(pattern)` is null (no matching column has a value), as `nulls` says it."""
        if uniform and not self._matching(pattern):
            return True
        key = f"\x00isnan:sum_of:{pattern}"
        if key not in self._cache:
            self._cache[key] = np.isnan(self.sum_of(pattern))
        return self._uniform(key, lambda: self._cache[key]) if uniform else self._cache[key]

    def _uniform(self, key: str, mask) -> "bool | np.ndarray":
        """The cached summary of a row mask: True or False where every row agrees, else the mask itself."""
        summary = f"\x00uniform:{key}"
        if summary not in self._cache:
            self._cache[summary] = uniform_mask(mask())  # type: ignore[assignment]
        return self._cache[summary]

    def holds(self, condition: Expr, *, uniform: bool = False) -> "bool | np.ndarray":
        """Rows where a definition's condition holds; a condition is evaluated once (definitions share a few)."""
        key = f"\x00when:{condition.text}"
        if key not in self._cache:
            value = np.asarray(condition.evaluate(self), dtype=bool)
            value.flags.writeable = False
            self._cache[key] = value
        return self._uniform(key, lambda: self._cache[key]) if uniform else self._cache[key]

    def sum_of(self, pattern: str) -> np.ndarray:
        """Row-wise sum of the present columns matching the glob; NaN where none has a value."""
        key = f"\x00sum_of:{pattern}"
        if key not in self._cache:
            names = self._matching(pattern)
            if not names:
                self._cache[key] = self.absent()
            else:
                values = np.column_stack([self.column(c) for c in names])
                present = ~np.isnan(values)
                with np.errstate(over="ignore"):  # a sum past the float range is inf, quietly (as in _eval)
                    self._cache[key] = np.where(present.any(axis=1), np.nansum(values, axis=1), np.nan)
        return self._cache[key]


    def _matching(self, pattern: str) -> list[str]:
        key = f"\x00matching:{pattern}"
        if key not in self._cache:
            match = _glob(pattern)
            self._cache[key] = [c for c in self._names if match(c)]  # type: ignore[assignment]
        return self._cache[key]  # type: ignore[return-value]


@cache
def _glob(pattern: str):
    """What `fnmatchcase` does, compiled once per process (the catalogue's globs are a fixed few)."""
    return re.compile(fnmatch.translate(pattern)).match


def uniform_mask(mask: np.ndarray) -> "bool | np.ndarray":
    """True or False where every row of `mask` agrees (none: True), else `mask` itself."""
    if mask.all():
        return True
    return False if not mask.any() else mask


def one_value(n: int, value: object, dtype: object = np.float64) -> np.ndarray:
    """`value` on `n` rows as a read-only view of one element (stride 0): a run-level fact the launch table holds
    on every launch (--gpu's roofs, a quantity no launch has) without 8 MB of fresh memory per 10^6 launches. A
    write through pandas copies it first (copy on write); Parquet writes the same bytes from it."""
    return np.broadcast_to(np.asarray(value, dtype=dtype), (n,))


def owned(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with each `one_value` column made a writable array: a table handed to the user is written in place
    like any frame (pandas writes into a column's array, and a read-only view refuses). Columns of one value share
    one array, as columns set from one Series do (copied on a first write). Made once, at the end of the steps, when
    the memory the steps freed is there to take it."""
    try:  # pandas' blocks: 20 us for a launch table, where a Series per column costs 2 ms
        positions = [int(i) for block in frame._mgr.blocks if _one_element(block.values) for i in block.mgr_locs]
    except AttributeError:  # another pandas: column by column
        positions = [i for i, dtype in enumerate(frame.dtypes) if isinstance(dtype, np.dtype)
                     and _one_element(frame.iloc[:, i].to_numpy().reshape(1, -1))]
    # one array per distinct value, shared by its columns as a Series is (pandas copies a column before writing it)
    made: dict[tuple[str, bytes], pd.Series] = {}
    for i in sorted(positions):
        values = frame.iloc[:, i].to_numpy()
        key = (values.dtype.str, values[:1].tobytes())
        if key not in made:
            made[key] = pd.Series(values.copy(), index=frame.index, copy=False)
        frame.isetitem(i, made[key])
    return frame


def _one_element(values: object) -> bool:
    """Whether a block of columns (columns x rows) is a `one_value` view: stride 0 along the rows (one row: a
    read-only array, whose strides look like any other's)."""
    return isinstance(values, np.ndarray) and values.ndim == 2 and values.shape[1] > 0 and \
        (values.strides[1] == 0 or (values.shape[1] == 1 and not values.flags.writeable))


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


def _is_arithmetic(node: ast.AST) -> bool:
    """Whether a node propagates nulls: numbers, names, + - * /, unary minus and `sum_of` (not isnull, a
    comparison or and/or, which turn a null into a truth value)."""
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id == "sum_of"
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub)
    if isinstance(node, ast.BinOp):
        return type(node.op) in _BINOPS
    return isinstance(node, (ast.Constant, ast.Name, ast.Attribute, ast.expr_context, ast.operator, ast.unaryop))


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

"""The metric catalogue (`metrics/catalogue.toml`) loaded and made executable.

Formulas live in the data file with their sources; this module only parses them into small expression trees
(expressions.py: the language and the columns it reads) and evaluates them over a LaunchTable, column-wise.
`pick_definition` chooses, per launch, the first definition of a quantity whose inputs are present: derive.py
uses it for quantities, ceilings.py for roofs and clocks.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.data import METRICS_DIR, read_data_toml
from .expressions import ALL, Columns, Expr, as_columns, uniform_mask


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
        # codes made here, from -1 to len(defs) - 1: no need to check them again per launch
        return pd.Categorical.from_codes(self.def_codes, dtype=_ids_dtype(tuple(d.id for d in defs)), validate=False)


@cache
def _ids_dtype(ids: tuple[str, ...]) -> pd.CategoricalDtype:
    """A quantity's definition ids as a category type, made once (building it per call costs more than the rest
    of a small report's pick)."""
    return pd.CategoricalDtype(list(ids))


_NO_ROWS = np.zeros(0, dtype=np.int64)


def _within(rows: "np.ndarray | slice", mask: "bool | np.ndarray") -> "np.ndarray | slice":
    """The rows of `rows` where `mask` (one bool, or one per row of the frame) holds: `rows` itself when it holds
    on all of them, so that a caller can tell an unchanged set by identity."""
    if isinstance(mask, bool):
        return rows if mask else _NO_ROWS
    picked = mask if rows is ALL else mask[rows]
    if picked.all():
        return rows
    return np.flatnonzero(picked) if rows is ALL else rows[picked]


def _count(rows: "np.ndarray | slice", n: int) -> int:
    return n if rows is ALL else len(rows)


def pick_definition(frame: pd.DataFrame | Columns, defs: list[Definition],
                    allowed: dict[str, bool | np.ndarray] | None = None, *, uniform: bool = True,
                    shared_nulls: bool = False) -> Pick:
    """Per row, the value of the first applicable definition whose inputs are all present.

    `allowed` maps a definition id to a row mask (or one bool for every row) restricting where it may be used
    (roofs that must match how the traffic was measured).

    Most quantities resolve the same way on every launch of a capture (the same metrics were collected for all, or
    none): a definition whose input is absent everywhere is passed over without being evaluated, masks on which
    every row agrees stay one bool, and the closest definition is kept as one value while every unresolved row
    shares it. Per-row work is left for the rows that differ. `uniform=False` does all of it per row (the
    reference the shortcuts are tested against); both give the same Pick.

    `shared_nulls`: where no row gets a value, `values` is the frame's one read-only array of nulls instead of a
    fresh one (for a caller that only reads it: a roof the GPU table gives, a limiter input copied into a block).
    """
    columns = as_columns(frame)
    n = columns.n
    values: np.ndarray | None = None  # made when a first row gets a value
    def_codes = np.full(n, -1, dtype=np.int8 if len(defs) < 127 else np.int64)  # what a Categorical keeps
    flags: list[tuple[np.ndarray, str]] = []
    # Rows still without a value, and for them the definition that came closest (fewest missing inputs): one
    # value while all of those rows share it, else one per row of the frame (read on the open rows only).
    open_rows: np.ndarray | slice = ALL if n else _NO_ROWS
    best_missing: object = np.iinfo(np.int64).max
    best_key: object = -1
    if not uniform:
        best_missing, best_key = np.full(n, best_missing, dtype=np.int64), np.full(n, best_key, dtype=np.int64)
    for index, definition in enumerate(defs):
        usable = True if definition.when is None else columns.holds(definition.when, uniform=uniform)
        if allowed is not None and definition.id in allowed and usable is not False:
            mask = allowed[definition.id]
            if isinstance(mask, bool) and not uniform:
                mask = np.full(n, mask)
            if isinstance(mask, bool):
                usable = usable if mask else False
            else:
                usable = mask if usable is True else usable & mask
                usable = uniform_mask(usable) if uniform else usable
        if not n or not (usable if isinstance(usable, bool) else usable.any()):
            continue
        rows = _within(open_rows, usable)
        take: np.ndarray | slice = _NO_ROWS
        left = rows
        if _count(rows, n) and not (uniform and definition.expr.null_everywhere(columns)):
            result = definition.expr.evaluate(columns)
            null = np.isnan(result)
            take, left = _within(rows, ~null), _within(rows, null)
            if values is None and take is ALL and result.flags.writeable:  # every row from here: a fresh array
                values = result
            elif values is None and _count(take, n):
                values = np.full(n, np.nan)
                values[take] = result[take]
            elif values is not None:
                values[take] = result[take]
            def_codes[take] = index
            if _count(take, n):
                open_rows = left if rows is open_rows else _within(open_rows, np.isnan(values))
        if definition.flag:
            taken = np.zeros(n, dtype=bool)
            taken[take] = True
            flags.append((taken, definition.flag))
        if not _count(left, n):
            continue
        absent, bits = definition.expr.missing_counts(columns, left, uniform=uniform)
        # Ties go to the totals form. Flagged fallbacks are not what a user should collect: one is named only where
        # no other definition applies to the architecture (Volta's tensor-pipe count, say).
        count = absent * 2 + definition.is_rate_form + (1 << 20 if definition.flag else 0)
        key = index * (1 << 32) + bits
        if isinstance(best_missing, int) and isinstance(count, int) and left is open_rows:
            if count < best_missing:
                best_missing, best_key = count, key
            continue
        if isinstance(best_missing, int):  # the rows part ways: one value per row from here on
            best_missing = np.full(n, best_missing, dtype=np.int64)
            best_key = np.full(n, best_key, dtype=np.int64)
        closer = count < best_missing[left]  # type: ignore[index]
        closer_rows = np.flatnonzero(closer) if left is ALL else left[closer]  # type: ignore[index]
        best_missing[closer_rows] = count[closer] if isinstance(count, np.ndarray) else count  # type: ignore[index]
        best_key[closer_rows] = key[closer] if isinstance(key, np.ndarray) else key  # type: ignore[index]
    if values is None:
        values = columns.absent() if shared_nulls else np.full(n, np.nan)
    missing_codes, missing_texts = _missing_text(defs, best_key, open_rows, n)
    return Pick(values, def_codes, missing_codes, missing_texts, flags)


def _missing_text(defs: list[Definition], keys: "int | np.ndarray", unresolved: "np.ndarray | slice",
                  n: int) -> tuple[np.ndarray, list[str]]:
    """Per row, a code into the texts saying what the closest definition lacked (`keys`: definition index << 32
    | its missing-input bits, one for all `unresolved` rows or one per row)."""
    codes = np.zeros(n, dtype=np.int64)
    if not _count(unresolved, n):
        return codes, [""]
    if isinstance(keys, int):
        uniques = [keys]
    else:
        inverse, uniques = pd.factorize(keys[unresolved], sort=True)
        codes[unresolved] = inverse
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

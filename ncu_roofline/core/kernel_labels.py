"""Distinct short labels for kernel groups: two different groups never read the same.

`short_kernel_name` folds a long C++ name to a readable label, but two instantiations of one template (a float and
a `__half` `InitializeMatrix_kernel<…>(…)`) or one kernel launched in two shapes fold to the same text. A reviewer
then cannot tell which bar is which. `distinct_labels` keeps the short form where it is already unique and, for
each set of groups that share it, adds the part that tells them apart, in this order:

1. the kernel's own distinguishing word: the first identifier (a functor, a type, a template argument) where its
   full name differs from the most similar other one (`multi_tensor_apply_kernel<…>(…) [LAMBStage1Functor]`, not
   the `TensorListMetadata<4>` arity before it); a number only when the names differ in numbers alone;
2. grid × block, when the names are the same and the launch shapes differ;
3. a short hash of name, grid and block, the last resort.

`kernel_labels` is the one label of each kernel group that every table, chart, JSON and Markdown prints, at every
width: it is computed over the whole table (never the rows a width happens to show) at one length, `LABEL_LEN`,
so `[TensorMap]` at 80 columns is `[TensorMap]` at 160 and in the chart.

Mangled names (`_ZN…`) are demangled for display only, with the pure-Python `itanium_demangler` (no c++filt
needed); the mangled name stays in the Parquet tables.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from functools import lru_cache

from .kernel_names import short_kernel_name

# Compiler-made anonymous namespaces (`_GLOBAL__N__64_tmpxft_000032c4_..._201bafc9`) say nothing to a reader.
_ANON = re.compile(r"\(?_GLOBAL__N_[A-Za-z0-9_]*\)?")
_SEPARATOR = re.compile(r"[\s<>(),*&:]")
# A qualified identifier (`Eigen::internal::scalar_sum_op`); compared whole, shown by its last part.
_WORD = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*::)*[A-Za-z_][A-Za-z0-9_]*")
_NOISE = frozenset({"const", "volatile", "void", "unsigned", "signed", "struct", "class", "typename"})
# Every label fits this many cells: the name column of an 80-column table and a chart's axis.
LABEL_LEN = 38


@lru_cache(maxsize=4096)
def display_name(name: str, demangled: str | None = None) -> str:
    """The name a reader sees: ncu's own demangled name when it differs, else a demangled `_Z…` symbol, else
    the name as recorded; compiler anonymous namespaces become `{anon}`."""
    text = str(name)
    if demangled and isinstance(demangled, str) and demangled != text and not demangled.startswith("_Z"):
        text = demangled
    elif text.startswith("_Z"):
        text = _demangle(text)
    return _ANON.sub("{anon}", text)


def _demangle(symbol: str) -> str:
    try:
        from itanium_demangler import parse  # pure Python: works on a machine without binutils
    except ImportError:  # pragma: no cover - a dependency, but a display nicety must never stop the run
        return symbol
    try:
        node = parse(symbol)
    except Exception:  # noqa: BLE001 - an unparseable symbol is shown as it is
        return symbol
    return symbol if node is None else str(node)


def _shape(grid: object, block: object) -> str | None:
    def known(value: object) -> bool:
        return isinstance(value, str) and value not in ("", "<NA>", "nan", "None")

    return f"{grid}×{block}".replace(" ", "") if known(grid) and known(block) else None


def _differing_token(names: Sequence[str], index: int) -> str | None:
    """The part of names[index] right after what it shares with the most similar other name (a template
    argument, a tile shape, a type), from the start of that word, at most 18 characters."""
    own = names[index]
    shared = max(len(os.path.commonprefix([own, other])) for i, other in enumerate(names) if i != index)
    if shared >= len(own):
        return None
    start = shared
    while start > 0 and (own[start - 1].isalnum()):
        start -= 1
    part = own[start:]
    cut = _SEPARATOR.search(part, 1)
    part = part[: cut.start()] if cut else part
    return part[:18] + ("…" if len(part) > 18 else "")


def _words(name: str) -> list[str]:
    return [w for w in _WORD.findall(name) if w not in _NOISE]


def _distinguishing_word(names: Sequence[str], index: int) -> str | None:
    """The identifier of names[index] at the first place its words differ from the most similar other name's
    (a functor, a type, an op: what a reader recognises), its last `::` part, at most 18 characters; None when
    the words are the same and only numbers differ."""
    own = _words(names[index])
    best = -1
    for i, other in enumerate(names):
        if i == index:
            continue
        theirs = _words(other)
        first = next((k for k, (a, b) in enumerate(zip(own, theirs)) if a != b), min(len(own), len(theirs)))
        best = max(best, first)
    if best <= 0 or best >= len(own):  # 0: the function's own name differs, a tile shape inside it says how
        return None
    word = own[best].rsplit("::", 1)[-1]
    return word[:18] + ("…" if len(word) > 18 else "")


def _hash(*parts: object) -> str:
    return hashlib.sha1("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()[:6]


def distinct_labels(names: Sequence[str], grids: Sequence[object] | None = None,
                    blocks: Sequence[object] | None = None, max_len: int = 40) -> list[str]:
    """One label per kernel group (names already for display), unique across the list for different groups.

    Groups are (name, grid, block); identical groups (which the pipeline never makes) may share a label.
    """
    names = [str(n) for n in names]
    grids = [None if g is None else str(g) for g in grids] if grids is not None else [None] * len(names)
    blocks = [None if b is None else str(b) for b in blocks] if blocks is not None else [None] * len(names)
    extras = _extras(tuple(names), tuple(grids), tuple(blocks), max_len)
    return [_label(n, e, max_len) for n, e in zip(names, extras)]


def _label(name: str, extra: str | None, max_len: int) -> str:
    # The base gives way to the distinguishing part so the whole label stays about max_len long.
    return _fit(short_kernel_name(name, max(16, max_len - len(extra) - 3)), extra) if extra \
        else short_kernel_name(name, max_len)


@lru_cache(maxsize=64)
def _extras(names: tuple[str, ...], grids: tuple[str | None, ...], blocks: tuple[str | None, ...],
            max_len: int) -> tuple[str | None, ...]:
    """The distinguishing part of each group whose short form at `max_len` another group shares (None: none
    needed). Cached: a table asks for its labels at several widths while it fits."""
    labels = [short_kernel_name(n, max_len) for n in names]
    extras: list[str | None] = [None] * len(names)
    by_label: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        by_label.setdefault(label, []).append(i)
    for members in by_label.values():
        if len(members) < 2:
            continue
        group_names = [names[i] for i in members]
        for k, i in enumerate(members):
            same_name = [j for j in members if names[j] == names[i]]
            extra = (_distinguishing_word(group_names, k) or _differing_token(group_names, k)) \
                if len(same_name) == 1 else None
            if extra is None and len({_shape(grids[j], blocks[j]) for j in same_name}) == len(same_name):
                extra = _shape(grids[i], blocks[i])
            extras[i] = extra if extra is not None else "#" + _hash(names[i], grids[i], blocks[i])
    # The additions above are unique within each colliding set but may meet another set's label: hash those.
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        label = _label(name, extras[i], max_len)
        j = seen.get(label)
        if j is not None and (names[j], grids[j], blocks[j]) != (name, grids[i], blocks[i]):
            extras[i] = "#" + _hash(name, grids[i], blocks[i])
            label = _label(name, extras[i], max_len)
        seen.setdefault(label, i)
    return tuple(extras)


def kernel_labels(names: Sequence[str], grids: Sequence[object] | None = None,
                  blocks: Sequence[object] | None = None, max_len: int = LABEL_LEN) -> list[str]:
    """The one label of each kernel group, for every output: pass the whole table's groups (the disambiguation
    looks at all of them, never at the rows one width happens to show), then pick the rows shown.

    Which groups carry a distinguishing part, and which part, is decided once at `LABEL_LEN`; a narrower
    `max_len` (an 80-column terminal) only folds the base further, and only where no two groups then meet;
    nothing is ever longer than `LABEL_LEN`.
    """
    names = [str(n) for n in names]
    grids = [None if g is None else str(g) for g in grids] if grids is not None else [None] * len(names)
    blocks = [None if b is None else str(b) for b in blocks] if blocks is not None else [None] * len(names)
    extras = _extras(tuple(names), tuple(grids), tuple(blocks), LABEL_LEN)
    canonical = [_label(n, e, LABEL_LEN) for n, e in zip(names, extras)]
    if max_len >= LABEL_LEN:
        return canonical
    shorter = [_label(n, e, max_len) for n, e in zip(names, extras)]
    meets: dict[str, str] = {}
    if any(meets.setdefault(short, full) != full for short, full in zip(shorter, canonical)):
        return canonical
    return shorter


def table_labels(table: object, max_len: int = LABEL_LEN, *, grid: str = "grid", block: str = "block") -> list[str]:
    """`kernel_labels` of a kernel table (its `kernel_name`, ncu's `kernel_demangled` where present, `grid`,
    `block`), row for row."""
    from .values import STRING  # pandas' dtype: this module is imported by commands that start without pandas

    names = table["kernel_name"].astype(str).tolist()  # type: ignore[index]
    demangled = table["kernel_demangled"].tolist() if "kernel_demangled" in table else [None] * len(names)  # type: ignore[index, operator]
    shapes = [table[c].astype(STRING).tolist() if c in table else None for c in (grid, block)]  # type: ignore[index, operator]
    return kernel_labels([display_name(n, d if isinstance(d, str) else None) for n, d in zip(names, demangled)],
                         *shapes, max_len=max_len)


def _fit(label: str, extra: str) -> str:
    """`label [extra]`: the distinguishing part is added whole, never cut."""
    return f"{label} [{extra}]"


def fold_inputs(paths: Sequence[str], *, most: int = 3) -> str:
    """Inputs by file name, never absolute path; more than `most` files of one folder fold into
    "12 files in climate-seg-TF-fp16…/" so a split capture reads as the one capture it is."""
    from pathlib import PurePath

    by_folder: dict[str, list[str]] = {}
    for path in paths:
        p = PurePath(str(path))
        by_folder.setdefault(p.parent.name, []).append(p.name)
    parts = []
    for folder, names in by_folder.items():
        if len(names) > most and folder:
            short = folder if len(folder) <= 24 else folder[:23] + "…"
            parts.append(f"{len(names)} files in {short}/")
        else:
            parts.extend(names)
    return ", ".join(parts) or "—"

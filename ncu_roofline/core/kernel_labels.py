"""Distinct short labels for kernel groups: two different groups never read the same.

`short_kernel_name` folds a long C++ name to a readable label, but two instantiations of one template (a float and
a `__half` `InitializeMatrix_kernel<…>(…)`) or one kernel launched in two shapes fold to the same text. A reviewer
then cannot tell which bar is which. `distinct_labels` keeps the short form where it is already unique and, for
each set of groups that share it, adds the part that tells them apart, in this order:

1. the first template/argument token where their full names differ (`InitializeMatrix_kernel<…>(…) [__half]`);
2. grid × block, when the names are the same and the launch shapes differ;
3. a short hash of name, grid and block, the last resort.

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


def _hash(*parts: object) -> str:
    return hashlib.sha1("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()[:6]


def distinct_labels(names: Sequence[str], grids: Sequence[object] | None = None,
                    blocks: Sequence[object] | None = None, max_len: int = 40) -> list[str]:
    """One label per kernel group (names already for display), unique across the list for different groups.

    Groups are (name, grid, block); identical groups (which the pipeline never makes) may share a label.
    """
    grids = list(grids) if grids is not None else [None] * len(names)
    blocks = list(blocks) if blocks is not None else [None] * len(names)
    labels = [short_kernel_name(n, max_len) for n in names]
    by_label: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        by_label.setdefault(label, []).append(i)
    for label, members in by_label.items():
        if len(members) < 2:
            continue
        group_names = [names[i] for i in members]
        for k, i in enumerate(members):
            same_name = [j for j in members if names[j] == names[i]]
            extra = _differing_token(group_names, k) if len(same_name) == 1 else None
            if extra is None and len({_shape(grids[j], blocks[j]) for j in same_name}) == len(same_name):
                extra = _shape(grids[i], blocks[i])
            if extra is None:
                extra = "#" + _hash(names[i], grids[i], blocks[i])
            # The base gives way to the distinguishing part so the whole label stays about max_len long.
            labels[i] = _fit(short_kernel_name(names[i], max(16, max_len - len(extra) - 3)), extra)
    # The additions above are unique within each colliding set but may meet another set's label: hash those.
    seen: dict[str, int] = {}
    for i, label in enumerate(labels):
        if label in seen and (names[seen[label]], grids[seen[label]], blocks[seen[label]]) != (names[i], grids[i], blocks[i]):
            labels[i] = _fit(short_kernel_name(names[i], max_len), "#" + _hash(names[i], grids[i], blocks[i]))
        seen.setdefault(labels[i], i)
    return labels


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

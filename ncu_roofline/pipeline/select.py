"""Which kernel groups a run shows, and in what order: `--kernel REGEX`, `--exclude REGEX`, `--sort`.

A library step, not a CLI one, so notebooks and CI gates filter the same way. Regexes are searched (not
anchored) in the recorded name and in its demangled display form, so `RowReduce` finds a kernel recorded as
`_ZN10tensorflow7functor15RowReduceKernel…`. Ranks are renumbered in the chosen order; time shares stay shares of
the whole run's GPU time (a filtered view does not make a kernel a bigger part of the run).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.patterns import Pattern, compile_regex
from ..core.vocabulary import APP_HEADROOM

# Order of each --sort: most recoverable time, most time, or furthest below its roof first.
SORTS = {
    "headroom": (["headroom_s", "time_s"], [False, False]),
    "time": (["time_s", "headroom_s"], [False, False]),
    "fraction": (["roofline_fraction", "time_s"], [True, False]),
    "app_headroom": ([APP_HEADROOM, "headroom_s"], [False, False]),  # with --nsys (pipeline/app_weight.py)
}


def _pattern(text: str | None, option: str) -> Pattern | None:
    if text is None:
        return None
    return compile_regex(text, f"{option} {text!r}")  # linear time (RE2): no pattern can hang the run


def name_mask(kernels: pd.DataFrame, pattern: Pattern) -> np.ndarray:
    """Rows whose recorded name, ncu's demangled name or the display name (demangled, `{anon}`) matches: each
    searched on its own, so `^gemm$` and `Kernel$` anchor at either name's ends. The one kernel-name matcher of
    `--kernel`/`--exclude`, `history --kernel`, `show KERNEL` and a points file's `kernel` column."""
    from ..core.kernel_labels import display_name  # demangling is display work; the filter matches what users read

    names = kernels["kernel_name"].astype("object").to_numpy()
    demangled = (kernels["kernel_demangled"].astype("object").to_numpy() if "kernel_demangled" in kernels
                 else [None] * len(names))

    def hit(name: object, ncu_demangled: object) -> bool:
        ncu_demangled = ncu_demangled if isinstance(ncu_demangled, str) else None
        name = "" if not isinstance(name, str) else name
        return (pattern.search(name) or (ncu_demangled is not None and pattern.search(ncu_demangled))
                or pattern.search(display_name(name, ncu_demangled)))

    return np.fromiter((hit(n, d) for n, d in zip(names, demangled)), dtype=bool, count=len(names))


def select_kernels(kernels: pd.DataFrame, *, kernel: str | None = None, exclude: str | None = None,
                   sort: str = "headroom") -> pd.DataFrame:
    """The kernel groups whose name matches `kernel` and not `exclude`, ranked 1.. in `sort` order."""
    if sort not in SORTS:
        raise InputError(None, f"--sort must be one of {', '.join(SORTS)}, not {sort!r}")
    keep, drop = _pattern(kernel, "--kernel"), _pattern(exclude, "--exclude")
    if keep is None and drop is None and sort == "headroom":
        return kernels
    mask = np.ones(len(kernels), dtype=bool)
    if keep is not None:
        mask &= name_mask(kernels, keep)
    if drop is not None:
        mask &= ~name_mask(kernels, drop)
    chosen = kernels[mask]
    if chosen.empty:
        given = " and ".join(f"{option} {text!r}" for option, text in (("--kernel", kernel), ("--exclude", exclude))
                             if text is not None)
        raise InputError(None, f"no kernel group left after {given} (of {len(kernels)} groups)")
    columns, ascending = SORTS[sort]
    chosen = chosen.sort_values([*columns, "kernel_name"], ascending=[*ascending, True], na_position="last",
                                kind="stable").reset_index(drop=True)
    chosen["rank"] = np.arange(1, len(chosen) + 1, dtype=np.int64)
    return chosen


def select_launches(launches: pd.DataFrame, kernels: pd.DataFrame) -> pd.DataFrame:
    """The launches of the kept kernel groups (by name)."""
    if "kernel_name" not in launches:
        return launches
    return launches[launches["kernel_name"].isin(set(kernels["kernel_name"]))].reset_index(drop=True)


def kernel_launches(launches: pd.DataFrame, kernel: pd.Series) -> pd.DataFrame:
    """The launch rows of one kernel group: its recorded name and, where the group has them, its grid and block."""
    mine = launches[launches["kernel_name"] == kernel["kernel_name"]]
    for column in ("grid", "block"):
        if column in mine and pd.notna(kernel.get(column)):
            mine = mine[mine[column].astype(str) == str(kernel[column])]
    return mine

"""Kernels of two runs paired, never by a guess: by name, launch shape and NVTX path, then in launch order.

Over plain tables (kernel and launch rows), so that `compare` and the history's per-kernel series match alike.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def match_kernels(base: pd.DataFrame, head: pd.DataFrame) -> pd.DataFrame:
    """Pairs of row positions (`base`, `head`, `match`) of two kernel tables; -1 on the side a kernel is missing.

    Each table needs `kernel_name`, `grid`, `block` and `launch_order` (the position of the group's first launch
    in its run), and `nvtx_range` when kernels were grouped by NVTX range. Three passes, each over what the
    previous ones left:

    1. `exact`: same name, grid, block and NVTX path; where several groups still share all four (the same kernel
       on two devices), they pair in launch order.
    2. `launch_order`: same name, grid and block but another NVTX path (ranges renamed or renumbered between
       runs), paired in launch order.
    3. `name_only`: a name held by exactly one group in each run whose launch shape changed (a retuned block
       size, say). Flagged, because the work per launch may have changed too; it is never used where a name
       repeats in either run, since a pairing there would be a guess.

    What is left is `removed` (base only) or `added` (head only).
    """
    has_nvtx = "nvtx_range" in base or "nvtx_range" in head
    b, h = _match_keys(base, has_nvtx), _match_keys(head, has_nvtx)
    free_b, free_h = np.ones(len(b), bool), np.ones(len(h), bool)
    pairs: list[tuple[int, int, str]] = []

    def pair_by(keys: list[str], kind: str, only: set[str] | None = None) -> None:
        by = keys[0] if len(keys) == 1 else keys  # one column: scalar group keys, as `only` holds
        left = b[free_b].groupby(by, sort=False).groups
        right = h[free_h].groupby(by, sort=False).groups
        for key, rows in left.items():
            if key not in right or (only is not None and key not in only):
                continue
            ordered_b = b.loc[rows].sort_values(["launch_order", "position"]).position.tolist()
            ordered_h = h.loc[right[key]].sort_values(["launch_order", "position"]).position.tolist()
            for i, j in zip(ordered_b, ordered_h):
                pairs.append((i, j, kind))
                free_b[i] = free_h[j] = False

    pair_by(["name", "grid", "block", "nvtx"], "exact")
    pair_by(["name", "grid", "block"], "launch_order")
    unique_b = set(b["name"][~b["name"].duplicated(keep=False)])
    unique_h = set(h["name"][~h["name"].duplicated(keep=False)])
    pair_by(["name"], "name_only", only=unique_b & unique_h)

    pairs += [(int(i), -1, "") for i in np.flatnonzero(free_b)]
    pairs += [(-1, int(j), "") for j in np.flatnonzero(free_h)]
    return pd.DataFrame(pairs, columns=["base", "head", "match"]).astype({"base": "int64", "head": "int64"})


def _match_keys(kernels: pd.DataFrame, has_nvtx: bool) -> pd.DataFrame:
    def text(column: str) -> pd.Series:
        if column not in kernels:
            return pd.Series([""] * len(kernels), dtype=object)
        return kernels[column].astype("object").where(kernels[column].notna(), "").astype(str).reset_index(drop=True)

    return pd.DataFrame({
        "name": text("kernel_name"), "grid": text("grid"), "block": text("block"),
        "nvtx": text("nvtx_range") if has_nvtx else "",
        "launch_order": pd.to_numeric(kernels["launch_order"], errors="coerce").fillna(np.inf).to_numpy()
        if "launch_order" in kernels else np.zeros(len(kernels)),
        "position": np.arange(len(kernels)),
    })


def launch_order(kernels: pd.DataFrame, launches: pd.DataFrame) -> pd.Series:
    """For each kernel group, the position of its first launch in the run (inputs in order, then launch ID)."""
    keys = [k for k in ("kernel_name", "grid", "block", "device_name", "nvtx_range") if k in kernels]
    if not len(kernels):
        return pd.Series([], dtype="float64")

    def text(frame: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({k: frame[k].astype("object").where(frame[k].notna(), "").astype(str) for k in keys})

    first = text(launches).assign(order=np.arange(len(launches), dtype="float64")).groupby(keys, sort=False)[
        "order"].min()
    merged = text(kernels).merge(first.reset_index(), on=keys, how="left")
    return pd.Series(merged["order"].to_numpy(), index=kernels.index, dtype="float64")

"""Per-launch status text, built column-wise.

A launch that cannot be fully analysed keeps its row; its `status` says why, as short `; `-separated notes
("missing flop_fp64 (needs ...)", "above_roof dram"). "ok" means nothing to report.

A million launches share a handful of distinct statuses, so rows hold a code into a list of note combinations and
the text is built once per combination, never once per row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


class StatusNotes:
    """Collects notes for n rows without a per-row Python loop."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._codes = np.zeros(n, dtype=np.int64)  # index into _combos
        self._combos: list[tuple[str, ...]] = [()]
        self._index: dict[tuple[str, ...], int] = {(): 0}

    def add(self, mask: np.ndarray, text: str) -> None:
        """Add `text` to the rows where `mask` is true."""
        self.add_coded(mask, np.zeros(self.n, dtype=np.int64), [text])

    def add_coded(self, mask: np.ndarray, codes: np.ndarray, texts: list[str]) -> None:
        """Add `texts[codes[i]]` to row i where `mask` is true (a per-row choice among a few texts)."""
        rows = np.flatnonzero(np.asarray(mask, dtype=bool))
        if rows.size == 0:
            return
        width = len(texts)
        keys = self._codes[rows] * width + np.asarray(codes, dtype=np.int64)[rows]
        inverse, uniques = pd.factorize(keys, sort=False)
        new_codes = np.empty(len(uniques), dtype=np.int64)
        for i, key in enumerate(uniques):
            combo = self._combos[int(key) // width] + (texts[int(key) % width],)
            if combo not in self._index:
                self._index[combo] = len(self._combos)
                self._combos.append(combo)
            new_codes[i] = self._index[combo]
        self._codes[rows] = new_codes[inverse]

    def add_column(self, texts: pd.Series | np.ndarray) -> None:
        """Add free text per row (empty strings and nulls add nothing)."""
        column = pd.Series(texts, dtype="object").fillna("")
        codes, uniques = pd.factorize(column, sort=False)
        self.add_coded((column != "").to_numpy(), codes, [str(u) for u in uniques])

    def render(self) -> pd.Series:
        labels = ["; ".join(combo) if combo else "ok" for combo in self._combos]
        used = np.unique(self._codes)
        remap = np.full(len(labels), -1, dtype=np.int64)
        remap[used] = np.arange(len(used))
        categories = pd.Index([labels[i] for i in used], dtype="object")
        if not categories.is_unique:  # two combinations can read the same; merge them
            categories, merged = pd.factorize(categories)
            return pd.Series(pd.Categorical.from_codes(categories[remap[self._codes]], merged), dtype="category")
        return pd.Series(pd.Categorical.from_codes(remap[self._codes], categories))


# A launch of a metric-split capture that cannot be told apart from the other launches of its kernel across the
# parts: its row holds no values, its kernel is analysed from the parts' sums by name (readers/align.py).
BY_NAME = "alignment: by name"


def is_by_name(status: pd.Series) -> np.ndarray:
    """Rows whose status says they were aligned by name only (no values of their own)."""
    return status.astype("object").fillna("").astype(str).str.contains(BY_NAME, regex=False).to_numpy(dtype=bool)

"""Per-launch status text, built column-wise.

A launch that cannot be fully analysed keeps its row; its `status` says why, as short `; `-separated notes
("missing flop_fp64 (needs ...)", "above_roof dram"). "ok" means nothing to report.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


class StatusNotes:
    """Collects notes for n rows without a per-row Python loop."""

    def __init__(self, n: int) -> None:
        self._parts: list[np.ndarray] = []
        self.n = n

    def add(self, mask: np.ndarray, text: str | np.ndarray) -> None:
        """Add `text` (one string, or one per row) to the rows where `mask` is true."""
        mask = np.asarray(mask, dtype=bool)
        if not mask.any():
            return
        column = np.full(self.n, "", dtype=object)
        column[mask] = text if isinstance(text, str) else np.asarray(text, dtype=object)[mask]
        self._parts.append(column)

    def add_column(self, texts: pd.Series | np.ndarray) -> None:
        """Add free text per row (empty strings add nothing)."""
        column = pd.Series(texts, dtype="object").fillna("").to_numpy(dtype=object)
        if (column != "").any():
            self._parts.append(column)

    def render(self) -> pd.Series:
        if not self._parts:
            return pd.Series(["ok"] * self.n, dtype="string")
        joined = pd.Series(self._parts[0], dtype="object")
        for part in self._parts[1:]:
            part_s = pd.Series(part, dtype="object")
            both = (joined != "") & (part_s != "")
            joined = joined.where(~both, joined + "; ").where(part_s == "", lambda s: s + part_s)
        return joined.where(joined != "", "ok").astype("string")

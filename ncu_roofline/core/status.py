"""Per-launch status text, built column-wise.

A launch that cannot be fully analysed keeps its row; its `status` says why, as short `; `-separated notes
("missing flop_fp64 (needs ...)", "above_roof dram"). "ok" means nothing to report.

A million launches share a handful of distinct statuses, so rows hold a code into a list of note combinations and
the text is built once per combination, never once per row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .vocabulary import LEVEL_PARENTS, display


class StatusNotes:
    """Collects notes for n rows without a per-row Python loop."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._codes = np.zeros(n, dtype=np.int64)  # index into _combos
        self._combos: list[tuple[str, ...]] = [()]
        self._index: dict[tuple[str, ...], int] = {(): 0}

    def add(self, mask: np.ndarray, text: str) -> None:
        """Add `text` to the rows where `mask` is true (one code for every row: a read-only view, not n zeros)."""
        self.add_coded(mask, np.broadcast_to(np.int64(0), (self.n,)), [text])

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
        codes, uniques = pd.factorize(pd.Series(texts), sort=False)  # null: -1; no text object per row
        words = [str(u) for u in uniques]
        said = np.asarray([word != "" for word in words] + [False])  # the last for code -1
        self.add_coded(said[codes], codes, words)

    def render(self) -> pd.Series:
        labels = ["; ".join(combo) if combo else "ok" for combo in self._combos]
        used = np.flatnonzero(np.bincount(self._codes, minlength=len(labels)))  # np.unique's, without a sort of n
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


# What each status note means, in a few plain words, for the human-facing outputs (terminal, Markdown, tooltips);
# Parquet and JSON keep the codes. Matched on the note's start; the full meaning is in docs/status.md.
STATUS_WORDS = (
    ("ok", "nothing to report"),
    ("missing ", "{} not counted in this launch"),
    ("flop_total_lower_bound", "FLOP total counts only some precisions"),
    ("no FLOP or byte counters", "no FLOP or byte counters"),
    ("time_from_", "time from a fallback counter (no duration counter)"),
    ("fp16_from_hfma_only", "FP16 counts HFMA only"),
    ("tensor_flops_legacy_512_per_inst", "tensor FLOPs as 512 per instruction (exact on Volta)"),
    ("no roof ", "work in {} without a roof"),
    ("no FLOP counters", "no FLOP counters: headroom an upper bound"),
    ("no table roofs", "GPU not in the ceiling table"),
    ("pass --gpu", "GPU not in the ceiling table"),
    ("no DRAM roof: integrated", "no DRAM roof (integrated memory)"),
    ("clock max unknown", "maximum clock unknown: roofs at the measured clock"),
    ("table roofs at the table's clock", "table and report roofs on different clocks"),
    ("above_roof ", "above the {} roof: check the roof"),
    *((f"bytes_order {near}<{far}", f"{display(near)} moved fewer bytes than {display(far)}")
      for near, far in reversed(LEVEL_PARENTS)),
    (BY_NAME, "split capture: analysed from per-name sums"),
    ("not aligned with the other parts", "split capture: launches not aligned, first part only"),
    ("value of ", "a value not a number"),
    ("unit ", "a unit not understood"),
    ("launch dimensions not in the report", "launch dimensions not in the report"),
    ("process ids not matched", "process ids not matched"),
)
_COUNT_SUFFIX = " launches)"


def note_in_words(note: str) -> str:
    """One status note as a short phrase ('bytes_order l1<l2' -> 'L1 moved fewer bytes than L2'), keeping the term
    a note names ('no roof fp64' -> 'work without a roof: fp64') and a '(k of n launches)' tail; an unknown note
    is returned as it is."""
    note = note.strip()
    tail = ""
    if note.endswith(_COUNT_SUFFIX) and " (" in note:
        note, tail = note.rsplit(" (", 1)
        tail = f" ({tail}"
    for start, words in STATUS_WORDS:
        if note == start or note.startswith(start):
            rest = note[len(start):].strip() if start.endswith(" ") else ""
            if start == "no FLOP counters" or not note.startswith("no ") and " FLOP counters" in note:
                rest = ""
            rest = rest.split(" (")[0]
            if "{}" in words:
                return words.replace("{}", _quantity(rest) if rest else "a value") + tail
            return (f"{words}: {rest}" if rest and len(rest) <= 24 else words) + tail
    if note.startswith("no ") and " counters: " in note:  # 'no FP64, FP16 FLOP counters: ...'
        return f"{note.split(':', 1)[0]} (headroom an upper bound)" + tail
    return note + tail


def _quantity(key: str) -> str:
    """'bytes_l1' -> 'L1 bytes', 'flop_fp64' -> 'FP64 FLOPs', 'fp64' -> 'FP64'."""
    from .vocabulary import ALL_TERMS

    for term in ALL_TERMS:
        if key == term.amount:
            return f"{display(term.key)} {'FLOPs' if term.kind == 'compute' else 'bytes'}"
    return display(key)


def status_in_words(status: object) -> str:
    """A `; `-separated status in words, each phrase once."""
    text = "ok" if status is None or str(status) in ("", "nan", "<NA>") else str(status)
    return "; ".join(dict.fromkeys(note_in_words(note) for note in text.split("; ")))

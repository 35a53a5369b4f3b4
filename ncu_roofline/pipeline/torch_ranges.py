"""PyTorch operators from NVTX ranges: `--group-by op` for captures taken under `torch.autograd.profiler.emit_nvtx()`.

Under `emit_nvtx()` every autograd operator pushes one NVTX range (default domain) around its work, nested as the
operators call each other; a kernel launch's `nvtx_range` is that stack, outermost first, joined by `/`
(readers/ncu_rep.py). The range names are decorated (docs/pytorch-ops.md has the sources):

    NAME[, seq = N][, op_id = N][, sizes = [[d, ...], ...]][, input_op_ids = [(a,b), ...]]   PyTorch >= 1.6
    NAME[, seq=N] / NAME[, stashed seq=N]                                                     PyTorch <= 1.5

`seq` is the forward sequence number; `stashed seq` marks a backward Function's apply(); `sizes` are the input
shapes that `emit_nvtx(record_shapes=True)` adds. Backward nodes are named `<Op>Backward<k>` (`AddmmBackward0`;
`AddmmBackward` before PyTorch 1.10), and newer engines wrap them in `autograd::engine::evaluate_function: ...`.

A launch's operator is its innermost range with the decorations stripped; it is *backward* when any range of its
stack is a backward node (or carries `stashed seq`), and its label then ends in ` [backward]`, so forward and
backward work of the same operator (aten::mm in both) stay apart. Launches outside any range keep their kernel name.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

BACKWARD_SUFFIX = " [backward]"
_EVALUATE = "autograd::engine::evaluate_function: "
_DECORATED = re.compile(
    r"(?P<name>.*?)"
    r"(?:, ?(?P<stashed>stashed )?seq ?= ?-?\d+)?"
    r"(?:, op_id = \d+)?"
    r"(?:, sizes = \[.*\])?"
    r"(?:, input_op_ids = \[.*\])?",
    re.DOTALL,
)
_BACKWARD_NODE = re.compile(r"Backward\d*$")


def strip_decorations(name: str) -> tuple[str, bool]:
    """(operator name, whether the range is a backward node) for one range name as emit_nvtx writes it."""
    match = _DECORATED.fullmatch(name.strip())
    bare = match.group("name").strip() if match else name.strip()
    backward = bool(match and match.group("stashed"))
    if bare.startswith(_EVALUATE):
        bare, backward = bare[len(_EVALUATE):].strip(), True
    return bare, backward or bool(_BACKWARD_NODE.search(bare))


def op_label(nvtx_range: str | None) -> str | None:
    """The operator of one launch from its NVTX path (`outer/inner`, domains joined by `;`); None outside ranges.

    Only the default domain is read (where emit_nvtx pushes); a path naming only other domains gives None.
    """
    if nvtx_range is None or not isinstance(nvtx_range, str) or not nvtx_range:
        return None
    stacks = [part for part in nvtx_range.split(";") if part and "@" not in part.split("/", 1)[0]]
    if not stacks:
        return None
    ranges = [strip_decorations(r) for r in stacks[0].split("/") if r.strip()]
    if not ranges:
        return None
    backward = any(is_backward for _, is_backward in ranges)
    return ranges[-1][0] + (BACKWARD_SUFFIX if backward else "")


def group_by_op(raw: pd.DataFrame) -> pd.DataFrame:
    """Launches relabelled for operator grouping: `kernel_name` becomes the operator, grid and block are dropped
    from the key (an operator may launch several kernels); launches outside any range are left as they are."""
    paths = raw["nvtx_range"].astype("object").where(raw["nvtx_range"].notna(), None)
    codes, uniques = pd.factorize(paths, use_na_sentinel=True)
    labels_of_unique = np.array([op_label(p) for p in uniques] + [None], dtype=object)  # [-1] -> None
    labels = labels_of_unique[codes]
    has_op = pd.notna(labels)
    frame = raw.copy()
    frame["kernel_name"] = pd.array(np.where(has_op, labels, frame["kernel_name"].astype(object)), dtype="string")
    for column in ("kernel_demangled", "grid", "block", "nvtx_range"):
        if column in frame:
            frame[column] = frame[column].astype("string").mask(has_op)
    return frame

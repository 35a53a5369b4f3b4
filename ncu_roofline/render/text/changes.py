"""Change and gate wording every comparison view shares (compare and history, terminal and Markdown): signed
values and points, kernel labels with their launch shape, a gate's outcome in words."""

from __future__ import annotations

import pandas as pd

from ...core.kernel_names import short_kernel_name
from ...core.vocabulary import AI_OFF_CHIP
from ...pipeline.gates import GateResult
from .numbers import cell as _cell
from .numbers import format_si as fmt_si
from .numbers import pct as _pct
from .safe_text import for_markdown_code, for_terminal


def signed_si(value: float, unit: str) -> str:
    """'+1.2 µs', '-3 GFLOP/s', '0 s'; '—' when unknown."""
    if value is None or pd.isna(value):
        return "—"
    return ("+" if value > 0 else "") + fmt_si(value, unit)


def signed_points(fraction_change: float) -> str:
    """A change of a fraction, in percentage points: '+12.5 pt'."""
    if fraction_change is None or pd.isna(fraction_change):
        return "—"
    return f"{100 * fraction_change:+.1f} pt"


def launch_shape(grid: object, block: object) -> str:
    """'(64,1,1)×(128,1,1)': grid × block without spaces, so tables keep room for the numbers; '—' where neither
    is known (never '<NA>×<NA>')."""
    if pd.isna(grid) and pd.isna(block):
        return "—"
    return "×".join("—" if pd.isna(v) else str(v) for v in (grid, block)).replace(" ", "")


def kernel_label(name: object, grid: object, block: object) -> str:
    shape = "" if pd.isna(grid) and pd.isna(block) else " " + launch_shape(grid, block)
    return f"{for_markdown_code(short_kernel_name(str(name)), table_cell=True)}{_cell(for_terminal(shape))}"


def gate_outcome(result: GateResult, *, must_judge: bool = True) -> str:
    """✅/❌ for one gate; `must_judge` as in `compare_json.gate_record`."""
    if must_judge and not result.judged:
        return "❌ nothing checked"
    if result.passed:
        return "✅ pass"
    return "❌ fail"


def signed_value(metric: str, value: float) -> str:
    """A signed change in the metric's unit: '+1.52 ms', '-3.0 pt' (a roofline fraction), '—' when unknown."""
    if metric == "roofline_fraction":
        return signed_points(value)
    unit = {"time_s": "s", "headroom_s": "s", "t_sol_s": "s", "flop_per_s": "FLOP/s", "flop_total": "FLOP",
            AI_OFF_CHIP: "FLOP/B"}.get(metric, "")
    return signed_si(value, unit)


def value_text(metric: str, value: float) -> str:
    """A gate metric's value in its unit, as the tables write it: '3.48 ms', '12.5%', '2.00 FLOP/B'."""
    if metric == "roofline_fraction":
        return _pct(value)
    if metric == AI_OFF_CHIP:
        return fmt_si(value, "FLOP/B")
    unit = {"time_s": "s", "headroom_s": "s", "t_sol_s": "s", "flop_per_s": "FLOP/s", "flop_total": "FLOP"}.get(
        metric, "")
    return fmt_si(value, unit)


def short_dims(value: object) -> str | None:
    """'(64,1,1)' as '64', '(64,2,1)' as '64,2': a launch shape short enough for a name's tag."""
    if value is None or pd.isna(value):
        return None
    parts = str(value).strip("() ").replace(" ", "").split(",")
    while len(parts) > 1 and parts[-1] == "1":
        parts.pop()
    return ",".join(parts)


def change_text(before: object, after: object) -> str:
    """'dram' when a label did not change, 'fp32 → dram' when it did; '—' for unknown."""
    b, a = ("—" if pd.isna(v) else str(v) for v in (before, after))
    return a if a == b else f"{b} → {a}"

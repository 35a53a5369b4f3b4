"""Terminal tables for analytic points (`model`) and for GPUs side by side (`ceilings compare`)."""

from __future__ import annotations

import pandas as pd
from rich.table import Table
from rich.text import Text

from ...core.kernel_names import short_kernel_name
from ...core.vocabulary import display
from ..text.numbers import format_si as fmt_si
from ..text.fit import Col, fit_table
from ..text.safe_text import for_terminal


def _text(value: object) -> Text:
    """A name from the user's file (point, GPU, kernel) as a plain, terminal-safe cell: no markup, no escapes."""
    return Text(for_terminal(value))


def _number(value: float | None, digits: str = ".4g") -> str:
    return "—" if value is None or pd.isna(value) else format(float(value), digits)


# The point, its GPU, the bound and t_min (what the point costs at best) are kept; the rest give way
# (render/text/fit.py).
MODEL_COLUMNS = (Col("point", "left"), Col("GPU", "left"), Col("t_min", legend="t_min: the time at the roof"),
                 Col("bound", "left"), Col("attainable", drop=4), Col("AI (FLOP/B)", drop=3), Col("ridge", drop=2),
                 Col("FLOP", drop=5), Col("bytes", drop=1))


# A terminal shows the first rows of a long points file (a traced model's million operators would take rich minutes
# to lay out, and nobody reads them there); `--json` and `-o` keep every point.
MAX_TABLE_ROWS = 200


def model_table(points: pd.DataFrame, *, title: str = "", width: int = 120, wide: bool = False) -> Table:
    """One line per (point, GPU): work, traffic, intensity, what the GPU can reach, and what bounds it."""
    rows = []
    for row in points.head(MAX_TABLE_ROWS).itertuples(index=False):
        bound = row.bound if isinstance(row.bound, str) else f"— ({row.status})"
        rows.append([for_terminal(row.name), for_terminal(row.gpu), fmt_si(row.t_min_s, "s"),
                     display(bound) if isinstance(row.bound, str) else bound,
                     fmt_si(row.attainable_flop_per_s, "FLOP/s"), _number(row.ai), _number(row.ridge_ai),
                     fmt_si(row.flop, "FLOP"), fmt_si(row.bytes, "B")])
    full = [r[0] for r in rows]

    def names(max_len: int) -> list[str]:
        return [n if len(n) <= max_len else n[: max_len - 1] + "…" for n in full]

    more = len(points) - len(rows)
    footer = f"… and {more:,} more rows: `--json -` or `-o DIR` gives every one" if more > 0 else ""
    return fit_table(MODEL_COLUMNS, rows, width, title=title or None, name_index=0, names=names, wide=wide,
                     footer=footer, hint="`--json -` or `-o DIR` gives every column").table


def roofs_table(compare: pd.DataFrame) -> Table:
    """`ceilings compare`: one row per roof or ridge point, one column per GPU."""
    table = Table(header_style="bold")
    table.add_column("roof", justify="left")
    gpus = [c for c in compare.columns if c not in ("key", "kind", "label")]
    for gpu in gpus:
        table.add_column(_text(gpu), justify="right", overflow="fold")
    for row in compare.to_dict("records"):
        unit = {"compute": "FLOP/s", "memory": "B/s"}.get(row["kind"])
        cells = [fmt_si(row[g], unit) if unit else _number(row[g], ".1f") for g in gpus]
        table.add_row(_text(row["label"]), *cells)
    return table


def model_match_table(kernels: pd.DataFrame, *, top: int = 10) -> Table:
    """`analyze --points`: the kernel groups a point names, measured ÷ modelled (3.0 = three times the minimum)."""
    table = Table(title="Model vs measurement (measured ÷ modelled)", header_style="bold")
    for name in ("#", "kernel", "model points", "model AI", "AI DRAM", "FLOP ÷ model", "DRAM bytes ÷ model"):
        table.add_column(name, justify="left" if name in ("kernel", "model points") else "right",
                         no_wrap=name == "kernel", max_width=40 if name == "kernel" else None)
    matched = kernels[kernels["model_points"].notna()].head(top)
    for row in matched.itertuples(index=False):
        table.add_row(str(row.rank), _text(short_kernel_name(str(row.kernel_name))), _text(row.model_points),
                      _number(row.model_ai), _number(row.ai_dram), _number(row.flop_over_model, ".3g"),
                      _number(row.dram_bytes_over_model, ".3g"))
    return table

"""The roofline chart's subtitle: where every kernel of the run went (on the roofline, in the memory panel, left
out and why), under the ceilings, clock and inputs line, and the timeline's coverage with `--nsys`."""

from __future__ import annotations

from ...core.kernel_labels import fold_inputs
from ...core.vocabulary import LEVELS
from ..text.safe_text import for_chart
from .context import ChartContext


def chart_subtitle(ctx: ChartContext, *, total: int, drawn: int, panel: int, zero_flops: int, missing: int, beyond: int,
              partial: int, panel_partial: int) -> list[str]:
    """Where every kernel went: "N of M kernels on the roofline, K in the memory panel; left out: ..." (without a
    panel, as before it: "N of M kernels drawn"); a kernel left out is one that can be drawn nowhere (no FLOP/s
    and no bytes/s) or one beyond the top N."""
    lines = [for_chart(f"Ceilings: {ctx.ceiling_source} · clock: {ctx.clock} · input: {fold_inputs(ctx.inputs)}")]
    if ctx.timeline:
        lines.insert(0, for_chart(ctx.timeline))
    no_bytes = "" if ctx.precision else " and no bytes/s"
    reasons = [
        f"{count} {why}"
        for count, why in ((zero_flops, f"with zero FLOPs{no_bytes}"), (missing, "with missing data"),
                           (beyond, f"beyond the top {ctx.top}"))
        if count
    ]
    kernels_word = "kernel" if total == 1 else "kernels"
    if not total:
        lines.append("No kernels to draw")
    elif panel:
        lines.append(f"{drawn} of {total} {kernels_word} on the roofline, {panel} in the memory panel (bytes, no FLOPs)"
                     + ("; left out: " + ", ".join(reasons) if reasons else ""))
        if not drawn:
            lines.append("Nothing to draw on the roofline: no kernel of the top has a FLOP count and an intensity")
    elif reasons:
        lines.append(f"{drawn} of {total} {kernels_word} drawn; left out: " + ", ".join(reasons))
    else:
        lines.append(f"All {total} {kernels_word} drawn")
    if partial:
        lines[-1] += f"; {partial} drawn at fewer than {len(LEVELS)} levels (missing intensity)"
    if panel_partial:
        lines[-1] += f"; {panel_partial} in the panel at fewer than {len(LEVELS)} levels (missing bytes)"
    return lines


# --------------------------------------------------------------------------------------------------------- chart

# Roof labels follow a zoom: while `zoom` (the scale-bound interval) holds a domain, a label whose spot left the
# view slides along its own roof back inside it, a sixth of the visible decades from the edges (room for its text).

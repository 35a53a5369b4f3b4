"""The roofline's geometry: axes that fit the story, roof segments, ridge points and where every text goes.

Pure functions over the chart's small frames (no Altair here), so each rule can be tested on numbers:

- axes cover the drawn points and the roofs' corners in whole decades; a kernel whose FLOP/s or intensity sits
  more than `OUTLIER_GAP_DECADES` away from all the others (at most a tenth of the drawn kernels) is left off
  the scale and named in the subtitle, rather than stretching the axes by its decades;
- ridge points: where each memory roof meets each drawn compute roof (`roofs.peaks.ridge_points`);
- texts: roof labels and rank numbers placed by `roof_labels` so none overlap.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..core.vocabulary import display, peak_bytes_column, peak_flop_column
from ..roofs.peaks import ridge_points
from .numbers import format_number, format_si
from .placement import Board, Plot, place_rank, place_roof_label

OUTLIER_GAP_DECADES = 1.5
OUTLIER_SHARE = 0.1
ROOF_FONT = 11
RANK_FONT = 9
SIZE_RANGE = (30.0, 400.0)
MARGIN = 1.25  # room beyond the outermost point or roof before the next whole decade


def decade_below(value: float) -> float:
    """The whole decade at or below `value`: log axes here start and end on decades."""
    return float(10 ** math.floor(math.log10(value)))


def decade_above(value: float) -> float:
    return float(10 ** math.ceil(math.log10(value)))


def _outliers(values: pd.Series, low: bool) -> set[int]:
    """Index labels of values separated from the rest by a gap over OUTLIER_GAP_DECADES at one end."""
    logs = np.log10(values.astype(float)).sort_values(ascending=low)
    limit = int(len(logs) * OUTLIER_SHARE)
    out: set[int] = set()
    items = list(logs.items())
    for i in range(min(limit, len(items) - 1)):
        if abs(items[i + 1][1] - items[i][1]) > OUTLIER_GAP_DECADES:
            out.update(index for index, _ in items[: i + 1])
    return out


def off_scale_ranks(points: pd.DataFrame) -> list[int]:
    """Ranks of kernels whose points sit far from all the others (by FLOP/s low end, by intensity either end)."""
    if points.empty:
        return []
    per_kernel = points.groupby("rank").agg(y=("flop_per_s", "max"), lo=("ai", "min"), hi=("ai", "max"))
    ranks = _outliers(per_kernel["y"], low=True) | _outliers(per_kernel["lo"], low=True) \
        | _outliers(per_kernel["hi"], low=False)
    return sorted(int(r) for r in ranks)


def domains(points: pd.DataFrame, compute: dict[str, float], memory: dict[str, float],
            extra: pd.DataFrame | None = None) -> tuple[tuple[float, float], tuple[float, float], list[int]]:
    """Whole-decade x and y domains around the points on scale, extra points and the roofs' corners."""
    off = off_scale_ranks(points)
    kept = points[~points["rank"].isin(off)]
    if extra is not None and len(extra):
        kept = pd.concat([kept, extra[["ai", "flop_per_s"]]])
    ys = [*kept["flop_per_s"], *compute.values()] or [1e12]
    top_flop = max(compute.values(), default=max(ys))
    ridges = [top_flop / bandwidth for bandwidth in memory.values()]
    xs = [*kept["ai"], *ridges] or [1.0]
    x_domain = (decade_below(min(xs) / MARGIN), decade_above(max(xs) * MARGIN))
    y_domain = (decade_below(min(ys) / MARGIN), decade_above(max(ys) * MARGIN))
    return x_domain, y_domain, off


def size_of(time_share: pd.Series, max_share: float) -> np.ndarray:
    """The symbol area Vega draws for a time share (linear scale from zero, range SIZE_RANGE)."""
    lo, hi = SIZE_RANGE
    share = time_share.astype(float).to_numpy()
    return lo + (hi - lo) * (share / max_share if max_share > 0 else 0 * share)


def ridge_frame(peak_values: dict[str, float], compute: dict[str, float], memory: dict[str, float],
                x_domain: tuple[float, float]) -> pd.DataFrame:
    """One row per (drawn compute roof, memory roof) whose ridge falls inside the x domain."""
    wanted = {peak_flop_column(p): v for p, v in compute.items()} | {peak_bytes_column(m): v for m, v in memory.items()}
    rows = [
        {"ridge": f"{display(r['compute'])} × {display(r['memory'])}", "x": r["ai_flop_per_byte"],
         "y": r["peak_flop_per_s"], "intensity": f"{format_number(r['ai_flop_per_byte'])} FLOP/byte",
         "roofs": f"{format_si(r['peak_flop_per_s'], 'FLOP/s')} ÷ {format_si(r['peak_bytes_per_s'], 'B/s')}"}
        for r in ridge_points(wanted) if x_domain[0] <= r["ai_flop_per_byte"] <= x_domain[1]
    ]
    return pd.DataFrame(rows, columns=["ridge", "x", "y", "intensity", "roofs"])


def roof_segments(compute: dict[str, float], memory: dict[str, float], x_domain: tuple[float, float],
                  y_domain: tuple[float, float]) -> list[dict[str, Any]]:
    """Each roof's visible segment: diagonals from the plot's lower/left edge to the highest compute roof,
    compute roofs from the steepest diagonal to the right edge."""
    x_lo, x_hi = x_domain
    top_flop = max(compute.values(), default=y_domain[1])
    steepest = max(memory.values(), default=None)
    segments = []
    for key, peak in compute.items():
        start = max(x_lo, peak / steepest) if steepest else x_lo
        segments.append({"key": key, "kind": "compute", "peak": peak, "x0": start, "y0": peak, "x1": x_hi, "y1": peak})
    for key, bandwidth in memory.items():
        start = max(x_lo, y_domain[0] / bandwidth)
        end = min(x_hi, top_flop / bandwidth)
        segments.append({"key": key, "kind": "memory", "peak": bandwidth, "x0": start, "y0": bandwidth * start,
                         "x1": end, "y1": bandwidth * end})
    return segments


def place_texts(plot: Plot, segments: list[dict[str, Any]], roof_texts: list[str], points: pd.DataFrame,
                sizes: np.ndarray) -> tuple[list[tuple[float, float, float] | None], list[dict[str, Any]]]:
    """Roof label spots (data x, data y, Vega angle; None when no room) and rank label spots (rank, text, x, y).

    `points` are the drawn points on scale (rank, ai, flop_per_s); `sizes` their symbol areas. Plain arrays and
    lists, no frames: the page lays its labels out once per plot size it may show.
    """
    px, py = plot.to_px(points["ai"].to_numpy(float), points["flop_per_s"].to_numpy(float))
    radii = 0.62 * np.sqrt(sizes) + 1.5
    board = Board(plot, list(zip(px, py, radii)))
    roof_spots: list[tuple[float, float, float] | None] = []
    for segment, text in zip(segments, roof_texts):
        (sx0, sx1), (sy0, sy1) = plot.to_px(np.array([segment["x0"], segment["x1"]]),
                                            np.array([segment["y0"], segment["y1"]]))
        spot = place_roof_label(board, text, (float(sx0), float(sy0)), (float(sx1), float(sy1)), ROOF_FONT,
                                prefer_end=segment["kind"] == "compute")
        if spot is None:
            roof_spots.append(None)
            continue
        x, y = plot.to_data(spot[0], spot[1])
        roof_spots.append((x, y, round((360.0 - spot[2]) % 360.0, 3)))
    rows = []
    ranks = points["rank"].to_numpy()
    order = np.lexsort((-px, ranks))  # by rank, then rightmost point first
    for rank in np.unique(ranks):
        mine = order[ranks[order] == rank]
        spot = place_rank(board, str(rank), list(zip(px[mine], py[mine], radii[mine])), RANK_FONT)
        if spot is not None:
            x, y = plot.to_data(*spot)
            rows.append({"rank": int(rank), "text": str(rank), "x": x, "y": y})
    return roof_spots, rows

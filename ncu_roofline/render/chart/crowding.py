"""The roofline's crowded regions: what the chart adds where points crowd or coincide.

A rank number set off from its point is joined to it by a leader line (render/chart/layout.py places both); a spot where
several kernels' points coincide names them all in its tooltip; the images, which nobody can hover, name the points
left without a number instead of saying "hover"; and on a laptop's window the bars (which carry the names) narrow
to stay beside the plot. Each piece is added only where it is needed, so an uncrowded chart's spec is unchanged.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import vegalite as vl
from .layout import coincident_clusters
from .placement import Plot

LEADER_COLUMNS = ["rank", "x", "y", "x2", "y2"]
LEADER_COLOUR = "#222222"  # the rank numbers' colour, dashed: not a grey join between a kernel's own points
# Beside a plot in a laptop's window (1366 px): a narrower bar column with shorter names, so the names sit beside
# the roofline rather than under it (render/chart/chart_files.py tries this before stacking the bars under the plot).
NARROW_BARS = {"headroom": {"width": 150, "encoding": {"y": {"axis": {"labelLimit": 230}}}}}


def leader_layer(xy: vl.Spec) -> vl.Spec:
    """The leader lines: thin dashed rules from a point's edge to its displaced rank number (`rank_leaders`), `xy`
    the roofline's x and y channels on its scales."""
    return {
        "name": "rank_leaders", "data": {"name": "rank_leaders"},
        "mark": {"type": "rule", "clip": True, "strokeWidth": 0.8, "strokeDash": [2, 1.5], "color": LEADER_COLOUR},
        "encoding": {**xy, "x2": {"field": "x2"}, "y2": {"field": "y2"}, "opacity": vl.when("kernel", 0.9, 0.35)},
    }


def crowded_subtitles(subtitle: list[str], unlabelled: list[int]) -> tuple[list[str], list[str] | None]:
    """The page's subtitle and, where some drawn ranks have no number on the plot, the images' own: the page says
    to hover or zoom, an image names the ranks and where their names are."""
    if not unlabelled:
        return subtitle, None
    crowded = f"{len(unlabelled)} crowded point{'s' if len(unlabelled) > 1 else ''} without a rank number"
    static = [*subtitle, f"{crowded} ({listed_ranks(unlabelled)}): see the headroom bars and the tables"]
    return [*subtitle, f"{crowded}: hover or zoom to read them"], static


def listed_ranks(ranks: list[int], most: int = 8) -> str:
    """Ranks for a subtitle: "#21, #28", the first `most` and "+N more" beyond."""
    shown = ", ".join(f"#{r}" for r in ranks[:most])
    return shown + (f" +{len(ranks) - most} more" if len(ranks) > most else "")


def with_same_spot(points: pd.DataFrame, on_scale: pd.DataFrame, plot: Plot, sizes: np.ndarray,
                    kernel_rows: pd.DataFrame) -> pd.DataFrame:
    """`points` with a `same_spot` text where other kernels' points at that level sit on the same spot (the
    tooltip shows the top mark only, so it names the others: "2. name · 3. name"); unchanged where none do."""
    if on_scale.empty:
        return points
    px, py = plot.to_px(on_scale["ai"].to_numpy(float), on_scale["flop_per_s"].to_numpy(float))
    cluster = coincident_clusters(px, py, on_scale["level"].to_numpy(), sizes)
    ranks = on_scale["rank"].to_numpy()
    by_cluster = pd.Series(ranks).groupby(cluster).agg(lambda r: sorted(set(r))).to_dict()
    if all(len(v) < 2 for v in by_cluster.values()):
        return points
    label = dict(zip(kernel_rows["rank"], kernel_rows["label"]))
    others = {(int(r), level): " · ".join(label[o] for o in by_cluster[c] if o != r)
              for r, level, c in zip(ranks, on_scale["level"], cluster) if len(by_cluster[c]) > 1}
    same = [others.get((int(r), level), "") for r, level in zip(points["rank"], points["level"])]
    return points.assign(same_spot=same)


def fits_with_leaders(fits: tuple[dict, ...], default: pd.DataFrame) -> tuple[dict, ...]:
    """The fits without their `rank_leaders` where no layout (the default's included) has a leader: the chart then
    has no leader layer, and its spec is what it was before leaders were drawn."""
    if len(default) or any(fit["datasets"]["rank_leaders"] for fit in fits):
        return fits
    return tuple({**fit, "datasets": {k: v for k, v in fit["datasets"].items() if k != "rank_leaders"}}
                 for fit in fits)

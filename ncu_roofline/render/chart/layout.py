"""The roofline's geometry: axes that fit the story, roof segments, ridge points and where every text goes.

Pure functions over the chart's small frames (no Altair here), so each rule can be tested on numbers:

- axes cover the drawn points and the roofs' corners in whole decades; a kernel whose FLOP/s or intensity sits
  more than `OUTLIER_GAP_DECADES` away from all the others (at most a tenth of the drawn kernels) is left off
  the scale and named in the subtitle, rather than stretching the axes by its decades;
- ridge points: where each memory roof meets each drawn compute roof (`roofs.peaks.ridge_points`);
- texts: roof labels and rank numbers placed by `roof_labels` so none overlap; a rank number displaced from its
  point keeps a leader line to it, and kernels whose points coincide (the same spot at every level) share one
  label ("1, 2"), so no point is hidden without its rank being said.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...core.vocabulary import display, peak_bytes_column, peak_flop_column
from ...roofs.peaks import ridge_points
from ..text.numbers import format_number, format_si
from .placement import (
    LEADER_DISTANCES_PX,
    LEADER_WIDTH_PX,
    Board,
    Plot,
    RankSpot,
    _leader_corners,
    leader_box,
    place_rank_leader,
    place_roof_label,
    text_size,
)

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
    # per kernel (rank): its highest FLOP/s and its lowest and highest intensity, NaN left out as groupby's max and
    # min leave it out; by sorted runs of ranks (a groupby costs milliseconds of fixed overhead on a few points)
    ranks = points["rank"].to_numpy()
    order = np.argsort(ranks, kind="stable")
    starts = np.flatnonzero(np.r_[True, ranks[order][1:] != ranks[order][:-1]])
    index = pd.Index(ranks[order][starts])
    ai = points["ai"].to_numpy(dtype=float)[order]
    with np.errstate(invalid="ignore"):
        per_kernel = {"y": np.fmax.reduceat(points["flop_per_s"].to_numpy(dtype=float)[order], starts),
                      "lo": np.fmin.reduceat(ai, starts), "hi": np.fmax.reduceat(ai, starts)}
    ranks = _outliers(pd.Series(per_kernel["y"], index=index), low=True) \
        | _outliers(pd.Series(per_kernel["lo"], index=index), low=True) \
        | _outliers(pd.Series(per_kernel["hi"], index=index), low=False)
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


@dataclass(frozen=True)
class TextLayout:
    """Every text of one plot size: roof label spots (data x, data y, Vega angle; None when no room), rank label
    rows (rank, text, x, y: a group's row carries its first rank), leader rows (rank, x, y, x2, y2: from the
    point's edge to the text) and the ranks whose number is on the plot (alone or in a group's label)."""

    roof_spots: list[tuple[float, float, float] | None]
    rank_rows: list[dict[str, Any]]
    leader_rows: list[dict[str, Any]] = field(default_factory=list)
    labelled: frozenset[int] = frozenset()


def marker_radius(sizes: np.ndarray) -> np.ndarray:
    """The radius of a mark of area `sizes` (px²) as drawn: a circle's."""
    return np.sqrt(np.asarray(sizes, dtype=float) / math.pi)


def coincident_clusters(px: np.ndarray, py: np.ndarray, levels: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """A cluster id per point: a point closer to a cluster's first (largest) point of its level than the smaller
    mark's drawn radius (one hides the other) joins it; every other point starts a cluster of its own. Not
    transitive: a chain of near points is not one spot."""
    radius = marker_radius(sizes).tolist()
    cell = 2 * max([*radius, 1.0])
    xs, ys, lv = px.tolist(), py.tolist(), list(levels)
    cluster = list(range(len(xs)))
    seeds: dict[tuple[Any, int, int], list[int]] = {}
    for i in sorted(range(len(xs)), key=lambda k: (-radius[k], k)):  # largest marks seed first
        ci, cj = math.floor(xs[i] / cell), math.floor(ys[i] / cell)
        near = [j for di in (-1, 0, 1) for dj in (-1, 0, 1) for j in seeds.get((lv[i], ci + di, cj + dj), ())
                if math.hypot(xs[i] - xs[j], ys[i] - ys[j]) < min(radius[i], radius[j])]
        if near:
            cluster[i] = min(near, key=lambda j: (math.hypot(xs[i] - xs[j], ys[i] - ys[j]), j))  # the nearest
        else:
            seeds.setdefault((lv[i], ci, cj), []).append(i)
    return np.array(cluster, dtype=int)


def group_text(ranks: list[int]) -> str:
    """One label for kernels drawn on one spot: "1, 2"; a run of three or more "3–5"; else "1, 4 +2"."""
    ranks = sorted(ranks)
    if len(ranks) == 1:
        return str(ranks[0])
    if len(ranks) >= 3 and ranks[-1] - ranks[0] == len(ranks) - 1:
        return f"{ranks[0]}–{ranks[-1]}"
    if len(ranks) == 2:
        return f"{ranks[0]}, {ranks[1]}"
    return f"{ranks[0]}, {ranks[1]} +{len(ranks) - 2}"


@dataclass(frozen=True)
class _Spots:
    """Which drawn points share a spot: the cluster of each point, whether another kernel's point is on it
    (`shared`) and whether one at least as large covers it (`hidden`), each kernel's spots, and the kernels whose
    spots are the same at every level (`members`, by spot set); per kernel, the kernels its label names (`group`:
    those whose spots are all its own and all shared, else itself) and its points in the order they are tried
    (`mine`: visible ones first, then rightmost first). The same for every layout of one plot size."""

    ranks: np.ndarray
    cluster: np.ndarray
    shared: np.ndarray
    hidden: np.ndarray
    spots_of: dict[int, frozenset[int]]
    members: dict[frozenset[int], list[int]]
    group: dict[int, list[int]]
    mine: dict[int, np.ndarray]


def _spots(px: np.ndarray, py: np.ndarray, points: pd.DataFrame | dict[str, np.ndarray], sizes: np.ndarray) -> _Spots:
    ranks = np.asarray(points["rank"])
    levels = np.asarray(points["level"]) if "level" in points else np.zeros(len(ranks))
    cluster = coincident_clusters(px, py, levels, sizes)
    span = int(ranks.max() - ranks.min()) + 1 if len(ranks) else 1
    kernels_at = np.bincount(np.unique(cluster * span + (ranks - ranks.min() if len(ranks) else ranks)) // span,
                             minlength=len(ranks))  # cluster id -> how many kernels share it
    shared = kernels_at[cluster] > 1
    hidden = np.zeros(len(ranks), dtype=bool)
    for i in np.flatnonzero(shared):
        others = (cluster == cluster[i]) & (ranks != ranks[i])
        hidden[i] = bool((np.asarray(sizes)[others] >= sizes[i]).any())
    by_rank = np.argsort(ranks, kind="stable")
    kernels, starts = np.unique(ranks[by_rank], return_index=True)
    clusters, bounds = cluster[by_rank].tolist(), [*starts.tolist(), len(ranks)]
    spots_of = {int(r): frozenset(clusters[bounds[k]:bounds[k + 1]]) for k, r in enumerate(kernels.tolist())}
    members: dict[frozenset[int], list[int]] = {}
    for rank, spots in spots_of.items():
        members.setdefault(spots, []).append(rank)
    all_shared = np.bincount(cluster, weights=~shared, minlength=len(ranks)) == 0  # by cluster id
    group = {rank: members[spots] if all(all_shared[c] for c in spots) else [rank] for rank, spots in spots_of.items()}
    order = np.lexsort((-px, hidden, ranks))  # by rank, its visible points first, then rightmost point first
    bounds = np.searchsorted(ranks[order], [*spots_of, np.inf])
    mine = {rank: order[bounds[k]:bounds[k + 1]] for k, rank in enumerate(spots_of)}
    return _Spots(ranks, cluster, shared, hidden, spots_of, members, group, mine)


def point_columns(points: pd.DataFrame) -> dict[str, np.ndarray]:
    """The columns of `points` that `layout_texts` reads, as arrays: what the page's plot sizes share (taking a
    column of a frame costs more than laying out the few labels it holds)."""
    return {column: points[column].to_numpy() for column in ("rank", "ai", "flop_per_s", "level") if column in points}


def layout_texts(plot: Plot, segments: list[dict[str, Any]], roof_texts: list[str],
                 points: pd.DataFrame | dict[str, np.ndarray], sizes: np.ndarray,
                 only: frozenset[int] | None = None) -> TextLayout:
    """Roof labels, then rank numbers in rank order (`TextLayout`).

    `points` are the drawn points on scale (rank, ai, flop_per_s, and level where kernels' points may coincide);
    `sizes` their symbol areas. Kernels whose points all coincide, level by level, get one label naming them all,
    placed by the first; a kernel whose point lies under another kernel's mark is labelled beside its other points
    first. A number with no room beside its points may go further off with a leader (placement.place_rank_leader).
    Where a kernel still has no number but shares a spot with a numbered one, the texts are laid out again with the
    other's label at that spot naming both ("2, 21"), kept when it numbers more kernels.
    Plain arrays and lists, no frames: the page lays its labels out once per plot size it may show (`points` may be
    `point_columns` of the frame, taken once for all of them).
    `only`: the ranks to number (those numbered at the default size, for the page's other sizes): a rank outside it
    is not searched for, so a crowded chart's numbers with no room cost their search once, not once per size.
    """
    px, py = plot.to_px(np.asarray(points["ai"], dtype=float), np.asarray(points["flop_per_s"], dtype=float))
    radii = 0.62 * np.sqrt(sizes) + 1.5
    spots = _spots(px, py, points, sizes)
    board, roof_spots = _roofed(plot, segments, roof_texts, px, py, radii)
    wanted = set(spots.spots_of) if only is None else set(spots.spots_of) & only
    if not wanted:
        return TextLayout(roof_spots, [])
    first, trace = _laid_out(board.copy(), roof_spots, px, py, radii, spots, {}, only)
    guests = _guests(spots, wanted - first.labelled, first.labelled)
    if not guests:
        return first
    second, _ = _laid_out(board, roof_spots, px, py, radii, spots, guests, only, trace)
    return second if len(second.labelled) > len(first.labelled) else first


def _guests(spots: _Spots, unnumbered: set[int], numbered: frozenset[int]) -> dict[int, dict[int, list[int]]]:
    """For each kernel without a number that shares a spot with a numbered one: that kernel (the first by rank),
    the index of its point on the spot, and the kernels it is to name there. host -> {point -> guests}."""
    guests: dict[int, dict[int, list[int]]] = {}
    for rank in sorted(unnumbered):
        for i in np.flatnonzero((spots.ranks == rank) & spots.shared):
            on_spot = spots.cluster == spots.cluster[i]
            hosts = sorted(set(spots.ranks[on_spot].tolist()) & numbered - {rank})
            if hosts:
                point = int(np.flatnonzero(on_spot & (spots.ranks == hosts[0]))[0])
                guests.setdefault(hosts[0], {}).setdefault(point, []).append(rank)
                break
    return guests


def _roofed(plot: Plot, segments: list[dict[str, Any]], roof_texts: list[str], px: np.ndarray, py: np.ndarray,
            radii: np.ndarray) -> tuple[Board, list[tuple[float, float, float] | None]]:
    """A board holding the points and the roof labels, placed first (each roof needs one), and the labels' spots
    (data x, data y, Vega angle; None when no room). Both passes of `layout_texts` start from it."""
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
    return board, roof_spots


def _laid_out(board: Board, roof_spots: list[tuple[float, float, float] | None], px: np.ndarray, py: np.ndarray,
              radii: np.ndarray, spots: _Spots, guests: dict[int, dict[int, list[int]]],
              only: frozenset[int] | None = None, before: dict[int, RankSpot | None] | None = None,
              ) -> tuple[TextLayout, dict[int, RankSpot | None]]:
    """The rank numbers (those in `only`, when given) on `board` (points and roof labels: `_roofed`), in rank
    order; a host's spots with guests are tried first, with the guests' ranks in their text. Also where each rank's
    number went.

    `before`, the first layout's spots: where nothing a rank's search met there has gone (`_unchanged_around`: the
    board around it holds everything it held then, and more), its answer there stands. A rank that found no room
    then, and hosts nobody, finds none again: its search is skipped. One that found a spot takes it again when the
    spot is still free: every spot tried before it was blocked then by something still there. A rank that found no
    room then, near something that has gone since, tries only the spots near what has gone (`place_rank_leader`'s
    `near`): the others are blocked by what blocked them then. Where the first layout is unchanged, the second
    costs a free test per number, not a search."""
    plot = board.plot
    rows, leaders, labelled = [], [], set()
    done: set[int] = set()
    trace: dict[int, RankSpot | None] = {}
    gone: list[tuple[float, float, float, float]] = []  # hulls of the first layout's texts not placed alike here
    for rank in spots.spots_of:  # in rank order
        if rank in done or (only is not None and rank not in only):
            continue
        group = spots.group[rank]
        done.update(group)
        mine = spots.mine[rank]
        hosted = guests.get(rank, {})
        text = group_text(group)
        spot, attempts, near = None, [mine], None
        if hosted:
            attempts = [[i for i in mine if i in hosted], [i for i in mine if i not in hosted]]
        elif before is not None and rank in before \
                and _unchanged_around(gone, px[mine], py[mine], radii[mine], text):
            # none of what the first layout's search met has moved: no room again, or the same spot if still free
            if before[rank] is None:
                attempts = []
            elif _take_again(board, before[rank]):
                spot, attempts = before[rank], []
        elif before is not None and rank in before and before[rank] is None:
            near = gone  # no room in the first layout: only spots near what has moved since may have some now
        for tried in attempts:
            # the spots naming guests first, with a leader if need be, then the kernel's other spots
            texts = [group_text([*group, *hosted[i]]) if i in hosted else text for i in tried]
            spot = place_rank_leader(board, text, list(zip(px[tried], py[tried], radii[tried])), RANK_FONT, texts,
                                     near)
            if spot is not None:
                labelled.update(hosted.get(int(tried[spot.anchor]), []))
                break
        trace[rank] = spot
        if before is not None and before.get(rank) is not None and before[rank] != spot:
            gone.extend(_hulls(before[rank]))
        if spot is None:
            continue
        labelled.update(group)
        x, y = plot.to_data(spot.x, spot.y)
        rows.append({"rank": rank, "text": spot.text, "x": x, "y": y})
        if spot.leader is not None:
            (x0, y0), (x1, y1) = plot.to_data(*spot.leader[:2]), plot.to_data(*spot.leader[2:])
            leaders.append({"rank": rank, "x": x0, "y": y0, "x2": x1, "y2": y1})
    return TextLayout(roof_spots, rows, leaders, frozenset(labelled)), trace


def _take_again(board: Board, spot: RankSpot) -> bool:
    """Take `spot` (its text's box, its leader's) where both are free on `board`, as `place_rank_leader` tests
    them; False, and nothing taken, where either is not."""
    w, h = text_size(spot.text, RANK_FONT, "bold")
    x0, y0, x1, y1 = spot.x - w / 2, spot.y - h / 2, spot.x + w / 2, spot.y + h / 2
    if not board._free_upright(x0, y0, x1, y1):
        return False
    if spot.leader is not None and not board._free_turned(_leader_corners(spot.leader), margin=0.0):
        return False
    board.take_upright(x0, y0, x1, y1)
    if spot.leader is not None:
        board.take(leader_box(spot.leader))
    return True


def _hulls(spot: RankSpot) -> list[tuple[float, float, float, float]]:
    """The hulls (x0, y0, x1, y1) of what a rank number took on the board: its text's box and its leader's."""
    w, h = text_size(spot.text, RANK_FONT, "bold")
    hulls = [(spot.x - w / 2, spot.y - h / 2, spot.x + w / 2, spot.y + h / 2)]
    if spot.leader is not None:
        x0, y0, x1, y1 = spot.leader
        hulls.append((min(x0, x1) - LEADER_WIDTH_PX, min(y0, y1) - LEADER_WIDTH_PX,
                      max(x0, x1) + LEADER_WIDTH_PX, max(y0, y1) + LEADER_WIDTH_PX))
    return hulls


def _unchanged_around(gone: list[tuple[float, float, float, float]], xs: np.ndarray, ys: np.ndarray,
                      radii: np.ndarray, text: str) -> bool:
    """Whether none of `gone` comes near any spot `place_rank_leader` may try for `text` by these points: beside
    them or a leader's farthest distance off, box and leader (a few px of slack on every side)."""
    if not gone:
        return True
    w, h = text_size(text, RANK_FONT, "bold")
    reach = max(LEADER_DISTANCES_PX) + 4.0
    x0, x1 = float((xs - radii).min()) - reach - w, float((xs + radii).max()) + reach + w
    y0, y1 = float((ys - radii).min()) - reach - h, float((ys + radii).max()) + reach + h
    return not any(gx0 <= x1 and gx1 >= x0 and gy0 <= y1 and gy1 >= y0 for gx0, gy0, gx1, gy1 in gone)


def place_texts(plot: Plot, segments: list[dict[str, Any]], roof_texts: list[str], points: pd.DataFrame,
                sizes: np.ndarray) -> tuple[list[tuple[float, float, float] | None], list[dict[str, Any]]]:
    """Roof label spots and rank label rows of `layout_texts` (without its leaders)."""
    layout = layout_texts(plot, segments, roof_texts, points, sizes)
    return layout.roof_spots, layout.rank_rows

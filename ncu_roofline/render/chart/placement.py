"""Where the chart's texts go: roof labels and rank numbers placed so that no two overlap and none sits on a point.

Placement is worked out in the plot's own pixels (log-log axes, the fixed plot size), then handed back to the
chart as data coordinates with each text centred on its anchor (`align: center`, `baseline: middle`), so what the
browser draws is the box computed here. Texts are boxes (rotated for memory roofs, which follow their diagonal at
the angle the plot's aspect gives them); a candidate is taken when its box is inside the plot and meets no point
and no text already placed. Roof labels go first (each roof needs one), then rank numbers in rank order; a rank
that finds no free place is left off the plot (its point still carries it in the tooltip) and counted.

A rank number that finds no room beside its points may sit further off with a leader line from the point's edge to
the text's box (`place_rank_leader`): the leader is an obstacle like a text (a thin turned box), taken only where it
meets no point, no text and no other leader, so later texts stay clear of it and the no-overlap rule covers it.

Cost grows with the texts, not their square: a candidate meets only the obstacles in its own cells of the board's
grid, and upright boxes are compared without the separating-axis test wherever rounding cannot change its answer
(Board), so every spot is the one that testing every pair in full would give.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Glyph box estimates for the sans-serif Chromium and vl-convert use (DejaVu/Liberation): generous, never tight.
CHAR_WIDTH_EM = {"bold": 0.68, "normal": 0.64}
LINE_HEIGHT_EM = 1.3
GAP_PX = 2.0


@dataclass(frozen=True)
class Plot:
    """The plot's pixel frame: width, height and the domains it shows, log-log unless `x_log` is False (the
    memory panel's x is a linear slot per kernel; its y is log like the roofline's)."""

    width: float
    height: float
    x_domain: tuple[float, float]
    y_domain: tuple[float, float]
    x_log: bool = True

    def _x(self, x: np.ndarray | float | tuple[float, float]) -> np.ndarray:
        return np.log10(x) if self.x_log else np.asarray(x, dtype=float)

    def to_px(self, x: np.ndarray | float, y: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        lx = self._x(self.x_domain)
        ly = np.log10(self.y_domain)
        px = self.width * (self._x(x) - lx[0]) / (lx[1] - lx[0])
        py = self.height * (1 - (np.log10(y) - ly[0]) / (ly[1] - ly[0]))
        return np.asarray(px, dtype=float), np.asarray(py, dtype=float)

    def to_data(self, px: float, py: float) -> tuple[float, float]:
        """Data coordinates of a pixel spot, to 7 significant digits: a thousandth of a pixel even on a 1920 px
        plot over ten decades, and half the digits in the spec, which holds a label layout per page size."""
        lx = self._x(self.x_domain)
        ly = np.log10(self.y_domain)
        x = lx[0] + px / self.width * (lx[1] - lx[0])
        x = 10 ** x if self.x_log else x
        y = 10 ** (ly[0] + (1 - py / self.height) * (ly[1] - ly[0]))
        return float(f"{x:.7g}"), float(f"{y:.7g}")

    def diagonal_degrees(self) -> float:
        """Screen angle (counter-clockwise, degrees) of a slope-1 line: a memory roof."""
        per_decade_x = self.width / math.log10(self.x_domain[1] / self.x_domain[0])
        per_decade_y = self.height / math.log10(self.y_domain[1] / self.y_domain[0])
        return math.degrees(math.atan2(per_decade_y, per_decade_x))


def text_size(text: str, font_size: float, weight: str = "normal") -> tuple[float, float]:
    return len(text) * font_size * CHAR_WIDTH_EM[weight] + GAP_PX, font_size * LINE_HEIGHT_EM


def box(cx: float, cy: float, w: float, h: float, degrees: float = 0.0) -> np.ndarray:
    """Corners of a w×h box centred at (cx, cy), turned `degrees` counter-clockwise on screen (y down)."""
    return boxes(np.array([cx], dtype=float), np.array([cy], dtype=float), w, h, degrees)[0]


def boxes(cx: np.ndarray, cy: np.ndarray, w: float | np.ndarray, h: float | np.ndarray,
          degrees: float = 0.0) -> np.ndarray:
    """`box` for many centres (and sizes) at once (k×4×2). Each corner is its centre plus two offsets, added in the same order
    for one box or many, so a box's corners do not depend on the company it is computed in; at 0 degrees they are
    exactly (cx ± w/2, cy ± h/2)."""
    a = math.radians(degrees)
    ux, uy = math.cos(a), -math.sin(a)  # along the text
    vx, vy = math.sin(a), math.cos(a)  # down the text
    out = np.empty((len(cx), 4, 2))
    for i, (sx, sy) in enumerate(_CORNERS):
        out[:, i, 0] = cx + sx * w / 2 * ux + sy * h / 2 * vx
        out[:, i, 1] = cy + sx * w / 2 * uy + sy * h / 2 * vy
    return out


_CORNERS = ((-1, -1), (1, -1), (1, 1), (-1, 1))  # top left, top right, bottom right, bottom left (upright)


def overlaps(a: np.ndarray, b: np.ndarray) -> bool:
    """Separating-axis test for two convex quadrilaterals (plain floats: numpy's per-call cost on four corners
    outweighs its arithmetic)."""
    return _overlap(a.tolist(), b.tolist())


def _overlap(qa: list[list[float]], qb: list[list[float]]) -> bool:
    for poly in (qa, qb):
        for i in range(len(poly)):
            (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % len(poly)]
            ax, ay = y0 - y1, x1 - x0  # the edge's normal
            pa = [x * ax + y * ay for x, y in qa]
            pb = [x * ax + y * ay for x, y in qb]
            if max(pa) <= min(pb) or max(pb) <= min(pa):
                return False
    return True


def _overlapping(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`overlaps` for pairs of quadrilaterals (p×4×2 each), vectorised over the pairs and the eight edges at once
    with the same arithmetic (each projection a product plus a product, as in `_overlap`)."""
    starts = np.concatenate([a, b], axis=1)  # p×8×2: a's edges, then b's
    ends = np.concatenate([np.roll(a, -1, axis=1), np.roll(b, -1, axis=1)], axis=1)
    ax = (starts[:, :, 1] - ends[:, :, 1])[:, :, None]  # each edge's normal, p×8×1
    ay = (ends[:, :, 0] - starts[:, :, 0])[:, :, None]
    pa = a[:, None, :, 0] * ax + a[:, None, :, 1] * ay  # p×8×4: every corner on every normal
    pb = b[:, None, :, 0] * ax + b[:, None, :, 1] * ay
    separated = (pa.max(axis=2) <= pb.min(axis=2)) | (pb.max(axis=2) <= pa.min(axis=2))
    return ~separated.any(axis=1)


def _upright(quads: np.ndarray) -> np.ndarray:
    """Which quads (k×4×2) are upright boxes with their corners in `box` order, exactly (`box` at 0 degrees)."""
    x, y = quads[:, :, 0], quads[:, :, 1]
    return ((y[:, 0] == y[:, 1]) & (x[:, 1] == x[:, 2]) & (y[:, 2] == y[:, 3]) & (x[:, 3] == x[:, 0])
            & (x[:, 0] < x[:, 1]) & (y[:, 1] < y[:, 2]))


# Why upright boxes need no separating-axis test (Board): for two upright boxes the test projects both on the x
# and y axes scaled by an edge's length, and a scaled comparison can turn an overlap into touching only where the
# two coordinates are a few ulps apart (2.2e-16 of the larger each). Hulls that overlap by more than this share of
# the largest coordinate on the board do overlap; closer calls take the full test, so every answer is the test's.
_ROUNDING_REACH = 1e-12
CELL_PX = 32.0  # the board's grid: a rank number or a disc spans one or two cells each way


class Board:
    """What is already on the plot: point discs and placed text boxes.

    Obstacles (a disc counts as the box around it) are kept three ways: in a grid of CELL_PX cells, so an upright
    candidate (a rank number) meets only the few obstacles near it, in plain Python; as growing arrays of quads and
    hulls, so many turned candidates (a roof label's spots) are tested at once in numpy; and with a flag saying
    which are upright boxes, whose overlap needs no separating-axis test. Both ways give exactly the answer of
    `overlaps` against every obstacle whose hull meets the candidate's.
    """

    def __init__(self, plot: Plot, discs: Sequence[tuple[float, float, float]]):
        self.plot = plot
        self.discs = np.array(discs, dtype=float).reshape(-1, 3)
        self.boxes: list[np.ndarray] = []
        x, y, r = self.discs[:, 0], self.discs[:, 1], self.discs[:, 2]
        n = len(self.discs)
        self._quads = np.empty((n + 64, 4, 2))
        self._hulls = np.empty((n + 64, 4))  # x0, y0, x1, y1
        self._upright = np.empty(n + 64, dtype=bool)
        self._quads[:n] = boxes(x, y, 2 * r, 2 * r)
        self._hulls[:n] = np.column_stack([x - r, y - r, x + r, y + r])
        self._upright[:n] = _upright(self._quads[:n])
        self._count = n
        self._hull_rows: list[tuple[float, float, float, float]] = [tuple(row) for row in self._hulls[:n].tolist()]
        self._upright_rows: list[bool] = self._upright[:n].tolist()
        self._cells: dict[tuple[int, int], list[int]] = {}
        for k, hull in enumerate(self._hull_rows):
            self._register(k, hull)
        self._reach = _ROUNDING_REACH * (1.0 + max(plot.width, plot.height,
                                                   float(np.abs(self._hulls[:n]).max()) if n else 0.0))

    @property
    def hulls(self) -> np.ndarray:
        """Each placed box's axis-aligned hull: x0, y0, x1, y1."""
        return self._hulls[len(self.discs):self._count]

    def _register(self, k: int, hull: tuple[float, float, float, float]) -> None:
        x0, y0, x1, y1 = hull
        for i in range(math.floor(x0 / CELL_PX), math.floor(x1 / CELL_PX) + 1):
            for j in range(math.floor(y0 / CELL_PX), math.floor(y1 / CELL_PX) + 1):
                self._cells.setdefault((i, j), []).append(k)

    def free(self, quad: np.ndarray, margin: float = 1.0) -> bool:
        """Whether `quad` lies inside the plot, `margin` from its edges, and meets no point and no placed text."""
        quad = np.asarray(quad, dtype=float)
        if _upright(quad[None])[0]:
            (x0, y0), (x1, y1) = quad[0].tolist(), quad[2].tolist()
            return self._free_upright(x0, y0, x1, y1, quad, margin)
        return self._free_turned(quad, margin)

    def _free_turned(self, quad: np.ndarray, margin: float) -> bool:
        """`free` for one turned box (a leader): the obstacles in its hull's cells, each by the separating-axis test
        (`first_free` on it alone gives the same answer, at numpy's per-call cost)."""
        rows = quad.tolist()
        xs, ys = [x for x, _ in rows], [y for _, y in rows]
        x0, y0, x1, y1 = min(xs), min(ys), max(xs), max(ys)
        if x0 < margin or y0 < margin or x1 > self.plot.width - margin or y1 > self.plot.height - margin:
            return False
        hulls, cells, seen = self._hull_rows, self._cells, set()
        j0, j1 = math.floor(y0 / CELL_PX), math.floor(y1 / CELL_PX) + 1
        for i in range(math.floor(x0 / CELL_PX), math.floor(x1 / CELL_PX) + 1):
            for j in range(j0, j1):
                for k in cells.get((i, j), ()):
                    if k in seen:
                        continue
                    seen.add(k)
                    hx0, hy0, hx1, hy1 = hulls[k]
                    if hx0 < x1 and hx1 > x0 and hy0 < y1 and hy1 > y0 and _overlap(rows, self._quads[k].tolist()):
                        return False
        return True

    def _free_upright(self, x0: float, y0: float, x1: float, y1: float, quad: np.ndarray | None = None,
                      margin: float = 1.0) -> bool:
        """`free` for the upright box x0..x1, y0..y1 (its corners `quad`, made only when a close call needs them)."""
        if x0 < margin or y0 < margin or x1 > self.plot.width - margin or y1 > self.plot.height - margin:
            return False
        hulls, upright, reach, cells = self._hull_rows, self._upright_rows, self._reach, self._cells
        j0, j1 = int(y0 // CELL_PX), int(y1 // CELL_PX) + 1
        for i in range(int(x0 // CELL_PX), int(x1 // CELL_PX) + 1):
            for j in range(j0, j1):
                for k in cells.get((i, j), ()):
                    hx0, hy0, hx1, hy1 = hulls[k]
                    if not (hx0 < x1 and hx1 > x0 and hy0 < y1 and hy1 > y0):
                        continue
                    if upright[k] and min(x1 - hx0, hx1 - x0, y1 - hy0, hy1 - y0) > reach:
                        return False
                    if quad is None:
                        quad = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
                    if overlaps(quad, self._quads[k]):
                        return False
        return True

    def first_free(self, quads: np.ndarray, margin: float = 1.0) -> int | None:
        """Index of the first of `quads` (k×4×2) that `free` takes, or None: the answer of trying them one by one."""
        free = np.flatnonzero(self.free_mask(quads, margin))
        return int(free[0]) if len(free) else None

    def free_mask(self, quads: np.ndarray, margin: float = 1.0) -> np.ndarray:
        """Which of `quads` (k×4×2) `free` takes, each against the board as it is (nothing is taken in between)."""
        out = np.zeros(len(quads), dtype=bool)
        if not len(quads):
            return out
        lo, hi = quads.min(axis=1), quads.max(axis=1)
        inside = np.flatnonzero((lo[:, 0] >= margin) & (lo[:, 1] >= margin) & (hi[:, 0] <= self.plot.width - margin)
                                & (hi[:, 1] <= self.plot.height - margin))
        if not len(inside):
            return out
        lo, hi = lo[inside], hi[inside]
        h = self._hulls[:self._count]
        # only obstacles whose hulls meet a candidate's can overlap it: first those near any candidate, then pairs
        near = np.flatnonzero((h[:, 0] < hi[:, 0].max()) & (h[:, 2] > lo[:, 0].min())
                              & (h[:, 1] < hi[:, 1].max()) & (h[:, 3] > lo[:, 1].min()))
        if not len(near):
            out[inside] = True
            return out
        hn = h[near]
        meet = ((hn[None, :, 0] < hi[:, None, 0]) & (hn[None, :, 2] > lo[:, None, 0])
                & (hn[None, :, 1] < hi[:, None, 1]) & (hn[None, :, 3] > lo[:, None, 1]))
        candidate, obstacle = np.nonzero(meet)
        blocked = np.zeros(len(inside), dtype=bool)
        if len(candidate):
            obstacle = near[obstacle]
            a_lo, a_hi, b = lo[candidate], hi[candidate], self._hulls[obstacle]
            gap = np.minimum(np.minimum(a_hi[:, 0] - b[:, 0], b[:, 2] - a_lo[:, 0]),
                             np.minimum(a_hi[:, 1] - b[:, 1], b[:, 3] - a_lo[:, 1]))
            mine = quads[inside[candidate]]
            hit = (gap > self._reach) & _upright(mine) & self._upright[obstacle]
            unsure = np.flatnonzero(~hit)
            if len(unsure):
                hit[unsure] = _overlapping(mine[unsure], self._quads[obstacle[unsure]])
            blocked[candidate[hit]] = True
        out[inside[~blocked]] = True
        return out

    def take(self, quad: np.ndarray) -> None:
        quad = np.asarray(quad, dtype=float)
        k = self._count
        if k == len(self._quads):
            self._quads = np.concatenate([self._quads, np.empty_like(self._quads)])
            self._hulls = np.concatenate([self._hulls, np.empty_like(self._hulls)])
            self._upright = np.concatenate([self._upright, np.empty_like(self._upright)])
        self.boxes.append(quad)
        self._quads[k] = quad
        self._hulls[k] = np.concatenate([quad.min(axis=0), quad.max(axis=0)])
        self._upright[k] = _upright(quad[None])[0]
        hull = tuple(self._hulls[k].tolist())
        self._hull_rows.append(hull)
        self._upright_rows.append(bool(self._upright[k]))
        self._register(k, hull)
        self._reach = max(self._reach, _ROUNDING_REACH * (1.0 + max(abs(v) for v in hull)))
        self._count = k + 1


def place_roof_label(board: Board, text: str, start: tuple[float, float], end: tuple[float, float],
                     font_size: float, prefer_end: bool) -> tuple[float, float, float] | None:
    """Centre (px, py) and screen angle of a label lying just above the segment start→end (pixels), or None.

    Candidates run along the segment from the preferred end; each sits half a text height above the line (then,
    when no spot above is free, below it). All are tested at once: `Board.first_free`.
    """
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    if length < 1:
        return None
    degrees = math.degrees(math.atan2(y0 - y1, x1 - x0))
    w, h = text_size(text, font_size, "bold")
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    nx, ny = uy, -ux  # the side above the line on screen
    if ny > 0:
        nx, ny = -nx, -ny
    steps = np.linspace(0.97, 0.03, 48) if prefer_end else np.linspace(0.03, 0.97, 48)
    along = steps * length
    along = along[(along >= w / 2) & (along <= length - w / 2)]
    offsets = np.repeat([h / 2 + 2, -(h / 2 + 2)], len(along))  # above the line first, then below it
    along = np.tile(along, 2)
    cx, cy = x0 + ux * along + nx * offsets, y0 + uy * along + ny * offsets
    quads = boxes(cx, cy, w, h, degrees)
    first = board.first_free(quads) if len(quads) else None
    if first is None:
        return None
    board.take(quads[first])
    return float(cx[first]), float(cy[first]), degrees


def place_rank(board: Board, text: str, anchors: Sequence[tuple[float, float, float]],
               font_size: float) -> tuple[float, float] | None:
    """Centre of a rank number beside one of its kernel's points (px, py, radius), or None when all are taken."""
    w, h = text_size(text, font_size, "bold")
    half_w, half_h = w / 2, h / 2
    for cx, cy, r in anchors:
        cx, cy, r = float(cx), float(cy), float(r)  # plain floats: the same arithmetic, a third of the cost
        for distance in (1.0, 5.0):
            d = r + distance
            for dx, dy in ((d + w / 2, 0), (0, -(d + h / 2)), (-(d + w / 2), 0), (0, d + h / 2),
                           (d + w / 2 - 2, -(d + h / 2 - 2)), (-(d + w / 2 - 2), -(d + h / 2 - 2)),
                           (d + w / 2 - 2, d + h / 2 - 2), (-(d + w / 2 - 2), d + h / 2 - 2)):
                x, y = cx + dx, cy + dy
                # the corners `box(x, y, w, h)` has, exactly (at 0 degrees they are the centre ± half the size)
                if board._free_upright(x - half_w, y - half_h, x + half_w, y + half_h):
                    board.take(box(x, y, w, h))
                    return x, y
    return None


LEADER_DISTANCES_PX = (12.0, 20.0, 32.0, 48.0)  # how far from its point's edge a displaced rank number may go
LEADER_GAP_PX = 2.0  # between a leader's end and its text's box
LEADER_WIDTH_PX = 2.0  # the room a leader takes on the board (it is drawn thinner)


@dataclass(frozen=True)
class RankSpot:
    """Where a rank number went: its centre (px) and, when it sits away from its point, the leader line from the
    point's edge to the text's box (x0, y0, x1, y1 in px)."""

    x: float
    y: float
    leader: tuple[float, float, float, float] | None = None
    anchor: int = 0  # which of the anchors it sits by
    text: str = ""  # the text it took there


def leader_segment(anchor: tuple[float, float, float], centre: tuple[float, float], w: float,
                   h: float) -> tuple[float, float, float, float] | None:
    """The leader from the edge of the point's box (centre ± r) to LEADER_GAP_PX short of the text's w×h box, along
    the line between their centres; None when that leaves less than 2 px to draw."""
    (cx, cy, r), (x, y) = anchor, centre
    dx, dy = x - cx, y - cy
    length = math.hypot(dx, dy)
    if length == 0:
        return None
    ux, uy = dx / length, dy / length
    start = r / max(abs(ux), abs(uy))  # where the ray leaves the point's box
    into_box = min(w / 2 / abs(ux) if ux else math.inf, h / 2 / abs(uy) if uy else math.inf)
    end = length - into_box - LEADER_GAP_PX
    if end - start < 2.0:
        return None
    return cx + ux * start, cy + uy * start, cx + ux * end, cy + uy * end


def leader_box(segment: tuple[float, float, float, float], width: float = LEADER_WIDTH_PX) -> np.ndarray:
    """The board's box for a leader: the segment widened to `width`, turned along it."""
    x0, y0, x1, y1 = segment
    length = math.hypot(x1 - x0, y1 - y0)
    return box((x0 + x1) / 2, (y0 + y1) / 2, length, width, math.degrees(math.atan2(y0 - y1, x1 - x0)))


def place_rank_leader(board: Board, text: str, anchors: Sequence[tuple[float, float, float]], font_size: float,
                      texts: Sequence[str] | None = None) -> RankSpot | None:
    """`place_rank`, then, where no spot beside a point is free, a spot LEADER_DISTANCES_PX further off with a leader
    back to its point: nearest first, each anchor in turn, the eight directions of `place_rank`. A spot is taken
    when its box and its leader are both free; both go on the board. None when no spot is free.

    `texts`, one per anchor, says a different text at some anchors (the ranks of other kernels on that spot); the
    spot says which anchor and text it took.

    The first anchor's spots are tried one by one (most numbers go there); the rest, all spots of the other anchors
    and of every leader distance, are tested at once (`Board.free_mask`: nothing is taken until a spot is chosen,
    so the first free one in that order is the one trying them one by one finds); the free ones' leaders are then
    tested at once too: a number with no room costs two vectorised tests, not a few hundred small ones."""
    texts = list(texts) if texts is not None else [text] * len(anchors)
    if not len(anchors):
        return None
    spot = place_rank(board, texts[0], [anchors[0]], font_size)
    if spot is not None:
        return RankSpot(*spot, anchor=0, text=texts[0])
    sizes = [text_size(t, font_size, "bold") for t in texts]
    spots: list[tuple[float, float, int, bool]] = []  # centre, anchor, with a leader
    for index, (cx, cy, r) in enumerate(anchors):  # place_rank's spots of the other anchors, in its order
        if index == 0:
            continue
        cx, cy, r = float(cx), float(cy), float(r)
        w, h = sizes[index]
        for distance in (1.0, 5.0):
            d = r + distance
            for dx, dy in ((d + w / 2, 0), (0, -(d + h / 2)), (-(d + w / 2), 0), (0, d + h / 2),
                           (d + w / 2 - 2, -(d + h / 2 - 2)), (-(d + w / 2 - 2), -(d + h / 2 - 2)),
                           (d + w / 2 - 2, d + h / 2 - 2), (-(d + w / 2 - 2), d + h / 2 - 2)):
                spots.append((cx + dx, cy + dy, index, False))
    for distance in LEADER_DISTANCES_PX:
        for index, (cx, cy, r) in enumerate(anchors):
            cx, cy, r = float(cx), float(cy), float(r)
            half_w, half_h = sizes[index][0] / 2, sizes[index][1] / 2
            d = r + distance
            for dx, dy in ((d + half_w, 0), (0, -(d + half_h)), (-(d + half_w), 0), (0, d + half_h),
                           (d + half_w, -(d + half_h)), (-(d + half_w), -(d + half_h)),
                           (d + half_w, d + half_h), (-(d + half_w), d + half_h)):
                spots.append((cx + dx, cy + dy, index, True))
    corners = []
    for x, y, index, _ in spots:  # the corners place_rank hands `_free_upright`, in `box` order
        half_w, half_h = sizes[index][0] / 2, sizes[index][1] / 2
        x0, y0, x1, y1 = x - half_w, y - half_h, x + half_w, y + half_h
        corners.append(((x0, y0), (x1, y0), (x1, y1), (x0, y1)))
    free = np.flatnonzero(board.free_mask(np.array(corners, dtype=float).reshape(-1, 4, 2))).tolist()
    if not free:
        return None
    first = free[0]
    if not spots[first][3]:  # beside another anchor, no leader
        x, y, index, _ = spots[first]
        board.take(box(x, y, *sizes[index]))
        return RankSpot(x, y, anchor=index, text=texts[index])
    tried = []  # the free spots with a leader to draw, in order, and their leaders' boxes, all tested at once
    for i in free:
        x, y, index, _ = spots[i]
        segment = leader_segment(tuple(float(v) for v in anchors[index]), (x, y), *sizes[index])
        if segment is not None:
            tried.append((i, segment))
    if not tried:
        return None
    lines = np.array([_leader_corners(segment) for _, segment in tried], dtype=float)
    for k in np.flatnonzero(board.free_mask(lines, margin=0.0)).tolist():
        i, segment = tried[k]
        x, y, index, _ = spots[i]
        board.take(box(x, y, *sizes[index]))
        board.take(leader_box(segment))
        return RankSpot(x, y, segment, anchor=index, text=texts[index])
    return None


def _leader_corners(segment: tuple[float, float, float, float]) -> list[tuple[float, float]]:
    """`leader_box(segment)` in plain floats: the same operations in the same order as `boxes`, so the same corners
    (tests/test_placement.py checks)."""
    x0, y0, x1, y1 = segment
    w, h = math.hypot(x1 - x0, y1 - y0), LEADER_WIDTH_PX
    a = math.radians(math.degrees(math.atan2(y0 - y1, x1 - x0)))
    ux, uy, vx, vy = math.cos(a), -math.sin(a), math.sin(a), math.cos(a)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return [(cx + sx * w / 2 * ux + sy * h / 2 * vx, cy + sx * w / 2 * uy + sy * h / 2 * vy) for sx, sy in _CORNERS]

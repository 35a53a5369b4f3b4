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

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Glyph box estimates for the sans-serif Chromium and vl-convert use (DejaVu/Liberation): generous, never tight.
CHAR_WIDTH_EM = {"bold": 0.68, "normal": 0.64}
LINE_HEIGHT_EM = 1.3
GAP_PX = 2.0
_ALONG = {True: np.linspace(0.97, 0.03, 48), False: np.linspace(0.03, 0.97, 48)}  # a roof label's 48 places, by end


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

    @functools.cached_property
    def _domain_logs(self) -> tuple[np.ndarray, np.ndarray]:
        """The domains as the axes scale them (x's log unless linear, y's log): worked out once per plot, not per
        text placed (a frozen dataclass's cached property is kept outside its fields)."""
        return self._x(self.x_domain), np.log10(self.y_domain)

    def to_px(self, x: np.ndarray | float, y: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        lx, ly = self._domain_logs
        px = self.width * (self._x(x) - lx[0]) / (lx[1] - lx[0])
        py = self.height * (1 - (np.log10(y) - ly[0]) / (ly[1] - ly[0]))
        return np.asarray(px, dtype=float), np.asarray(py, dtype=float)

    def to_data(self, px: float, py: float) -> tuple[float, float]:
        """Data coordinates of a pixel spot, to 7 significant digits: a thousandth of a pixel even on a 1920 px
        plot over ten decades, and half the digits in the spec, which holds a label layout per page size."""
        lx, ly = self._domain_logs
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
    # corner (sx, sy) at cx + sx * w / 2 * ux + sy * h / 2 * vx: the same floats as sx * (w / 2 * ux) for sx = ±1
    w2, h2, cx, cy = (np.asarray(v, dtype=float).reshape(-1, 1) for v in (w / 2, h / 2, cx, cy))
    return np.stack([cx + _SX * (w2 * ux) + _SY * (h2 * vx), cy + _SX * (w2 * uy) + _SY * (h2 * vy)], axis=-1)


_CORNERS = ((-1, -1), (1, -1), (1, 1), (-1, 1))  # top left, top right, bottom right, bottom left (upright)
_SX, _SY = np.array(_CORNERS, dtype=float).T


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

    Obstacles (a disc counts as the box around it) are kept in a grid of CELL_PX cells, so a candidate meets only
    the few obstacles near it, each by its hull first, then (a turned box, or a close call) by the separating-axis
    test on plain floats; with a flag saying which are upright boxes, whose overlap needs no separating-axis test;
    and as a growing array of hulls, so that many upright candidates (a rank number's spots) are cleared at once of
    those an upright obstacle certainly blocks (`blocked`). Every answer is that of `overlaps` against every
    obstacle whose hull meets the candidate's.
    """

    def __init__(self, plot: Plot, discs: Sequence[tuple[float, float, float]]):
        self.plot = plot
        self.discs = np.array(discs, dtype=float).reshape(-1, 3)
        x, y, r = self.discs[:, 0], self.discs[:, 1], self.discs[:, 2]
        n = len(self.discs)
        quads = boxes(x, y, 2 * r, 2 * r)
        self._hulls = np.empty((n + 64, 4))  # x0, y0, x1, y1
        self._upright = np.empty(n + 64, dtype=bool)
        self._hulls[:n] = np.column_stack([x - r, y - r, x + r, y + r])
        self._upright[:n] = _upright(quads)
        self._count = n
        self._hull_rows: list[Sequence[float]] = self._hulls[:n].tolist()
        self._upright_rows: list[bool] = self._upright[:n].tolist()
        # an upright box's corners are its hull's (`_quad`): only turned ones are kept
        self._quad_rows: list[list[list[float]] | None] = [None if up else quads[k].tolist()
                                                           for k, up in enumerate(self._upright_rows)]
        self._cells: dict[tuple[int, int], list[int]] = {}
        cells = np.floor(self._hulls[:n] / CELL_PX).astype(int).tolist()  # math.floor's cells, at once
        for k, (i0, j0, i1, j1) in enumerate(cells):
            for i in range(i0, i1 + 1):
                for j in range(j0, j1 + 1):
                    self._cells.setdefault((i, j), []).append(k)
        self._reach = _ROUNDING_REACH * (1.0 + max(plot.width, plot.height,
                                                   float(np.abs(self._hulls[:n]).max()) if n else 0.0))

    def copy(self) -> Board:
        """A board holding what this one holds, to take more on without changing this one (a second layout starts
        where the first began: points and roof labels)."""
        other = object.__new__(Board)
        other.__dict__.update(self.__dict__)
        other._hulls, other._upright = self._hulls.copy(), self._upright.copy()
        other._quad_rows, other._hull_rows = list(self._quad_rows), list(self._hull_rows)
        other._upright_rows = list(self._upright_rows)
        other._cells = {cell: list(ks) for cell, ks in self._cells.items()}
        return other

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
            return self._free_upright(x0, y0, x1, y1, margin)
        return self._free_turned(quad.tolist(), margin)

    def _free_turned(self, rows: Sequence[Sequence[float]], margin: float) -> bool:
        """`free` for one turned box, its corners in plain floats: the obstacles in its hull's cells, each by the
        separating-axis test."""
        xs, ys = [x for x, _ in rows], [y for _, y in rows]
        x0, y0, x1, y1 = min(xs), min(ys), max(xs), max(ys)
        if x0 < margin or y0 < margin or x1 > self.plot.width - margin or y1 > self.plot.height - margin:
            return False
        hulls, quads, cells, seen = self._hull_rows, self._quad_rows, self._cells, set()
        j0, j1 = math.floor(y0 / CELL_PX), math.floor(y1 / CELL_PX) + 1
        for i in range(math.floor(x0 / CELL_PX), math.floor(x1 / CELL_PX) + 1):
            for j in range(j0, j1):
                for k in cells.get((i, j), ()):
                    if k in seen:
                        continue
                    seen.add(k)
                    hx0, hy0, hx1, hy1 = hulls[k]
                    if hx0 < x1 and hx1 > x0 and hy0 < y1 and hy1 > y0 \
                            and _overlap(rows, quads[k] or [[hx0, hy0], [hx1, hy0], [hx1, hy1], [hx0, hy1]]):
                        return False
        return True

    def _free_upright(self, x0: float, y0: float, x1: float, y1: float, margin: float = 1.0) -> bool:
        """`free` for the upright box x0..x1, y0..y1."""
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
                    if upright[k] and x1 - hx0 > reach and hx1 - x0 > reach and y1 - hy0 > reach \
                            and hy1 - y0 > reach:
                        return False
                    if _overlap([[x0, y0], [x1, y0], [x1, y1], [x0, y1]],
                                self._quad_rows[k] or [[hx0, hy0], [hx1, hy0], [hx1, hy1], [hx0, hy1]]):
                        return False
        return True

    def blocked(self, x0: np.ndarray, y0: np.ndarray, x1: np.ndarray, y1: np.ndarray,
                margin: float = 1.0) -> np.ndarray:
        """Which upright boxes x0..x1, y0..y1 `_free_upright` certainly refuses: outside the plot, or over an upright
        obstacle by more than the rounding reach each way. The others may be free: `_free_upright` says."""
        out = (x0 < margin) | (y0 < margin) | (x1 > self.plot.width - margin) | (y1 > self.plot.height - margin)
        h = self._hulls[:self._count]
        near = np.flatnonzero((h[:, 0] < x1.max()) & (h[:, 2] > x0.min()) & (h[:, 1] < y1.max())
                              & (h[:, 3] > y0.min()) & self._upright[:self._count])
        if len(near):
            hx0, hy0, hx1, hy1 = h[near].T
            reach = self._reach
            out |= ((x1[:, None] - hx0 > reach) & (hx1 - x0[:, None] > reach) & (y1[:, None] - hy0 > reach)
                    & (hy1 - y0[:, None] > reach)).any(axis=1)
        return out

    def first_free(self, quads: np.ndarray, margin: float = 1.0) -> int | None:
        """Index of the first of `quads` (k×4×2) that `free` takes, or None: the answer of trying them one by one,
        each against the obstacles in its cells of the grid (in a crowd most spots meet an obstacle at once)."""
        start = 0  # the first 8 spots made plain floats first, the rest only if need be (a roof label has 96)
        for stop in (min(len(quads), 8), len(quads)):
            chunk, upright = quads[start:stop], _upright(quads[start:stop]).tolist()
            for i, rows in enumerate(chunk.tolist(), start=start):
                if upright[i - start]:
                    (x0, y0), _, (x1, y1), _ = rows
                    if self._free_upright(x0, y0, x1, y1, margin):
                        return i
                elif self._free_turned(rows, margin):
                    return i
            start = stop
        return None

    def take_upright(self, x0: float, y0: float, x1: float, y1: float) -> None:
        """`take(box(...))` for the upright box x0..x1, y0..y1 (x0 < x1, y0 < y1), from plain floats: `box` at
        0 degrees has exactly these corners (a rank number's box, taken once per number on each page size)."""
        self._add(None, (x0, y0, x1, y1), True)

    def take(self, quad: np.ndarray) -> None:
        quad = np.asarray(quad, dtype=float)
        hull = tuple(np.concatenate([quad.min(axis=0), quad.max(axis=0)]).tolist())
        upright = bool(_upright(quad[None])[0])
        self._add(None if upright else quad.tolist(), hull, upright)

    def _add(self, rows: list[list[float]] | None, hull: Sequence[float], upright: bool) -> None:
        k = self._count
        if k == len(self._hulls):
            self._hulls = np.concatenate([self._hulls, np.empty_like(self._hulls)])
            self._upright = np.concatenate([self._upright, np.empty_like(self._upright)])
        self._hulls[k], self._upright[k] = hull, upright
        self._quad_rows.append(rows)
        self._hull_rows.append(hull)
        self._upright_rows.append(upright)
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
    steps = _ALONG[bool(prefer_end)]
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
    size = text_size(text, font_size, "bold")
    spot = _place_beside(board, anchors, [size] * len(anchors))
    return None if spot is None else spot[:2]


def _place_beside(board: Board, anchors: Sequence[tuple[float, float, float]],
                  sizes: Sequence[tuple[float, float]]) -> tuple[float, float, int] | None:
    """The first free spot beside a point, anchor by anchor, the text at anchor i being sizes[i]: taken, and its
    centre and anchor returned; None when every one is taken. Sixteen spots per point: the eight directions at 1 px
    from its edge, then at 5 px."""
    free = board._free_upright
    for index, (cx, cy, r) in enumerate(anchors):
        cx, cy, r = float(cx), float(cy), float(r)  # plain floats: the same arithmetic, a third of the cost
        w, h = sizes[index]
        half_w, half_h = w / 2, h / 2
        for distance in (1.0, 5.0):
            d = r + distance
            for dx, dy in ((d + w / 2, 0), (0, -(d + h / 2)), (-(d + w / 2), 0), (0, d + h / 2),
                           (d + w / 2 - 2, -(d + h / 2 - 2)), (-(d + w / 2 - 2), -(d + h / 2 - 2)),
                           (d + w / 2 - 2, d + h / 2 - 2), (-(d + w / 2 - 2), d + h / 2 - 2)):
                x, y = cx + dx, cy + dy
                # the corners `box(x, y, w, h)` has, exactly (at 0 degrees they are the centre ± half the size)
                if free(x - half_w, y - half_h, x + half_w, y + half_h):
                    board.take_upright(x - half_w, y - half_h, x + half_w, y + half_h)
                    return x, y, index
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
                      texts: Sequence[str] | None = None,
                      near: Sequence[Sequence[float]] | None = None) -> RankSpot | None:
    """`place_rank`, then, where no spot beside a point is free, a spot LEADER_DISTANCES_PX further off with a leader
    back to its point: nearest first, each anchor in turn, the eight directions of `place_rank`. A spot is taken
    when its box and its leader are both free; both go on the board. None when no spot is free.

    `texts`, one per anchor, says a different text at some anchors (the ranks of other kernels on that spot); the
    spot says which anchor and text it took.

    The first anchor's spots are tried one by one (most numbers go there). The rest, all spots of the other anchors
    and of every leader distance, are worked out at once and cleared at once of those an upright obstacle
    certainly blocks (`Board.blocked`); what is left is tried one by one, in order, as before: a number with no room
    costs one vectorised test, not a hundred small ones, and lands where trying every spot one by one puts it.

    `near` (hulls x0, y0, x1, y1), the caller's word that those spots are taken whose box, leader and point meet
    none of these (what has moved since the same search found no room): only the others are tried."""
    texts = list(texts) if texts is not None else [text] * len(anchors)
    if not len(anchors):
        return None
    sizes = [text_size(t, font_size, "bold") for t in texts]
    beside = _place_beside(board, anchors[:1], sizes[:1])
    if beside is not None:
        return RankSpot(beside[0], beside[1], anchor=0, text=texts[0])
    a = np.asarray(anchors, dtype=float).reshape(-1, 3)
    dx, dy, index, leader, half_w, half_h = _spot_offsets(tuple(a[:, 2].tolist()), tuple(sizes))
    x, y = a[index, 0] + dx, a[index, 1] + dy  # each centre its point plus its offset, as in the one-by-one loops
    x0, y0, x1, y1 = x - half_w, y - half_h, x + half_w, y + half_h
    live = np.arange(len(x)) if near is None else np.flatnonzero(_reach_meets(anchors, index, x0, y0, x1, y1, near))
    if not len(live):
        return None
    live = live[~board.blocked(x0[live], y0[live], x1[live], y1[live])]
    rows = np.column_stack([x, y, x0, y0, x1, y1])
    for i in live.tolist():
        cx, cy, bx0, by0, bx1, by1 = rows[i].tolist()
        if not board._free_upright(bx0, by0, bx1, by1):
            continue
        k = int(index[i])
        if leader[i]:
            segment = leader_segment(tuple(float(v) for v in anchors[k]), (cx, cy), *sizes[k])
            if segment is None or not board._free_turned(_leader_corners(segment), margin=0.0):
                continue
        board.take_upright(bx0, by0, bx1, by1)
        if not leader[i]:
            return RankSpot(cx, cy, anchor=k, text=texts[k])
        board.take(leader_box(segment))
        return RankSpot(cx, cy, segment, anchor=k, text=texts[k])
    return None


def _reach_meets(anchors: Sequence[tuple[float, float, float]], index: np.ndarray, x0: np.ndarray, y0: np.ndarray,
                 x1: np.ndarray, y1: np.ndarray, hulls: Sequence[Sequence[float]], slack: float = 2.0) -> np.ndarray:
    """Which spots' reach meets one of `hulls`: the hull of the spot's box and its point's box (a leader runs
    between them, LEADER_WIDTH_PX wide), `slack` px wider each way."""
    a = np.asarray(anchors, dtype=float).reshape(-1, 3)[index]
    rx0, ry0 = np.minimum(x0, a[:, 0] - a[:, 2]) - slack, np.minimum(y0, a[:, 1] - a[:, 2]) - slack
    rx1, ry1 = np.maximum(x1, a[:, 0] + a[:, 2]) + slack, np.maximum(y1, a[:, 1] + a[:, 2]) + slack
    g = np.asarray(hulls, dtype=float).reshape(-1, 4)
    g = g[(g[:, 0] <= rx1.max()) & (g[:, 2] >= rx0.min()) & (g[:, 1] <= ry1.max()) & (g[:, 3] >= ry0.min())]
    return ((g[None, :, 0] <= rx1[:, None]) & (g[None, :, 2] >= rx0[:, None]) & (g[None, :, 1] <= ry1[:, None])
            & (g[None, :, 3] >= ry0[:, None])).any(axis=1)


@functools.lru_cache(maxsize=4096)
def _spot_offsets(radii: tuple[float, ...], sizes: tuple[tuple[float, float], ...]) -> tuple[np.ndarray, ...]:
    """The offsets from their points of the spots after the first anchor's: `_place_beside`'s spots of the other
    anchors, anchor by anchor, then the leader spots, distance by distance, anchor by anchor, in the eight
    directions; with each spot's anchor, leader flag and half sizes. The arithmetic of the one-by-one loops in
    arrays, each offset the same sum of the same terms (a sign flip is exact), so the same floats. They depend on
    the marks' radii and the texts only, the same at every page size and in both passes: worked out once."""
    r = np.array(radii)[:, None]
    wh = np.array(sizes, dtype=float).reshape(-1, 2)
    w, h = wh[:, 0:1], wh[:, 1:2]
    n = len(radii)
    d = r + np.array([[1.0, 5.0]])  # n×2: place_rank's two distances
    p, q = d + w / 2, d + h / 2
    beside = np.stack([p, p - 2, q, q - 2, np.zeros_like(p)], axis=2)  # n×2×5
    bx = beside[:, :, [0, 4, 0, 4, 1, 1, 1, 1]] * np.array([1, 1, -1, 1, 1, -1, 1, -1])  # n×2×8
    by = beside[:, :, [4, 2, 4, 2, 3, 3, 3, 3]] * np.array([1, -1, 1, 1, -1, -1, 1, 1])
    d = (r + np.array([LEADER_DISTANCES_PX])).T  # 4×n
    far = np.stack([d + w[:, 0] / 2, d + h[:, 0] / 2, np.zeros_like(d)], axis=2)  # 4×n×3
    lx = far[:, :, [0, 2, 0, 2, 0, 0, 0, 0]] * np.array([1, 1, -1, 1, 1, -1, 1, -1])  # 4×n×8
    ly = far[:, :, [2, 1, 2, 1, 1, 1, 1, 1]] * np.array([1, -1, 1, 1, -1, -1, 1, 1])
    anchor = np.arange(n)
    index = np.concatenate([np.repeat(anchor[1:], 16), np.tile(np.repeat(anchor, 8), len(LEADER_DISTANCES_PX))])
    leader = np.concatenate([np.zeros(16 * (n - 1), dtype=bool), np.ones(lx.size, dtype=bool)])
    out = (np.concatenate([bx[1:].ravel(), lx.ravel()]), np.concatenate([by[1:].ravel(), ly.ravel()]), index,
           leader, (w[:, 0] / 2)[index], (h[:, 0] / 2)[index])
    for array in out:
        array.flags.writeable = False  # shared by every call with these radii and texts
    return out


def _leader_corners(segment: tuple[float, float, float, float]) -> list[tuple[float, float]]:
    """`leader_box(segment)` in plain floats: the same operations in the same order as `boxes`, so the same corners
    (tests/test_placement.py checks)."""
    x0, y0, x1, y1 = segment
    w, h = math.hypot(x1 - x0, y1 - y0), LEADER_WIDTH_PX
    a = math.radians(math.degrees(math.atan2(y0 - y1, x1 - x0)))
    ux, uy, vx, vy = math.cos(a), -math.sin(a), math.sin(a), math.cos(a)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return [(cx + sx * w / 2 * ux + sy * h / 2 * vx, cy + sx * w / 2 * uy + sy * h / 2 * vy) for sx, sy in _CORNERS]

"""Where the chart's texts go: roof labels and rank numbers placed so that no two overlap and none sits on a point.

Placement is worked out in the plot's own pixels (log-log axes, the fixed plot size), then handed back to the
chart as data coordinates with each text centred on its anchor (`align: center`, `baseline: middle`), so what the
browser draws is the box computed here. Texts are boxes (rotated for memory roofs, which follow their diagonal at
the angle the plot's aspect gives them); a candidate is taken when its box is inside the plot and meets no point
and no text already placed. Roof labels go first (each roof needs one), then rank numbers in rank order; a rank
that finds no free place is left off the plot (its point still carries it in the tooltip) and counted.
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
    a = math.radians(degrees)
    ux, uy = math.cos(a), -math.sin(a)  # along the text
    vx, vy = math.sin(a), math.cos(a)  # down the text
    return np.array([[cx + sx * w / 2 * ux + sy * h / 2 * vx, cy + sx * w / 2 * uy + sy * h / 2 * vy]
                     for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])


def overlaps(a: np.ndarray, b: np.ndarray) -> bool:
    """Separating-axis test for two convex quadrilaterals (plain floats: numpy's per-call cost on four corners was
    most of the chart's layout time, which runs once per plot size of the page)."""
    qa, qb = a.tolist(), b.tolist()
    for poly in (qa, qb):
        for i in range(len(poly)):
            (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % len(poly)]
            ax, ay = y0 - y1, x1 - x0  # the edge's normal
            pa = [x * ax + y * ay for x, y in qa]
            pb = [x * ax + y * ay for x, y in qb]
            if max(pa) <= min(pb) or max(pb) <= min(pa):
                return False
    return True


class Board:
    """What is already on the plot: point discs and placed text boxes."""

    def __init__(self, plot: Plot, discs: Sequence[tuple[float, float, float]]):
        self.plot = plot
        self.discs = np.array(discs, dtype=float).reshape(-1, 3)
        self.boxes: list[np.ndarray] = []
        self.hulls = np.zeros((0, 4))  # each placed box's axis-aligned hull: x0, y0, x1, y1

    def free(self, quad: np.ndarray, margin: float = 1.0) -> bool:
        corners = quad.tolist()
        x_lo, x_hi = min(c[0] for c in corners), max(c[0] for c in corners)
        y_lo, y_hi = min(c[1] for c in corners), max(c[1] for c in corners)
        if x_lo < margin or y_lo < margin or x_hi > self.plot.width - margin or y_hi > self.plot.height - margin:
            return False
        if len(self.discs):
            d = self.discs
            near = d[(d[:, 0] + d[:, 2] > x_lo) & (d[:, 0] - d[:, 2] < x_hi)
                     & (d[:, 1] + d[:, 2] > y_lo) & (d[:, 1] - d[:, 2] < y_hi)]
            for cx, cy, r in near:
                if overlaps(quad, box(cx, cy, 2 * r, 2 * r)):
                    return False
        if not self.boxes:
            return True
        # only boxes whose hulls meet this one's can overlap it: the exact test runs on those alone
        h = self.hulls
        near_boxes = np.flatnonzero((h[:, 0] < x_hi) & (h[:, 2] > x_lo) & (h[:, 1] < y_hi) & (h[:, 3] > y_lo))
        return not any(overlaps(quad, self.boxes[i]) for i in near_boxes)

    def take(self, quad: np.ndarray) -> None:
        self.boxes.append(quad)
        self.hulls = np.vstack([self.hulls, np.concatenate([quad.min(axis=0), quad.max(axis=0)])])


def place_roof_label(board: Board, text: str, start: tuple[float, float], end: tuple[float, float],
                     font_size: float, prefer_end: bool) -> tuple[float, float, float] | None:
    """Centre (px, py) and screen angle of a label lying just above the segment start→end (pixels), or None.

    Candidates run along the segment from the preferred end; each sits half a text height above the line.
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
    for offset in (h / 2 + 2, -(h / 2 + 2)):  # above the line first, then below it
        for t in steps:
            along = t * length
            if along < w / 2 or along > length - w / 2:
                continue
            cx, cy = x0 + ux * along + nx * offset, y0 + uy * along + ny * offset
            quad = box(cx, cy, w, h, degrees)
            if board.free(quad):
                board.take(quad)
                return cx, cy, degrees
    return None


def place_rank(board: Board, text: str, anchors: Sequence[tuple[float, float, float]],
               font_size: float) -> tuple[float, float] | None:
    """Centre of a rank number beside one of its kernel's points (px, py, radius), or None when all are taken."""
    w, h = text_size(text, font_size, "bold")
    for cx, cy, r in anchors:
        for distance in (1.0, 5.0):
            d = r + distance
            for dx, dy in ((d + w / 2, 0), (0, -(d + h / 2)), (-(d + w / 2), 0), (0, d + h / 2),
                           (d + w / 2 - 2, -(d + h / 2 - 2)), (-(d + w / 2 - 2), -(d + h / 2 - 2)),
                           (d + w / 2 - 2, d + h / 2 - 2), (-(d + w / 2 - 2), d + h / 2 - 2)):
                quad = box(cx + dx, cy + dy, w, h)
                if board.free(quad):
                    board.take(quad)
                    return cx + dx, cy + dy
    return None

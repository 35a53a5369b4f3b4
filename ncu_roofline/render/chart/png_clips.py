"""The SVG handed to the PNG rasteriser with its clipping done per mark, not per layer: the same drawing, a third of
the work.

Vega clips every layer of the plot (`"clip": true`) with a group clip-path. resvg, which draws the PNG, renders a
clipped group into a layer as large as the group's bounds and masks it: about 0.1 CPU-s per full-plot layer at the
PNG's scale, 0.5 of the 0.8 CPU-s of a 40-kernel roofline PNG and 0.55 of the 0.65 of its instruction roofline.
Here each such group's clip is moved onto its contents, mark by mark (a clipped group of opaque-composited marks is
the composite of its marks clipped one by one):

- a mark whose bounds (a safe over-estimate: stroke and miter allowance, text as wide as 1.5 em a character) lie
  inside the clip rectangle is drawn unclipped; one wholly outside is left out (it drew nothing);
- a straight stroked segment that crosses the edge (a roof) becomes the filled polygon its stroke covers, cut to
  the rectangle: what the clip left of it;
- any other mark keeps the clip, as a group of its own (cheap: its bounds are small).

Only what is understood is rewritten: clip paths of one rectangle, marks placed by translations; anything else
keeps its clip. The SVG file written is the untouched one; this text only feeds `svg_to_png`.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
_TAG = "{" + SVG_NS + "}%s"
_TRANSLATE = re.compile(r"\s*translate\(\s*([-+\d.eE]+)(?:[\s,]+([-+\d.eE]+))?\s*\)\s*$")
_URL = re.compile(r"\s*url\(#([^)]+)\)\s*$")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_PATH_TOKEN = re.compile(r"[A-Za-z]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_SEGMENT = re.compile(r"\s*M\s*([-+\d.eE]+)[\s,]+([-+\d.eE]+)\s*L\s*([-+\d.eE]+)[\s,]+([-+\d.eE]+)\s*$")
_ARGS = {"M": 2, "L": 2, "T": 2, "H": 1, "V": 1, "C": 6, "S": 4, "Q": 4, "A": 7, "Z": 0}
TEXT_EM_PER_CHARACTER = 1.5  # wider than any glyph of Liberation Sans (its widest, "@" and the dashes, ~1 em)
MITER_ALLOWANCE = 5.0  # stroke widths a miter join may reach past a vertex (miter limit 10: 10 / 2)

Box = tuple[float, float, float, float]  # x0, y0, x1, y1
# Attributes resvg does not draw (accessibility: Vega writes each mark's tooltip as its aria-label); the PNG is
# byte-identical without them, and rasterising the SVG parses a third of the text.
UNDRAWN_ATTRIBUTES = frozenset({"aria-label", "aria-roledescription", "aria-hidden", "role"})


def lighter_clips(svg: str) -> str:
    """`svg` with the clipping of its layers moved onto their marks (module docstring); `svg` itself where it
    holds anything this does not read."""
    try:
        ET.register_namespace("", SVG_NS)
        ET.register_namespace("xlink", XLINK_NS)
        root = ET.fromstring(svg)
    except ET.ParseError:
        return svg
    rects = _clip_rects(root)
    parents = {child: parent for parent in root.iter() for child in parent}
    clipped = [e for e in root.iter() if _clip_id(e) in rects and e.tag == _TAG % "g" and "transform" not in e.attrib]
    if not clipped:
        return svg
    for element in root.iter():  # what only a screen reader reads: 3/5 of the roofline's text, none of its pixels
        for name in [name for name in element.attrib if name in UNDRAWN_ATTRIBUTES]:
            del element.attrib[name]
    defs = root.find(_TAG % "defs")
    if defs is None:
        defs = ET.SubElement(root, _TAG % "defs")
    rewriter = _Rewriter(defs, parents, rects)
    for group in clipped:
        if _clip_id(group) not in rects:
            continue
        rect = rects[_clip_id(group)]
        del group.attrib["clip-path"]
        rewriter.distribute(group, rect)
    return ET.tostring(root, encoding="unicode")


def _clip_id(element: ET.Element) -> str | None:
    match = _URL.match(element.get("clip-path", ""))
    return match.group(1) if match else None


def _clip_rects(root: ET.Element) -> dict[str, Box]:
    """Clip paths of one untransformed rectangle in user space: id -> box."""
    out: dict[str, Box] = {}
    for clip in root.iter(_TAG % "clipPath"):
        children = list(clip)
        if (len(children) != 1 or children[0].tag != _TAG % "rect" or clip.get("clipPathUnits", "userSpaceOnUse")
                != "userSpaceOnUse" or "transform" in clip.attrib or "transform" in children[0].attrib
                or "clip-path" in clip.attrib or "clip-path" in children[0].attrib):
            continue
        try:
            x, y = float(children[0].get("x", 0)), float(children[0].get("y", 0))
            w, h = float(children[0].get("width")), float(children[0].get("height"))
        except (TypeError, ValueError):
            continue
        if w > 0 and h > 0 and clip.get("id"):
            out[clip.get("id")] = (x, y, x + w, y + h)
    return out


def _translation(element: ET.Element) -> tuple[float, float] | None:
    """(dx, dy) of a transform that is one translation (or none); None for any other transform."""
    transform = element.get("transform")
    if transform is None:
        return 0.0, 0.0
    match = _TRANSLATE.match(transform)
    if not match:
        return None
    return float(match.group(1)), float(match.group(2) or 0.0)


class _Rewriter:
    def __init__(self, defs: ET.Element, parents: dict[ET.Element, ET.Element], rects: dict[str, Box]):
        self.defs, self.parents, self.rects = defs, parents, rects
        self.ids: dict[Box, str] = {}

    def clip_url(self, rect: Box) -> str:
        """A clip path of `rect` (made once per rectangle)."""
        if rect not in self.ids:
            name = f"png-clip{len(self.ids) + 1}"
            clip = ET.SubElement(self.defs, _TAG % "clipPath", {"id": name})
            ET.SubElement(clip, _TAG % "rect", {"x": repr(rect[0]), "y": repr(rect[1]),
                                                "width": repr(rect[2] - rect[0]), "height": repr(rect[3] - rect[1])})
            self.ids[rect] = name
            self.rects[name] = rect
        return f"url(#{self.ids[rect]})"

    def distribute(self, group: ET.Element, rect: Box) -> None:
        """Draw `group`'s children clipped to `rect` (in `group`'s user space), each as cheaply as it allows."""
        for child in list(group):
            if child.tag in (_TAG % "title", _TAG % "desc", _TAG % "defs"):
                continue
            shift = _translation(child)
            if child.tag == _TAG % "g" and shift is not None and _plain_group(child):
                inner = (rect[0] - shift[0], rect[1] - shift[1], rect[2] - shift[0], rect[3] - shift[1])
                if "clip-path" not in child.attrib:
                    self.distribute(child, inner)
                    continue
                own = self.rects.get(_clip_id(child))
                if own is not None:  # clipped again: by the overlap of the two rectangles, moved on in its turn
                    if not _inside(own, inner):
                        both = (max(own[0], inner[0]), max(own[1], inner[1]), min(own[2], inner[2]),
                                min(own[3], inner[3]))
                        if both[0] >= both[2] or both[1] >= both[3]:
                            group.remove(child)
                        else:
                            child.set("clip-path", self.clip_url(both))
                    continue
            box = self.bounds(child)
            if box is not None and _inside(box, rect):
                continue
            if box is not None and _apart(box, rect):
                group.remove(child)
                continue
            polygon = _segment_polygon(child, self.stroke_width(child), rect) if box is not None else None
            if polygon is not None:
                _fill_polygon(child, polygon, self.inherited(child, "stroke-opacity"))
                continue
            wrapper = ET.Element(_TAG % "g", {"clip-path": self.clip_url(rect)})
            group.insert(list(group).index(child), wrapper)  # in its place: the drawing order stays
            group.remove(child)
            wrapper.append(child)
            self.parents[wrapper], self.parents[child] = group, wrapper

    def inherited(self, element: ET.Element, name: str) -> str | None:
        node: ET.Element | None = element
        while node is not None:
            if name in node.attrib:
                return node.get(name)
            node = self.parents.get(node)
        return None

    def stroke_width(self, element: ET.Element) -> float:
        try:
            return float(self.inherited(element, "stroke-width") or 1.0)
        except ValueError:
            return float("inf")

    def bounds(self, element: ET.Element) -> Box | None:
        """A box holding everything `element` paints, in its parent's user space; None where unknown."""
        shift = _translation(element)
        if shift is None or "filter" in element.attrib or "mask" in element.attrib:
            return None
        tag = element.tag
        if tag == _TAG % "path":
            box = _path_box(element.get("d", ""))
        elif tag == _TAG % "line":
            try:
                xs = (float(element.get("x1", 0)), float(element.get("x2", 0)))
                ys = (float(element.get("y1", 0)), float(element.get("y2", 0)))
            except ValueError:
                return None
            box = (min(xs), min(ys), max(xs), max(ys))
        elif tag == _TAG % "rect":
            try:
                x, y = float(element.get("x", 0)), float(element.get("y", 0))
                box = (x, y, x + float(element.get("width", 0)), y + float(element.get("height", 0)))
            except ValueError:
                return None
        elif tag == _TAG % "text":
            return self.text_bounds(element, shift)
        else:
            return None
        if box is None:
            return None
        margin = MITER_ALLOWANCE * self.stroke_width(element) + 1.0
        return (box[0] + shift[0] - margin, box[1] + shift[1] - margin, box[2] + shift[0] + margin,
                box[3] + shift[1] + margin)

    def text_bounds(self, element: ET.Element, shift: tuple[float, float]) -> Box | None:
        if len(element) or any(name in element.attrib for name in ("x", "y", "dx", "dy", "rotate")):
            return None
        text = (element.text or "").strip()
        if not text:
            return (shift[0], shift[1], shift[0], shift[1])  # draws nothing
        size = self.inherited(element, "font-size")
        match = _NUMBER.match(size or "")
        if not match or not (size or "").strip().endswith(("px", match.group(0))):
            return None
        em = float(match.group(0))
        width = TEXT_EM_PER_CHARACTER * em * len(text)
        anchor = self.inherited(element, "text-anchor") or "start"
        left = {"start": 0.0, "middle": -width / 2, "end": -width}.get(anchor)
        if left is None:
            return None
        x, y = shift
        return (x + left - em, y - 1.5 * em, x + left + width + em, y + 1.5 * em)


def _plain_group(group: ET.Element) -> bool:
    """A group whose clip can be moved onto its children: no mask, filter or blend of its own."""
    return not any(name in group.attrib for name in ("mask", "filter", "style")) and group.get(
        "mix-blend-mode") is None


def _path_box(d: str) -> Box | None:
    """The box of a path's points and control points (arcs widened by twice their radius), absolute and relative
    commands alike; None for anything unexpected."""
    tokens = _PATH_TOKEN.findall(d)
    xs: list[float] = []
    ys: list[float] = []
    i, command, x, y, start = 0, None, 0.0, 0.0, (0.0, 0.0)
    while i < len(tokens):
        if tokens[i].isalpha():
            command = tokens[i]
            i += 1
            if command in "Zz":
                x, y = start
                continue
        if command is None or command.upper() not in _ARGS or command in "Zz":
            return None
        upper, relative = command.upper(), command.islower()
        n = _ARGS[upper]
        try:
            args = [float(t) for t in tokens[i:i + n]]
        except ValueError:
            return None
        if len(args) != n:
            return None
        i += n
        if upper == "H":
            x = args[0] + (x if relative else 0.0)
        elif upper == "V":
            y = args[0] + (y if relative else 0.0)
        elif upper == "A":
            reach = 2 * max(abs(args[0]), abs(args[1]))
            xs += [x - reach, x + reach]
            ys += [y - reach, y + reach]
            x, y = args[5] + (x if relative else 0.0), args[6] + (y if relative else 0.0)
            xs += [x - reach, x + reach]
            ys += [y - reach, y + reach]
            continue
        else:
            dx, dy = (x, y) if relative else (0.0, 0.0)
            xs += [v + dx for v in args[0::2]]
            ys += [v + dy for v in args[1::2]]
            x, y = args[-2] + dx, args[-1] + dy
            if upper == "M":
                start = (x, y)
                command = "l" if relative else "L"  # further pairs after a move are lines
            continue
        xs.append(x)
        ys.append(y)
    if not xs:
        return None
    return (min(xs), min(ys), max(xs), max(ys))


def _inside(box: Box, rect: Box) -> bool:
    return rect[0] <= box[0] and rect[1] <= box[1] and box[2] <= rect[2] and box[3] <= rect[3]


def _apart(box: Box, rect: Box) -> bool:
    return box[2] < rect[0] or box[0] > rect[2] or box[3] < rect[1] or box[1] > rect[3]


def _segment_polygon(element: ET.Element, width: float, rect: Box) -> list[tuple[float, float]] | None:
    """The area a butt-capped stroke of a one-segment path covers, cut to `rect` (in the parent's space); None
    for anything but such a path."""
    if element.tag != _TAG % "path" or not math.isfinite(width) or width <= 0:
        return None
    match = _SEGMENT.match(element.get("d", ""))
    stroke = element.get("stroke")
    if (not match or stroke in (None, "none") or "url(" in stroke
            or element.get("stroke-linecap", "butt") != "butt" or "stroke-dasharray" in element.attrib
            or "marker-start" in element.attrib or "marker-end" in element.attrib):
        return None
    shift = _translation(element)
    if shift is None:
        return None
    x0, y0, x1, y1 = (float(v) for v in match.groups())
    length = math.hypot(x1 - x0, y1 - y0)
    if length == 0:
        return None
    nx, ny = -(y1 - y0) / length * width / 2, (x1 - x0) / length * width / 2
    corners = [(x0 + nx, y0 + ny), (x1 + nx, y1 + ny), (x1 - nx, y1 - ny), (x0 - nx, y0 - ny)]
    corners = [(px + shift[0], py + shift[1]) for px, py in corners]
    return _cut(corners, rect)


def _cut(polygon: list[tuple[float, float]], rect: Box) -> list[tuple[float, float]]:
    """Sutherland-Hodgman: the part of a convex polygon inside an axis-aligned rectangle."""
    def clip(points, inside, crossing):
        out = []
        for i, current in enumerate(points):
            previous = points[i - 1]
            if inside(current):
                if not inside(previous):
                    out.append(crossing(previous, current))
                out.append(current)
            elif inside(previous):
                out.append(crossing(previous, current))
        return out

    def at_x(edge):
        return lambda p, q: (edge, p[1] + (q[1] - p[1]) * (edge - p[0]) / (q[0] - p[0]))

    def at_y(edge):
        return lambda p, q: (p[0] + (q[0] - p[0]) * (edge - p[1]) / (q[1] - p[1]), edge)

    x0, y0, x1, y1 = rect
    for inside, crossing in ((lambda p: p[0] >= x0, at_x(x0)), (lambda p: p[0] <= x1, at_x(x1)),
                             (lambda p: p[1] >= y0, at_y(y0)), (lambda p: p[1] <= y1, at_y(y1))):
        polygon = clip(polygon, inside, crossing)
        if not polygon:
            break
    return polygon


def _fill_polygon(element: ET.Element, polygon: list[tuple[float, float]], stroke_opacity: str | None) -> None:
    """Turn the stroked segment `element` into its covered `polygon`, filled with the stroke's paint (a
    segment's fill paints nothing: it encloses no area)."""
    attrib = dict(element.attrib)
    element.attrib.clear()
    for name, value in attrib.items():
        if name in ("d", "transform", "fill", "fill-opacity") or name.startswith("stroke"):
            continue
        element.set(name, value)
    element.set("fill", attrib["stroke"])
    element.set("fill-opacity", stroke_opacity if stroke_opacity is not None else "1")
    element.set("d", ("M" + "L".join(f"{x!r},{y!r}" for x, y in polygon) + "Z") if polygon else "")

"""The PNG's SVG with its layers' clipping moved onto their marks (render/chart/png_clips.py) draws the same picture:
marks inside drawn unclipped, marks outside left out, a stroke crossing the edge turned into the polygon it
covers, anything else clipped on its own, in the same order."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ncu_roofline.render.chart.png_clips import _cut, _path_box, lighter_clips

# A 200 x 120 plot at (20, 10), clipped to its 160 x 100 box like Vega's layers. In drawing order: a red square
# wholly outside (x 175-195, past the clip's 160 even with the stroke allowance: left out), a blue square across
# the right edge (keeps a clip of its own), two squares inside that overlap (green under orange: the order must
# hold), a diagonal line from (-20, 90) to (180, 10) crossing both side edges (becomes a polygon), a text at the
# left edge (clipped on its own), and a nested group, shifted by (10, 10), clipped again to a box reaching past
# the outer one (the overlap is kept).
SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="200" height="120" viewBox="0 0 200 120">
<rect width="200" height="120" fill="white"/>
<g transform="translate(20,10)"><g clip-path="url(#clip1)">
  <path transform="translate(185,50)" d="M-10,-10h20v20h-20Z" fill="#ff0000"/>
  <path transform="translate(155,50)" d="M-10,-10h20v20h-20Z" fill="#0000ff"/>
  <path d="M40,40L70,40L70,70L40,70Z" fill="#00aa00"/>
  <path transform="translate(60,60)" d="M-10,-10h20v20h-20Z" fill="#ff8800" opacity="0.9"/>
  <path d="M-20,90L180,10" stroke="#444444" stroke-width="2" stroke-opacity="0.8"/>
  <text transform="translate(2,30)" font-family="sans-serif" font-size="12px" fill="#000">Wide text</text>
  <g transform="translate(10,10)"><g clip-path="url(#clip2)">
    <path d="M100,-20L100,120" stroke="#aa00aa" stroke-width="3"/>
  </g></g>
</g></g>
<defs><clipPath id="clip1"><rect x="0" y="0" width="160" height="100"/></clipPath>
<clipPath id="clip2"><rect x="-5" y="-5" width="200" height="60"/></clipPath></defs>
</svg>"""


def test_the_marks_are_rewritten_as_described():
    out = lighter_clips(SVG)
    assert "#ff0000" not in out  # outside: gone
    # the diagonal: a filled polygon (no stroke any more), its paint and opacity kept
    diagonal = re.search(r'<path [^>]*fill="#444444"[^>]*>', out).group(0)
    assert "stroke" not in diagonal and 'fill-opacity="0.8"' in diagonal
    # two marks keep a clip of their own: the blue square and the text
    assert len(re.findall(r'clip-path="url\(#png-clip\d\)"', out)) == 2
    # the nested group's clip is cut to the outer box in its own space (x -10..150, y -10..90 overlapped with
    # -5..195, -5..55: -5..150, -5..55), and its vertical line (x 100, width 3) becomes that box's share of it
    assert '<rect x="-5.0" y="-5.0" width="155.0" height="60.0"' in out
    line = re.search(r'<path [^>]*fill="#aa00aa"[^>]*>', out).group(0)
    points = {tuple(map(float, p.split(","))) for p in re.search(r'd="M([^"]*)Z"', line).group(1).split("L")}
    assert points == {(98.5, -5.0), (101.5, -5.0), (101.5, 55.0), (98.5, 55.0)}
    assert out.index("#00aa00") < out.index("#ff8800")  # the drawing order holds


def test_the_diagonal_becomes_the_polygon_its_stroke_covers():
    # the line (-20, 90) -> (180, 10): direction (200, -80)/215.41, half width 1 along the normal (0.3714, 0.9285)
    out = lighter_clips(SVG)
    d = re.search(r'<path [^>]*fill="#444444"[^>]*>', out).group(0)
    points = [tuple(map(float, p.split(","))) for p in re.search(r'd="M([^"]*)Z"', d).group(1).split("L")]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    assert min(xs) == pytest.approx(0.0) and max(xs) == pytest.approx(160.0)  # cut at both side edges
    # at x = 0 the centre line is at y = 90 - 80 * 20 / 200 = 82; its stroke spans 82 -+ 1 / cos(atan(0.4))
    assert max(ys) == pytest.approx(82 + 1 / np.cos(np.arctan(0.4)), abs=1e-9)


def test_the_picture_is_the_same():
    vl_convert = pytest.importorskip("vl_convert")
    from test_chart_images import RARE_SHARE, RARE_TOLERANCE, TOLERANCE, decode_png

    before = decode_png(vl_convert.svg_to_png(SVG, scale=2.0)).astype(int)
    after = decode_png(vl_convert.svg_to_png(lighter_clips(SVG), scale=2.0)).astype(int)
    assert before.shape == after.shape
    difference = np.abs(before - after).max(axis=-1)
    assert difference.max() <= TOLERANCE
    assert (difference > RARE_TOLERANCE).sum() <= max(RARE_SHARE * difference.size, 8)
    assert (before[..., :3] < 128).any(axis=-1).sum() > 1_000  # a drawing, not a blank


def test_path_boxes_read_absolute_and_relative_commands():
    assert _path_box("M-10,-10h20v20h-20Z") == (-10, -10, 10, 10)
    assert _path_box("M1,2L5,-3L4,8") == (1, -3, 5, 8)
    assert _path_box("m1,2l3,3 1,1z") == (1, 2, 5, 6)  # pairs after a move are lines: (1,2) (4,5) (5,6)
    # an arc of radius 3 from (3, 0) to (-3, 0): both end points widened by 6
    assert _path_box("M3,0A3,3,0,1,1,-3,0") == (-9, -6, 9, 6)
    assert _path_box("M0,0Q") is None and _path_box("") is None


def test_cutting_a_polygon_to_a_rectangle():
    # a 4 x 4 square at (-2, -2) cut to the box (0, 0)-(10, 10): its quarter (0, 0)-(2, 2)
    cut = _cut([(-2, -2), (2, -2), (2, 2), (-2, 2)], (0, 0, 10, 10))
    assert sorted(set(cut)) == [(0, 0), (0, 2), (2, 0), (2, 2)]
    assert _cut([(20, 20), (30, 20), (30, 30)], (0, 0, 10, 10)) == []


def test_text_it_does_not_read_is_handed_on_as_it_is():
    assert lighter_clips("not svg <") == "not svg <"
    plain = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="5" height="5"/></svg>'
    assert lighter_clips(plain) == plain


# The same plot with what Vega writes for a screen reader on its marks: none of it is drawn.
ARIA_SVG = SVG.replace('<path d="M40,40L70,40', '<path role="graphics-symbol" aria-roledescription="square" '
                       'aria-label="kernel: gemm; time: 1.2 ms" d="M40,40L70,40').replace(
    '<g clip-path="url(#clip1)">', '<g clip-path="url(#clip1)" role="graphics-object" aria-hidden="true">')


def test_what_only_a_screen_reader_reads_is_left_out():
    out = lighter_clips(ARIA_SVG)
    assert "aria-" not in out and "role=" not in out
    assert 'fill="#00aa00"' in out  # the mark itself stays


def test_the_accessibility_attributes_draw_nothing():
    """resvg's own PNG of the SVG with and without them: the same bytes (so leaving them out changes no pixel)."""
    vl_convert = pytest.importorskip("vl_convert")
    stripped = re.sub(r' (?:aria-[a-z]+|role)="[^"]*"', "", ARIA_SVG)
    assert stripped != ARIA_SVG and stripped == SVG
    assert vl_convert.svg_to_png(ARIA_SVG, scale=2.0) == vl_convert.svg_to_png(SVG, scale=2.0)
    assert vl_convert.svg_to_png(lighter_clips(ARIA_SVG), scale=2.0) == vl_convert.svg_to_png(lighter_clips(SVG),
                                                                                              scale=2.0)

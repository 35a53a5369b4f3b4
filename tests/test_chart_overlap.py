"""No two texts of the chart overlap, as real headless Chromium lays out the SVG that vl-convert writes.

Each `<text>` is measured in the browser as a quad: its getBBox corners mapped through getScreenCTM, so rotated
roof labels are compared as the turned boxes they are (an axis-aligned getBoundingClientRect would call two
parallel diagonal labels overlapping when they are not). Quads are compared by the separating-axis test, allowing
half a pixel of anti-aliasing. One browser, one page per chart. Skipped without /usr/bin/chromium or playwright.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from ncu_roofline.render.chart.placement import overlaps

CHROMIUM = Path("/usr/bin/chromium")
sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
SAMPLES = Path(__file__).resolve().parents[1] / ".." / "shared" / "ncu-samples"
CLIMATE = SAMPLES / "DeepLearningProfiling" / "climate-seg-TF-fp16-batch2-fw-amp"
V100 = "Tesla V100-SXM2-16GB"
# An A100 export with byte counters and no FLOP counter at all (cuda-roofline/output_A100.csv): every kernel is in
# the memory panel; it names no device, so its roofs come from --gpu.
A100_NO_FLOPS = SAMPLES / "cuda-roofline" / "output_A100.csv"
A100 = "NVIDIA A100-PCIE-40GB"

QUADS = """() => Array.from(document.querySelectorAll('text')).filter(t => t.textContent.trim()).map(t => {
    const b = t.getBBox(), m = t.getScreenCTM();
    const corner = (x, y) => { const p = new DOMPoint(x, y).matrixTransform(m); return [p.x, p.y]; };
    return {text: t.textContent, quad: [corner(b.x, b.y), corner(b.x + b.width, b.y),
                                        corner(b.x + b.width, b.y + b.height), corner(b.x, b.y + b.height)]};
})"""


@contextmanager
def offline_tab(width: int, height: int) -> Iterator:
    """A tab of headless Chromium at this viewport that loads file: URLs only (nothing from the network)."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            tab = browser.new_page(viewport={"width": width, "height": height})
            tab.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                      else route.abort())
            yield tab
        finally:
            browser.close()


# Each leader line of the roofline (a rule: an SVG <line>) as its two ends in the page's pixels.
LEADERS = """() => Array.from(document.querySelectorAll('g.rank_leaders_marks line')).map(l => {
    const m = l.getScreenCTM();
    const end = (x, y) => { const p = new DOMPoint(x, y).matrixTransform(m); return [p.x, p.y]; };
    return [end(l.x1.baseVal.value, l.y1.baseVal.value), end(l.x2.baseVal.value, l.y2.baseVal.value)];
})"""


def crossed_texts(leaders: list[list[list[float]]], texts: list[dict]) -> list[tuple[int, str]]:
    """(leader index, text) for each text a leader line crosses: the line as a 0.5 px wide quad against the text's
    quad less half a pixel (anti-aliasing), by the separating-axis test."""
    crossed = []
    for index, ((x0, y0), (x1, y1)) in enumerate(leaders):
        length = max(np.hypot(x1 - x0, y1 - y0), 1e-9)
        nx, ny = -(y1 - y0) / length * 0.25, (x1 - x0) / length * 0.25
        line = np.array([[x0 + nx, y0 + ny], [x1 + nx, y1 + ny], [x1 - nx, y1 - ny], [x0 - nx, y0 - ny]])
        crossed += [(index, t["text"]) for t in texts if overlaps(line, _shrunk(t["quad"]))]
    return crossed


def _shrunk(quad: list[list[float]], by: float = 0.5) -> np.ndarray:
    q = np.array(quad, dtype=float)
    centre = q.mean(axis=0)
    return centre + (q - centre) * np.maximum(0.0, 1 - by / np.maximum(np.abs(q - centre).max(), 1e-9))


def overlapping_pairs(texts: list[dict]) -> list[tuple[str, str]]:
    quads = [_shrunk(t["quad"]) for t in texts]
    lo = np.array([q.min(axis=0) for q in quads])
    hi = np.array([q.max(axis=0) for q in quads])
    pairs = []
    for i in range(len(quads)):
        near = np.nonzero((lo[i + 1:, 0] < hi[i, 0]) & (hi[i + 1:, 0] > lo[i, 0]) & (lo[i + 1:, 1] < hi[i, 1])
                          & (hi[i + 1:, 1] > lo[i, 1]))[0] + i + 1
        pairs += [(texts[i]["text"], texts[j]["text"]) for j in near if overlaps(quads[i], quads[j])]
    return pairs


@pytest.fixture(scope="module")
def analysed() -> list[tuple[str, object, int]]:
    """(name, Analysis, top) for the climate-seg capture at --top 40 and every shared sample that analyses alone."""
    from ncu_roofline import analyze
    from ncu_roofline.core.errors import InputError

    runs: list[tuple[str, list[Path], dict]] = []
    if CLIMATE.exists():
        runs.append(("climate-seg top 40", [CLIMATE], {"gpu": V100, "top": 40}))
    if A100_NO_FLOPS.exists():
        runs.append(("A100 without FLOP counters", [A100_NO_FLOPS], {"gpu": A100, "top": 20}))
    for sample in sorted(p for p in SAMPLES.glob("*/*") if p.suffix in (".csv", ".ncu-rep", ".nsight-cuprof-report") or p.is_dir()):
        runs.append((f"{sample.parent.name}/{sample.name}", [sample], {"top": 20}))
    out = []
    for name, inputs, options in runs:
        top = options.pop("top")
        try:
            result = analyze(inputs, **options)
        except InputError:
            continue  # not analysable alone (needs --gpu, a pair, ...): other tests cover why
        if len(result.kernels):
            out.append((name, result, top))
    return out


def _svgs(analysed: list[tuple[str, object, int]], tmp: Path) -> list[tuple[str, Path]]:
    """(name, SVG) of each run's roofline, and of its instruction roofline where it counted warp instructions
    (named "instruction roofline: NAME")."""
    from ncu_roofline.render.analysis.chart import roofline_spec
    from ncu_roofline.render.analysis.instruction_chart import has_instruction_data, instruction_roofline_spec
    from ncu_roofline.render.chart.chart_files import write_chart

    out = []
    for index, (name, result, top) in enumerate(analysed):
        [svg] = write_chart(roofline_spec(result.kernels, result.chart_context(top)), tmp / str(index), ["svg"])
        out.append((name, svg))
        if has_instruction_data(result.kernels):
            [svg] = write_chart(instruction_roofline_spec(result.kernels, title=name, top=top), tmp / str(index),
                                ["svg"], stem="instruction_roofline")
            out.append((f"instruction roofline: {name}", svg))
    return out


@pytest.fixture(scope="module")
def drawn(analysed, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, list[dict], list]]:
    """(name, its texts' quads, its leader lines' ends) per chart."""
    svgs = _svgs(analysed, tmp_path_factory.mktemp("overlap"))
    results = []
    with offline_tab(1800, 1200) as tab:
        for name, svg in svgs:
            tab.goto(svg.as_uri())
            results.append((name, tab.evaluate(QUADS), tab.evaluate(LEADERS)))
    return results


@pytest.fixture(scope="module")
def laid_out(drawn) -> list[tuple[str, list[dict]]]:
    return [(name, texts) for name, texts, _ in drawn]


def test_the_quad_test_sees_overlap_and_its_absence():
    # Two 10×4 boxes: side by side 1 px apart (apart), then shifted 3 px into each other (overlapping);
    # a box turned 45° near a corner it misses though their axis-aligned hulls meet.
    a = [[0, 0], [10, 0], [10, 4], [0, 4]]
    assert overlapping_pairs([{"text": "a", "quad": a}, {"text": "b", "quad": [[11, 0], [21, 0], [21, 4], [11, 4]]}]) == []
    assert overlapping_pairs([{"text": "a", "quad": a}, {"text": "b", "quad": [[7, 0], [17, 0], [17, 4], [7, 4]]}]) \
        == [("a", "b")]
    turned = [[12, 8], [16, 4], [18, 6], [14, 10]]  # hull x 12..18, y 4..10: misses a (x ≤ 10)
    assert overlapping_pairs([{"text": "a", "quad": [[0, 0], [13, 0], [13, 4.5], [0, 4.5]]},
                              {"text": "t", "quad": turned}]) == []


def test_climate_seg_top_40_has_no_overlapping_texts(laid_out):
    named = dict(laid_out)
    if "climate-seg top 40" not in named:
        pytest.skip("climate-seg capture not in ../shared/ncu-samples")
    texts = named["climate-seg top 40"]
    assert len(texts) > 100  # titles, axes, 40 bar names, roof labels and rank numbers: all laid out
    # ... and the memory panel's: its title, its three roof labels (the same texts as the roofline's) and the rank
    # of each of its 11 columns (ranks 3, 4, 6, ... 33)
    words = [t["text"] for t in texts]
    assert "Memory only (no FLOPs)" in words
    assert all(words.count(label) == 2 for label in ("DRAM 900 GB/s", "L2 3.13 TB/s", "L1 15.7 TB/s"))
    assert {"3", "4", "6", "33"} <= set(words)
    assert overlapping_pairs(texts) == []


def test_climate_seg_top_40_leader_lines_cross_no_text(drawn):
    named = {name: (texts, leaders) for name, texts, leaders in drawn}
    if "climate-seg top 40" not in named:
        pytest.skip("climate-seg capture not in ../shared/ncu-samples")
    texts, leaders = named["climate-seg top 40"]
    assert len(leaders) >= 1  # a rank number in its crowded lower left sits off its point, joined by a line
    assert crossed_texts(leaders, texts) == []


def test_the_leader_check_sees_a_line_through_a_text():
    text = {"text": "12", "quad": [[10, 10], [20, 10], [20, 20], [10, 20]]}
    assert crossed_texts([[[0, 15], [30, 15]]], [text]) == [(0, "12")]
    assert crossed_texts([[[0, 15], [9, 15]]], [text]) == []  # stops 1 px short of the box


def test_a_capture_without_flop_counters_draws_its_kernels_in_the_panel_without_overlap(laid_out):
    named = dict(laid_out)
    if "A100 without FLOP counters" not in named:
        pytest.skip("cuda-roofline/output_A100.csv not in ../shared/ncu-samples")
    words = [t["text"] for t in named["A100 without FLOP counters"]]
    assert "Memory only (no FLOPs)" in words and {"1", "2", "3", "4"} <= set(words)
    assert "memory level" in words and "DRAM" in words  # the legend lists the panel's levels
    assert "time share" not in words  # no legend without entries (the roofline has no point)
    assert overlapping_pairs(named["A100 without FLOP counters"]) == []


def test_every_shared_sample_at_top_20_has_no_overlapping_texts(laid_out):
    """Its roofline and, where it counted warp instructions, its instruction roofline (whose rank numbers were
    once printed at a fixed offset from every point: '1' twice side by side read as '11')."""
    if len(laid_out) < 2:
        pytest.skip("shared samples absent")
    assert sum(name.startswith("instruction roofline: ") for name, _ in laid_out) >= 5  # the full-set reports
    bad = {name: pairs[:5] for name, texts in laid_out if (pairs := overlapping_pairs(texts))}
    assert bad == {}


def test_every_instruction_roofline_number_sits_on_no_point(analysed):
    """The placement's own boxes (render/chart/placement.py) of each rank number against each point's disc, and every
    drawn kernel has a number or is counted as unnumbered."""
    from test_instruction_chart_labels import boxes_px

    from ncu_roofline.render.analysis.instruction_chart import has_instruction_data, instruction_chart_data
    from ncu_roofline.render.chart.placement import box

    bad = {}
    for name, result, top in analysed:
        if not has_instruction_data(result.kernels):
            continue
        data = instruction_chart_data(result.kernels, top)
        texts, discs = boxes_px(data)
        hits = [(data.labels["text"].iloc[i], "point") for i, a in enumerate(texts)
                for x, y, r in discs if overlaps(a, box(x, y, 2 * r, 2 * r))]
        if not set(data.points["rank"]) <= set(data.labels["rank"]) and data.unnumbered == 0:
            hits.append(("missing", str(sorted(set(data.points["rank"]) - set(data.labels["rank"])))))
        if hits:
            bad[name] = hits[:5]
    assert bad == {}


def test_every_shared_sample_at_top_20_has_leader_lines_that_cross_no_text(drawn):
    if len(drawn) < 2:
        pytest.skip("shared samples absent")
    bad = {name: crossed[:5] for name, texts, leaders in drawn if (crossed := crossed_texts(leaders, texts))}
    assert bad == {}


def test_a_roof_label_slides_back_into_view_when_zoomed(tmp_path):
    """Zoom in on the example's kernel 2 (AI ~170, ~320 TFLOP/s, beside the DRAM roof): the DRAM label's spot
    (lower left) leaves the view; the label must come back inside the plot, on its roof and along it."""
    from ncu_roofline import analyze
    from ncu_roofline.render.analysis.chart import roofline_spec
    from ncu_roofline.render.chart.chart_files import write_chart

    example = Path(__file__).resolve().parents[1] / "fixtures" / "example_h100_raw.csv"
    result = analyze(example)
    [page] = write_chart(roofline_spec(result.kernels, result.chart_context()), tmp_path, ["html"])
    label = """() => { const plot = document.querySelector('g.mark-group.role-scope.roofline_group path.background')
                                  || document.querySelector('g.roofline_group path');
        const t = Array.from(document.querySelectorAll('text')).find(e => e.textContent.startsWith('DRAM '));
        const r = t.getBoundingClientRect(), p = plot.getBoundingClientRect();
        const turned = /rotate\\(([-0-9.e]+)\\)/.exec(t.getAttribute('transform') || '');
        // the DRAM roof: the line drawn in the DRAM colour, two points "Mx0,y0Lx1,y1" in the plot's pixels
        const roof = Array.from(document.querySelectorAll('g.mark-line path'))
            .find(e => e.getAttribute('stroke') === '#4c78a8' && e.getAttribute('stroke-width') === '2');
        const xy = roof.getAttribute('d').match(/-?[0-9.]+(e-?[0-9]+)?/g).map(Number);
        const slope = Math.atan2(xy[1] - xy[3], xy[2] - xy[0]) * 180 / Math.PI;  // counter-clockwise on screen
        return [r.x + r.width / 2, r.y + r.height / 2, p.x, p.y, p.x + p.width, p.y + p.height,
                turned ? Number(turned[1]) : 0, (360 - slope) % 360]; }"""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            tab = browser.new_page(viewport={"width": 1600, "height": 900})
            errors: list[str] = []
            tab.on("pageerror", lambda error: errors.append(str(error)))
            tab.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                      else route.abort())
            tab.goto(page.as_uri())
            tab.wait_for_function("document.body.dataset.plotWidth !== undefined")  # the page's final drawing
            tab.wait_for_selector("g.points_marks path")
            before = tab.evaluate(label)
            point = tab.query_selector_all("g.points_marks path")[0].bounding_box()  # kernel 2: largest share
            tab.mouse.move(point["x"], point["y"])
            for _ in range(8):
                tab.mouse.wheel(0, -300)
                tab.wait_for_timeout(50)
            tab.wait_for_timeout(300)
            after = tab.evaluate(label)
        finally:
            browser.close()
    assert errors == []
    x, y, left, top, right, bottom, angle, roof_angle = after
    assert (x, y) != tuple(before[:2])  # it moved ...
    assert left < x < right and top < y < bottom  # ... and sits inside the plot ...
    assert before[6] == pytest.approx(before[7], abs=0.5)  # ... along its roof before the zoom ...
    assert angle == pytest.approx(roof_angle, abs=0.5)  # ... and after (a zoom scales both log axes alike)

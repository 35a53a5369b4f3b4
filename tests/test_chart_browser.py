"""The HTML chart in a real, offline browser: it renders without errors, draws every point, and its hover works.

Skipped unless Chromium is at /usr/bin/chromium and playwright's Python package imports (no browser download:
playwright drives the system Chromium).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from ncu_roofline.render.analysis.chart import roofline_spec
from ncu_roofline.render.chart.roofline import chart_data
from ncu_roofline.render.chart.context import ChartContext
from ncu_roofline.render.chart.chart_files import write_chart

CHROMIUM = Path("/usr/bin/chromium")
sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]
# A long templated name: the tooltip must show all of it, the label only a short form.
LONG_NAME = ("void cutlass::Kernel<cutlass::gemm::kernel::GemmUniversal<"
             + ", ".join(f"cutlass::gemm::GemmShape<{i}, 128, 32>" for i in range(40)) + "> >(Params)")
# Symbols drawn as kernel points: the layer named "points" (not legend swatches, not the ridge points).
POINT_SELECTOR = "g.mark-symbol.role-mark.points_marks path"


def kernels_table() -> pd.DataFrame:
    """Three drawable kernels (one with no L1 intensity) and a copy that is left out."""
    peaks = {"peak_flop_per_s_fp64": 9.7e12, "peak_flop_per_s_fp32": 19.5e12, "peak_flop_per_s_fp16": 78e12,
             "peak_flop_per_s_tensor": 312e12, "peak_bytes_per_s_dram": 1.56e12, "peak_bytes_per_s_l2": 5.5e12,
             "peak_bytes_per_s_l1": 19e12}
    rows = []
    for rank, (name, flop, ai_l1) in enumerate(
        [(LONG_NAME, 2e9, 0.5), ("void softmax<float>(float*)", 5e8, 0.1), ("void relu(float*)", 1e8, math.nan),
         ("[CUDA memset]", 0.0, 0.0)], start=1,
    ):
        time_s = 1e-3 / rank
        rows.append({
            "rank": rank, "kernel_name": name, "grid": "(80, 1, 1)", "block": "(256, 1, 1)", "launches": rank,
            "time_s": time_s, "time_share": 0.0, "flop_fp64": 0.0, "flop_fp32": flop, "flop_fp16": 0.0,
            "flop_tensor": 0.0, "flop_total": flop, "bytes_dram": 1e9, "bytes_l2": 2e9, "bytes_l1": 4e9,
            "ai_dram": flop / 1e9, "ai_l2": flop / 2e9, "ai_l1": ai_l1, "flop_per_s": flop / time_s, **peaks,
            "t_sol_s": 1e9 / 1.56e12, "bound": "dram", "roofline_fraction": 1e9 / 1.56e12 / time_s,
            "headroom_s": time_s - 1e9 / 1.56e12, "status": "ok",
        })
    table = pd.DataFrame(rows)
    table["time_share"] = table["time_s"] / table["time_s"].sum()
    return table


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, list[str], int]]:
    """The chart's HTML page, loaded with every non-file request refused; with the errors it logged."""
    kernels = kernels_table()
    ctx = ChartContext(gpu="NVIDIA A100-SXM4-40GB", ceiling_source="built-in table", clock="max", inputs=["run.csv"])
    outdir = tmp_path_factory.mktemp("chart")
    [html] = write_chart(roofline_spec(kernels, ctx), outdir, ["html"])
    expected_points = len(chart_data(kernels, ctx).points)

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page(viewport={"width": 1600, "height": 900})
            errors: list[str] = []
            tab.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            tab.on("pageerror", lambda error: errors.append(str(error)))
            tab.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                      else route.abort())
            tab.goto(html.as_uri())
            tab.wait_for_selector(POINT_SELECTOR)
            yield tab, errors, expected_points
        finally:
            browser.close()


def test_renders_offline_without_errors(page):
    tab, errors, _ = page
    assert errors == []


def test_one_point_per_drawn_kernel_and_level(page):
    tab, _, expected_points = page
    # Kernels 1 and 2 at three levels, kernel 3 at two (no L1 intensity), the memset not at all.
    assert expected_points == 8
    assert len(tab.query_selector_all(POINT_SELECTOR)) == expected_points


def test_hovering_a_point_shows_the_full_name_and_highlights_its_kernel(page):
    tab, errors, _ = page
    opacity = "() => Array.from(document.querySelectorAll('%s')).map(p => Number(p.getAttribute('opacity')))"
    first_point = tab.query_selector_all(POINT_SELECTOR)[0]  # points are sorted by rank: kernel 1 first
    box = first_point.bounding_box()
    tab.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tooltip = tab.wait_for_selector("#vg-tooltip-element", state="visible")
    assert LONG_NAME in tooltip.inner_text().replace("\n", "")

    point_opacity = tab.evaluate(opacity % POINT_SELECTOR)
    assert point_opacity[:3] == [0.95] * 3 and max(point_opacity[3:]) < 0.5  # its three levels, not the others
    bar_opacity = tab.evaluate(opacity % "g.mark-rect.role-mark path")
    assert bar_opacity[0] == 1 and max(bar_opacity[1:]) < 1  # the linked bar lights up too
    tab.mouse.move(1, 1)
    assert errors == []


def test_screenshot_is_not_blank(page):
    tab, _, _ = page
    png = tab.screenshot()
    # Count colours in the browser itself (no image library needed here): a drawn chart has hundreds.
    colours = tab.evaluate(
        """async (b64) => {
            const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
            const bitmap = await createImageBitmap(new Blob([bytes], {type: 'image/png'}));
            const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
            const context = canvas.getContext('2d');
            context.drawImage(bitmap, 0, 0);
            const pixels = context.getImageData(0, 0, bitmap.width, bitmap.height).data;
            const seen = new Set();
            for (let i = 0; i < pixels.length; i += 4) seen.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
            return seen.size;
        }""",
        base64.b64encode(png).decode("ascii"),
    )
    assert colours > 50


PANEL_SELECTOR = "g.mark-symbol.role-mark.memory_marks path"


def test_the_memory_panel_draws_the_memset_at_each_level_and_hovering_it_links_its_bar(page):
    """The memset (rank 4) has bytes and no FLOPs: not on the roofline, but in the memory panel, one mark per level
    (1e9, 2e9 and 4e9 bytes in 0.25 ms: 4, 8 and 16 TB/s), its column labelled 4; its tooltip is the kernel's."""
    tab, errors, _ = page
    marks = tab.query_selector_all(PANEL_SELECTOR)
    assert len(marks) == 3
    ticks = tab.evaluate("() => Array.from(document.querySelectorAll('g.memory_panel_group text, "
                         "g.role-axis text')).map(t => t.textContent)")
    assert "4" in ticks and "Memory only (no FLOPs)" in tab.evaluate(
        "() => Array.from(document.querySelectorAll('text')).map(t => t.textContent)")
    box = marks[0].bounding_box()
    tab.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tooltip = tab.wait_for_selector("#vg-tooltip-element", state="visible")
    text = tooltip.inner_text()
    assert "[CUDA memset]" in text and "achieved at this level" in text and "TB/s" in text
    opacity = "() => Array.from(document.querySelectorAll('%s')).map(p => Number(p.getAttribute('opacity')))"
    assert tab.evaluate(opacity % PANEL_SELECTOR) == [0.95] * 3  # its three levels
    assert max(tab.evaluate(opacity % POINT_SELECTOR)) < 0.5  # the roofline's kernels dim
    bar_opacity = tab.evaluate(opacity % "g.mark-rect.role-mark path")
    assert bar_opacity[3] == 1 and max(bar_opacity[:3]) < 1  # the memset's bar (rank 4) lights up
    tab.mouse.move(1, 1)
    assert errors == []


FOLD_SAMPLE = (Path(__file__).resolve().parents[1] / ".." / "shared" / "ncu-samples" / "DeepLearningProfiling"
               / "climate-seg-TF-fp16-batch2-fw-amp")


def test_at_1366_by_768_the_bars_names_are_beside_the_roofline_above_the_fold(page, tmp_path):
    """A laptop's window: the headroom bars, which carry the kernel names, sit beside the plot (narrowed) rather
    than under it, every name inside the first 768 px. The example fixture, and climate-seg's 20 kernels with their
    long templated names when the shared samples are here."""
    from ncu_roofline import analyze

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    runs = {"example": analyze(fixtures / "example_h100_raw.csv")}
    if FOLD_SAMPLE.exists():
        runs["climate-seg"] = analyze([FOLD_SAMPLE], gpu="Tesla V100-SXM2-16GB")
    names = """() => Array.from(document.querySelectorAll('g.headroom_group g.role-axis-label text'))
        .filter(t => /^[0-9]+\\. /.test(t.textContent))
        .map(t => { const r = t.getBoundingClientRect(); return [t.textContent, r.top, r.bottom, r.left]; })"""
    plot_right = "() => document.querySelector('g.roofline_group path.background').getBoundingClientRect().right"
    browser = page[0].context.browser  # the module's browser: one sync Playwright per module
    for name, result in runs.items():
        [html] = write_chart(roofline_spec(result.kernels, result.chart_context()), tmp_path / name, ["html"])
        tab = browser.new_page(viewport={"width": 1366, "height": 768})
        tab.goto(html.as_uri())
        tab.wait_for_function("document.body.dataset.arrangement !== undefined", timeout=20_000)
        tab.wait_for_timeout(300)
        shown = tab.evaluate(names)
        bars = int((result.kernels["headroom_s"].notna()).sum())
        assert len(shown) == min(bars, 20), (name, len(shown))
        assert all(bottom <= 768 for _, _, bottom, _ in shown), (name, shown)
        assert tab.evaluate("() => document.body.dataset.arrangement") in ("side", "narrow"), name
        assert min(left for *_, left in shown) > tab.evaluate(plot_right), name  # beside the plot
        tab.close()

"""roofline.html fills the window: at each window width the page shows the widest plot size of the spec's
`usermeta.fit` that fits beside the bars and legends (or above the bars, when even the smallest does not fit beside
them), redraws on resize, and no two texts overlap at any of them.

Real headless Chromium (Debian's), driven by Playwright; skipped without either.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ncu_roofline import analyze
from ncu_roofline.render.analysis.chart import roofline_spec
from ncu_roofline.render.chart.roofline import FIT_WIDTHS_PX, ROOFLINE_HEIGHT_PX, ROOFLINE_WIDTH_PX, fit_height
from ncu_roofline.render.chart.chart_files import spec_text, write_chart

from conftest import FIXTURES
from test_chart_overlap import ARGS, CHROMIUM, CLIMATE, QUADS, V100, overlapping_pairs

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")

# What the page reports after each drawing: the plot width shown, the room it had, and the width everything
# besides the plot takes (the whole drawing, plus Vega-Embed's padding for its action menu, minus the plot).
STATE = """() => {
    const box = getComputedStyle(document.querySelector('#vis'));
    const drawn = document.querySelector('#vis svg').getBoundingClientRect().width
        + parseFloat(box.paddingLeft) + parseFloat(box.paddingRight);
    const plot = Number(document.body.dataset.plotWidth);
    return {plot, room: document.body.clientWidth, overhead: drawn - plot,
            arrangement: document.body.dataset.arrangement,
            plotBox: document.querySelector('g.roofline_group path.background').getBBox().width,
            panelWidth: (document.querySelector('g.memory_panel_group path.background') || {getBBox: () => ({})})
                .getBBox().width};
}"""


def test_the_spec_carries_a_layout_per_offered_size_and_the_default_one_is_the_spec_itself():
    result = analyze(FIXTURES / "example_h100_raw.csv")
    spec = roofline_spec(result.kernels, result.chart_context())
    sizes = spec["usermeta"]["fit"]["sizes"]
    widths = [size["width"] for size in sizes]
    assert widths == sorted(widths) and set(widths) <= set(FIT_WIDTHS_PX)
    # 3:4 up to the default 640 × 480, then flatter: 1000 px wide is 0.6 × 1000 = 600 high, never above 720.
    assert fit_height(480) == 360 and fit_height(ROOFLINE_WIDTH_PX) == ROOFLINE_HEIGHT_PX
    assert fit_height(1000) == 600 and fit_height(1920) == 720
    assert all(size["height"] == fit_height(size["width"]) for size in sizes)
    [default] = [size for size in sizes if size["width"] == ROOFLINE_WIDTH_PX]
    for name in ("roof_labels", "rank_labels"):  # the page starts from the spec as written
        assert default["datasets"][name] == spec["datasets"][name]
    labelled = {row["roof"] for row in spec["datasets"]["roof_labels"]}
    for size in sizes:  # no offered size loses a roof's label
        assert labelled <= {row["roof"] for row in size["datasets"]["roof_labels"]}
    # The layouts are the page's: roofline.vl.json is the chart at its default size, with its title.
    written = json.loads(spec_text(spec))
    assert written["usermeta"] == {"title": spec["usermeta"]["title"]} and written["datasets"] == spec["datasets"]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The example's page, and the 49-kernel climate-seg capture's at --top 40 when the shared samples are here
    (written once: every test opens them in its own tab and only reads them)."""
    tmp = tmp_path_factory.mktemp("pages")
    pages = {}
    example = analyze(FIXTURES / "example_h100_raw.csv")
    [pages["example"]] = write_chart(roofline_spec(example.kernels, example.chart_context()), tmp / "example",
                                     ["html"])
    if CLIMATE.exists():
        climate = analyze([CLIMATE], gpu=V100)
        [pages["climate-seg top 40"]] = write_chart(roofline_spec(climate.kernels, climate.chart_context(40)),
                                                    tmp / "climate", ["html"])
    return pages


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _shown(tab, previous: int | None = None) -> dict:
    tab.wait_for_function("(previous) => document.body.dataset.plotWidth !== undefined && "
                          "Number(document.body.dataset.plotWidth) !== previous", arg=previous, timeout=20_000)
    tab.wait_for_timeout(300)  # a redraw in flight settles
    return tab.evaluate(STATE)


def _widest(sizes: list[int], room: float, overhead: float) -> int:
    fitting = [width for width in sizes if width + overhead <= room]
    return max(fitting) if fitting else min(sizes)


@pytest.mark.parametrize("window", [1024, 1366, 1920, 2560])
def test_the_page_shows_the_widest_plot_that_fits_and_no_texts_overlap(browser, pages, window):
    for name, page in pages.items():
        tab = browser.new_page(viewport={"width": window, "height": 1000})
        tab.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
        tab.goto(page.as_uri())
        state = _shown(tab)
        sizes = tab.evaluate("() => spec.usermeta.fit.sizes.map(size => size.width)")
        assert state["plot"] == _widest(sizes, state["room"], state["overhead"]), (name, state)
        assert abs(state["plotBox"] - state["plot"]) <= 1, (name, state)  # the plot drawn is that wide
        if state["plot"] != min(sizes):
            assert state["plot"] + state["overhead"] <= state["room"]  # nothing scrolls sideways
        assert overlapping_pairs(tab.evaluate(QUADS)) == [], (name, window)  # the memory panel's texts too
        # The memory panel under the plot (the example's rank 5, climate-seg's 11 kernels without FLOPs) is as wide.
        assert abs(state["panelWidth"] - state["plot"]) <= 1, (name, state)
        if name.startswith("climate-seg") and window == 1366:
            # 40 long names at full width leave the plot no room beside them at 1366 px: the bar column narrows
            # (shorter names, shorter bars) and stays beside the plot, so the names are not under the fold
            assert state["arrangement"] == "narrow", state
        if name.startswith("climate-seg") and window == 1024:
            # not even the narrow column fits beside the smallest plot: the bars go under it, and the plot, now as
            # wide as the window allows, is wider than the narrowest size the side-by-side page has
            assert state["arrangement"] == "stacked" and state["plot"] > min(sizes), state
        if window >= 1920:
            assert state["arrangement"] == "side", (name, state)
        tab.close()


def test_the_page_redraws_wider_when_the_window_grows(browser, pages):
    page = pages["example"]
    tab = browser.new_page(viewport={"width": 1600, "height": 1000})
    tab.goto(page.as_uri())
    narrow = _shown(tab)
    tab.set_viewport_size({"width": 2400, "height": 1000})
    wide = _shown(tab, previous=narrow["plot"])
    # 800 px more room: the plot grows by the largest step of the ladder that still fits.
    sizes = tab.evaluate("() => spec.usermeta.fit.sizes.map(size => size.width)")
    assert wide["plot"] > narrow["plot"]
    assert wide["plot"] == _widest(sizes, wide["room"], wide["overhead"])
    assert overlapping_pairs(tab.evaluate(QUADS)) == []
    tab.close()


@pytest.mark.parametrize("window", [1024, 1920])
def test_the_compare_page_fills_the_window_too(browser, tmp_path, window):
    """compare.html: one view (no bars), the same page: the widest plot size that fits, arrows and texts intact."""
    from ncu_roofline.comparison import compare
    from ncu_roofline.render.compare.chart import compare_chart

    base, head = (analyze(FIXTURES / "compare" / name) for name in ("base.csv", "head.csv"))
    result = compare(base, head)
    spec = compare_chart(result.kernels, base_kernels=result.base.kernels, head_kernels=result.head.kernels,
                         ctx=result.chart_context(20))
    [page] = write_chart(spec, tmp_path, ["html"])
    tab = browser.new_page(viewport={"width": window, "height": 1000})
    tab.goto(page.as_uri())
    tab.wait_for_function("document.body.dataset.plotWidth !== undefined", timeout=20_000)
    tab.wait_for_timeout(300)
    state = tab.evaluate("""() => {
        const box = getComputedStyle(document.querySelector('#vis'));
        const drawn = document.querySelector('#vis svg').getBoundingClientRect().width
            + parseFloat(box.paddingLeft) + parseFloat(box.paddingRight);
        const plot = Number(document.body.dataset.plotWidth);
        return {plot, room: document.body.clientWidth, overhead: drawn - plot,
                heads: document.querySelectorAll('g.heads_marks path').length,
                panelHeads: document.querySelectorAll('g.memory_heads_marks path').length,
                panelWidth: document.querySelector('g.memory_panel_group path.background').getBBox().width}; }""")
    sizes = [size["width"] for size in spec["usermeta"]["fit"]["sizes"]]
    assert state["plot"] == _widest(sizes, state["room"], state["overhead"]) and state["heads"] == 3, state
    # copy, new and tiny (no FLOPs) have a head end in the memory panel under the plot, as wide (old was removed)
    assert state["panelHeads"] == 3 and abs(state["panelWidth"] - state["plot"]) <= 1, state
    if window == 1920:
        assert state["plot"] > 640  # wider than the spec's own size
    assert overlapping_pairs(tab.evaluate(QUADS)) == []
    tab.close()

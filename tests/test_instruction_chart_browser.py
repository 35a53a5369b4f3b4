"""The instruction roofline page in a real, offline browser, like the roofline (test_chart_browser.py): it renders
without errors, draws one point per kernel and level, its tooltip gives the full name and the limiter, and the
legend shows one level.

Skipped unless Chromium is at /usr/bin/chromium and playwright's Python package imports.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from ncu_roofline.render.analysis.instruction_chart import instruction_chart_data, instruction_roofline_spec
from ncu_roofline.render.chart.chart_files import write_chart

CHROMIUM = Path("/usr/bin/chromium")
sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]
POINT_SELECTOR = "g.mark-symbol.role-mark.points_marks path"
LONG_NAME = "void gemm<" + ", ".join(f"Tile<{i}, 128>" for i in range(30)) + ">(float*)"


def kernels_table() -> pd.DataFrame:
    """Three kernels: one at all four levels with a 2-way bank conflict, one without shared traffic (three points),
    one that counted no instructions (not drawn)."""
    base = {"grid": "(80, 1, 1)", "block": "(256, 1, 1)", "peak_warp_gips": 432.0,
            "peak_bytes_per_s_dram": 1.56e12, "peak_bytes_per_s_l2": 5.5e12, "peak_bytes_per_s_l1": 19e12,
            "int_ops": float("nan")}
    rows = [
        {**base, "rank": 1, "kernel_name": LONG_NAME, "launches": 2, "warp_inst": 1e9, "gips": 100.0, "ii_l1": 2.0,
         "ii_l2": 5.0, "ii_dram": 20.0, "ii_shared": 10.0, "ii_shared_ideal": 20.0, "limiter": "bank_conflicts",
         "limiter_evidence": "2 shared wavefronts per conflict-free one (5e+07 of 1e+08 are bank conflicts)"},
        {**base, "rank": 2, "kernel_name": "void relu(float*)", "launches": 1, "warp_inst": 1e7, "gips": 10.0,
         "ii_l1": 0.5, "ii_l2": 0.5, "ii_dram": 0.6, "ii_shared": float("nan"), "ii_shared_ideal": float("nan"),
         "limiter": "latency", "limiter_evidence": "issue slots 20 % busy"},
        {**base, "rank": 3, "kernel_name": "[CUDA memset]", "launches": 1, "warp_inst": float("nan"),
         "gips": float("nan"), "ii_l1": float("nan"), "ii_l2": float("nan"), "ii_dram": float("nan"),
         "ii_shared": float("nan"), "ii_shared_ideal": float("nan"), "limiter": "unknown",
         "limiter_evidence": "not collected: smsp__inst_executed.sum"},
    ]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, list[str], int]]:
    kernels = kernels_table()
    outdir = tmp_path_factory.mktemp("instruction_chart")
    [html] = write_chart(instruction_roofline_spec(kernels, title="Test GPU · run.ncu-rep"), outdir, ["html"],
                         stem="instruction_roofline")
    expected = len(instruction_chart_data(kernels).points)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            tab.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            tab.on("pageerror", lambda error: errors.append(str(error)))
            tab.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                      else route.abort())
            tab.goto(html.as_uri())
            tab.wait_for_selector(POINT_SELECTOR)
            yield tab, errors, expected
        finally:
            browser.close()


def test_renders_offline_without_errors(page):
    _, errors, _ = page
    assert errors == []


def test_one_point_per_kernel_and_level(page):
    tab, _, expected = page
    assert expected == 4 + 3  # kernel 1 at L1, L2, DRAM, shared; kernel 2 without shared; kernel 3 not drawn
    assert len(tab.query_selector_all(POINT_SELECTOR)) == expected


def test_the_tooltip_gives_the_full_name_and_why(page):
    tab, errors, _ = page
    first = tab.query_selector_all(POINT_SELECTOR)[0]  # kernel 1, L1
    box = first.bounding_box()
    tab.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tooltip = tab.wait_for_selector("#vg-tooltip-element", state="visible")
    text = tooltip.inner_text().replace("\n", "")
    assert LONG_NAME in text and "bank conflicts: 2 shared wavefronts per conflict-free one" in text
    tab.mouse.move(1, 1)
    assert errors == []


def test_the_bank_conflict_wall_is_drawn_for_the_conflicted_kernel(page):
    tab, _, _ = page
    # one dashed segment (a line path) from ii_shared 10 to its conflict-free 20, for kernel 1 only
    assert len(tab.query_selector_all("g.mark-line.role-mark path[stroke-dasharray]")) == 1


def test_clicking_a_legend_entry_shows_one_level(page):
    tab, errors, _ = page
    tab.click("text=shared memory")
    opacity = tab.evaluate("() => Array.from(document.querySelectorAll('%s')).map(p => "
                           "Number(p.getAttribute('opacity') ?? 1))" % POINT_SELECTOR)
    assert sorted(opacity) == [0.15] * 6 + [1.0]  # the one shared-memory point stays
    assert errors == []

"""Readable at every width (issue 24): terminal tables at 80, 100 and 140 columns keep the rank, distinct names and
the sort key with its unit, drop other columns in a stated order and say so; statuses in words; run notes one line
each; a Markdown summary that fits GitHub's ~1,000 px column (laid out in headless Chromium); one vocabulary for
user ceilings; an export that names no GPU is told the table's GPUs of its compute capability."""

from __future__ import annotations

import datetime
import io
import re
from pathlib import Path

import pytest
from rich.console import Console

import ncu_roofline
from ncu_roofline.core.errors import InputError
from ncu_roofline.core.status import status_in_words
from ncu_roofline.render.analysis.console import kernel_summary_table, note_lines
from ncu_roofline.render.text.fit import MIN_NAME

from conftest import SAMPLES

FIXTURES = Path(__file__).parent.parent / "fixtures"
EXAMPLE = FIXTURES / "example_h100_raw.csv"
WIDTHS = (80, 100, 140)
CHROMIUM = Path("/usr/bin/chromium")


def rendered(renderable, width: int) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text().splitlines()


def table_rows(lines: list[str]) -> list[str]:
    return [line for line in lines if re.match(r"^\s*\d+  ", line)]


@pytest.fixture(scope="module")
def example() -> ncu_roofline.Analysis:
    return ncu_roofline.analyze(EXAMPLE)


@pytest.fixture(scope="module")
def compare_pair() -> tuple[ncu_roofline.Analysis, ncu_roofline.Analysis]:
    """fixtures/compare's base and head, analysed once for the module (read only: every test builds its own
    comparison or history from them)."""
    return tuple(ncu_roofline.analyze(FIXTURES / "compare" / f"{n}.csv") for n in ("base", "head"))


@pytest.fixture(scope="module")
def climate_seg() -> ncu_roofline.Analysis:
    """The climate-seg capture (a split capture, 559 launch rows) on its V100, analysed once for the module."""
    if not SAMPLES.is_dir():
        pytest.skip("../shared/ncu-samples is not present")
    folder = SAMPLES / "DeepLearningProfiling" / "climate-seg-TF-fp16-batch2-fw-amp"
    return ncu_roofline.analyze([folder], gpu="Tesla V100-SXM2-16GB")


@pytest.mark.parametrize("width", WIDTHS)
def test_analyze_table_keeps_rank_distinct_names_and_the_sort_key_with_its_unit(example, width):
    lines = rendered(kernel_summary_table(example.kernels, top=5, width=width), width)
    assert max(map(len, lines)) <= width
    rows = table_rows(lines)
    assert [int(r.split()[0]) for r in rows] == [1, 2, 3, 4, 5]
    # headroom, the sort key, in every row with its unit: 335 µs, 315 µs, 42.2 µs, 29.0 µs, 14.1 µs (the example's
    # time minus its speed of light, e.g. #1: 410 µs at 18.4 % of its roof leaves 410 − 75.4 = 335 µs)
    for row, headroom in zip(rows, ("335 µs", "315 µs", "42.2 µs", "29.0 µs", "14.1 µs")):
        assert headroom in row
    names = [re.split(r"\s{2,}", r.strip())[1] for r in rows]
    assert len(set(names)) == 5 and all(len(n) >= min(MIN_NAME, 15) for n in names)
    footer = " ".join(lines)
    if width == 80:  # calls, share, FLOP/s and AI give way first; the footer says so and how to see them
        assert "not shown at 80 columns: calls, share, FLOP/s, AI" in footer and "--wide" in footer
        assert "calls: launches" not in footer  # a dropped column's legend goes with it
    if width == 140:
        assert "not shown" not in footer


@pytest.mark.parametrize("sort,key,cells", [("time", "time", ("850 µs", "410 µs")),
                                            ("fraction", "of roof", ("18.4%", "36.2%"))])
def test_the_sort_key_is_never_dropped(sort, key, cells):
    kernels = ncu_roofline.analyze(EXAMPLE, sort=sort).kernels
    lines = rendered(kernel_summary_table(kernels, top=5, width=80, sort=sort), 80)
    assert max(map(len, lines)) <= 80 and key in lines[0]
    rows = table_rows(lines)
    assert cells[0] in rows[0] and cells[1] in rows[1]


def test_wide_keeps_every_column(example):
    table = kernel_summary_table(example.kernels, top=5, width=80, wide=True)
    assert [c.header for c in table.columns][:4] == ["#", "kernel", "calls", "time"]


def test_climate_seg_at_80_columns_has_distinct_long_names(samples, climate_seg):
    result = climate_seg
    for width in WIDTHS:
        lines = rendered(kernel_summary_table(result.kernels, top=10, width=width), width)
        assert max(map(len, lines)) <= width
        rows = table_rows(lines)
        assert len(rows) == 10 and all(re.search(r"≤ \d[\d.]* ms\b", r) for r in rows)  # upper bound, in ms
        names = [re.split(r"\s{2,}", r.strip())[1] for r in rows]
        assert len(set(names)) == 10 and min(map(len, names)) >= 20  # was 10 characters ("Volta_hmma…")


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_table_keeps_verdict_and_changes_and_tags_only_repeated_names(width, compare_pair):
    from ncu_roofline.comparison import compare
    from ncu_roofline.render.compare.console import comparison_table

    result = compare(*compare_pair)
    info = result.info()
    lines = rendered(comparison_table(result.kernels, result.totals, info["labels"], width=width), width)
    assert max(map(len, lines)) <= width
    rows = table_rows(lines)
    assert len(rows) == 7
    # gemm_tile runs with two grids, (64,1,1) and (32,1,1), blocks (128,1,1): the short shape tells them apart
    assert "gemm_tile(…) [64×128]" in rows[0] and "improvement" in rows[0] and "-20.0%" in rows[0]
    assert "+12.5 pt" in rows[0]  # 100 µs → 80 µs at the same work: the fraction rises by 12.5 points
    assert "gemm_tile(…) [32×128]" in rows[1] and "regression" in rows[1] and "+20.0%" in rows[1]
    assert "×" not in "".join(rows[2:])  # names that do not repeat carry no shape
    if width == 80:
        assert any(line.startswith("not shown at 80 columns:") for line in lines)


@pytest.mark.parametrize("width", WIDTHS)
def test_history_table_fits(tmp_path, width, compare_pair):
    from ncu_roofline.history.report import load_history
    from ncu_roofline.history.series import wide_values
    from ncu_roofline.history.store import append_analysis
    from ncu_roofline.render.history.console import history_table

    base, head = compare_pair
    for i, run in enumerate((base, base, base, head)):
        append_analysis(tmp_path, run, run_id=f"run{i}", labels={},
                        run_time=datetime.datetime(2026, 1, 1 + i, tzinfo=datetime.UTC))
    result = load_history(tmp_path)
    table = history_table(result.summary, wide_values(result.series, "time_s", len(result.runs)), runs=4,
                          width=width)
    lines = rendered(table, width)
    assert max(map(len, lines)) <= width
    rows = table_rows(lines)
    # tiny_kernel: 1.00 µs in runs 0-2, 2.00 µs in run 3: +100 % against the median before
    assert any("tiny_kernel" in r and "+100.0%" in r for r in rows)
    names = [re.split(r"\s{2,}", r.strip())[1] for r in rows]
    assert len(set(names)) == len(rows)


@pytest.mark.parametrize("width", WIDTHS)
def test_model_table_fits(width):
    from ncu_roofline.model.place import place_points, table_roofs, workloads_frame
    from ncu_roofline.model.workloads import gemm
    from ncu_roofline.render.model.console import model_table

    placed = place_points(workloads_frame([gemm(4096, 4096, 4096, "fp32")]),
                          table_roofs(dict.fromkeys(["H100", "A100-SXM4-80GB", "Tesla V100-SXM2-16GB"])))
    lines = rendered(model_table(placed, width=width), width)
    assert max(map(len, lines)) <= width
    # 2·4096³ FLOP = 137 GFLOP at 66.9 TFLOP/s: 2.05 ms on the H100
    assert any("NVIDIA H100 80GB HBM3" in line and "2.05 ms" in line for line in lines)


def test_statuses_in_words_keep_the_term_and_the_launch_count():
    assert status_in_words("bytes_order l1<l2 (12 of 36 launches)") == "L1 moved fewer bytes than L2 (12 of 36 launches)"
    assert status_in_words("above_roof dram") == "above the DRAM roof: check the roof"
    assert status_in_words("no roof fp64; tensor_flops_legacy_512_per_inst") == (
        "work in FP64 without a roof; tensor FLOPs as 512 per instruction (exact on Volta)")
    assert status_in_words("ok") == "nothing to report"


def test_run_notes_are_one_line_each_and_full_with_verbose(example):
    [note] = example.notes  # the limiter's counters: a 900-character ncu command
    assert len(note) > 500
    for width in WIDTHS:
        [line] = note_lines(example.notes, width=width)
        assert len(line) <= width and "--metrics" not in line
        assert line.startswith("note: example_h100_raw.csv: limiter unknown on 3 of 6 launches")
    assert note_lines(example.notes, width=80, verbose=True) == [f"note: {note}"]


# --- Markdown --------------------------------------------------------------------------------------------------------

GITHUB_CSS = """body { width: 1000px; margin: 0; box-sizing: border-box; padding: 0 16px;
  font: 14px/1.5 -apple-system, 'Segoe UI', 'Noto Sans', Helvetica, Arial, sans-serif; }
code { font: 85% ui-monospace, SFMono-Regular, 'DejaVu Sans Mono', monospace; padding: .2em .4em; }
table { border-collapse: collapse; } td, th { padding: 6px 13px; border: 1px solid #d0d7de; white-space: nowrap; }
pre { padding: 16px; }"""


def markdown_page(markdown: str) -> str:
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    return f"<!doctype html><html><head><meta charset='utf-8'><style>{GITHUB_CSS}</style></head><body>{body}</body>"


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module (each measurement opens its own tab); None without one, and then
    laid_out_width skips the test where it measures (the checks before it have run)."""
    try:
        from playwright import sync_api
    except ImportError:
        sync_api = None
    if sync_api is None or not CHROMIUM.exists():
        yield None
        return
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                              args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            yield chromium
        finally:
            chromium.close()


def laid_out_width(html: str, tmp_path: Path, browser, screenshot: Path | None = None) -> tuple[int, list[float]]:
    """The page's scroll width and each visible table's width, at a 1,000 px viewport in headless Chromium."""
    if browser is None:
        pytest.skip("needs playwright and /usr/bin/chromium")
    page_path = tmp_path / "summary.html"
    page_path.write_text(html, encoding="utf-8")
    tab = browser.new_page(viewport={"width": 1000, "height": 800})
    try:
        tab.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                  else route.abort())
        tab.goto(page_path.as_uri())
        scroll = tab.evaluate("() => document.documentElement.scrollWidth")
        tables = tab.evaluate("() => Array.from(document.querySelectorAll('table'))"
                              ".filter(t => !t.closest('details') || t.closest('details').open)"
                              ".map(t => t.getBoundingClientRect().right)")
        if screenshot is not None:
            tab.screenshot(path=str(screenshot), full_page=False)
    finally:
        tab.close()
    return scroll, tables


def test_markdown_summary_is_gfm_tables_that_fit_1000_px(example, tmp_path, browser):
    from markdown_it import MarkdownIt

    text = example.markdown(top=10)
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(text)
    # the compact table, every column in <details>, and the chart as a table in <details> (no --chart-url)
    assert sum(t.type == "table_open" for t in tokens) == 3
    header = next(line for line in text.splitlines() if line.startswith("| #"))
    assert header == "| # | kernel | time | bound | of roof | headroom | why |"
    assert "<details>" in text and "| AI DRAM | AI L2 | AI L1 | bound |" in text
    scroll, tables = laid_out_width(markdown_page(text), tmp_path, browser)
    assert scroll <= 1000 and tables and max(tables) <= 1000


def test_climate_seg_markdown_fits_and_counts_statuses_in_words(samples, tmp_path, climate_seg, browser):
    result = climate_seg
    text = result.markdown(top=10)
    statuses = result.launches["status"].astype(str)
    by_name = int(statuses.str.contains("alignment: by name", regex=False).sum())
    assert by_name == 323  # the run note: "10 kernel(s) (323 launches) cannot be told apart ..."
    assert f"{int((statuses != 'ok').sum())} of 559 launch rows carry a status: split capture: analysed from " \
           f"per-name sums ({by_name})" in text
    assert "sm__sass" not in text.split("<summary>Notes in full")[0]  # the ncu commands only in <details>
    scroll, tables = laid_out_width(markdown_page(text), tmp_path, browser)
    assert scroll <= 1000 and max(tables) <= 1000


# --- user ceilings and unnamed GPUs ------------------------------------------------------------------------------


def test_one_vocabulary_for_user_ceilings(tmp_path):
    from ncu_roofline.render.ceilings.template import ceilings_template_text
    from ncu_roofline.roofs.user_file import UNIT_KEYS, load_user_ceilings

    template = ceilings_template_text("NVIDIA GeForce RTX 5070")
    keys = [m.group(1) for m in map(re.compile(r"^#? ?(\w+) = ").match, template.splitlines()) if m]
    assert keys == ["name", *UNIT_KEYS]
    empty = tmp_path / "empty.toml"
    empty.write_text("[peaks]\n")
    with pytest.raises(InputError, match=r"e\.g\. dram_gbps = 3350") as error:
        load_user_ceilings(empty)
    assert "peak_bytes_per_s" not in str(error.value)
    docs = (Path(__file__).parent.parent / "docs" / "ceilings.md").read_text()
    assert "fp32_tflops = 9.7\ndram_gbps = 780" in docs


def test_a_user_file_naming_its_gpu_titles_the_chart(tmp_path):
    ceilings = tmp_path / "rtx5070.toml"
    ceilings.write_text('name = "NVIDIA GeForce RTX 5070"\n[peaks]\nfp32_tflops = 30.9\ndram_gbps = 672\n')
    result = ncu_roofline.analyze(FIXTURES / "details_2023_crlf.csv", ceilings=ceilings)  # names no GPU
    assert result.chart_context().gpu == "NVIDIA GeForce RTX 5070"


def test_an_export_naming_no_gpu_is_told_the_gpus_of_its_compute_capability():
    from ncu_roofline.roofs.gpu_table import load_gpu_table

    with pytest.raises(InputError) as error:
        ncu_roofline.analyze(FIXTURES / "details_2023_crlf.csv")  # device 0, CC 8.0, no name
    cc80 = [g.name for g in load_gpu_table() if g.compute_capability == 8.0]
    assert "NVIDIA A100-SXM4-40GB" in cc80 and len(cc80) > 1
    assert f"CC 8.0: {', '.join(cc80)}" in str(error.value)


def test_compare_and_history_markdown_fit_1000_px(tmp_path, compare_pair, browser):
    from ncu_roofline.comparison import compare
    from ncu_roofline.history.report import load_history
    from ncu_roofline.history.series import wide_values
    from ncu_roofline.history.store import append_analysis
    from ncu_roofline.render.compare.markdown import comparison_markdown
    from ncu_roofline.render.history.markdown import history_markdown

    base, head = compare_pair
    result = compare(base, head)
    text = comparison_markdown(result.kernels, result.totals, result.info())
    assert "| # | kernel | verdict | Δ time | Δ of roof | time base → head |" in text
    assert "| 1 | `gemm_tile(…) [64×128]` | 🟢 improvement | -20.0% | +12.5 pt | 100 µs → 80.0 µs |" in text
    scroll, tables = laid_out_width(markdown_page(text), tmp_path, browser)
    assert scroll <= 1000 and max(tables) <= 1000
    store = tmp_path / "history"
    for i, run in enumerate((base, base, base, head)):
        append_analysis(store, run, run_id=f"run{i}", labels={},
                        run_time=datetime.datetime(2026, 1, 1 + i, tzinfo=datetime.UTC))
    loaded = load_history(store)
    text = history_markdown(loaded.summary, wide_values(loaded.series, "time_s", 4), loaded.gates,
                            metadata=loaded.metadata(), runs=4, newest_run_id=loaded.newest_run_id)
    scroll, tables = laid_out_width(markdown_page(text), tmp_path, browser)
    assert scroll <= 1000 and max(tables) <= 1000


def test_with_nsys_app_headroom_is_the_kept_sort_key_and_every_line_fits(tmp_path):
    from typer.testing import CliRunner

    from ncu_roofline.cli import app
    from ncu_roofline.render.analysis.console import print_summary

    result = ncu_roofline.analyze(EXAMPLE, nsys=FIXTURES / "nsys" / "kern_sum_2024.csv")
    for width in WIDTHS:
        console = Console(width=width, record=True, file=io.StringIO())
        print_summary(result.kernels, top=5, console=console, app=result.app, sort="app_headroom_s")
        lines = console.export_text().splitlines()
        assert max(map(len, lines)) <= width
        header = next(line for line in lines if line.startswith("#  kernel"))
        assert header.rstrip().endswith("app headroom") or "app headroom" in header
    assert CliRunner().invoke(app, ["analyze", str(EXAMPLE), "--wide"]).exit_code == 0


@pytest.mark.parametrize("width", WIDTHS)
def test_the_gpu_table_fits_with_every_roof_in_one_unit_per_kind(width):
    from ncu_roofline.render.ceilings.console import gpu_table
    from ncu_roofline.roofs.gpu_table import list_gpus, load_gpu_table

    lines = rendered(gpu_table(list_gpus(load_gpu_table()), width=width), width)
    assert max(map(len, lines)) <= width
    v100 = next(line for line in lines if line.startswith("Tesla V100-SXM2-16GB"))
    # FP32 15.7 TFLOP/s, DRAM 900 GB/s = 0.900 TB/s, L1 80 SMs x 128 B/clk x 1.53 GHz = 15.7 TB/s
    assert v100.split()[2:] == ["7.0", "7.80", "15.7", "31.3", "125", "0.900", "3.13", "15.7"]


def test_what_several_captures_did_not_collect_is_said_once():
    notes = [f"/runs/{name}.ncu-rep: the capture holds no counters for FP16 (unknown on all 1 launches; the speed "
             "of light leaves it out); to count it: ncu --metrics a,b -o report ..." for name in ("vec_add", "dot")]
    assert note_lines(notes, width=200) == [
        ("note: not collected: FP16 (unknown, never 0): `ncu-roofline metrics`, in 2 captures (vec_add.ncu-rep, "
         "dot.ncu-rep)")]
    assert note_lines(notes, width=200, verbose=True) == [f"note: {n}" for n in notes]


def test_compare_and_history_take_wide(tmp_path):
    from typer.testing import CliRunner

    from ncu_roofline.cli import app

    base, head = str(FIXTURES / "compare" / "base.csv"), str(FIXTURES / "compare" / "head.csv")
    run = CliRunner().invoke(app, ["compare", base, head, "--wide"])
    assert run.exit_code == 0 and "Δ FLOP/s" in run.output and "match" in run.output and "not shown" not in run.output
    history = tmp_path / "h"
    for run_id, path in (("r1", base), ("r2", head)):
        assert CliRunner().invoke(app, ["analyze", path, "--history", str(history), "--run-id", run_id,
                                        "--rows", "0"]).exit_code == 0
    run = CliRunner().invoke(app, ["history", str(history), "--wide"])
    assert run.exit_code == 0 and "median before" in run.output and "not shown" not in run.output


def test_the_clock_narrows_the_gpus_of_a_compute_capability(tmp_path):
    """The CC 8.0 export with the device's maximum clock, 1440 MHz: of the table's CC 8.0 rows only the A30 has a
    1440 MHz boost clock (the A100s: 1410 MHz, 2 % away)."""
    lines = (FIXTURES / "details_2023_crlf.csv").read_text(encoding="utf-8-sig").splitlines()
    with_clock = []
    for line in lines:
        with_clock.append(line)
        if '"gpu__time_duration.sum"' in line:
            with_clock.append(re.sub(r'"gpu__time_duration.sum","usecond","[^"]*"',
                                     '"device__attribute_max_gpu_frequency_khz","","1440000"', line))
    export = tmp_path / "a30.csv"
    export.write_text("\n".join(with_clock) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        ncu_roofline.analyze(export)
    assert "NVIDIA A30 (the export's maximum SM clock, 1440 MHz, narrows it to 'NVIDIA A30')" in str(error.value)

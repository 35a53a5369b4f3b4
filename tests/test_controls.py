"""Controls users expect (--kernel, --exclude, --sort, show) and summaries at any width (#15 items 8, 9).

The 5-kernel example (fixtures/example_h100_raw.csv) by headroom: 1 stencil_fp64 (335 µs), 2 cutlass::Kernel
(315 µs), 3 vectorized_elementwise_kernel (42 µs), 4 softmax_warp_forward (29 µs), 5 elementwise_kernel (14 µs);
times 410, 850, 240, 45, 80 µs; roofline fractions 0.184, 0.629, 0.824, 0.362, 0.824.
"""

from __future__ import annotations

import io
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

from ncu_roofline import analyze
from ncu_roofline.cli import app
from ncu_roofline.core.errors import InputError
from ncu_roofline.render.analysis.console import kernel_summary_table, status_notes

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "example_h100_raw.csv"


@pytest.fixture(scope="module")
def example():
    return analyze(EXAMPLE)


def test_kernel_and_exclude_filter_groups_and_renumber_ranks():
    kept = analyze(EXAMPLE, kernel="elementwise", exclude="vectorized").kernels
    # "elementwise" is in ranks 3 and 5; "vectorized" drops rank 3: only the copy kernel is left, now rank 1.
    assert kept["rank"].tolist() == [1] and kept["kernel_name"].str.contains("copy_kernel_impl").all()
    assert kept["time_share"].iloc[0] == pytest.approx(80 / (410 + 850 + 240 + 45 + 80), rel=1e-3)  # of the run


def test_sort_by_time_and_by_fraction(example):
    by_time = analyze(EXAMPLE, sort="time").kernels
    assert by_time["time_s"].round(6).tolist() == [0.00085, 0.00041, 0.00024, 0.00008, 0.000045]
    by_fraction = analyze(EXAMPLE, sort="fraction").kernels
    assert by_fraction["kernel_name"].iloc[0].startswith("stencil_fp64")  # 0.184: furthest below its roof
    assert by_fraction["roofline_fraction"].is_monotonic_increasing


def test_a_filter_that_keeps_nothing_or_is_no_regex_is_refused():
    with pytest.raises(InputError, match="no kernel group left"):
        analyze(EXAMPLE, kernel="no_such_kernel")
    with pytest.raises(InputError, match="not a regular expression"):
        analyze(EXAMPLE, exclude="(")
    with pytest.raises(InputError, match="--sort must be one of"):
        analyze(EXAMPLE, sort="name")


MANGLED = "_ZN10tensorflow7functor15RowReduceKernelEPKfPfi"  # tensorflow::functor::RowReduceKernel(float const*, ...)


@pytest.mark.parametrize("pattern,kept", [
    ("^gemm$", ["gemm"]),  # anchored at the recorded name's ends (joined into one text, this matched nothing)
    (r"^tensorflow::functor::RowReduceKernel\(float const\*, float\*, int\)$", [MANGLED]),  # the display name's
    ("^_ZN10tensorflow", [MANGLED]),  # the recorded name's start
    ("RowReduce|^gemm$", [MANGLED, "gemm"]),
    ("^gemm", ["gemm", "gemm_tn"]),
])
def test_kernel_regex_anchors_at_the_ends_of_the_recorded_or_the_display_name(pattern, kept):
    from ncu_roofline.core.patterns import compile_regex
    from ncu_roofline.pipeline.select import name_mask

    kernels = pd.DataFrame({"kernel_name": [MANGLED, "gemm", "gemm_tn"]})
    assert kernels["kernel_name"][name_mask(kernels, compile_regex(pattern, "--kernel"))].tolist() == kept


def test_a_filter_that_keeps_nothing_names_only_the_options_given():
    with pytest.raises(InputError) as error:
        analyze(EXAMPLE, kernel="^softmax$")
    assert str(error.value).endswith("no kernel group left after --kernel '^softmax$' (of 5 groups)")
    with pytest.raises(InputError) as error:
        analyze(EXAMPLE, kernel="softmax", exclude="softmax_warp")
    assert "after --kernel 'softmax' and --exclude 'softmax_warp' (of 5 groups)" in str(error.value)


@pytest.mark.parametrize("width", [100, 120])
def test_terminal_table_keeps_every_number_and_the_rank_at_any_width(example, width):
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(kernel_summary_table(example.kernels, top=5, width=width))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    rows = [line for line in text.splitlines() if re.match(r"^[1-5] ", line)]
    assert [int(line.split()[0]) for line in rows] == [1, 2, 3, 4, 5]
    # Rank 1: 410 µs, headroom 335 µs, 18.4 % of roof: whole, never cut.
    assert "410 µs" in rows[0] and "335 µs" in rows[0] and "18.4%" in rows[0]
    assert "…" not in "".join(line.split("  ")[-1] for line in rows)  # the last column (headroom) is whole


def test_statuses_are_notes_under_the_table_grouped_by_text(example):
    table = example.kernels.assign(status=["ok", "missing bytes_l1 (needs a)", "ok", "missing bytes_l1 (needs a)",
                                           "no FLOPs; bytes_order l1<l2 (1 of 2 launches)"])
    # in words in the terminal, one line per note naming its ranks; an unknown note as it is
    assert status_notes(table, top=5) == ["status of #2, #4: L1 bytes not counted in this launch",
                                          "status of #5: no FLOPs",
                                          "status of #5: L1 moved fewer bytes than L2 (1 of 2 launches)"]
    # --verbose: the codes, as Parquet keeps them
    assert status_notes(table, top=5, verbose=True) == [
        "status of #2, #4: missing bytes_l1 (needs a)", "status of #5: no FLOPs; bytes_order l1<l2 (1 of 2 launches)"]


def test_show_prints_one_kernels_drilldown(tmp_path):
    runner = CliRunner()
    assert runner.invoke(app, ["analyze", str(EXAMPLE), "-o", str(tmp_path / "out"), "--rows", "0"]).exit_code == 0
    result = runner.invoke(app, ["show", str(tmp_path / "out"), "softmax"], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert result.output.startswith("#4 void softmax_warp_forward<c10::Half, c10::Half, float, 10>")
    assert "flop_total / time_s" in result.output and "roofs from" in result.output and "1 launch rows" in result.output
    ambiguous = runner.invoke(app, ["show", str(tmp_path / "out"), "elementwise"])
    assert ambiguous.exit_code == 2 and "matches 2 kernel groups" in ambiguous.output


def test_markdown_links_the_chart_relative_to_the_summary_and_names_the_gpu(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "-o", str(tmp_path / "out"), "--format", "png",
                                 "--summary-md", str(tmp_path / "summary.md"), "--rows", "3"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "summary.md").read_text()
    # a local image is a broken link in a step summary: the chart's points as a table, the file named as text
    assert "![roofline]" not in text and "`out/roofline.png` beside this summary" in text
    assert "GPU: **NVIDIA H100 PCIe**" in text and "Inputs: `example_h100_raw.csv`" in text
    assert str(tmp_path) not in text  # file names, never absolute paths
    assert "| AI DRAM | AI L2 | AI L1 | bound |" in text


def test_one_precision_chart_plots_that_precisions_work_over_its_own_roof(example, tmp_path):
    from ncu_roofline.render.chart.roofline import chart_data
    from ncu_roofline.render.analysis.precision_view import precision_view

    table = example.kernels.assign(flop_fp16=0.0, flop_fp32=0.0)
    table.loc[0, ["flop_fp16", "flop_fp32", "time_s", "bytes_dram"]] = [1e9, 3e9, 1e-3, 1e9]
    view = precision_view(table, "fp16")
    # 1e9 FP16 FLOP in 1 ms: 1e12 FLOP/s at AI 1e9 / 1e9 = 1 FLOP/byte (the 3e9 FP32 FLOP are not counted).
    assert view.loc[0, "flop_per_s"] == pytest.approx(1e12) and view.loc[0, "ai_dram"] == pytest.approx(1.0)
    data = chart_data(view, replace(example.chart_context(), precision="fp16"))
    assert set(data.roofs.loc[data.roofs["kind"] == "compute", "roof"]) == {"FP16"}
    assert len(data.points["rank"].unique()) == 1  # the only kernel with FP16 work
    written = example.write(tmp_path, precisions=["fp16"])
    assert {"roofline_fp16.html", "roofline_fp16.vl.json"} <= {p.name for p in written}
    with pytest.raises(InputError, match="--precision must be one of"):
        precision_view(table, "int4")


def test_groups_of_one_name_are_told_apart_in_the_table_and_the_markdown(samples):
    """nersc-gpp's sigma_gpp_gpu_34 runs with two launch shapes, (65535,1,1)x(128,1,1) and (4,1,1)x(256,1,1): two
    groups, and neither the terminal table nor the Markdown may print the same name for both."""
    pytest.importorskip("ncu_report")
    from rich.console import Console

    from ncu_roofline import analyze
    from ncu_roofline.render.analysis.console import kernel_summary_table

    gpp = samples / "nersc-gpp"
    result = analyze([gpp / "output0.ncu-rep", gpp / "output1.ncu-rep"])
    assert len(result.kernels) == 2 and result.kernels["kernel_name"].nunique() == 1
    console = Console(width=120, record=True)
    console.print(kernel_summary_table(result.kernels, top=2, width=120))
    lines = [line for line in console.export_text().splitlines() if "sigma_gpp_gpu_34" in line]
    assert len(lines) == 2 and "(65535,1,1)" in lines[0] and "(4,1,1)" in lines[1]
    rows = [line for line in result.markdown(top=2).splitlines() if "sigma_gpp_gpu_34" in line]
    # the compact table, then the same two kernels in the table of every column and the chart's table (<details>)
    assert len(rows) == 6
    for first, second in zip(rows[0::2], rows[1::2]):
        assert first.split("|")[2] != second.split("|")[2]

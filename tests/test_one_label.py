"""One name per kernel (#35 item 7): the disambiguated label is decided once over the whole table, so the terminal
at any width and row count, the Markdown and the chart print the same distinguishing part; that part is the
kernel's own word (a functor, an op) before a number; `--wide` keeps the rank column."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from ncu_roofline.cli import app
from ncu_roofline.core.kernel_labels import LABEL_LEN, kernel_labels

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "fixtures" / "example_h100_raw.csv"
CLIMATE = "DeepLearningProfiling/climate-seg-TF-fp16-batch2-fw-amp"
V100 = "Tesla V100-SXM2-16GB"
runner = CliRunner()

# NVIDIA apex's fused LAMB optimizer: three instantiations of one template that differ first in the arity of
# TensorListMetadata<N>, then in the functor, the part a reader knows them by.
LAMB = [f"void multi_tensor_apply_kernel<TensorListMetadata<{n}>, {functor}<float>, float, float, float, float, "
        f"float, float, adamMode_t, float>(long, int volatile*, TensorListMetadata<{n}>, {functor}<float>, float, "
        f"float, float, float, float, float, adamMode_t, float)"
        for n, functor in ((4, "LAMBStage1Functor"), (1, "L2NormFunctor"), (2, "LAMBStage2Functor"))]


def test_lamb_kernels_are_told_apart_by_their_functor_not_the_metadata_arity():
    labels = kernel_labels(LAMB)
    for label, functor in zip(labels, ("LAMBStage1Functor", "L2NormFunctor", "LAMBStage2Functor")):
        assert label.endswith(f"[{functor}]"), labels
        assert len(label) <= LABEL_LEN


def test_names_that_differ_only_in_a_number_still_show_the_number():
    labels = kernel_labels([f"void multi_tensor_apply_kernel<TensorListMetadata<{n}>, ScaleFunctor<float, float>>"
                            "(long, int volatile*)" for n in (4, 2)])  # too long to show the argument
    assert labels == ["multi_tensor_apply_kernel<…>(…) [4]", "multi_tensor_apply_kernel<…>(…) [2]"]


def test_a_narrow_width_folds_the_base_but_keeps_each_distinguishing_part():
    wide = kernel_labels(LAMB)
    narrow = kernel_labels(LAMB, max_len=26)
    assert [w[w.index(" ["):] for w in wide] == [n[n.index(" ["):] for n in narrow]
    assert all(len(n) < len(w) for n, w in zip(narrow, wide))


def test_a_width_that_would_merge_two_labels_keeps_the_whole_ones():
    names = ["volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc_tn_v1",
             "volta_fp16_s884cudnn_fp16_128x128_ldg8_relu_f2f_exp_small_nhwc_tn_v1"]
    # 24 characters would cut both to 'volta_fp16_s884cudnn_fp…'
    assert kernel_labels(names, max_len=24) == kernel_labels(names)
    assert len(set(kernel_labels(names))) == 2


def _table_rows(output: str) -> dict[int, str]:
    """rank -> kernel cell of the terminal table (the cell runs up to the next two spaces)."""
    rows = {}
    for line in output.splitlines():
        match = re.match(r"\s*(\d+)  (.+?)  ", line)
        if match:
            rows.setdefault(int(match.group(1)), match.group(2).strip())
    return rows


def _suffix(label: str) -> str:
    return label[label.rindex(" ["):] if " [" in label else ""


@pytest.mark.slow
def test_one_eigen_kernel_reads_the_same_in_every_table_width_the_markdown_and_the_chart(samples, tmp_path,
                                                                                        monkeypatch):
    """Rank 10 of climate-seg is an Eigen kernel that 48 others share a short form with; its tag was
    `[TensorMap]` in ten rows at 80 columns but `[2]` in 49 rows at 160 columns and in the chart."""
    capture = str(samples / CLIMATE)
    seen: dict[str, str] = {}
    for columns, rows in ((80, 10), (100, 49), (160, 49)):
        monkeypatch.setenv("COLUMNS", str(columns))
        result = runner.invoke(app, ["analyze", capture, "--gpu", V100, "--rows", str(rows)])
        assert result.exit_code == 0, result.output
        seen[f"terminal {columns}×{rows}"] = _table_rows(result.output)[10]
    monkeypatch.delenv("COLUMNS")
    out = tmp_path / "out"
    result = runner.invoke(app, ["analyze", capture, "--gpu", V100, "--rows", "49", "-o", str(out),
                                 "--summary-md", str(tmp_path / "s.md"), "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    markdown = (tmp_path / "s.md").read_text()
    [md_cell] = re.findall(r"^\| 10 \| `([^`]+)` \|", markdown, flags=re.M)[:1]
    seen["markdown"] = md_cell
    html = (out / "roofline.html").read_text()
    [chart] = set(re.findall(r'"label": ?("10\. [^"]+")', html))
    seen["chart"] = json.loads(chart).removeprefix("10. ")  # the page's JSON escapes … and <
    seen["json"] = next(k["kernel_label"] for k in json.loads((tmp_path / "s.json").read_text())["kernels"]
                        if k["rank"] == 10)
    suffixes = {where: _suffix(label) for where, label in seen.items()}
    assert len(set(suffixes.values())) == 1 and next(iter(suffixes.values())), suffixes
    # the Markdown and the chart print the whole label; a table at 80 columns may only fold its base
    assert seen["markdown"] == seen["chart"] == seen["json"] == seen["terminal 160×49"], seen


def test_wide_keeps_the_rank_column_in_a_narrow_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "--wide"])
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if "kernel" in line and "calls" in line)
    assert header.split()[:2] == ["#", "kernel"], result.output
    assert sorted(_table_rows(result.output)) == [1, 2, 3, 4, 5]  # the example's five kernel groups


def test_wide_prints_past_the_console_width_with_every_column():
    from ncu_roofline.analysis import analyze
    from ncu_roofline.render.analysis.console import kernel_summary_table, print_table

    stream = io.StringIO()
    console = Console(file=stream, width=60, force_terminal=False)
    print_table(console, kernel_summary_table(analyze([EXAMPLE]).kernels, top=5, width=60, wide=True), wide=True)
    text = stream.getvalue()
    header = next(line for line in text.splitlines() if "kernel" in line)
    assert header.split()[:4] == ["#", "kernel", "calls", "time"] and "share" in header, text


def test_compare_prints_one_name_per_kernel_in_the_terminal_markdown_and_json(tmp_path, monkeypatch):
    """fixtures/compare has gemm_tile in two launch shapes: grid × block (64×128, 32×128) tells them apart."""
    base, head = ROOT / "fixtures" / "compare" / "base.csv", ROOT / "fixtures" / "compare" / "head.csv"
    monkeypatch.setenv("COLUMNS", "120")
    result = runner.invoke(app, ["compare", str(base), str(head), "--summary-md", str(tmp_path / "c.md"),
                                 "--json", str(tmp_path / "c.json")])
    assert result.exit_code == 0, result.output
    labels = [k["kernel_label"] for k in json.loads((tmp_path / "c.json").read_text())["kernels"]]
    assert {"gemm_tile(…) [64×128]", "gemm_tile(…) [32×128]"} <= set(labels)
    markdown = (tmp_path / "c.md").read_text()
    for label in ("gemm_tile(…) [64×128]", "gemm_tile(…) [32×128]"):
        assert f"`{label}`" in markdown and label in result.output


def test_a_failing_gate_names_the_kernel_as_the_tables_do(tmp_path, monkeypatch):
    """gemm_tile [32×128] is +20 % (50 → 60 µs in fixtures/compare): `time_s>+5%` fails on it, not on [64×128]."""
    base, head = ROOT / "fixtures" / "compare" / "base.csv", ROOT / "fixtures" / "compare" / "head.csv"
    monkeypatch.setenv("COLUMNS", "120")
    result = runner.invoke(app, ["compare", str(base), str(head), "--min-time", "5e-6", "--fail-on", "time_s>+5%",
                                 "--summary-md", str(tmp_path / "c.md")])
    assert result.exit_code == 1, result.output
    assert "FAIL time_s>+5% (4 kernels checked): gemm_tile(…) [32×128] +20.0%" in result.output
    assert "| `gemm_tile(…) [32×128]` +20.0% |" in (tmp_path / "c.md").read_text()

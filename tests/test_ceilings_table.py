"""The ceiling table as users meet it: `ceilings --json`, `ceilings show`, `ceilings template`, ridge points, and a
CSV without a device name analysed with `--gpu ROW` drawing all three memory roofs."""

from __future__ import annotations

import json
import math
import re
import tomllib

import numpy as np
import pytest
from typer.testing import CliRunner

import ncu_roofline
from ncu_roofline.cli import app
from ncu_roofline.roofs.gpu_table import load_gpu_table, match_gpu
from ncu_roofline.render.chart.roofline import chart_data
from ncu_roofline.roofs.peaks import ridge_points
from ncu_roofline.roofs.user_file import load_user_ceilings
from ncu_roofline.core.vocabulary import LEVELS, display, peak_bytes_column

from conftest import FIXTURES

SIX_ROOFS = ("peak_flop_per_s_fp64", "peak_flop_per_s_fp32", "peak_flop_per_s_fp16", "peak_bytes_per_s_dram",
             "peak_bytes_per_s_l2", "peak_bytes_per_s_l1")
runner = CliRunner()


def test_ceilings_json_has_no_null_among_the_six_roofs():
    result = runner.invoke(app, ["ceilings", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert len(rows) == len(load_gpu_table())
    missing = [(r["name"], k) for r in rows for k in SIX_ROOFS if r["peaks"][k] is None]
    assert missing == []


def test_readme_gives_the_table_size_counted_from_the_data():
    readme = (FIXTURES.parent / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"sourced table of (\d+)\s+GPUs", readme)
    assert stated and int(stated.group(1)) == len(load_gpu_table())


def test_h100_sxm_dense_tensor_roofs_per_type():
    tensor = json.loads(runner.invoke(app, ["ceilings", "show", "NVIDIA H100 80GB HBM3", "--json"]).output)
    roofs = tensor["tensor_roofs"]
    # dense, never sparse: 132 SMs x 2048 / 4096 / 8192 FLOP/clk x 1.83 GHz = 494.7 / 989.4 / 1978.9 TFLOP/s
    assert (roofs["tf32"], roofs["fp16"], roofs["fp8"]) == (494.7e12, 989.4e12, 1978.9e12)
    assert roofs["fp4"] is None  # Hopper has no FP4 tensor path


def test_ceilings_show_json_gives_every_roof_a_source_or_formula_and_the_ridges():
    described = json.loads(runner.invoke(app, ["ceilings", "show", "H100 SXM", "--json"]).output)
    for key, info in described["peaks"].items():
        assert info["source"] or info["derived"], key
    ridges = {(r["compute"], r["memory"]): r["ai_flop_per_byte"] for r in described["ridges"]}
    assert ridges[("fp32", "dram")] == pytest.approx(66.9e12 / 3.35e12)  # 19.97 FLOP/byte
    # L1: 132 SMs x 128 B/clk x 1.98 GHz = 33.45 TB/s; FP64 33.5 TFLOP/s meets it at 1.0 FLOP/byte
    assert ridges[("fp64", "l1")] == pytest.approx(33.5e12 / (132 * 128 * 1.98e9))
    assert ridges[("tensor_fp8", "l2")] == pytest.approx(1978.9e12 / (80 * 64 * 1.98e9))
    assert len(ridges) == 3 * (4 + 5)  # (fp64, fp32, fp16, tensor + 5 tensor types) x (dram, l2, l1)


def test_ceilings_show_is_a_compact_table_that_fits_80_columns():
    import io

    from rich.console import Console

    from ncu_roofline.render.ceilings.console import gpu_compact_view
    from ncu_roofline.roofs.gpu_table import describe_gpu, match_gpu

    console = Console(width=80, record=True, file=io.StringIO())
    console.print(gpu_compact_view(describe_gpu(match_gpu("NVIDIA H100 80GB HBM3"))))
    text = console.export_text()
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80 and len(lines) <= 30  # was 174 lines with every URL inline
    assert "https://" not in text and "--sources" in text
    # the L2 roof in a few words: 80 slices x 64 B/clk x 1.98 GHz = 10.1 TB/s
    assert any("L2" in line and "10.1 TB/s" in line and "80 slices x 64 B/clk x 1.98 GHz" in line for line in lines)
    assert any(line.startswith("DRAM") and "spec: archive-lib.hpctech.co.jp" in line for line in lines)


def test_ceilings_show_sources_prints_formula_source_and_ridges():
    result = runner.invoke(app, ["ceilings", "show", "Tesla V100-SXM2-16GB", "--sources"], terminal_width=400)
    assert result.exit_code == 0, result.output
    text = result.output
    assert "l2_slices * l2_bytes_per_clk_per_slice * boost_clock_ghz" in text  # the L2 roof's formula
    assert "[gpu.derived]" in text  # sources are printed as written, brackets included
    assert "measured (not roofs)" in text and "14.3 TB/s" in text  # V100 ERT L1 14336 GB/s, beside its roof
    assert "ridge points" in text


def test_ridge_points_skip_unknown_roofs():
    ridges = ridge_points({"peak_flop_per_s_fp32": 10e12, "peak_bytes_per_s_dram": 1e12,
                           "peak_bytes_per_s_l2": math.nan, "peak_flop_per_s_tensor_fp16": 100e12,
                           "peak_flop_per_s_fp64": None})
    assert [(r["compute"], r["memory"], r["ai_flop_per_byte"]) for r in ridges] == [
        ("fp32", "dram", 10.0),  # 10 TFLOP/s / 1 TB/s
        ("tensor_fp16", "dram", 100.0),  # 100 TFLOP/s / 1 TB/s
    ]


# --- names -------------------------------------------------------------------------------------------------------


def test_gpu_family_name_lists_only_that_family():
    result = runner.invoke(app, ["analyze", str(FIXTURES / "details_2023_crlf.csv"), "--gpu", "A100"])
    assert result.exit_code == 2
    for row in ("NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe"):
        assert row in result.output
    assert "A10'" not in result.output and "H100" not in result.output and "A10G" not in result.output


def test_tesla_v100_lists_the_v100_rows():
    result = runner.invoke(app, ["ceilings", "show", "Tesla V100"])
    assert result.exit_code == 2
    assert "Tesla V100-SXM2-16GB" in result.output and "Tesla V100-PCIE-16GB" in result.output
    assert "H100" not in result.output


def test_an_unknown_gpu_gets_the_template_route_never_another_gpu():
    result = runner.invoke(app, ["ceilings", "show", "NVIDIA GeForce RTX 2070"])
    assert result.exit_code == 2
    assert "ceilings template 'NVIDIA GeForce RTX 2070'" in result.output and "--ceilings FILE.toml" in result.output
    assert not any(s.name in result.output for s in load_gpu_table())


def test_a_report_of_a_gpu_missing_from_the_table_is_not_pointed_at_another(samples):
    pytest.importorskip("ncu_report")
    analysis = ncu_roofline.analyze(samples / "matrixMul" / "profile.nsight-cuprof-report",  # GeForce RTX 2070
                                    allow_empty=True)  # a report without counters: nothing to place
    statuses = " ".join(analysis.launches["status"].astype(str))
    assert "no ceiling table entry for GPU 'GeForce RTX 2070'" in statuses
    assert "ceilings template" in statuses and "4090" not in statuses and "2060" not in statuses


# --- template ----------------------------------------------------------------------------------------------------


def test_template_without_input_names_every_roof_and_fills_none(tmp_path):
    result = runner.invoke(app, ["ceilings", "template", "My GPU"])
    assert result.exit_code == 0, result.output
    data = tomllib.loads(result.output)
    assert data == {"name": "My GPU", "peaks": {}}  # every roof commented out: unknown until the user fills it
    for key in ("fp64_tflops", "fp32_tflops", "fp16_tflops", "tensor_tflops", "dram_gbps", "l2_gbps", "l1_gbps"):
        assert f"# {key} = " in result.output
    assert "DENSE" in result.output and "THEORETICAL" in result.output


def test_template_from_a_report_holds_the_reports_own_peaks(samples, tmp_path):
    pytest.importorskip("ncu_report")
    report = samples / "cs599k" / "rms_norm_matrix_2025-04-21_v1.ncu-rep"
    result = runner.invoke(app, ["ceilings", "template", "NVIDIA H100 PCIe (clock-locked)", "--from", str(report)])
    assert result.exit_code == 0, result.output
    path = tmp_path / "mine.toml"
    path.write_text(result.output, encoding="utf-8")
    user = load_user_ceilings(path)  # the template is a valid --ceilings file as printed
    launches = ncu_roofline.analyze(report).launches  # the report holds all seven roofs: none from the table
    assert set(launches["ceiling_source"].astype(str)) == {"report"}
    for column, value in user.peaks.items():
        expected = float(np.median(launches[column]))
        # printed with 6 significant digits, e.g. FP32 = 2 x 14592 FLOP/clk x ~1.103 GHz = 32.19 TFLOP/s
        assert value == pytest.approx(expected, rel=1e-5), column
    assert len(user.peaks) == 7


# --- --gpu on a CSV without a device name ---------------------------------------------------------------------------


@pytest.mark.parametrize("row", [s.name for s in load_gpu_table()])
def test_any_table_row_draws_dram_l2_and_l1_roofs(row):
    analysis = ncu_roofline.analyze(FIXTURES / "details_2023_crlf.csv", gpu=row)
    assert analysis.launches["device_name"].isna().all()  # the export names no device: --gpu decides
    data = chart_data(analysis.kernels, analysis.chart_context())
    memory = data.roofs[data.roofs["kind"] == "memory"]
    assert set(memory["roof"]) == {display(level) for level in LEVELS}  # DRAM, L2, L1
    spec = match_gpu(row)
    for level in LEVELS:
        assert memory.loc[memory["roof"] == display(level), "peak"].iloc[0] == spec.peaks[peak_bytes_column(level)]


def test_the_issue_example_draws_l2_and_l1(samples):
    analysis = ncu_roofline.analyze(samples / "nersc-gpp" / "output1.csv", gpu="NVIDIA H100 PCIe")
    spec = json.dumps(analysis.chart().to_dict())
    # L2: 80 slices x 64 B/clk x 1.755 GHz = 8.99 TB/s; L1: 114 SMs x 128 B/clk x 1.755 GHz = 25.6 TB/s
    data = chart_data(analysis.kernels, analysis.chart_context())
    peaks = dict(zip(data.roofs["roof"], data.roofs["peak"]))
    assert peaks["L2"] == pytest.approx(80 * 64 * 1.755e9) and peaks["L1"] == pytest.approx(114 * 128 * 1.755e9, rel=1e-5)
    assert '"roof": "L2"' in spec and '"roof": "L1"' in spec

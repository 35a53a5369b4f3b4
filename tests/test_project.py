"""`project`: the measured work of each kernel group on other GPUs' roofs (docs/projection.md).

The expected numbers are written out here from the kernel table's measured work (the input) and the roofs of
metrics/gpus.toml (read with tomllib), never from the projection code.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from ncu_roofline import analyze
from ncu_roofline.cli import app

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
V100 = "Tesla V100-PCIE-16GB"
runner = CliRunner()


def table_gpu(name: str) -> dict:
    return next(g for g in tomllib.loads((ROOT / "metrics" / "gpus.toml").read_text())["gpu"] if g["name"] == name)


@pytest.fixture(scope="module")
def v100(request):
    path = ROOT.parent / "shared" / "ncu-samples" / "cuda-roofline" / "output_V100.csv"
    if not path.is_file():
        pytest.skip("../shared/ncu-samples is not present")
    return analyze(path, gpu=V100)


def _row(kernels: pd.DataFrame, name_part: str, target: str) -> pd.Series:
    rows = kernels[kernels["kernel_name"].str.contains(name_part, regex=False) & (kernels["target"] == target)]
    assert len(rows) == 1, rows
    return rows.iloc[0]


def test_a_dram_bound_kernel_scales_with_the_dram_bandwidth_exactly(v100):
    projected = v100.project(["H200", "B200"]).kernels
    measured = v100.kernels.set_index("kernel_name")
    h200, b200 = table_gpu("NVIDIA H200"), table_gpu("NVIDIA B200")
    for name in ("InitializeMatrix_kernel<float", "InitializeMatrix_kernel<__half"):
        on_h200, on_b200 = _row(projected, name, "NVIDIA H200"), _row(projected, name, "NVIDIA B200")
        dram = measured.loc[on_h200["kernel_name"], "bytes_dram"]
        assert on_h200["bound_target"] == on_b200["bound_target"] == "dram"
        assert on_h200["time_at_roof_s"] == pytest.approx(dram / (h200["dram_gbps"] * 1e9), rel=1e-12)
        assert on_h200["time_at_roof_s"] / on_b200["time_at_roof_s"] == pytest.approx(
            b200["dram_gbps"] / h200["dram_gbps"], rel=1e-12)
        # same efficiency: the measured fraction kept, t_sol here over t_sol there
        v100_dram = table_gpu(V100)["dram_gbps"] * 1e9
        assert on_h200["time_same_efficiency_s"] == pytest.approx(
            measured.loc[on_h200["kernel_name"], "time_s"] * (dram / (h200["dram_gbps"] * 1e9)) / (dram / v100_dram),
            rel=1e-12)


def test_a_compute_bound_kernel_scales_with_the_flop_roof_and_its_bound_may_change(v100):
    projected = v100.project(["NVIDIA A100-PCIE-40GB", "NVIDIA H200"]).kernels
    gemm = _row(projected, "cutlass_70_tensorop", "NVIDIA A100-PCIE-40GB")
    tensor = v100.kernels.set_index("kernel_name").loc[gemm["kernel_name"], "flop_tensor"]
    a100 = table_gpu("NVIDIA A100-PCIE-40GB")
    assert gemm["bound_source"] == gemm["bound_target"] == "tensor"
    assert gemm["time_at_roof_s"] == pytest.approx(tensor / (a100["tensor_fp16_tflops"] * 1e12), rel=1e-12)
    assert gemm["time_at_roof_s"] / gemm["t_sol_s"] == pytest.approx(
        table_gpu(V100)["tensor_fp16_tflops"] / a100["tensor_fp16_tflops"], rel=1e-12)
    # on the H200 the same work is L2-bound: its 989 TFLOP/s tensor roof outruns its 10.1 TB/s L2
    on_h200 = _row(projected, "cutlass_70_tensorop", "NVIDIA H200")
    l2 = v100.kernels.set_index("kernel_name").loc[gemm["kernel_name"], "bytes_l2"]
    h200 = table_gpu("NVIDIA H200")
    assert on_h200["bound_target"] == "l2"
    assert on_h200["time_at_roof_s"] == pytest.approx(l2 / (h200["l2_gbps"] * 1e9), rel=1e-12)
    assert l2 / (h200["l2_gbps"] * 1e9) > tensor / (h200["tensor_fp16_tflops"] * 1e12)


def test_the_run_is_the_sum_of_its_groups_and_its_speedup_a_range(v100):
    projection = v100.project(["H200"])
    kernels, run = projection.kernels, projection.runs.iloc[0]
    assert run["kernels_projected"] == len(v100.kernels) == 4
    assert run["time_s"] == pytest.approx(v100.kernels["time_s"].sum(), rel=1e-12)
    assert run["time_at_roof_s"] == pytest.approx(kernels["time_at_roof_s"].sum(), rel=1e-12)
    assert run["speedup_low"] == pytest.approx(run["time_s"] / kernels["time_same_efficiency_s"].sum(), rel=1e-12)
    assert run["speedup_high"] == pytest.approx(run["time_s"] / kernels["time_at_roof_s"].sum(), rel=1e-12)
    assert json.loads(projection.metadata["ncu_roofline.projection.assumptions"])  # every output carries them


def test_the_launch_floor_holds_tiny_kernels_up(v100):
    floor = tomllib.loads((ROOT / "metrics" / "projection.toml").read_text())["launch_floor"]
    assert floor["source"].strip()
    kernels = v100.project(["B200"]).kernels
    assert (kernels["launch_floor_s"] == kernels["launches"] * floor["seconds_per_launch"]).all()
    slow = v100.project(["B200"], seconds_per_launch=0.02).kernels  # 20 ms a launch: above every t_sol but one
    floored = slow[slow["at_launch_floor"]]
    assert len(floored) == 3
    assert (floored["time_at_roof_s"] == floored["launches"] * 0.02).all()
    assert (floored["time_same_efficiency_s"] >= floored["time_at_roof_s"]).all()


def test_tensor_work_of_a_type_the_target_has_no_roof_for_is_not_projectable():
    result = analyze(FIXTURES / "tensor_types_raw.csv")
    kernels = result.project(["NVIDIA A100-PCIE-40GB"]).kernels
    fp8 = _row(kernels, "gemm_fp8_e4m3", "NVIDIA A100-PCIE-40GB")
    assert pd.isna(fp8["time_at_roof_s"]) and pd.isna(fp8["time_same_efficiency_s"]) and pd.isna(fp8["bound_target"])
    assert "not projectable: no Tensor FP8 roof on NVIDIA A100-PCIE-40GB" in fp8["status"]
    bf16 = _row(kernels, "gemm_bf16", "NVIDIA A100-PCIE-40GB")
    assert bf16["time_at_roof_s"] > 0 and "not projectable" not in bf16["status"]


def test_uncounted_terms_are_named(samples):
    result = analyze(samples / "cuda-roofline" / "output_A100.csv", gpu="NVIDIA A100-PCIE-40GB")
    projection = result.project(["NVIDIA H200"])
    gemm = projection.kernels.iloc[0]
    assert gemm["terms_lacking"] == "FP64, FP32, FP16, Tensor" and not gemm["sol_complete_target"]
    assert "lower bounds" in projection.runs.iloc[0]["status"]


# ------------------------------------------------------------------------------------------------ the command

def _cli(*args: str, columns: int | None = None):
    env = {"COLUMNS": str(columns)} if columns else {}
    return runner.invoke(app, ["project", *args], env=env)


def test_cli_outputs_json_parquet_markdown_and_chart(samples, tmp_path):
    profile = samples / "cuda-roofline" / "output_V100.csv"
    out, md, js = tmp_path / "out", tmp_path / "summary.md", tmp_path / "p.json"
    result = _cli(str(profile), "--gpu", V100, "--to", "H200", "--to", "B200", "-o", str(out),
                  "--summary-md", str(md), "--json", str(js))
    assert result.exit_code == 0, result.output
    payload = json.loads(js.read_text())
    assert payload["kind"] == "projection" and [r["target"] for r in payload["runs"]] == ["NVIDIA H200",
                                                                                          "NVIDIA B200"]
    first = payload["kernels"][0]
    for field in ("kernel_name", "target", "t_sol_s", "bound_source", "time_s", "time_at_roof_s",
                  "time_same_efficiency_s", "bound_target"):
        assert field in first
    run = payload["runs"][0]
    assert run["speedup_low"] <= run["speedup_high"]
    table = pd.read_parquet(out / "projection.parquet")
    assert len(table) == 4 * 2
    spec = json.loads((out / "projection.vl.json").read_text())
    arrows = spec["datasets"]["arrows"]
    assert {a["gpu"] for a in arrows} == {"NVIDIA H200", "NVIDIA B200"}
    assert all(a["y2"] > a["y"] for a in arrows)  # both GPUs are faster than the V100 for these kernels
    # Every kernel's arrows start at the same measured point: side by side, not one hidden under the other.
    for label in {a["label"] for a in arrows}:
        mine = [a for a in arrows if a["label"] == label]
        offsets = {a["gpu"]: a["dodge_px"] for a in mine}
        assert len(set(offsets.values())) == 2 and sum(offsets.values()) == 0, mine
    rule = next(layer for layer in spec["layer"] if layer.get("data", {}).get("name") == "arrows"
                and layer["mark"]["type"] == "rule")
    assert rule["mark"]["xOffset"] == {"expr": "datum.dodge_px"}
    assert all(len(line) <= 100 for line in spec["title"]["subtitle"])  # lines, not one line cut at the edge
    assert (out / "projection.html").stat().st_size > 0
    text = md.read_text()
    assert "NVIDIA H200: GPU time" in text and "Assumptions" in text


@pytest.mark.parametrize("columns", [80, 100])
def test_cli_table_fits_the_terminal(samples, columns):
    result = _cli(str(samples / "cuda-roofline" / "output_V100.csv"), "--gpu", V100, "--to", "H200", "--to",
                  "NVIDIA A100-PCIE-40GB", columns=columns)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= columns
    rows = [line for line in lines if re.match(r"\d+  \S", line)]
    assert len(rows) == 4 * 2 and sum("H200" in r for r in rows) == 4
    assert any("→" in r and "DRAM" in r for r in rows)
    assert sum(line.startswith("NVIDIA H200: GPU time") for line in lines) == 1


def test_cli_unknown_target_is_one_line_exit_2(tmp_path):
    result = _cli(str(FIXTURES / "tensor_types_raw.csv"), "--to", "H900")
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1 and "H900" in result.output


def test_cli_target_without_the_needed_tensor_roof_is_one_line_exit_2():
    result = _cli(str(FIXTURES / "tensor_types_raw.csv"), "--to", "NVIDIA A100-PCIE-40GB")
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1 and "Tensor FP8" in result.output
    listed = _cli(str(FIXTURES / "tensor_types_raw.csv"), "--to", "NVIDIA A100-PCIE-40GB", "--partial")
    assert listed.exit_code == 0, listed.output
    assert "not projectable: no Tensor FP8 roof" in listed.stdout


def test_cli_profile_with_nothing_projectable_is_one_line_exit_2(samples):
    profile = samples / "cuda-roofline" / "output_V100.csv"
    unplaced = _cli(str(profile), "--to", "H200")  # the export names no GPU: nothing on a roofline
    assert unplaced.exit_code == 2 and len(unplaced.output.strip().splitlines()) == 1
    # only the tensor GEMMs, onto a GPU without tensor cores: nothing can be projected, --partial or not
    none = _cli(str(profile), "--gpu", V100, "--kernel", "cutlass", "--to", "GTX 1660 SUPER", "--partial")
    assert none.exit_code == 2 and "no kernel can be projected onto NVIDIA GeForce GTX 1660 SUPER" in none.output


def test_a_timeline_weights_the_run_by_every_launch_of_each_kernel():
    """fixtures/nsys/kern_sum_2024.csv: dgemm 0.400 s and saxpy 0.050 s over 100 launches each, and 0.150 s of a
    kernel the profile never reached (0.600 s in all). Each group's projection counts app_time_s / time_s times."""
    result = analyze(FIXTURES / "raw_base_units.csv", nsys=FIXTURES / "nsys" / "kern_sum_2024.csv")
    projection = result.project(["H200"])
    kernels, run = projection.kernels, projection.runs.iloc[0]
    weight = kernels["app_time_s"] / kernels["time_s"]
    assert run["time_s"] == pytest.approx(0.400 + 0.050, rel=1e-12)
    assert run["time_at_roof_s"] == pytest.approx((weight * kernels["time_at_roof_s"]).sum(), rel=1e-12)
    assert run["time_same_efficiency_s"] == pytest.approx((weight * kernels["time_same_efficiency_s"]).sum(),
                                                          rel=1e-12)
    assert run["time_unprojected_s"] == pytest.approx(0.600 - 0.450, rel=1e-9)
    assert "never profiled" in run["status"]


def test_json_follows_the_documented_schema():
    jsonschema = pytest.importorskip("jsonschema")
    text = (ROOT / "docs" / "json-schema.md").read_text()
    schema = json.loads(text.split("<!-- schema: projection -->", 1)[1].split("```json", 1)[1].split("```", 1)[0])
    result = _cli(str(FIXTURES / "tensor_types_raw.csv"), "--to", "NVIDIA A100-PCIE-40GB", "--to", "B200",
                  "--partial", "--json", "-")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    jsonschema.Draft7Validator(schema).validate(payload)
    fp8 = next(k for k in payload["kernels"] if k["kernel_name"] == "gemm_fp8_e4m3" and "A100" in k["target"])
    assert fp8["time_at_roof_s"] is None and fp8["bound_target"] is None  # null, never 0


def test_the_chart_puts_each_kernel_under_the_roof_of_its_own_tensor_type():
    from ncu_roofline.render.projection.chart import chart_points

    result = analyze(FIXTURES / "tensor_types_raw.csv")
    projection = result.project(["B200"])
    points, arrows, no_flop = chart_points(projection.kernels, result.kernels, projection.source_gpu)
    roof = dict(zip(points["rank"], points["roof"]))
    assert roof[2] == "tensor_fp8" and roof[3] == "tensor_fp16" and no_flop == 0
    # one arrow per kernel and model; it ends at flop_total / the projected time
    assert len(arrows) == 3 * 2
    fp8 = projection.kernels.set_index("rank").loc[2]
    flop = result.kernels.set_index("rank").loc[2, "flop_total"]
    ends = arrows[arrows["label"] == "#2"]["y2"].tolist()
    assert sorted(ends) == pytest.approx(sorted([flop / fp8["time_at_roof_s"], flop / fp8["time_same_efficiency_s"]]))


def test_onto_the_profiled_gpu_itself_the_models_give_back_the_measurement(v100):
    """Same roofs, same work: at roof is the measured t_sol, same efficiency the measured time (no floor binds)."""
    kernels = v100.project([V100]).kernels.set_index("rank")
    measured = v100.kernels.set_index("rank")
    assert (~kernels["at_launch_floor"]).all()
    assert kernels["time_at_roof_s"].tolist() == pytest.approx(measured["t_sol_s"].tolist(), rel=1e-12)
    assert kernels["time_same_efficiency_s"].tolist() == pytest.approx(measured["time_s"].tolist(), rel=1e-12)
    assert (kernels["bound_target"] == measured["bound"].astype(str)).all()


def test_a_ceilings_file_is_a_target_of_its_own(v100, tmp_path):
    target = tmp_path / "lab_gpu.toml"
    target.write_text('name = "lab GPU"\n[peaks]\nfp64_tflops = 1\nfp32_tflops = 2\nfp16_tflops = 4\n'
                      'tensor_tflops = 8\ndram_gbps = 1000\nl2_gbps = 2000\nl1_gbps = 4000\n')
    projection = v100.project([str(target), "H200"])
    assert list(projection.runs["target"]) == ["lab GPU", "NVIDIA H200"]  # in the order asked
    kernels = projection.kernels[projection.kernels["target"] == "lab GPU"].set_index("rank")
    measured = v100.kernels.set_index("rank")
    for rank, row in kernels.iterrows():
        m = measured.loc[rank]
        want = max(m["flop_fp64"] / 1e12, m["flop_fp32"] / 2e12, m["flop_fp16"] / 4e12, m["flop_tensor"] / 8e12,
                   m["bytes_dram"] / 1e12, m["bytes_l2"] / 2e12, m["bytes_l1"] / 4e12)
        assert row["t_sol_target_s"] == pytest.approx(want, rel=1e-12)
    result = _cli(str(ROOT.parent / "shared" / "ncu-samples" / "cuda-roofline" / "output_V100.csv"), "--gpu", V100,
                  "--to", str(target), "--json", "-")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"][0]["target"] == "lab GPU"

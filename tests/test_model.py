"""The analytic model: the roofline literature's worked examples, reproduced by hand arithmetic."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from ncu_roofline.cli import app
from ncu_roofline.core.errors import InputError
from ncu_roofline.model.llm import llm
from ncu_roofline.model.place import place_points, table_roofs, workloads_frame
from ncu_roofline.model.workloads import conv2d, elementwise, gemm, layernorm, softmax
from ncu_roofline.roofs.peaks import compute_peak, ridge_intensity, ridge_points

H100_SXM = "H100 SXM"  # table row "NVIDIA H100 80GB HBM3": 989.4 TFLOP/s dense FP16 tensor, 66.9 FP32, 3350 GB/s


def placed(work, gpu=H100_SXM) -> dict:
    return place_points(workloads_frame([work]), table_roofs([gpu])).iloc[0].to_dict()


def test_gemm_1024_fp32():
    work = gemm(1024, 1024, 1024, "fp32")
    assert work.flop == 2 * 1024**3 == 2_147_483_648
    assert work.bytes == 3 * 1024**2 * 4 == 12_582_912
    point = placed(work)
    assert point["ai"] == pytest.approx(2_147_483_648 / 12_582_912)  # 170.67
    assert round(point["ai"], 1) == 170.7
    # FP32 roof 66.9e12 / 3.35e12 B/s = ridge 19.97: 170.7 is right of it, so FP32-bound at 66.9 TFLOP/s.
    assert point["ridge_ai"] == pytest.approx(66.9e12 / 3.35e12)
    assert point["bound"] == "fp32"
    assert point["attainable_flop_per_s"] == pytest.approx(66.9e12)
    assert point["t_min_s"] == pytest.approx(2_147_483_648 / 66.9e12)


def test_gemm_batch_and_types():
    work = gemm(128, 256, 64, "fp16", batch=8)
    assert work.flop == 2 * 128 * 256 * 64 * 8
    assert work.bytes == (128 * 64 + 64 * 256 + 128 * 256) * 8 * 2
    assert work.roof == "tensor_fp16"
    assert gemm(64, 64, 64, "fp32", tf32=True).roof == "tensor_tf32"
    assert gemm(64, 64, 64, "bf16").roof == "tensor_fp16"  # BF16 shares the FP16 tensor roof
    assert gemm(64, 64, 64, "fp8").bytes == 3 * 64 * 64 * 1


def test_conv2d_256x256x64_to_128_3x3():
    # batch 1, stride 1, padding 1 ("same"), fp32, no bias: the output is 256x256x128.
    work = conv2d(1, 256, 256, 64, 128, 3, dtype="fp32")
    assert work.flop == 2 * 256 * 256 * 128 * 64 * 3 * 3 == 9_663_676_416
    inputs, weights, outputs = 256 * 256 * 64, 128 * 64 * 3 * 3, 256 * 256 * 128
    assert work.bytes == (inputs + weights + outputs) * 4 == 50_626_560


def test_conv2d_stride_and_padding_shrink_the_output():
    work = conv2d(2, 32, 32, 3, 16, 3, stride=2, padding=0)  # Hout = (32 - 3) // 2 + 1 = 15
    assert work.flop == 2 * 2 * 15 * 15 * 16 * 3 * 9
    assert work.bytes == (2 * 32 * 32 * 3 + 16 * 3 * 9 + 2 * 15 * 15 * 16) * 4
    with pytest.raises(InputError, match="output would be"):
        conv2d(1, 2, 2, 1, 1, 5, padding=0)


def test_elementwise_and_presets():
    add = elementwise(1 << 24, inputs=2, outputs=1, flop_per_element=1, dtype="fp32")
    assert (add.flop, add.bytes, add.roof) == (2**24, 2**24 * 3 * 4, "fp32")
    norm = layernorm(4096, 1024, "fp16")
    assert norm.flop == 8 * 4096 * 1024
    assert norm.bytes == (2 * 4096 * 1024 + 2 * 1024) * 2
    assert norm.roof == "fp16"
    soft = softmax(4096, 1024, "fp32")
    assert (soft.flop, soft.bytes) == (5 * 4096 * 1024, 2 * 4096 * 1024 * 4)


def test_llm_70b_decode_is_dram_bound_on_h100():
    work = llm(70e9, phase="decode", batch=1, seq=1, dtype="fp16")
    assert work.flop == 2 * 70e9  # 140 GFLOP
    assert work.bytes == 70e9 * 2  # 140 GB of fp16 weights
    point = placed(work)
    assert point["ai"] == 1.0
    assert point["ridge_ai"] == pytest.approx(989.4e12 / 3.35e12)  # 295.3
    assert point["bound"] == "dram"
    assert point["attainable_flop_per_s"] == pytest.approx(1.0 * 3.35e12)
    assert point["t_min_s"] == pytest.approx(140e9 / 3.35e12)  # 41.8 ms per token


def test_llm_70b_prefill_2048_is_tensor_bound():
    work = llm(70e9, phase="prefill", batch=1, seq=2048, dtype="fp16")
    assert work.flop == 2 * 70e9 * 2048
    assert work.bytes == 70e9 * 2
    point = placed(work)
    assert point["ai"] == 2048.0
    assert point["bound"] == "tensor_fp16"
    assert point["attainable_flop_per_s"] == pytest.approx(989.4e12)


def test_llm_kv_cache_decode_reads_and_prefill_writes():
    # Llama-2-70B shape: 80 layers, 8 KV heads of 128; fp16 cache; 4096 cached positions, batch 4.
    per_token = 2 * 80 * 8 * 128 * 2  # K and V, bytes per position = 327,680
    decode = llm(70e9, phase="decode", batch=4, seq=4096, layers=80, kv_heads=8, head_dim=128)
    assert decode.parts["bytes_kv_read"] == per_token * 4096 * 4 == 5_368_709_120
    assert decode.parts["bytes_kv_write"] == per_token * 4
    assert decode.bytes == 70e9 * 2 + 5_368_709_120 + 327_680 * 4
    assert decode.flop == 2 * 70e9 * 4
    prefill = llm(70e9, phase="prefill", batch=1, seq=2048, layers=80, kv_heads=8, head_dim=128)
    assert prefill.bytes == 70e9 * 2 + 327_680 * 2048
    attention = llm(70e9, phase="decode", seq=4096, layers=80, hidden=8192, kv_heads=8, head_dim=128)
    assert attention.flop == 2 * 70e9 + 4 * 80 * 8192 * 4096  # QK^T and A·V over 4096 positions
    with pytest.raises(InputError, match="--kv-heads"):
        llm(70e9, layers=80)


def test_llm_w4a16_reads_a_quarter_of_the_fp16_weights():
    fp16 = llm(70e9, dtype="fp16")
    w4 = llm(70e9, dtype="fp16", weight_dtype="int4")
    assert w4.bytes == 70e9 * 0.5 == fp16.bytes / 4
    assert w4.flop == fp16.flop
    assert w4.roof == "tensor_fp16"  # dequantised to fp16 before the multiply
    assert placed(w4)["ai"] == 140e9 / 35e9 == 4.0


def test_ridge_points_h100_a100_h200():
    ridges = {name: {(r["compute"], r["memory"]): r["ai_flop_per_byte"]
                           for r in ridge_points(table_roofs([name])[0].peaks)}[("tensor_fp16", "dram")]
              for name in ("H100 SXM", "NVIDIA A100-SXM4-80GB", "H200")}
    assert ridges["H100 SXM"] == pytest.approx(989.4 / 3.350)  # 295.3
    assert ridges["NVIDIA A100-SXM4-80GB"] == pytest.approx(312 / 2.039)  # 153.0
    assert ridges["H200"] == pytest.approx(989.4 / 4.8)  # 206.1
    assert ridge_intensity(None, 1.0) is None


def test_tensor_lookup_falls_back_between_default_and_fp16():
    assert compute_peak({"peak_flop_per_s_tensor": 1e15}, "tensor_fp16") == 1e15
    assert compute_peak({"peak_flop_per_s_tensor_fp16": 2e15}, "tensor") == 2e15
    assert compute_peak({"peak_flop_per_s_tensor": 1e15}, "tensor_fp8") is None


def test_unknown_roof_gives_nulls_and_a_status():
    # The A100 has no FP8 tensor path: the point stays, with no attainable figure and a status naming the roof.
    point = placed(gemm(1024, 1024, 1024, "fp8"), gpu="NVIDIA A100-SXM4-80GB")
    assert pd.isna(point["attainable_flop_per_s"]) and point["bound"] is None
    assert "Tensor FP8" in point["status"]


runner = CliRunner()


def test_cli_model_llm_json_several_gpus():
    result = runner.invoke(app, ["model", "llm", "--params", "70e9", "--phase", "decode", "--gpu", "H100 SXM",
                                 "--gpu", "H200", "--json", "-"])
    assert result.exit_code == 0, result.output
    points = json.loads(result.stdout)["points"]
    assert [p["gpu"] for p in points] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    assert all(p["ai"] == 1.0 and p["bound"] == "dram" for p in points)
    assert points[1]["attainable_flop_per_s"] == pytest.approx(4.8e12)  # H200 DRAM 4800 GB/s x 1 FLOP/B


def test_cli_model_writes_chart_and_parquet(tmp_path):
    result = runner.invoke(app, ["model", "gemm", "--m", "1024", "--n", "1024", "--k", "1024", "--gpu",
                                 "H100 SXM", "--gpu", "NVIDIA A100-SXM4-80GB", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    table = pd.read_parquet(tmp_path / "model.parquet")
    assert list(table["flop"]) == [2_147_483_648.0] * 2
    spec = json.loads((tmp_path / "model.vl.json").read_text())
    gpus = {row["gpu"] for ds in spec["datasets"].values() for row in ds if "gpu" in row}
    assert gpus == {"NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"}
    assert (tmp_path / "model.html").stat().st_size > 0


def test_cli_model_outputs_land_together_or_not_at_all(tmp_path, monkeypatch):
    """A PNG export that fails leaves the folder as it was: model.parquet is not written ahead of the charts."""
    from ncu_roofline.render.chart import chart_files
    real_render = chart_files.render

    def fail_on_png(spec, fmt, **options):
        if fmt == "png":
            raise RuntimeError("vl-convert crashed")
        return real_render(spec, fmt, **options)

    (tmp_path / "model.parquet").write_bytes(b"the previous run's")
    monkeypatch.setattr(chart_files, "render", fail_on_png)
    result = runner.invoke(app, ["model", "gemm", "--m", "64", "--n", "64", "--k", "64", "--gpu", "H100 SXM",
                                 "-o", str(tmp_path), "--format", "png"])
    assert result.exit_code != 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.parquet"]
    assert (tmp_path / "model.parquet").read_bytes() == b"the previous run's"


def test_cli_model_json_file_lands_with_the_charts_or_not_at_all(tmp_path, monkeypatch):
    """`--json FILE` is one of the run's files: a chart that fails leaves the previous JSON as it was (it was
    written ahead of the charts before the model command used the output set of the other commands)."""
    from ncu_roofline.render.chart import chart_files
    real_render = chart_files.render
    summary = tmp_path / "points.json"
    summary.write_text("the previous run's")
    args = ["model", "gemm", "--m", "64", "--n", "64", "--k", "64", "--gpu", "H100 SXM", "--json", str(summary),
            "-o", str(tmp_path / "out"), "--format", "png"]
    monkeypatch.setattr(chart_files, "render", lambda spec, fmt, **options: (_ for _ in ()).throw(
                        RuntimeError("no png")) if fmt == "png" else real_render(spec, fmt, **options))
    assert runner.invoke(app, args).exit_code != 0
    assert summary.read_text() == "the previous run's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["points.json"]
    monkeypatch.setattr(chart_files, "render", real_render)
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    # 2·64·64·64 = 524,288 FLOP on the one GPU asked for
    assert [p["flop"] for p in json.loads(summary.read_text())["points"]] == [524_288.0]
    assert (tmp_path / "out" / "model.png").stat().st_size > 0


def test_cli_model_json_may_not_name_a_file_of_its_own_output_folder(tmp_path):
    result = runner.invoke(app, ["model", "gemm", "--m", "8", "--n", "8", "--k", "8", "--gpu", "H200",
                                 "-o", str(tmp_path), "--json", str(tmp_path / "model.parquet")])
    assert result.exit_code == 2
    assert "--json names a file that -o" in result.output and "(its model.parquet) also writes" in result.output
    assert list(tmp_path.iterdir()) == []


def test_cli_model_without_gpu_and_bad_values_exit_2():
    result = runner.invoke(app, ["model", "gemm", "--m", "8", "--n", "8", "--k", "8"])
    assert result.exit_code == 2 and "--gpu" in result.output
    result = runner.invoke(app, ["model", "gemm", "--m", "0", "--n", "8", "--k", "8", "--gpu", "H200"])
    assert result.exit_code == 2 and "--m must be positive" in result.output
    result = runner.invoke(app, ["model", "gemm", "--m", "8", "--n", "8", "--k", "8", "--gpu", "H200",
                                 "--dtype", "int3"])
    assert result.exit_code == 2 and "int3" in result.output


def test_cli_ceilings_compare_json():
    result = runner.invoke(app, ["ceilings", "compare", "H100 SXM", "NVIDIA A100-SXM4-80GB", "H200", "--json"])
    assert result.exit_code == 0, result.output
    gpus = {g["name"]: g for g in json.loads(result.stdout)["gpus"]}
    assert gpus["NVIDIA H200"]["ridge_ai"]["tensor_fp16/dram"] == pytest.approx(989.4e12 / 4.8e12)
    assert gpus["NVIDIA A100-SXM4-80GB"]["peaks"]["peak_bytes_per_s_dram"] == 2039e9
    table = runner.invoke(app, ["ceilings", "compare", "H100 SXM", "H200"])
    assert table.exit_code == 0 and "295.3" in table.stdout and "206.1" in table.stdout


def test_model_json_follows_the_documented_schema():
    jsonschema = pytest.importorskip("jsonschema")
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "json-schema.md").read_text()
    schema = json.loads(text.split("<!-- schema: model -->", 1)[1].split("```json", 1)[1].split("```", 1)[0])
    result = runner.invoke(app, ["model", "conv2d", "--height", "256", "--width", "256", "--in-channels", "64",
                                 "--out-channels", "128", "--gpu", "H100 SXM", "--gpu", "NVIDIA A100-SXM4-80GB",
                                 "--dtype", "fp8", "--json", "-"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    jsonschema.Draft7Validator(schema).validate(payload)
    a100 = payload["points"][1]
    assert a100["bound"] is None and a100["status"] != "ok"  # no FP8 tensor roof on the A100


def test_model_chart_roof_labels_never_overlap():
    from ncu_roofline.render.model.chart import model_chart

    roof_sets = table_roofs(["NVIDIA A100-SXM4-80GB", "H100 SXM", "B200"])
    frame = workloads_frame([gemm(1024, 1024, 1024, "fp32"), layernorm(4096, 1024, "fp16")])
    spec = model_chart(place_points(frame, roof_sets), {r.name: r.peaks for r in roof_sets})
    labels = {row["label"] for row in spec["datasets"]["roof_labels"]}
    # H100 FP32 66.9, B200 FP32 75 and A100 FP16 78 TFLOP/s sit within 0.07 decade (6 px) of each other; each
    # label names its GPU. That no two boxes overlap: tests/test_model_chart.py.
    assert {"H100 FP32 66.9 TFLOP/s", "B200 FP32 75.0 TFLOP/s", "A100 FP16 78.0 TFLOP/s"} <= labels


def test_cli_model_with_a_ceilings_file(tmp_path):
    ceilings = tmp_path / "mig.toml"
    ceilings.write_text('name = "A100 MIG 3g.40gb"\n[peaks]\ntensor_tflops = 156.0\ndram_gbps = 1000\n')
    result = runner.invoke(app, ["model", "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--dtype", "bf16",
                                 "--ceilings", str(ceilings), "--json", "-"])
    assert result.exit_code == 0, result.output
    point = json.loads(result.stdout)["points"][0]
    assert point["gpu"] == "A100 MIG 3g.40gb"
    assert point["peak_flop_per_s"] == 156e12  # the file's dense FP16 tensor roof serves bf16
    assert point["ai"] == pytest.approx(2 * 4096**3 / (3 * 4096**2 * 2))  # 1365.3, right of the ridge 156
    assert point["bound"] == "tensor_fp16"

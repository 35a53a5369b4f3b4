"""Points files, and `analyze --points`: analytic points drawn beside measured kernels, measured ÷ modelled."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from ncu_roofline import analyze
from ncu_roofline.cli import app
from ncu_roofline.core.errors import InputError
from ncu_roofline.model.points import read_points

EXAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "example_h100_raw.csv"
runner = CliRunner()

# fixtures/example_h100_raw.csv holds (per launch, from its counters):
# - a CUTLASS fp16 GEMM: 274,877,906,944 tensor FLOP (= 2 x 8192 x 4096 x 4096), 268.44 MB at DRAM;
# - two launches of an fp32 add of 2^24 elements: 16,777,216 FLOP and 201.33 MB at DRAM each.
GEMM_FLOP = 2 * 8192 * 4096 * 4096  # 274,877,906,944
GEMM_BYTES = (8192 * 4096 + 4096 * 4096 + 8192 * 4096) * 2  # A, B read once, C written once: 167,772,160
ADD_FLOP = 2**24
ADD_BYTES = 3 * 4 * 2**24  # two fp32 inputs read, one written: 201,326,592


@pytest.fixture
def points_csv(tmp_path) -> Path:
    path = tmp_path / "P.csv"
    path.write_text("name,flop,bytes,kernel,roof\n"
                    f"gemm 8192x4096x4096 fp16,{GEMM_FLOP},{GEMM_BYTES},cutlass_80_tensorop,tensor_fp16\n"
                    f"add fp32,{ADD_FLOP},{ADD_BYTES},AddFunctor<float>,fp32\n"
                    "rmsnorm (not captured),1000,8000,rms_norm_kernel,fp32\n")
    return path


def test_read_points_csv_and_toml(tmp_path, points_csv):
    frame = read_points(points_csv)
    assert list(frame["name"]) == ["gemm 8192x4096x4096 fp16", "add fp32", "rmsnorm (not captured)"]
    assert frame.loc[0, "flop"] == GEMM_FLOP and frame.loc[1, "roof"] == "fp32"
    toml = tmp_path / "p.toml"
    toml.write_text('[[point]]\nname = "a"\nflop = 10\nbytes = 5\n\n[[point]]\nname = "b"\nflop = 1\nbytes = 2\n'
                    'kernel = "k.*"\n')
    frame = read_points(toml, default_roof="fp32")
    assert list(frame["flop"] / frame["bytes"]) == [2.0, 0.5]
    assert list(frame["roof"]) == ["fp32", "fp32"] and pd.isna(frame.loc[0, "kernel"])


@pytest.mark.parametrize("body, message", [
    ("name,flop\nx,1\n", "line 1: header lacks bytes"),
    ("name,flop,bytes\nx,1,2\ny,abc,2\n", "line 3: flop must be a number"),
    ("name,flop,bytes\nx,1,0\n", "line 2: bytes must be a positive number"),
    ("name,flop,bytes,kernel\nx,1,2,(unclosed\n", "line 2: kernel '(unclosed' is not a regular expression (missing ): (unclosed"),
    ("name,flop,bytes,roof\nx,1,2,tensor_fp9\n", "line 2: unknown roof 'tensor_fp9'"),
    ("name,flop,bytes\nx,1,2\nx,3,4\n", "line 3: duplicate point name 'x'"),
    ("name,flop,bytes\nx,1,2,3\n", "line 2: 4 fields, the header has 3"),
    ("name,flop,bytes,flop\nx,1,2,3\n", "line 1: column flop given twice in the header"),
    ("name,Flop,bytes,FLOP \nx,1,2,3\n", "line 1: column flop given twice in the header"),
    ("[[point]]\nname = \"x\"\nflop = 1\n", "[[point]] #1: bytes must be a positive number"),
])
def test_malformed_points_are_refused_naming_the_line(tmp_path, body, message):
    path = tmp_path / "bad.csv"
    path.write_text(body)
    with pytest.raises(InputError) as error:
        read_points(path)
    assert error.value.path == str(path) and message in error.value.message


def test_analyze_points_fills_the_model_columns(points_csv):
    result = analyze(EXAMPLE, points=points_csv)
    kernels = result.kernels.set_index("rank")
    gemm = kernels[kernels["kernel_name"].str.contains("cutlass")].iloc[0]
    assert gemm["model_flop"] == GEMM_FLOP  # one launch x one point
    assert gemm["model_bytes"] == GEMM_BYTES
    assert gemm["model_ai"] == pytest.approx(GEMM_FLOP / GEMM_BYTES)  # 1638.4
    assert gemm["flop_over_model"] == pytest.approx(gemm["flop_total"] / GEMM_FLOP)
    # The export says 268.44 MB (Mbyte, 2 decimals) at DRAM: 268.44e6 / 167,772,160 = 1.60 times the minimum.
    assert gemm["dram_bytes_over_model"] == pytest.approx(268.44e6 / GEMM_BYTES)
    add = kernels[kernels["kernel_name"].str.contains("AddFunctor")].iloc[0]
    assert add["launches"] == 2
    assert add["model_flop"] == 2 * ADD_FLOP  # the point counts one launch; the group has two
    # Each launch moved 201.33 MB (two decimals of Mbyte): measured / modelled = 2 x 201.33e6 / (2 x 201,326,592).
    assert add["dram_bytes_over_model"] == pytest.approx(201.33e6 / ADD_BYTES)
    assert add["flop_over_model"] == pytest.approx(1.0)
    stencil = kernels[kernels["kernel_name"].str.contains("stencil")].iloc[0]
    assert pd.isna(stencil["model_flop"]) and pd.isna(stencil["dram_bytes_over_model"])
    assert list(result.model_points["matched_kernels"]) == [1, 1, 0]


def test_several_points_on_one_kernel_are_summed_and_named(tmp_path):
    path = tmp_path / "two.csv"
    path.write_text("name,flop,bytes,kernel\nhalf a,100,50,AddFunctor\nhalf b,300,150,vectorized_elementwise\n")
    kernels = analyze(EXAMPLE, points=path).kernels
    add = kernels[kernels["kernel_name"].str.contains("AddFunctor")].iloc[0]
    assert add["model_flop"] == (100 + 300) * 2  # summed, times the group's two launches
    assert add["model_bytes"] == (50 + 150) * 2
    assert add["model_points"] == "half a + half b"


def test_cli_analyze_points_draws_and_says_what_matched_nothing(tmp_path, points_csv):
    out = tmp_path / "out"
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "--points", str(points_csv), "-o", str(out),
                                 "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    assert "1 point(s) match no kernel (drawn unjoined): rmsnorm (not captured)" in result.stderr
    spec = json.loads((out / "roofline.vl.json").read_text())
    rows = [row for data in spec["datasets"].values() for row in data]
    drawn = {row["name"] for row in rows if "ai_text" in row}  # the hollow markers' data
    assert drawn == {"gemm 8192x4096x4096 fp16", "add fp32", "rmsnorm (not captured)"}
    segments = {row["pair"] for row in rows if set(row) == {"pair", "ai", "flop_per_s"}}
    assert segments == {0, 1}  # gemm and add joined to their kernels; the unmatched point is not
    gemm_model = next(r for r in rows if r.get("name") == "gemm 8192x4096x4096 fp16" and "ai_text" in r)
    assert gemm_model["ai"] == pytest.approx(GEMM_FLOP / GEMM_BYTES)
    table = pd.read_parquet(out / "kernels.parquet")
    assert table["model_flop"].notna().sum() == 2
    summary = json.loads((tmp_path / "s.json").read_text())
    assert sum(k.get("model_flop") is not None for k in summary["kernels"]) == 2
    assert [p["matched_kernels"] for p in summary["model_points"]] == [1, 1, 0]


def test_cli_analyze_bad_points_file_exit_2(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("name,flop,bytes\nx,1,-3\n")
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "--points", str(bad)])
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "bad.csv: line 2" in result.stderr


def test_cli_analyze_points_file_with_a_repeated_column_exit_2(tmp_path):
    # two flop columns: 1 or 3? Neither is taken; one line names the file and the column
    bad = tmp_path / "twice.csv"
    bad.write_text("name,flop,bytes,flop\nx,1,2,3\n")
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "--points", str(bad)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"ncu-roofline: error: {bad}: line 1: column flop given twice in the header"


def test_cli_model_points_places_a_points_file(points_csv):
    result = runner.invoke(app, ["model", "points", str(points_csv), "--gpu", "H100 SXM", "--json", "-"])
    assert result.exit_code == 0, result.output
    points = json.loads(result.stdout)["points"]
    assert points[0]["ai"] == pytest.approx(GEMM_FLOP / GEMM_BYTES)
    assert points[0]["bound"] == "tensor_fp16"  # 1638 FLOP/B is right of the H100 SXM ridge, 295
    assert points[1]["bound"] == "dram" and points[1]["kernel"] == "AddFunctor<float>"


def test_a_kernel_regex_is_searched_in_the_demangled_name_too():
    from ncu_roofline.model.match import match_pairs

    kernels = pd.DataFrame({"rank": [1, 2], "kernel_name": ["_Z6kernelPf", "_Z4gemmv"],
                            "kernel_demangled": ["kernel(float*)", "gemm()"]})
    points = pd.DataFrame({"name": ["by demangled", "by mangled", "no regex"], "flop": [1.0, 1.0, 1.0],
                           "bytes": [1.0, 1.0, 1.0], "kernel": ["float\\*", "^_Z4gemm", None]})
    pairs = match_pairs(points, kernels)
    assert list(zip(pairs["name"], pairs["rank"])) == [("by demangled", 1), ("by mangled", 2)]

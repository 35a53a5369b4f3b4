"""The built-in GPU ceiling table: every figure sourced, every derived figure reproducible, names matched safely."""

from __future__ import annotations

import ast
import csv
import json
import operator
import tomllib
from pathlib import Path

import pytest

from ncu_roofline.core.errors import InputError
from ncu_roofline.roofs.gpu_table import (
    FIGURES,
    PEAK_KEYS,
    GpuSpec,
    UnknownGpuError,
    describe_gpu,
    is_mig,
    list_gpus,
    load_gpu_table,
    match_gpu,
    normalise_gpu_name,
)

TABLE_PATH = Path(__file__).resolve().parent.parent / "metrics" / "gpus.toml"
REFERENCE_CSV = Path(__file__).resolve().parents[2] / "shared" / "reference" / "gpu-ceilings.csv"

# Where metrics/gpus.toml deliberately differs from the reference CSV, and why (also in each row's caveats).
DEVIATIONS_FROM_CSV = {
    # GA10x/AD10x run FP64 at 1/64 of FP32 (2 FP64 units/SM); the CSV's third-party values are FP32/32.
    ("NVIDIA A10", "fp64_tflops"): 0.488,  # 72 x 4 x 1.695 GHz
    ("NVIDIA A40", "fp64_tflops"): 0.585,  # 84 x 4 x 1.74 GHz
    ("NVIDIA RTX A6000", "fp64_tflops"): 0.605,  # 84 x 4 x 1.80 GHz
    ("NVIDIA L4", "fp64_tflops"): 0.473,  # 58 x 4 x 2.04 GHz (the CSV's 0.49 assumes 60 SMs)
    ("NVIDIA RTX 6000 Ada Generation", "fp64_tflops"): 1.42,  # blank in the CSV; 142 x 4 x 2.505 GHz
}
CSV_COLUMN = {  # table figure -> reference CSV column
    "sm_count": "sm_count", "boost_clock_mhz": "boost_clock_mhz", "fp64_tflops": "fp64_tflops",
    "fp32_tflops": "fp32_tflops", "fp16_tflops": "fp16_tflops", "tensor_fp16_tflops": "fp16_tensor_tflops",
    "tensor_bf16_tflops": "bf16_tensor_tflops", "tensor_tf32_tflops": "tf32_tensor_tflops",
    "tensor_fp8_tflops": "fp8_tensor_tflops", "tensor_int8_tops": "int8_tensor_tops",
    "tensor_fp64_tflops": "fp64_tensor_tflops", "dram_gbps": "dram_gbps",
    # the CSV's V100 L1/L2 figures are ERT measurements: the table keeps them as measured, beside theoretical roofs
    "l2_gbps_measured": "l2_gbps", "l1_gbps_measured": "l1_gbps",
}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return tomllib.loads(TABLE_PATH.read_text(encoding="utf-8"))["gpu"]


@pytest.fixture(scope="module")
def table() -> list[GpuSpec]:
    return load_gpu_table()


def evaluate(expr: str, fields: dict[str, float]) -> float:
    """Arithmetic over numbers and the row's own fields: the grammar the table's header documents."""
    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.Name):
            return fields[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](ev(node.left), ev(node.right))
        raise ValueError(f"not allowed in a formula: {ast.dump(node)}")

    return ev(ast.parse(expr, mode="eval").body)


# --- the data ---------------------------------------------------------------------------------------------------


def test_every_figure_has_a_source(rows):
    missing = [(r["name"], k) for r in rows for k in FIGURES if k in r and not r.get("sources", {}).get(k, "").strip()]
    assert missing == []


def test_every_derived_figure_reproduces_its_formula(rows):
    checked = 0
    for row in rows:
        fields = {k: float(v) for k, v in row.items() if k in FIGURES}
        for clock in ("boost_clock", "tensor_clock"):
            if f"{clock}_mhz" in fields:
                fields[f"{clock}_ghz"] = fields[f"{clock}_mhz"] / 1000
        for figure, formula in row.get("derived", {}).items():
            expr, _, why = formula.partition(";")
            assert why.strip(), f"{row['name']} {figure}: formula without its reason"
            assert evaluate(expr, fields) == pytest.approx(row[figure], rel=0.01), f"{row['name']} {figure}"
            checked += 1
    assert checked > 50  # the table derives many figures; none may slip past


def test_t4_fp16_is_fp16x2_arithmetic(table):
    t4 = match_gpu("Tesla T4", table)
    # 40 SMs x 256 FLOP/clk/SM (FP16x2: twice the 128 FP32 FLOP/clk/SM) x 1.59 GHz = 16.28 TFLOP/s
    assert (t4.sm_count, t4.boost_clock_hz) == (40, 1.59e9)
    assert t4.peaks["peak_flop_per_s_fp16"] == pytest.approx(t4.sm_count * 256 * t4.boost_clock_hz, rel=0.01)
    assert "sm_count * 256 * boost_clock_ghz" in t4.derived["peak_flop_per_s_fp16"]


def test_a100_fp16_is_four_times_fp32(table):
    a100 = match_gpu("NVIDIA A100-SXM4-40GB", table)
    # GA100: 108 SMs x 512 FLOP/clk/SM x 1.41 GHz = 77.97 TFLOP/s = 4 x 19.5
    assert a100.peaks["peak_flop_per_s_fp16"] == pytest.approx(108 * 512 * 1.41e9, rel=0.01)
    assert a100.peaks["peak_flop_per_s_fp16"] == pytest.approx(4 * a100.peaks["peak_flop_per_s_fp32"], rel=0.01)


# Most dense FP16 tensor FLOP per clock per SM each architecture can do; a sparse figure would be twice this.
DENSE_TENSOR_FLOP_PER_CLK_PER_SM = {"Volta": 1024, "Turing": 1024, "Ampere": 2048, "Ada": 1024, "Hopper": 4096,
                                    "Blackwell": 8192}


def test_tensor_figures_are_dense(table):
    for spec in table:
        fp16 = spec.tensor_peaks.get("fp16")
        if fp16 is None:
            continue
        bound = spec.sm_count * DENSE_TENSOR_FLOP_PER_CLK_PER_SM[spec.arch] * spec.boost_clock_hz
        assert fp16 <= bound * 1.02, spec.name
        if "fp8" in spec.tensor_peaks:
            # 2% slack: the L40S datasheet itself says BF16 362.05 but FP8 733 (= 2 x 366.4)
            assert spec.tensor_peaks["fp8"] <= 2 * fp16 * 1.02, spec.name
        assert spec.peaks["peak_flop_per_s_tensor"] == fp16  # the default tensor roof is FP16 in, FP32 accumulate


def test_h200_peaks_are_the_datasheet_numbers_in_base_units(table):
    h200 = match_gpu("NVIDIA H200", table)
    assert h200.peaks["peak_bytes_per_s_dram"] == 4800 * 1e9 == 4.8e12  # 4800 GB/s = 4.8e12 B/s (HBM3e)
    assert h200.peaks["peak_flop_per_s_fp32"] == 66.9e12  # 66.9 TFLOP/s; the datasheet rounds to 67
    assert h200.peaks["peak_flop_per_s_fp32"] == pytest.approx(67e12, rel=0.01)
    assert h200.peaks["peak_flop_per_s_fp64"] == 33.5e12  # 33.5 TFLOP/s; the datasheet rounds to 34
    assert h200.peaks["peak_flop_per_s_fp64"] == pytest.approx(34e12, rel=0.02)
    assert h200.peaks["peak_flop_per_s_tensor"] == 989.4e12  # dense; NVIDIA prints 1979 "with sparsity"
    assert (h200.sm_count, h200.compute_capability) == (132, 9.0)


def test_spec_keys_and_units(table):
    for spec in table:
        assert set(spec.peaks) <= set(PEAK_KEYS)
        for key in (*spec.peaks, *(f"tensor_{d}" for d in spec.tensor_peaks)):
            assert spec.sources[key], (spec.name, key)
        assert set(spec.derived) <= set(spec.sources)
    h100 = match_gpu("NVIDIA H100 80GB HBM3", table)
    assert h100.peaks["peak_bytes_per_s_dram"] == 3.35e12  # 3350 GB/s
    assert h100.tensor_peaks["int8"] == 1978.9e12
    v100 = match_gpu("Tesla V100-SXM2-16GB", table)
    # ERT figures are measured, never the roof: the roofs are theoretical, 64 slices x 32 B and 80 SMs x 128 B
    assert v100.measured == {"peak_bytes_per_s_dram": 828.758e9, "peak_bytes_per_s_l2": 2996.77e9,
                             "peak_bytes_per_s_l1": 14336e9}
    assert v100.peaks["peak_bytes_per_s_l2"] == pytest.approx(64 * 32 * 1.53e9, rel=1e-4)  # 3133.4 GB/s
    assert v100.peaks["peak_bytes_per_s_l1"] == pytest.approx(80 * 128 * 1.53e9, rel=1e-4)  # 15667.2 GB/s


def test_table_covers_every_reference_row():
    if not REFERENCE_CSV.is_file():
        pytest.skip("reference CSV not available outside the project workspace")
    with REFERENCE_CSV.open(encoding="utf-8") as handle:
        reference = list(csv.DictReader(handle))
    by_name = {r["name"]: r for r in tomllib.loads(TABLE_PATH.read_text(encoding="utf-8"))["gpu"]}
    assert set(by_name) >= {r["gpu_name"] for r in reference}  # the table may hold more GPUs than the CSV
    for ref in reference:
        row = by_name[ref["gpu_name"]]
        assert set(row["aliases"]) >= {a for a in ref["aliases"].split(";") if a}
        assert (row["arch"], row["compute_capability"]) == (ref["arch"], float(ref["compute_capability"]))
        for figure, column in CSV_COLUMN.items():
            expected = DEVIATIONS_FROM_CSV.get((ref["gpu_name"], figure), ref[column] or None)
            actual = row.get(figure)
            if expected is not None:  # a figure the CSV gives is the table's; a CSV blank may be filled (sourced)
                assert actual == float(expected), (ref["gpu_name"], figure)


def test_table_is_cached_and_returns_a_fresh_list():
    first, second = load_gpu_table(), load_gpu_table()
    assert first is not second and first[0] is second[0]
    assert len(first) == len(tomllib.loads(TABLE_PATH.read_text(encoding="utf-8"))["gpu"])  # every row, none lost


# --- names ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("device_name", "row"),
    [
        ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),  # exact
        ("Tesla V100-SXM2-16GB", "Tesla V100-SXM2-16GB"),
        ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"),
        ("NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"),
        ("Tesla V100-SXM2-32GB", "Tesla V100-SXM2-16GB"),  # alias
        ("nvidia t4", "Tesla T4"),  # alias, case-insensitive
        ("NVIDIA A100-PCIE-80GB", "NVIDIA A100 80GB PCIe"),
        ("V100-SXM2-32GB", "Tesla V100-SXM2-16GB"),  # normalised: no "Tesla"
        ("NVIDIA Tesla V100-PCIE-32GB", "Tesla V100-PCIE-16GB"),
        ("A100 80GB PCIe", "NVIDIA A100 80GB PCIe"),
        ("NVIDIA A100 PCIe 40GB", "NVIDIA A100-PCIE-40GB"),  # memory size picks between PCIe 40GB and 80GB
        ("NVIDIA A100-SXM4-80GB ", "NVIDIA A100-SXM4-80GB"),
        ("NVIDIA H100 SXM5 80GB", "NVIDIA H100 80GB HBM3"),
        ("NVIDIA H200 141GB HBM3e", "NVIDIA H200"),
        ("NVIDIA GH200 480GB", "NVIDIA GH200 480GB"),
        ("NVIDIA GH200 144G HBM3e", "NVIDIA GH200 480GB"),
        ("GeForce RTX 3090", "NVIDIA GeForce RTX 3090"),
    ],
)
def test_match_gpu(table, device_name, row):
    assert match_gpu(device_name, table).name == row


def test_gh200_never_matches_h200(table):
    assert match_gpu("NVIDIA GH200 480GB", table).name == "NVIDIA GH200 480GB"
    without_gh200 = [s for s in table if "GH200" not in s.name]
    with pytest.raises(UnknownGpuError):
        match_gpu("NVIDIA GH200 480GB", without_gh200)
    without_h200 = [s for s in table if s.name != "NVIDIA H200"]
    with pytest.raises(UnknownGpuError):
        match_gpu("NVIDIA H200", without_h200)


def test_a10g_is_not_an_a10(table):
    assert match_gpu("NVIDIA A10G", table).name == "NVIDIA A10G"
    assert match_gpu("NVIDIA A10", table).name == "NVIDIA A10"
    without_a10g = [s for s in table if s.name != "NVIDIA A10G"]
    with pytest.raises(UnknownGpuError) as caught:
        match_gpu("NVIDIA A10G", without_a10g)
    assert caught.value.suggestions == []  # the A10 is another GPU: never offered in its place
    assert normalise_gpu_name("NVIDIA A10G") != normalise_gpu_name("NVIDIA A10")


def test_unknown_gpu_gets_the_ceilings_route_and_no_stand_in(table):
    with pytest.raises(UnknownGpuError) as caught:
        match_gpu("NVIDIA H300 SXM", table)
    error = caught.value
    assert isinstance(error, InputError) and error.path is None
    assert error.suggestions == []
    line = str(error)
    assert "\n" not in line and "'NVIDIA H300 SXM'" in line
    assert "ncu-roofline ceilings template 'NVIDIA H300 SXM'" in line and "--ceilings FILE.toml" in line
    assert not any(s.name in line for s in table)  # no table GPU is named as a stand-in


def test_a_near_spelling_of_another_gpu_is_not_offered(table):
    # An RTX 2060 SUPER must never be pointed at the RTX 4090 (or any other row) when its own row is missing.
    without = [s for s in table if "2060" not in s.name]
    with pytest.raises(UnknownGpuError) as caught:
        match_gpu("NVIDIA GeForce RTX 2060 SUPER", without)
    assert caught.value.suggestions == [] and "4090" not in str(caught.value)


@pytest.mark.parametrize(("family", "rows"), [
    ("A100", {"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe"}),
    ("Tesla V100", {"Tesla V100-SXM2-16GB", "Tesla V100-PCIE-16GB"}),
    ("NVIDIA V100", {"Tesla V100-SXM2-16GB", "Tesla V100-PCIE-16GB"}),
    ("A100-SXM4", {"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB"}),  # 40GB and 80GB differ in DRAM bandwidth
])
def test_a_family_name_lists_that_familys_rows_only(table, family, rows):
    with pytest.raises(UnknownGpuError, match="ambiguous") as caught:
        match_gpu(family, table)
    assert set(caught.value.suggestions) == rows
    roofs = {tuple(sorted(match_gpu(r, table).peaks.items())) for r in rows}
    assert len(roofs) > 1  # why no row may stand for the family: A100 DRAM 1.555 vs 2.039 TB/s, V100 clocks


@pytest.mark.parametrize("device_name", ["NVIDIA A100-SXM4-40GB MIG 1g.5gb", "NVIDIA A100-SXM4-80GB MIG 3g.40gb",
                                         "NVIDIA H100 80GB HBM3 MIG 7g.80gb"])
def test_mig_slice_is_refused(table, device_name):
    assert is_mig(device_name)
    with pytest.raises(InputError) as caught:
        match_gpu(device_name, table)
    assert not isinstance(caught.value, UnknownGpuError)
    assert "MIG slice" in str(caught.value) and "--ceilings FILE.toml" in str(caught.value)


def test_is_mig_is_false_for_whole_gpus(table):
    assert not any(is_mig(n) for s in table for n in (s.name, *s.aliases))


@pytest.mark.parametrize(
    ("device_name", "normal"),
    [
        ("NVIDIA H100 80GB HBM3", "h100"),
        ("NVIDIA GH200 480GB", "gh200"),
        ("Tesla V100-SXM2-16GB", "v100 sxm2"),
        ("NVIDIA A100-SXM4-40GB", "a100 sxm4"),
        ("NVIDIA A100 80GB PCIe", "a100 pcie"),
        ("NVIDIA H200 NVL", "h200 nvl"),
        ("NVIDIA GeForce RTX 4090", "rtx 4090"),
        ("NVIDIA  A10G", "a10g"),
    ],
)
def test_normalise_gpu_name(device_name, normal):
    assert normalise_gpu_name(device_name) == normal


# --- validation of a table file ---------------------------------------------------------------------------------

GOOD_ROW = """
[[gpu]]
name = "NVIDIA Test GPU"
aliases = ["Test GPU"]
arch = "Hopper"
compute_capability = 9.0
fp32_tflops = 10.0
[gpu.sources]
fp32_tflops = "https://example.invalid/datasheet"
"""


def write_table(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "my-gpus.toml"
    path.write_text("schema_version = 1\n" + text, encoding="utf-8")
    return path


def test_a_valid_custom_table_loads(tmp_path):
    [spec] = load_gpu_table(write_table(tmp_path, GOOD_ROW))
    assert spec.peaks == {"peak_flop_per_s_fp32": 10e12}
    assert match_gpu("test gpu", [spec]) is spec


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        (GOOD_ROW.replace('fp32_tflops = "https://example.invalid/datasheet"', ""), "no source for fp32_tflops"),
        (GOOD_ROW.replace("fp32_tflops = 10.0", "fp32_tflops = 0"), "positive"),
        (GOOD_ROW.replace("fp32_tflops = 10.0", "fp32_tflops = -3.5"), "positive"),
        (GOOD_ROW.replace("fp32_tflops = 10.0", 'fp32_tflops = "ten"'), "positive number"),
        (GOOD_ROW + GOOD_ROW.replace('name = "NVIDIA Test GPU"', 'name = "Other"'), "names both"),
        (GOOD_ROW.replace("arch =", "archh ="), "unknown keys"),
        (GOOD_ROW.replace("[gpu.sources]", "[gpu.sources]\nfp64_tflops = 'x'"), "does not give"),
        (GOOD_ROW.replace("fp32_tflops = 10.0", "fp32_tflops = 10.0 10"), "not valid TOML"),
    ],
)
def test_a_bad_table_is_refused_naming_the_file(tmp_path, text, complaint):
    path = write_table(tmp_path, text)
    with pytest.raises(InputError) as caught:
        load_gpu_table(path)
    assert "my-gpus.toml" in str(caught.value) and complaint in str(caught.value)
    assert "\n" not in str(caught.value)


# --- views for `ncu-roofline ceilings` --------------------------------------------------------------------------


def test_describe_gpu_is_json_ready_with_source_and_formula(table):
    view = describe_gpu(match_gpu("Tesla T4", table))
    json.dumps(view)
    assert (view["name"], view["compute_capability"]) == ("Tesla T4", 7.5)
    assert list(view["peaks"]) == list(PEAK_KEYS)
    fp16 = view["peaks"]["peak_flop_per_s_fp16"]
    assert fp16["value"] == 16.3e12 and fp16["unit"] == "FLOP/s" and fp16["source"] and fp16["derived"]
    assert view["tensor_roofs"]["fp8"] is None  # Turing has no FP8 tensor path: unknown, shown as unknown
    assert view["tensor_roofs"]["int8"] == 130e12
    assert view["tensor_peaks"]["int8"]["unit"] == "OP/s"
    l2 = view["peaks"]["peak_bytes_per_s_l2"]
    assert l2["value"] == pytest.approx(32 * 32 * 1.59e9, rel=1e-4)  # 32 slices x 32 B/clk x 1.59 GHz = 1628.2 GB/s
    assert l2["derived"].startswith("l2_slices * l2_bytes_per_clk_per_slice * boost_clock_ghz")
    assert view["inputs"]["l2_slices"]["value"] == 32 and view["inputs"]["l2_slices"]["source"]


def test_list_gpus(table):
    listing = list_gpus(table)
    json.dumps(listing)
    assert [g["name"] for g in listing] == [s.name for s in table]
    assert listing[0]["peaks"]["peak_bytes_per_s_dram"] == 900e9
    assert all(list(g["peaks"]) == list(PEAK_KEYS) for g in listing)  # unknown roofs listed as None

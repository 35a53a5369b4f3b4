"""Names you can tell apart, axes that fit, ridge points and the page title (#15)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ncu_roofline.render.analysis.chart import roofline_spec
from ncu_roofline.render.chart.roofline import chart_data
from ncu_roofline.render.chart.context import ChartContext
from ncu_roofline.render.chart.chart_files import write_chart
from ncu_roofline.render.chart.layout import domains, off_scale_ranks
from ncu_roofline.render.chart.tooltips import time_unit
from ncu_roofline.core.kernel_labels import display_name, distinct_labels, fold_inputs

SAMPLES = Path(__file__).resolve().parents[1] / ".." / "shared" / "ncu-samples"
CLIMATE = SAMPLES / "DeepLearningProfiling" / "climate-seg-TF-fp16-batch2-fw-amp"


def test_template_instantiations_differ_by_their_type_argument():
    labels = distinct_labels(["void InitializeMatrix_kernel<float>(float*, int, int, int)",
                              "void InitializeMatrix_kernel<__half>(__half*, int, int, int)"])
    assert labels == ["InitializeMatrix_kernel<float>(…)", "InitializeMatrix_kernel<__half>(…)"]


def test_folded_templates_get_the_first_differing_word_back():
    # Both fold to `cutlass::Kernel<…>(…)`; after the common prefix `…kernel::Gemm<` one reads A, the other C.
    labels = distinct_labels(["void cutlass::Kernel<cutlass::gemm::kernel::Gemm<A, B>>(Params)",
                              "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<C, B>>(Params)"])
    assert labels == ["cutlass::Kernel<…>(…) [A]", "cutlass::Kernel<…>(…) [C]"]


def test_one_kernel_in_two_launch_shapes_is_told_apart_by_grid_and_block():
    labels = distinct_labels(["sigma_gpp_gpu_34", "sigma_gpp_gpu_34"], ["(80, 1, 1)", "(40, 1, 1)"],
                             ["(256, 1, 1)", "(256, 1, 1)"])
    assert labels == ["sigma_gpp_gpu_34 [(80,1,1)×(256,1,1)]", "sigma_gpp_gpu_34 [(40,1,1)×(256,1,1)]"]


def test_same_name_without_a_shape_falls_back_to_a_short_hash():
    labels = distinct_labels(["k", "k"], [None, None], ["(1, 1, 1)", "(2, 1, 1)"])  # grid unknown: no shape
    assert labels[0] != labels[1] and labels[0].startswith("k [#") and len(labels[0]) == len("k [#123456]")


def test_mangled_names_are_demangled_for_display_and_anonymous_namespaces_folded():
    mangled = ("_ZN10tensorflow96_GLOBAL__N__72_tmpxft_00003e63_00000000_11_resize_bilinear_op_gpu_cu_compute_70_"
               "cpp1_ii_6424738726LegacyResizeBilinearKernelIfEEviPKT_ffiiiiiiPf")
    assert display_name(mangled) == ("void tensorflow::{anon}::LegacyResizeBilinearKernel<float>(int, float const*, "
                                     "float, float, int, int, int, int, int, int, float*)")
    assert display_name("relu", "void relu(float*)") == "void relu(float*)"  # ncu's own demangled name first


def test_a_kernel_decades_away_from_all_others_is_left_off_the_axes():
    # 20 kernels between 100 G and 1 T FLOP/s at AI 1..10, one at 100 kFLOP/s: a 6-decade gap > 1.5.
    rows = [{"rank": r, "ai": 1 + r / 4, "flop_per_s": 1e11 * (1 + r / 3)} for r in range(1, 21)]
    rows.append({"rank": 21, "ai": 2.0, "flop_per_s": 1e5})
    points = pd.DataFrame(rows)
    assert off_scale_ranks(points) == [21]
    x_domain, y_domain, off = domains(points, {"fp32": 19.5e12}, {"dram": 1.56e12})
    # Lowest kept 1.33e11 / 1.25 → decade 1e11; top roof 19.5e12 × 1.25 → 1e14; x: 1.25 / 1.25 → 1, ridge
    # 19.5e12 / 1.56e12 = 12.5 × 1.25 → 100.
    assert y_domain == (1e11, 1e14) and x_domain == (1.0, 100.0) and off == [21]


def test_two_of_three_are_not_outliers():
    points = pd.DataFrame({"rank": [1, 2, 3], "ai": [1.0, 1.0, 1.0], "flop_per_s": [1e12, 1e5, 1e5]})
    assert off_scale_ranks(points) == []  # at most a tenth of the kernels may be left off


def test_headroom_unit_follows_the_largest_bar():
    assert time_unit(pd.Series([0.022, 0.001])) == ("ms", 1e3)
    assert time_unit(pd.Series([3e-4])) == ("µs", 1e6)
    assert time_unit(pd.Series([2.5])) == ("s", 1.0)


def test_a_split_capture_is_listed_as_one_folder():
    paths = [f"/data/climate-seg-TF-fp16-batch2-fw-amp/out.{i}.txt" for i in range(12)]
    assert fold_inputs(paths) == "12 files in climate-seg-TF-fp16-bat…/"  # 23 characters and …
    assert fold_inputs(["/a/b/run.csv", "/c/base.ncu-rep"]) == "run.csv, base.ncu-rep"


@pytest.fixture(scope="module")
def climate():
    if not CLIMATE.exists():
        pytest.skip("climate-seg capture not in ../shared/ncu-samples")
    from ncu_roofline import analyze

    return analyze([CLIMATE], gpu="Tesla V100-SXM2-16GB")


def test_climate_seg_every_drawn_kernel_has_a_distinct_label(climate):
    data = chart_data(climate.kernels, climate.chart_context(40))
    names = data.kernels["label"].str.split(". ", n=1).str[1]
    assert len(data.kernels) >= 40 and names.is_unique
    assert not data.kernels["kernel_name"].str.startswith("_Z").any()  # demangled for display
    assert (climate.kernels["kernel_name"].str.startswith("_Z")).any()  # ... while the table keeps the symbol


def test_climate_seg_spec_holds_every_ridge_point_and_names_its_off_scale_kernels(climate):
    data = chart_data(climate.kernels, climate.chart_context(40))
    # V100 roofs drawn: FP32 15.7 T, FP16 31.3 T, Tensor 125 T (used) × DRAM, L2, L1: 9 ridges, e.g.
    # Tensor ÷ DRAM = 125e12 / 900e9 ≈ 139 FLOP/byte.
    spec = roofline_spec(climate.kernels, climate.chart_context(40))
    ridge_rows = next(rows for rows in spec["datasets"].values() if rows and "ridge" in rows[0])
    assert len(ridge_rows) == len(data.ridges) == 9
    peaks = {k: climate.kernels[f"peak_{k}"].median() for k in
             ("flop_per_s_tensor", "bytes_per_s_dram")}
    tensor_dram = next(r for r in ridge_rows if r["ridge"] == "Tensor × DRAM")
    assert tensor_dram["x"] == pytest.approx(peaks["flop_per_s_tensor"] / peaks["bytes_per_s_dram"])
    # Ranks 48 and 49 sit decades below the rest: with every kernel drawn (top 49) they are named, not scaled to.
    every = chart_data(climate.kernels, climate.chart_context(49))
    assert every.off_scale and any(str(r) in " ".join(every.subtitle) for r in every.off_scale)
    assert every.y_domain[0] >= 1e9  # not stretched to the outliers' 100 kFLOP/s


def test_the_page_has_a_title_naming_gpu_and_input(tmp_path):
    table = pd.DataFrame([{"rank": 1, "kernel_name": "k</title><script>", "grid": "(1, 1, 1)", "block": "(32, 1, 1)",
                           "launches": 1, "time_s": 1e-3, "time_share": 1.0, "flop_fp32": 1e9, "flop_total": 1e9,
                           "bytes_dram": 1e9, "bytes_l2": 1e9, "bytes_l1": 1e9, "ai_dram": 1.0, "ai_l2": 1.0,
                           "ai_l1": 1.0, "flop_per_s": 1e12, "peak_flop_per_s_fp32": 19.5e12,
                           "peak_bytes_per_s_dram": 1.56e12, "bound": "dram", "roofline_fraction": 0.64,
                           "headroom_s": 3.6e-4, "status": "ok"}])
    ctx = ChartContext(gpu="NVIDIA A100 <b>", ceiling_source="table", clock="max", inputs=["/x/y/run.csv"])
    [page] = write_chart(roofline_spec(table, ctx), tmp_path, ["html"])
    head = page.read_text().split("</head>")[0]
    assert "<title>Roofline — NVIDIA A100 &lt;b&gt; — run.csv</title>" in head
    spec = json.loads(json.dumps(roofline_spec(table, ctx)))
    tooltip = next(rows for rows in spec["datasets"].values() if rows and "grid_block" in rows[0])[0]
    assert tooltip["grid_block"] == "(1, 1, 1) × (32, 1, 1)"
    assert tooltip["binding_roof"] == "DRAM 1.56 TB/s" and tooltip["headroom"].endswith("s")
    assert np.isclose(tooltip["headroom_scaled"], 360.0)  # 3.6e-4 s is under 1 ms: drawn in µs
    assert spec["hconcat"][1]["encoding"]["x"]["title"] == "headroom (µs)"


def test_every_bound_the_ranking_can_give_has_a_bar_colour():
    """A bound missing from the colour domain draws no headroom bar at all (a type-split capture's `tensor_fp16`
    once did exactly that): every term of the speed of light, tensor input types included, has a colour."""
    from ncu_roofline.render.chart.roofline import BOUND_COLOURS
    from ncu_roofline.core.vocabulary import ALL_TERMS, display

    assert {display(t.key) for t in ALL_TERMS} <= set(BOUND_COLOURS)


def test_a_tensor_type_bound_kernel_gets_its_headroom_bar():
    """fixtures/example_h100_raw.csv splits tensor work by type: its CUTLASS kernel is bound by `tensor_fp16`
    and its bar must be in the spec's bar data, coloured in the bound domain."""
    from ncu_roofline import analyze

    result = analyze("fixtures/example_h100_raw.csv")
    cutlass = result.kernels[result.kernels["bound"].astype(str) == "tensor_fp16"]
    assert len(cutlass) == 1

    def domains(node):
        if isinstance(node, dict):
            scale = node.get("scale")
            if isinstance(scale, dict) and isinstance(scale.get("domain"), list):
                yield scale["domain"]
            for value in node.values():
                yield from domains(value)
        elif isinstance(node, list):
            for value in node:
                yield from domains(value)

    assert any("Tensor FP16" in domain for domain in domains(result.chart().to_dict()))


def test_climate_seg_top_10_are_all_drawn_with_their_rank(climate):
    """Ranks 3, 4 and 6 (PadInput, S2B, TensorSlicing: 6.9, 6.8 and 4.2 ms of headroom) move bytes and count no
    FLOP (V100 capture without FP64 counters, zero FP16/FP32/tensor work): AI = 0 or unknown, so not on the log
    axes, but in the memory panel with their rank; the other seven on the roofline."""
    for top in (10, 40):
        spec = roofline_spec(climate.kernels, climate.chart_context(top))
        on_roofline = {row["rank"] for row in spec["datasets"]["points"]}
        in_panel = {row["rank"] for row in spec["datasets"]["memory_points"]}
        assert set(range(1, 11)) <= on_roofline | in_panel
        assert not on_roofline & in_panel
        assert {3, 4, 6} <= in_panel and {1, 2, 5, 7, 8, 9, 10} <= on_roofline
        assert len(on_roofline | in_panel) == top  # every kernel of the top N, each in one place
    assert spec["title"]["subtitle"][1] == ("29 of 49 kernels on the roofline, 11 in the memory panel (bytes, no FLOPs); "
                                            "left out: 9 beyond the top 40")
    # Each panel column is labelled with its kernel's rank, the bars name the same ranks.
    axis = spec["hconcat"][0]["vconcat"][1]["layer"][-1]["encoding"]["x"]["axis"]
    assert axis["labelExpr"].startswith('["3", "4", "6", ')
    bars = {row["rank"] for row in spec["datasets"]["kernels"] if row["in_bars"]}
    assert in_panel <= bars
    # PadInput (rank 3): its DRAM bandwidth is its DRAM bytes over its summed time (9.55 ms, 3 launches).
    pad = climate.kernels.set_index("rank").loc[3]
    dram = next(row for row in spec["datasets"]["memory_points"] if row["rank"] == 3 and row["level"] == "DRAM")
    assert dram["bytes_per_s"] == pytest.approx(pad["bytes_dram"] / pad["time_s"])


def test_a_capture_without_flop_counters_draws_every_kernel_in_the_panel_with_exit_0_and_a_legend(tmp_path):
    """cuda-roofline/output_A100.csv holds DRAM, L2 and L1 bytes and no FLOP counter: its 4 kernels cannot sit on
    the roofline. The chart draws all 4 in the memory panel (ranks 1-4), says why the roofline is empty, and
    its legend lists the three levels (no legend drawn as a bare title: the roofline has no time share to show)."""
    sample = SAMPLES / "cuda-roofline" / "output_A100.csv"
    if not sample.exists():
        pytest.skip("cuda-roofline/output_A100.csv not in ../shared/ncu-samples")
    from typer.testing import CliRunner

    from ncu_roofline.cli import app

    result = CliRunner().invoke(app, ["analyze", str(sample), "--gpu", "NVIDIA A100-PCIE-40GB", "-o",
                                      str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    spec = json.loads((tmp_path / "out" / "roofline.vl.json").read_text())
    assert spec["datasets"]["points"] == []
    assert {row["rank"] for row in spec["datasets"]["memory_points"]} == {1, 2, 3, 4}
    assert spec["title"]["subtitle"][1:] == ["0 of 4 kernels on the roofline, 4 in the memory panel (bytes, no FLOPs)",
                                             "Nothing to draw on the roofline: no kernel of the top has a FLOP count "
                                             "and an intensity"]
    roofline, panel = spec["hconcat"][0]["vconcat"]
    points = next(layer for layer in roofline["layer"] if layer.get("name") == "points")["encoding"]
    assert points["color"]["scale"]["domain"] == ["DRAM", "L2", "L1"] and "legend" not in points["color"]
    assert points["stroke"]["legend"] is None and points["size"]["legend"] is None
    # The cutlass GEMM (rank 1, 6 launches): its summed DRAM bytes over its summed time (790 ms), and that over
    # its own DRAM roof, as the tooltip's "of this level's roof"; the line drawn is the run's DRAM roof.
    table = pd.read_parquet(tmp_path / "out" / "kernels.parquet").set_index("rank")
    kernel = next(row for row in spec["datasets"]["memory_points"] if row["rank"] == 1 and row["level"] == "DRAM")
    rate = table.loc[1, "bytes_dram"] / table.loc[1, "time_s"]
    assert kernel["bytes_per_s"] == pytest.approx(rate)
    assert kernel["of_roof"] == f"{100 * rate / table.loc[1, 'peak_bytes_per_s_dram']:.1f}%"
    roofs = {row["roof"]: row["peak"] for row in spec["datasets"]["memory_roofs"]}
    assert roofs["DRAM"] == pytest.approx(table["peak_bytes_per_s_dram"].median())

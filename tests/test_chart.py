"""The roofline chart: what the spec holds, that it validates, and that its files are written whole and offline."""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import replace
from pathlib import Path

import altair as alt
import jsonschema
import numpy as np
import pandas as pd
import pytest

from ncu_roofline.render.chart import chart_files
from ncu_roofline.core import files as files_module
from ncu_roofline.render.analysis.chart import roofline_spec
from ncu_roofline.render.chart.roofline import (
    BARS_WIDTH_PX,
    ROOFLINE_HEIGHT_PX,
    ROOFLINE_WIDTH_PX,
    chart_data,
    shared_peaks,
)
from ncu_roofline.render.chart.context import ChartContext
from ncu_roofline.render.text.numbers import format_si
from ncu_roofline.render.chart.chart_files import spec_text, write_chart
from ncu_roofline.core.kernel_names import short_kernel_name

# An A100-like GPU: the values the roofs must carry.
PEAKS = {
    "peak_flop_per_s_fp64": 9.7e12,
    "peak_flop_per_s_fp32": 19.5e12,
    "peak_flop_per_s_fp16": 78e12,
    "peak_flop_per_s_tensor": 312e12,
    "peak_bytes_per_s_dram": 1.56e12,
    "peak_bytes_per_s_l2": 5.5e12,
    "peak_bytes_per_s_l1": 19e12,
}
ELEMENTWISE = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"
)


def kernel_row(name: str, *, rank: int, time_s: float, flop_fp32: float = 0.0, flop_fp16: float = 0.0,
               bytes_dram: float, bytes_l2: float, bytes_l1: float, **overrides: object) -> dict[str, object]:
    """One row of the ranked kernel table, its ratios worked out the way `derive` and `rank` define them."""
    flop_total = flop_fp32 + flop_fp16
    t_sol_s = max(flop_fp32 / PEAKS["peak_flop_per_s_fp32"], flop_fp16 / PEAKS["peak_flop_per_s_fp16"],
                  bytes_dram / PEAKS["peak_bytes_per_s_dram"], bytes_l2 / PEAKS["peak_bytes_per_s_l2"],
                  bytes_l1 / PEAKS["peak_bytes_per_s_l1"])
    row: dict[str, object] = {
        "rank": rank, "kernel_name": name, "grid": "(256, 1, 1)", "block": "(128, 1, 1)", "launches": 10,
        "time_s": time_s, "time_share": math.nan,
        "flop_fp64": 0.0, "flop_fp32": flop_fp32, "flop_fp16": flop_fp16, "flop_tensor": 0.0, "flop_total": flop_total,
        "bytes_dram": bytes_dram, "bytes_l2": bytes_l2, "bytes_l1": bytes_l1,
        "ai_dram": flop_total / bytes_dram, "ai_l2": flop_total / bytes_l2, "ai_l1": flop_total / bytes_l1,
        "flop_per_s": flop_total / time_s, **PEAKS,
        "t_sol_s": t_sol_s, "bound": "dram", "roofline_fraction": t_sol_s / time_s, "headroom_s": time_s - t_sol_s,
        "status": "ok",
    }
    row.update(overrides)
    return row


@pytest.fixture
def kernels() -> pd.DataFrame:
    rows = [
        # 2e9 FLOP in 1 ms → 2e12 FLOP/s; 1e9 DRAM bytes → AI 2.0, 2e9 L2 bytes → 1.0, 4e9 L1 bytes → 0.5.
        kernel_row(ELEMENTWISE, rank=1, time_s=1e-3, flop_fp32=2e9, bytes_dram=1e9, bytes_l2=2e9, bytes_l1=4e9),
        # 4e9 FP16 FLOP in 1 ms → 4e12 FLOP/s; AI 20, 10, 4.
        kernel_row("void gemm_fp16<64>(half*, half*)", rank=2, time_s=1e-3, flop_fp16=4e9, bytes_dram=2e8,
                   bytes_l2=4e8, bytes_l1=1e9, bound="fp16"),
        # A copy: bytes, no FLOPs. Ranked, barred, but it cannot sit on a log axis.
        kernel_row("[CUDA memcpy DtoD]", rank=3, time_s=1e-3, bytes_dram=1e9, bytes_l2=1e9, bytes_l1=1e9,
                   ai_dram=0.0, ai_l2=0.0, ai_l1=0.0, flop_per_s=0.0),
        # Counters missing: FLOPs and intensities unknown.
        kernel_row("void mystery_kernel(float*)", rank=4, time_s=5e-4, bytes_dram=1e8, bytes_l2=1e8, bytes_l1=1e8,
                   flop_total=math.nan, ai_dram=math.nan, ai_l2=math.nan, ai_l1=math.nan, flop_per_s=math.nan,
                   bound=None, headroom_s=math.nan, roofline_fraction=math.nan),
    ]
    table = pd.DataFrame(rows)
    table["time_share"] = table["time_s"] / table["time_s"].sum()
    return table


@pytest.fixture
def ctx() -> ChartContext:
    return ChartContext(gpu="NVIDIA A100-SXM4-40GB", ceiling_source="built-in table (NVIDIA A100 datasheet)",
                        clock="max", inputs=["step.csv"])


def view_named(spec: dict, name: str) -> dict:
    """A view by name, through concatenations (the roofline sits over its memory panel when it has one)."""
    if spec.get("name") == name:
        return spec
    for child in spec.get("hconcat", []) + spec.get("vconcat", []):
        if found := view_named(child, name):
            return found
    return {}


def dataset_of_layer(spec: dict, layer_index: int) -> list[dict]:
    """The inlined rows that layer `layer_index` of the roofline draws."""
    name = view_named(spec, "roofline")["layer"][layer_index]["data"]["name"]
    return spec["datasets"][name]


def layer_with_mark(spec: dict, mark: str) -> tuple[int, dict]:
    for index, layer in enumerate(view_named(spec, "roofline")["layer"]):
        if layer["mark"]["type"] == mark and layer["encoding"]["x"]["field"] in {"x", "ai"}:
            if mark != "line" or "detail" in layer["encoding"] and layer["encoding"]["detail"]["field"] == "roof":
                return index, layer
    raise AssertionError(f"no {mark} layer")


# ------------------------------------------------------------------------------------------------ the spec


def test_spec_validates_against_the_vega_lite_schema_altair_ships(kernels, ctx):
    spec = roofline_spec(kernels, ctx)  # Altair validates here
    [schema_path] = Path(alt.__file__).parent.glob("vegalite/v*/schema/vega-lite-schema.json")
    schema = json.loads(schema_path.read_text())
    jsonschema.Draft7Validator(schema).validate(spec)
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/v6")


def test_roofs_carry_the_tables_peaks_and_stop_at_the_highest_compute_roof(kernels, ctx):
    spec = roofline_spec(kernels, ctx)
    index, _ = layer_with_mark(spec, "line")
    roofs = pd.DataFrame(dataset_of_layer(spec, index))

    dram = roofs[roofs["roof"] == "DRAM"]
    # A diagonal is y = peak × x: at x = 1 it is at the DRAM bandwidth.
    assert np.allclose(dram["y"] / dram["x"], 1.56e12)
    # FP32 and FP16 are used by the run; FP64 and tensor are not, so they get no roof.
    assert set(roofs.loc[roofs["kind"] == "compute", "roof"]) == {"FP32", "FP16"}
    assert set(roofs.loc[roofs["kind"] == "memory", "roof"]) == {"DRAM", "L2", "L1"}
    assert roofs.loc[roofs["roof"] == "FP16", "y"].tolist() == [78e12, 78e12]
    # Each diagonal ends where it meets the highest compute roof drawn (FP16): x = 78e12 / bandwidth.
    for level, bandwidth in (("DRAM", 1.56e12), ("L2", 5.5e12), ("L1", 19e12)):
        end = roofs[roofs["roof"] == level].iloc[-1]
        assert end["y"] == pytest.approx(78e12)
        assert end["x"] == pytest.approx(78e12 / bandwidth)
    assert set(roofs["label"]) == {"FP32 19.5 TFLOP/s", "FP16 78.0 TFLOP/s", "DRAM 1.56 TB/s", "L2 5.50 TB/s",
                                   "L1 19.0 TB/s"}


def test_each_kernel_is_drawn_once_per_level_at_its_achieved_flop_per_s(kernels, ctx):
    spec = roofline_spec(kernels, ctx)
    index, layer = layer_with_mark(spec, "point")
    assert (layer["encoding"]["x"]["field"], layer["encoding"]["y"]["field"]) == ("ai", "flop_per_s")
    points = pd.DataFrame(dataset_of_layer(spec, index))
    by_level = {(row.rank, row.level): (row.ai, row.flop_per_s) for row in points.itertuples()}
    assert by_level == {
        (1, "DRAM"): (2.0, 2e12), (1, "L2"): (1.0, 2e12), (1, "L1"): (0.5, 2e12),
        (2, "DRAM"): (20.0, 4e12), (2, "L2"): (10.0, 4e12), (2, "L1"): (4.0, 4e12),
    }


def test_kernels_with_bytes_and_no_flops_are_drawn_in_the_memory_panel_and_counted(kernels, ctx):
    spec = roofline_spec(kernels, ctx)
    subtitle = spec["title"]["subtitle"]
    assert subtitle[0] == "Ceilings: built-in table (NVIDIA A100 datasheet) · clock: max · input: step.csv"
    assert subtitle[1] == "2 of 4 kernels on the roofline, 2 in the memory panel (bytes, no FLOPs)"
    assert spec["title"]["text"] == "Hierarchical roofline — NVIDIA A100-SXM4-40GB"
    # The copy still has headroom, so it is a bar; the kernel without a headroom is not.
    data = chart_data(kernels, ctx)
    assert data.kernels.loc[data.kernels["in_bars"], "rank"].tolist() == [1, 2, 3]
    # The copy moves 1e9 bytes at each level in 1 ms: 1e12 B/s, 1e12 / 1.56e12 = 64.1 % of the DRAM roof; the
    # mystery kernel 1e8 bytes in 0.5 ms: 2e11 B/s. Columns by rank, DRAM left of L2 left of L1.
    panel = pd.DataFrame(spec["datasets"]["memory_points"])
    by_level = {(row.rank, row.level): row.bytes_per_s for row in panel.itertuples()}
    assert by_level == {(3, "DRAM"): 1e12, (3, "L2"): 1e12, (3, "L1"): 1e12,
                        (4, "DRAM"): 2e11, (4, "L2"): 2e11, (4, "L1"): 2e11}
    copy = panel[panel["rank"] == 3].set_index("level")
    assert copy.loc["DRAM", "of_roof"] == "64.1%" and copy.loc["L1", "bandwidth"] == "1.00 TB/s"
    assert copy.loc["DRAM", "x"] < copy.loc["L2", "x"] < copy.loc["L1", "x"]
    assert set(panel.loc[panel["rank"] == 4, "slot"]) == {1}
    # Its roofs: one horizontal line per memory level at the roofline's own peaks.
    roofs = pd.DataFrame(spec["datasets"]["memory_roofs"])
    assert dict(zip(roofs["roof"], roofs["peak"])) == {"DRAM": 1.56e12, "L2": 5.5e12, "L1": 19e12}
    assert (roofs["y"] == roofs["peak"]).all()
    # The rank numbers are the panel's x labels, in rank order.
    # Under the roofline, as wide; the bars beside both.
    assert [view.get("name") for view in spec["hconcat"][0]["vconcat"]] == ["roofline", "memory_panel"]
    panel_view = view_named(spec, "memory_panel")
    assert panel_view["width"] == ROOFLINE_WIDTH_PX
    axis = panel_view["layer"][-1]["encoding"]["x"]["axis"]
    assert axis["values"] == [0, 1] and axis["labelExpr"].startswith('["3", "4"]')
    # Same tooltip as the points on the roofline, after the panel's own lines.
    roofline_tooltip = [t["title"] for t in view_named(spec, "roofline")["layer"][3]["encoding"]["tooltip"]]
    panel_tooltip = [t["title"] for t in panel_view["layer"][-1]["encoding"]["tooltip"]]
    assert panel_tooltip[:4] == ["level", "rank", "achieved at this level", "of this level's roof"]
    assert panel_tooltip[4:] == roofline_tooltip[2:]


def test_a_kernel_with_neither_flops_nor_bytes_is_left_out_and_counted(kernels, ctx):
    kernels.loc[3, ["bytes_dram", "bytes_l2", "bytes_l1"]] = math.nan  # the mystery kernel: nothing to draw
    kernels.loc[2, ["bytes_l1"]] = math.nan  # the copy: no L1 count
    data = chart_data(kernels, ctx)
    assert data.subtitle[1] == ("2 of 4 kernels on the roofline, 1 in the memory panel (bytes, no FLOPs); left out: "
                                "1 with missing data; 1 in the panel at fewer than 3 levels (missing bytes)")
    assert sorted(data.panel.points["level"]) == ["DRAM", "L2"]


def test_only_the_top_n_drawable_kernels_are_plotted(kernels, ctx):
    top_one = replace(ctx, top=1)
    data = chart_data(kernels, top_one)
    assert set(data.points["rank"]) == {1}
    # Ranks 2 (on the roofline), 3 and 4 (in the panel) could be drawn: beyond the top 1.
    assert data.subtitle[1] == "1 of 4 kernels drawn; left out: 3 beyond the top 1"
    assert data.panel is None
    # Top 3: the roofline's two and the copy; the mystery kernel (rank 4) is beyond.
    data = chart_data(kernels, replace(ctx, top=3))
    assert data.subtitle[1] == "2 of 4 kernels on the roofline, 1 in the memory panel (bytes, no FLOPs); left out: " \
        "1 beyond the top 3"
    assert data.panel.ranks == (3,)


def test_a_kernel_missing_one_intensity_is_drawn_at_the_others(kernels, ctx):
    kernels.loc[0, "ai_l1"] = math.nan
    data = chart_data(kernels, ctx)
    assert sorted(data.points.loc[data.points["rank"] == 1, "level"]) == ["DRAM", "L2"]
    assert data.subtitle[1].endswith("; 1 drawn at fewer than 3 levels (missing intensity)")


def test_labels_are_short_names_prefixed_with_rank_and_tooltips_keep_full_names(kernels, ctx):
    data = chart_data(kernels, ctx)
    first = data.kernels.iloc[0]
    assert first["label"] == "1. …::vectorized_elementwise_kernel<…>(…)"
    assert first["kernel_name"] == ELEMENTWISE
    assert first["performance"] == "2.00 TFLOP/s"
    assert (first["ai_dram"], first["ai_l2"], first["ai_l1"]) == ("2.00", "1.00", "0.500")


def test_roofs_use_the_median_peak_across_kernels(kernels):
    kernels["peak_bytes_per_s_dram"] = [1.5e12, 1.6e12, 1.56e12, math.nan]
    kernels["peak_flop_per_s_tensor"] = math.nan
    peaks = shared_peaks(kernels)
    assert peaks["dram"] == 1.56e12
    assert "tensor" not in peaks


def test_fp32_roof_is_drawn_when_no_precision_is_known_to_be_used(kernels, ctx):
    kernels[["flop_fp32", "flop_fp16"]] = 0.0
    roofs = chart_data(kernels, ctx).roofs
    assert set(roofs.loc[roofs["kind"] == "compute", "roof"]) == {"FP32"}


def test_a_run_with_nothing_drawable_still_gives_a_valid_chart(kernels, ctx):
    nothing = kernels.iloc[2:].copy()
    nothing[[c for c in kernels if c.startswith("peak_")]] = math.nan
    spec = roofline_spec(nothing, ctx)
    assert spec["title"]["subtitle"][1] == "0 of 2 kernels on the roofline, 2 in the memory panel (bytes, no FLOPs)"
    assert spec["title"]["subtitle"][2].startswith("Nothing to draw on the roofline")
    assert {row["rank"] for row in spec["datasets"]["memory_points"]} == {3, 4}
    assert spec["datasets"]["memory_roofs"] == []  # no roof known: the panel draws the bandwidths alone
    # The legend lists the panel's levels; legends with nothing to list are left out, not drawn as a bare title.
    points = view_named(spec, "roofline")["layer"][3]["encoding"]
    assert points["color"]["scale"]["domain"] == ["DRAM", "L2", "L1"]
    assert points["stroke"]["legend"] is None and points["size"]["legend"] is None


def test_a_chart_where_every_kernel_has_flops_has_no_panel(kernels, ctx):
    spec = roofline_spec(kernels.iloc[:2], ctx)
    assert [view["name"] for view in spec["hconcat"]] == ["roofline", "headroom"]
    assert not any(name.startswith("memory") for name in spec["datasets"])
    assert spec["title"]["subtitle"][1] == "All 2 kernels drawn"


def test_interaction_params_are_named_and_shared(kernels, ctx):
    spec = roofline_spec(kernels, ctx)
    params = {param["name"]: param for param in spec["params"]}
    assert params["level"]["bind"] == "legend"
    assert params["kernel"]["select"] == {"type": "point", "fields": ["rank"], "on": "pointerover",
                                          "clear": "pointerout"}
    assert params["kernel"]["views"] == ["points", "memory", "headroom"]  # the points, the panel's and the bars
    assert params["zoom"]["bind"] == "scales"


def test_spec_is_the_same_on_every_build(kernels, ctx):
    assert spec_text(roofline_spec(kernels, ctx)) == spec_text(roofline_spec(kernels, ctx))


@pytest.mark.parametrize(("value", "unit", "text"), [
    (19.5e12, "FLOP/s", "19.5 TFLOP/s"), (1.56e12, "B/s", "1.56 TB/s"), (2e12, "FLOP/s", "2.00 TFLOP/s"),
    (999.96e9, "B/s", "1.00 TB/s"), (1.234e-3, "s", "1.23 ms"), (0.0, "s", "0 s"), (math.nan, "s", "—"),
])
def test_format_si(value, unit, text):
    assert format_si(value, unit) == text


# ------------------------------------------------------------------------------------------------ short names


@pytest.mark.parametrize(("name", "max_len", "short"), [
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
     "at::detail::Array<char*, 1> >(int, T2, T3)", 60, "at::native::vectorized_elementwise_kernel<…>(…)"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
     "at::detail::Array<char*, 1> >(int, T2, T3)", 40, "…::vectorized_elementwise_kernel<…>(…)"),
    # Template arguments fold from the inside out, only as far as needed.
    ("void foo<bar<int>, 4>(int) const", 40, "foo<bar<int>, 4>(…)"),
    ("void foo<bar<int>, 4>(int) const", 17, "foo<bar<…>, 4>(…)"),
    ("void foo<bar<int>, 4>(int) const", 15, "foo<…>(…)"),
    ("void gemm<float>(float*, int)", 40, "gemm<float>(…)"),
    # A lambda in the template arguments, with an argument list of its own.
    ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::AddFunctor<float> >("
     "at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::{lambda(int)#1}>(int, "
     "at::native::gpu_kernel_impl<at::native::AddFunctor<float> >(at::TensorIteratorBase&, "
     "at::native::AddFunctor<float> const&)::{lambda(int)#1})", 40, "at::native::elementwise_kernel<…>(…)"),
    ("void k<ns::{lambda(float)#2}>(ns::{lambda(float)#2})", 40, "k<ns::{lambda}>(…)"),
    ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>(float*, int)", 40,
     "{anon}::softmax_warp_forward<…>(…)"),
    ("Foo::operator()(int)", 40, "Foo::operator()(…)"),
    ("kernel()", 40, "kernel()"),
    ("ampere_sgemm_128x64_nn", 40, "ampere_sgemm_128x64_nn"),
    ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_", 20, "_ZN2at6native29vect…"),
])
def test_short_kernel_name(name, max_len, short):
    assert short_kernel_name(name, max_len) == short


def test_short_kernel_name_always_fits():
    nested = "void " + "ns::" * 30 + "k" + "<a" * 50 + ">" * 50 + "(" + "int, " * 400 + "int)"
    for max_len in (4, 10, 40, 80):
        assert len(short_kernel_name(nested, max_len)) <= max_len
        assert short_kernel_name(nested, max_len) == short_kernel_name(nested, max_len)


# ------------------------------------------------------------------------------------------------ the files


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    length, chunk = struct.unpack(">I4s", data[8:16])
    assert (length, chunk) == (13, b"IHDR")
    return struct.unpack(">II", data[16:24])


def test_write_chart_writes_every_format(kernels, ctx, tmp_path):
    paths = write_chart(roofline_spec(kernels, ctx), tmp_path, ["vl.json", "html", "svg", "png"])
    assert [p.name for p in paths] == ["roofline.vl.json", "roofline.html", "roofline.svg", "roofline.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)  # no temporary left

    spec = json.loads((tmp_path / "roofline.vl.json").read_text())
    assert spec["datasets"]  # data inlined

    html = (tmp_path / "roofline.html").read_text()
    assert not re.search(r"<script[^>]*\bsrc\s*=", html)  # nothing fetched: Vega, Vega-Lite, Vega-Embed inlined
    assert "vegaEmbed(" in html and "vega-embed" in html
    assert len(html) > 500_000  # the three libraries are in the page

    assert (tmp_path / "roofline.svg").read_text().lstrip().startswith("<svg")

    width, height = png_size((tmp_path / "roofline.png").read_bytes())
    # scale 2 (sharp on a high-density screen): twice the two views, their axes, legends and titles.
    assert 2 * (ROOFLINE_WIDTH_PX + BARS_WIDTH_PX) < width < 6 * (ROOFLINE_WIDTH_PX + BARS_WIDTH_PX)
    assert 2 * ROOFLINE_HEIGHT_PX < height < 6 * ROOFLINE_HEIGHT_PX


def test_written_spec_is_byte_identical_across_runs(kernels, ctx, tmp_path):
    first = write_chart(roofline_spec(kernels, ctx), tmp_path / "a", ["vl.json", "html"])
    second = write_chart(roofline_spec(kernels, ctx), tmp_path / "b", ["vl.json", "html"])
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes()


def test_html_cannot_be_broken_out_of_by_a_file_name(kernels, ctx, tmp_path):
    hostile = replace(ctx, inputs=["</script><script>alert(1)</script>.csv"])
    [path] = write_chart(roofline_spec(kernels, hostile), tmp_path, ["html"])
    assert "</script><script>alert(1)" not in path.read_text()


def test_a_failed_export_leaves_the_directory_as_it_was(kernels, ctx, tmp_path, monkeypatch):
    real_render = chart_files.render

    def fail_on_png(spec, fmt, **options):
        if fmt == "png":
            raise RuntimeError("vl-convert crashed")
        return real_render(spec, fmt, **options)

    monkeypatch.setattr(chart_files, "render", fail_on_png)
    with pytest.raises(RuntimeError):
        write_chart(roofline_spec(kernels, ctx), tmp_path, ["vl.json", "png"])
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_write_leaves_no_partial_file(kernels, ctx, tmp_path, monkeypatch):
    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(files_module.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_chart(roofline_spec(kernels, ctx), tmp_path, ["vl.json"])
    assert list(tmp_path.iterdir()) == []


def test_unknown_format_is_refused(kernels, ctx, tmp_path):
    with pytest.raises(ValueError, match="unknown chart format"):
        write_chart(roofline_spec(kernels, ctx), tmp_path, ["pdf"])


def test_five_thousand_kernels_stay_small_and_render(tmp_path, ctx):
    rng = np.random.default_rng(0)
    n = 5000
    rows = []
    for i in range(n):
        flop = float(rng.uniform(1e6, 1e10)) if i % 10 else 0.0
        time_s = float(rng.uniform(1e-6, 1e-2))
        name = "void " + "::".join(f"ns{i % 7}" for _ in range(3)) + f"::kernel_{i}<" + "T, " * 300 + "4>(int)"
        rows.append(kernel_row(name, rank=i + 1, time_s=time_s, flop_fp32=flop, bytes_dram=float(rng.uniform(1e6, 1e9)),
                               bytes_l2=float(rng.uniform(1e6, 1e9)), bytes_l1=float(rng.uniform(1e6, 1e9))))
    table = pd.DataFrame(rows)
    table["time_share"] = table["time_s"] / table["time_s"].sum()
    paths = write_chart(roofline_spec(table, ctx), tmp_path, ["vl.json", "png"])
    assert paths[0].stat().st_size < 100_000  # what chart.py promises for 5,000 kernels with long names
    width, height = png_size(paths[1].read_bytes())
    assert width > ROOFLINE_WIDTH_PX and height > ROOFLINE_HEIGHT_PX
    spec = json.loads(paths[0].read_text())
    # Kernels 0, 10, 20, ... have no FLOPs: ranks 1 and 11 of the top 20 are in the memory panel.
    assert spec["title"]["subtitle"][1] == ("18 of 5000 kernels on the roofline, 2 in the memory panel (bytes, no FLOPs); "
                                            "left out: 4980 beyond the top 20")

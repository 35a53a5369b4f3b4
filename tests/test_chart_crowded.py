"""Crowded chart regions (issue #24 item 5): a displaced rank number keeps a leader line to its point, kernels drawn
on one spot share one label, the images say where unnumbered points are named (no "hover" where nobody can hover),
and a tooltip's binding roof reads the value the drawn roof's label says."""

from __future__ import annotations

import json
from pathlib import Path

import altair as alt
import jsonschema
import numpy as np
import pandas as pd
import pytest
from test_chart import ELEMENTWISE, kernel_row

from ncu_roofline.render.analysis.chart import roofline_spec
from ncu_roofline.render.chart import layout as layout_module
from ncu_roofline.render.chart.chart_files import render, spec_text, static_variant
from ncu_roofline.render.chart.context import ChartContext
from ncu_roofline.render.chart.layout import coincident_clusters, group_text, layout_texts
from ncu_roofline.render.chart.roofline import chart_data
from ncu_roofline.render.chart.placement import (
    Board,
    Plot,
    box,
    place_rank,
    place_rank_leader,
)

SAMPLES = Path(__file__).resolve().parents[1] / ".." / "shared" / "ncu-samples"
CLIMATE = SAMPLES / "DeepLearningProfiling" / "climate-seg-TF-fp16-batch2-fw-amp"
NCAR = SAMPLES / "NCAR-GPU_workshop" / "MW_Baseline.ncu-rep"
V100 = "Tesla V100-SXM2-16GB"


@pytest.fixture
def ctx() -> ChartContext:
    return ChartContext(gpu="NVIDIA A100-SXM4-40GB", ceiling_source="built-in table", clock="max", inputs=["a.csv"])


# ------------------------------------------------------------------------------------------------ leader lines


def _walled_in_board() -> Board:
    """A point at (100, 100), r = 5, walled in by texts on every side but for a corridor y 98.5..101.5 running
    right to x = 116: no rank number fits beside it (its box is 11.7 px high), a leader along y = 100 does."""
    plot = Plot(640, 480, (0.01, 100.0), (1e9, 1e15))
    board = Board(plot, [(100.0, 100.0, 5.0)])
    for x0, y0, x1, y1 in ((60, 60, 95, 140), (95, 60, 116, 88), (95, 112, 116, 140),  # left, top, bottom
                           (95, 88, 116, 98.5), (95, 101.5, 116, 112)):  # above and below the corridor
        board.take(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=float))
    return board


def test_a_walled_in_rank_number_goes_further_right_with_a_leader_to_its_point():
    assert place_rank(_walled_in_board(), "7", [(100.0, 100.0, 5.0)], 9) is None  # no room beside the point
    board = _walled_in_board()
    spot = place_rank_leader(board, "7", [(100.0, 100.0, 5.0)], 9)
    # "7" at 9 px bold: w = 0.68 * 9 + 2 = 8.12, h = 11.7. First leader ring: 12 px past the point's edge, so
    # d = 5 + 12 = 17 and the centre is 100 + 17 + 8.12 / 2 = 121.06 (its box 117..125.12, clear of the walls).
    assert (round(spot.x, 6), spot.y) == (121.06, 100.0)
    # The leader runs from the point's box edge (x = 105) to 2 px short of the text's box (117 - 2 = 115).
    assert tuple(round(v, 6) for v in spot.leader) == (105.0, 100.0, 115.0, 100.0)
    # It is on the board: a text on the corridor (y 99..101) is refused, one clear of it is not.
    assert not board.free(box(110.0, 100.0, 4.0, 2.0))
    assert board.free(box(140.0, 100.0, 4.0, 2.0))


def test_a_rank_number_beside_its_point_has_no_leader():
    plot = Plot(640, 480, (0.01, 100.0), (1e9, 1e15))
    spot = place_rank_leader(Board(plot, [(100.0, 100.0, 5.0)]), "7", [(100.0, 100.0, 5.0)], 9)
    assert (round(spot.x, 6), spot.y, spot.leader) == (110.06, 100.0, None)  # as place_rank puts it


# --------------------------------------------------------------------------------------------- coincident points


def test_group_labels_name_every_kernel_on_the_spot():
    assert group_text([2, 1]) == "1, 2"
    assert group_text([5, 3, 4]) == "3–5"
    assert group_text([1, 4, 6, 9]) == "1, 4 +2"


def test_points_closer_than_the_smaller_marks_radius_share_a_spot_per_level_and_not_by_chains():
    # Areas 100 px²: radius sqrt(100 / pi) = 5.64 px. (0, 0) and (4, 0) are one spot; (8, 0) is 8 px from the
    # first point (the spot's seed), so it is not, though 4 px from the second. The same place at another level
    # is another spot.
    px, py = np.array([0.0, 4.0, 8.0, 0.0]), np.zeros(4)
    clusters = coincident_clusters(px, py, np.array(["DRAM", "DRAM", "DRAM", "L2"]), np.full(4, 100.0))
    assert clusters[0] == clusters[1] and len({clusters[0], clusters[2], clusters[3]}) == 3


def test_a_small_point_inside_a_larger_ones_mark_is_named_by_the_larger_ones_label():
    # Kernel 1: three big marks (area 400 px², board box ±(0.62 * 20 + 1.5) = ±13.9 px). Kernel 2: one small mark
    # (area 30: box ±4.9 px) 0.4 px right of kernel 1's DRAM point, inside its box. Every spot for "2" within
    # 5 px of its point meets kernel 1's box, and a leader from it would cross that box too: alone, 2 gets no
    # number. Laid out again, kernel 1's label beside that spot names both.
    plot = Plot(640, 480, (0.01, 100.0), (1e9, 1e15))
    points = pd.DataFrame({"rank": [1, 1, 1, 2], "level": ["DRAM", "L2", "L1", "DRAM"],
                           "ai": [1.0, 0.5, 0.25, 10 ** (0.4 / 160)],  # 640 px over 4 decades: 160 px each
                           "flop_per_s": [1e12] * 4})
    layout = layout_texts(plot, [], [], points, np.array([400.0, 400.0, 400.0, 30.0]))
    assert [row["text"] for row in layout.rank_rows] == ["1, 2"] and layout.labelled == {1, 2}
    # and without kernel 2, kernel 1's label is its plain rank
    alone = layout_texts(plot, [], [], points.iloc[:3], np.full(3, 400.0))
    assert [row["text"] for row in alone.rank_rows] == ["1"] and alone.labelled == {1}


@pytest.fixture
def twins() -> pd.DataFrame:
    """Kernels 1 and 2 with the same FLOPs, bytes and time: one spot at every level. Kernel 3 elsewhere."""
    rows = [
        # 2e9 FLOP in 1 ms: 2e12 FLOP/s at AI 2.0 (DRAM), 1.0 (L2), 0.5 (L1), for both
        kernel_row(ELEMENTWISE, rank=1, time_s=1e-3, flop_fp32=2e9, bytes_dram=1e9, bytes_l2=2e9, bytes_l1=4e9),
        kernel_row("void twin_kernel(float*)", rank=2, time_s=1e-3, flop_fp32=2e9, bytes_dram=1e9, bytes_l2=2e9,
                   bytes_l1=4e9),
        # 4e9 FP16 FLOP in 1 ms: 4e12 FLOP/s at AI 20, 10, 4
        kernel_row("void gemm_fp16<64>(half*, half*)", rank=3, time_s=1e-3, flop_fp16=4e9, bytes_dram=2e8,
                   bytes_l2=4e8, bytes_l1=1e9, bound="fp16"),
    ]
    table = pd.DataFrame(rows)
    table["time_share"] = table["time_s"] / table["time_s"].sum()
    return table


def test_two_kernels_on_one_spot_get_one_label_naming_both_and_the_tooltip_names_the_other(twins, ctx):
    data = chart_data(twins, ctx)
    assert sorted(data.rank_labels["text"]) == ["1, 2", "3"]
    assert not any("crowded" in line for line in data.subtitle)  # both ranks are on the plot
    spec = roofline_spec(twins, ctx)
    label = {row["rank"]: row["label"] for row in spec["datasets"]["kernels"]}
    same = {(p["rank"], p["level"]): p["same_spot"] for p in spec["datasets"]["points"]}
    assert same[(1, "DRAM")] == label[2] and same[(2, "L1")] == label[1] and same[(3, "DRAM")] == ""
    roofline_points = next(layer for layer in spec["hconcat"][0]["layer"] if layer.get("name") == "points")
    assert {"field": "same_spot", "type": "nominal", "title": "on the same spot"} in \
        roofline_points["encoding"]["tooltip"]


def test_a_chart_without_shared_spots_or_leaders_has_neither_column_nor_layer(ctx):
    table = pd.DataFrame([kernel_row(ELEMENTWISE, rank=1, time_s=1e-3, flop_fp32=2e9, bytes_dram=1e9,
                                     bytes_l2=2e9, bytes_l1=4e9, time_share=1.0)])
    spec = roofline_spec(table, ctx)
    assert "same_spot" not in spec["datasets"]["points"][0]
    assert "rank_leaders" not in spec["datasets"]
    assert all(layer["mark"]["type"] != "rule" for layer in spec["hconcat"][0]["layer"])


# ---------------------------------------------------------------------------------------------- page sizes


@pytest.fixture
def crowd() -> tuple[Plot, pd.DataFrame, np.ndarray]:
    """60 kernels' DRAM points inside a third of a decade each way on a 640 × 480 plot over 3 and 4 decades:
    about 70 × 40 px for 60 marks of ±7.7 px boxes, so some numbers find no room even with a leader."""
    rng = np.random.default_rng(0)
    points = pd.DataFrame({"rank": np.arange(1, 61), "level": "DRAM", "ai": 10 ** rng.uniform(0.0, 0.33, 60),
                           "flop_per_s": 10 ** rng.uniform(12.0, 12.33, 60)})
    return Plot(640, 480, (0.1, 100.0), (1e10, 1e14)), points, np.full(60, 100.0)


def test_only_the_ranks_numbered_at_the_default_size_are_searched_at_the_others(crowd, monkeypatch):
    plot, points, sizes = crowd
    default = layout_texts(plot, [], [], points, sizes)
    assert 0 < len(default.labelled) < 60  # crowded: some numbers have no room
    searched: list[str] = []
    real = layout_module.place_rank_leader
    monkeypatch.setattr(layout_module, "place_rank_leader",
                        lambda board, text, *rest: searched.append(text) or real(board, text, *rest))
    wide = layout_texts(Plot(1920, 720, plot.x_domain, plot.y_domain), [], [], points, sizes, default.labelled)
    assert wide.labelled <= default.labelled
    # each search is for a text naming a rank numbered at the default size (its first rank), at most twice (the
    # layout and its second pass): a rank without room there costs nothing here
    firsts = [int(text.replace("–", ",").split(",")[0]) for text in searched]
    assert set(firsts) <= default.labelled and len(searched) <= 2 * len(default.labelled)
    monkeypatch.undo()
    # unrestricted, the wide plot numbers ranks the default size could not: the trade this makes for a crowded chart
    assert layout_texts(Plot(1920, 720, plot.x_domain, plot.y_domain), [], [], points, sizes).labelled \
        - default.labelled


def test_naming_every_rank_in_only_lays_out_as_without_it(crowd):
    plot, points, sizes = crowd
    every = frozenset(range(1, 61))
    for size in (plot, Plot(1920, 720, plot.x_domain, plot.y_domain)):
        assert layout_texts(size, [], [], points, sizes, every) == layout_texts(size, [], [], points, sizes)


def test_the_points_columns_taken_once_lay_out_as_the_frame(crowd):
    """The page's other plot sizes lay out from `point_columns` (the frame's columns taken once for all sizes):
    the same texts, spots, leaders and numbered ranks as from the frame itself, at every size, with levels that
    coincide (a kernel's L2 point under another's DRAM mark) and without a level column."""
    from ncu_roofline.render.chart.layout import point_columns

    plot, points, sizes = crowd
    under = points.iloc[:20].assign(rank=np.arange(61, 81), level="L2")
    mixed = pd.concat([points, under], ignore_index=True)
    mixed_sizes = np.concatenate([sizes, np.full(20, 30.0)])
    for frame, areas in ((points, sizes), (mixed, mixed_sizes), (points.drop(columns="level"), sizes)):
        columns = point_columns(frame)
        assert sorted(columns) == sorted({"rank", "ai", "flop_per_s", "level"} & set(frame.columns))
        default = layout_texts(plot, [], [], frame, areas)
        for width, height in ((640, 480), (480, 360), (1000, 600), (1920, 720)):
            size = Plot(width, height, plot.x_domain, plot.y_domain)
            assert layout_texts(size, [], [], columns, areas, default.labelled) == \
                layout_texts(size, [], [], frame, areas, default.labelled)


def test_the_second_pass_reuses_only_answers_that_would_come_again(crowd, monkeypatch):
    # 20 more kernels, each with a small DRAM mark under one of the first 20's and an L2 point in the crowd: those
    # left unnumbered share a numbered one's spot, so layout_texts lays out again, naming them in their hosts' labels
    plot, points, sizes = crowd
    rng = np.random.default_rng(1)
    under = points.iloc[:20].assign(rank=np.arange(61, 81))
    beside = under.assign(level="L2", ai=10 ** rng.uniform(0.0, 0.33, 20),
                          flop_per_s=10 ** rng.uniform(12.0, 12.33, 20))
    points = pd.concat([points, under, beside], ignore_index=True)
    sizes = np.concatenate([sizes, np.full(40, 30.0)])
    passes, skipped, again = [], [], []
    real_laid_out, real_unchanged = layout_module._laid_out, layout_module._unchanged_around
    real_again, real_leader = layout_module._take_again, layout_module.place_rank_leader
    monkeypatch.setattr(layout_module, "_laid_out", lambda *a: passes.append(a[-1]) or real_laid_out(*a))
    monkeypatch.setattr(layout_module, "_unchanged_around",
                        lambda *a: skipped.append(real_unchanged(*a)) or skipped[-1])
    monkeypatch.setattr(layout_module, "_take_again", lambda *a: again.append(real_again(*a)) or again[-1])
    fast = layout_texts(plot, [], [], points, sizes)
    # twice; some searches skipped (no room again, or the first layout's spot taken again), some not
    assert len(passes) == 2 and any(skipped) and not all(skipped) and any(again)
    # every search done in full: no answer of the first layout kept, every spot tried
    monkeypatch.setattr(layout_module, "_unchanged_around", lambda *a: False)
    monkeypatch.setattr(layout_module, "place_rank_leader", lambda *a: real_leader(*a[:5]))
    assert fast == layout_texts(plot, [], [], points, sizes)


# ------------------------------------------------------------------------------------------------- static images


def test_the_static_variant_merges_its_patch_and_drops_the_page_layouts():
    spec = {"title": {"text": "t", "subtitle": ["a", "hover or zoom"]},
            "usermeta": {"title": "p", "fit": {"sizes": []}, "static": {"title": {"subtitle": ["a", "see bars"]}}}}
    assert static_variant(spec) == {"title": {"text": "t", "subtitle": ["a", "see bars"]}, "usermeta": {"title": "p"}}
    assert spec["title"]["subtitle"][1] == "hover or zoom"  # the spec itself is untouched


@pytest.fixture(scope="module")
def climate_top40():
    if not CLIMATE.exists():
        pytest.skip("needs ../shared/ncu-samples")
    from ncu_roofline import analyze

    result = analyze([CLIMATE], gpu=V100)
    return roofline_spec(result.kernels, result.chart_context(40))


def test_images_name_the_unnumbered_points_and_the_page_keeps_its_hover_hint(climate_top40):
    spec = climate_top40
    numbered = {int(r) for row in spec["datasets"]["rank_labels"]
                for r in row["text"].replace("–", ",").replace("+", ",").split(",") if r.strip()}
    drawn = {p["rank"] for p in spec["datasets"]["points"]}
    unnumbered = sorted(drawn - numbered)
    assert unnumbered, "climate-seg at top 40 has a crowded point without a number"
    static = spec["usermeta"]["static"]["title"]["subtitle"][-1]
    assert static.startswith(f"{len(unnumbered)} crowded point") and "hover" not in static
    assert ", ".join(f"#{r}" for r in unnumbered) in static  # named, for the reader of a PNG
    assert spec["datasets"]["rank_leaders"]  # it draws a leader too (rank 31): the spec stays valid Vega-Lite
    [schema] = Path(alt.__file__).parent.glob("vegalite/v*/schema/vega-lite-schema.json")
    jsonschema.Draft7Validator(json.loads(schema.read_text())).validate(spec)
    svg = render(spec, "svg").decode()
    assert "hover" not in svg and "see the headroom bars" in svg
    assert "hover or zoom" in spec["title"]["subtitle"][-1] and "hover or zoom" in spec_text(spec)


# ---------------------------------------------------------------------------------------------------- tooltips


def test_the_binding_roof_reads_the_drawn_roofs_value_and_its_own_clocks_after_it(ctx):
    # Three FP32-bound kernels; kernel 1 ran at a higher clock: its FP32 roof is 19.7 TFLOP/s, the others' 19.5.
    # The chart draws the median, 19.5 TFLOP/s: kernel 1's tooltip says that value first, then its own.
    rows = [kernel_row(ELEMENTWISE, rank=r, time_s=1e-3, flop_fp32=2e9 * r, bytes_dram=1e8, bytes_l2=2e8,
                       bytes_l1=4e8, bound="fp32") for r in (1, 2, 3)]
    rows[0]["peak_flop_per_s_fp32"] = 19.7e12
    table = pd.DataFrame(rows).assign(time_share=1 / 3)
    spec = roofline_spec(table, ctx)
    [drawn] = [row["label"] for row in spec["datasets"]["roof_labels"] if row["roof"] == "FP32"]
    assert drawn == "FP32 19.5 TFLOP/s"
    binding = {row["rank"]: row["binding_roof"] for row in spec["datasets"]["kernels"]}
    assert binding[1] == "FP32 19.5 TFLOP/s drawn · 19.7 TFLOP/s at this kernel's clock"
    assert binding[2] == binding[3] == drawn


def test_ncar_tooltips_give_the_drawn_roof_value(tmp_path):
    """MW_Baseline: its FP64 roof is drawn at 6.57 TFLOP/s (the kernels' median) while rank 1 ran at a clock giving
    6.63; the tooltip of every kernel bound by a drawn roof starts with the drawn label."""
    if not NCAR.exists():
        pytest.skip("needs ../shared/ncu-samples")
    from ncu_roofline import analyze

    result = analyze([NCAR])
    spec = roofline_spec(result.kernels, result.chart_context(20))
    drawn = {row["roof"]: row["label"] for row in spec["datasets"]["roofs"]}
    checked = 0
    for row in spec["datasets"]["kernels"]:
        roof = row["binding_roof"].split(" ")[0]
        if roof in drawn:
            assert row["binding_roof"].startswith(drawn[roof]), (row["rank"], row["binding_roof"], drawn[roof])
            checked += 1
    assert checked >= 3
    assert drawn["FP64"] == "FP64 6.57 TFLOP/s"

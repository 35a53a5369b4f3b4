"""The chart's few-row tables read without pandas' per-call machinery (render/chart/vegalite.records,
render/chart/layout.off_scale_ranks) give what pandas' own `to_dict` and `groupby` give."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ncu_roofline.render.chart.layout import OUTLIER_GAP_DECADES, OUTLIER_SHARE, off_scale_ranks
from ncu_roofline.render.chart.vegalite import records


def _json_value(value):
    """What a JSON row may hold for a value: None for every missing or non-finite one, Python numbers."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def test_records_are_pandas_rows_as_json_values():
    frame = pd.DataFrame({
        "label": pd.array(["a", None, "c"], dtype="string"),
        "x": [1.5, np.nan, np.inf],
        "n": np.array([1, 2, 3], dtype=np.int64),
        "maybe": pd.array([1, None, 3], dtype="Int64"),
        "flag": [True, False, True],
        "mixed": pd.Series([np.float64(2.5), None, "text"], dtype=object),
        "level": pd.Categorical(["DRAM", "L2", "DRAM"]),
        "when": pd.to_datetime(["2026-01-01", None, "2026-01-03"]),
        7: ["seven", "eight", "nine"],  # a column name that is no string
    })
    expected = [{str(k): _json_value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
    got = records(frame)
    assert got == expected
    assert [list(row) for row in got] == [[str(c) for c in frame.columns]] * 3  # keys in column order
    assert got[1]["x"] is None and got[2]["x"] is None and got[1]["maybe"] is None and got[1]["when"] is None
    assert type(got[0]["n"]) is int and type(got[0]["x"]) is float and type(got[0]["flag"]) is bool


def test_records_of_empty_frames():
    assert records(pd.DataFrame(columns=["a", "b"])) == []
    assert records(pd.DataFrame(index=range(2))) == [{}, {}]  # rows without columns, as to_dict gives them


def _reference_off_scale(points: pd.DataFrame) -> list[int]:
    """The outlier rule written out: per kernel its highest FLOP/s and its lowest and highest intensity (pandas'
    groupby); a kernel is off the axes when a gap of more than OUTLIER_GAP_DECADES separates it, at the end it
    sits, from the rest, among at most OUTLIER_SHARE of the kernels (those with an unknown value counted, never
    across a gap)."""
    per = points.groupby("rank").agg(y=("flop_per_s", "max"), lo=("ai", "min"), hi=("ai", "max"))
    out = set()
    for column, low in (("y", True), ("lo", True), ("hi", False)):
        known = sorted(((math.log10(v), r) for r, v in per[column].items() if not math.isnan(v)), reverse=not low)
        logs = known + [(math.nan, r) for r, v in per[column].items() if math.isnan(v)]  # unknown: last, no gap
        for i in range(min(int(len(logs) * OUTLIER_SHARE), len(logs) - 1)):
            if abs(logs[i + 1][0] - logs[i][0]) > OUTLIER_GAP_DECADES:
                out.update(r for _, r in logs[: i + 1])
    return sorted(out)


def test_a_kernel_far_from_the_others_is_off_the_axes():
    # 20 kernels at intensities 1..20 FLOP/byte (two levels each, in no particular order), one at 1e6: 4.7 decades
    # past the rest, one kernel of 21 (within the 10 % share)
    rows = [(rank, ai * k, 1e12) for rank, ai in enumerate(range(1, 21), start=1) for k in (1.0, 1.5)]
    rows += [(21, 1e6, 1e12)]
    points = pd.DataFrame(rows[::-1], columns=["rank", "ai", "flop_per_s"])
    assert off_scale_ranks(points) == [21] == _reference_off_scale(points)


def test_off_scale_ranks_agree_with_the_groupby_rule_on_random_points():
    rng = np.random.default_rng(7)
    for case in range(200):
        kernels = int(rng.integers(1, 40))
        ranks = rng.integers(1, kernels + 1, size=int(rng.integers(1, 3 * kernels + 2)))
        ai = 10 ** rng.normal(0, rng.choice([0.5, 2.0, 4.0]), size=len(ranks))
        flops = 10 ** rng.normal(12, rng.choice([0.3, 2.0]), size=len(ranks))
        ai[rng.random(len(ranks)) < 0.05] = np.nan  # a level without its intensity now and then
        points = pd.DataFrame({"rank": ranks, "ai": ai, "flop_per_s": flops})
        assert off_scale_ranks(points) == _reference_off_scale(points), case


def test_boxes_are_their_corner_arithmetic_to_the_bit():
    """Each corner is its centre plus the turned half sizes, in this order, in plain floats: what a box's corners
    are one at a time and in any company (the placements compare them exactly)."""
    from ncu_roofline.render.chart.placement import box, boxes

    rng = np.random.default_rng(3)
    for case in range(500):
        n = int(rng.integers(1, 30))
        cx, cy = rng.normal(300, 300, n), rng.normal(200, 300, n)
        scalar = case % 3 == 0
        w = float(rng.uniform(0, 200)) if scalar else rng.uniform(0, 200, n)
        h = float(rng.uniform(0, 30)) if scalar else rng.uniform(0, 30, n)
        degrees = float(rng.choice([0.0, 90.0, -45.0, 180.0, rng.uniform(-180, 180)]))
        a = math.radians(degrees)
        ux, uy, vx, vy = math.cos(a), -math.sin(a), math.sin(a), math.cos(a)
        got = boxes(cx, cy, w, h, degrees)
        assert got.shape == (n, 4, 2)
        for k in range(n):
            wk, hk = (w, h) if scalar else (float(w[k]), float(h[k]))
            want = [[float(cx[k]) + sx * wk / 2 * ux + sy * hk / 2 * vx,
                     float(cy[k]) + sx * wk / 2 * uy + sy * hk / 2 * vy]
                    for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
            assert got[k].tolist() == want, (case, k)
            assert box(float(cx[k]), float(cy[k]), wk, hk, degrees).tolist() == want
    # at 0 degrees the corners are exactly the centre ± half the size
    assert box(10.0, 20.0, 7.0, 3.0).tolist() == [[6.5, 18.5], [13.5, 18.5], [13.5, 21.5], [6.5, 21.5]]


def test_bandwidths_are_bytes_over_time_where_the_time_is_positive():
    from ncu_roofline.core.vocabulary import LEVELS, bytes_column
    from ncu_roofline.render.chart.memory_panel import bandwidths

    rng = np.random.default_rng(5)
    for case in range(100):
        n = int(rng.integers(0, 12))
        table = pd.DataFrame({"time_s": rng.choice([0.0, -1.0, np.nan, 1e-6, 2e-3, 3.3e-5], n)},
                             index=rng.permutation(100)[:n])  # labels, not positions
        present = [level for level in LEVELS if rng.random() < 0.8]
        for level in present:
            table[bytes_column(level)] = rng.choice([np.nan, 0.0, 1e6, 3.5e9, 7.77e7], n)
        got = bandwidths(table)
        assert list(got.columns) == list(LEVELS) and list(got.index) == list(table.index)
        for label, row in table.iterrows():
            for level in LEVELS:
                t, b = row["time_s"], row.get(bytes_column(level), math.nan)
                want = b / t if t > 0 and not math.isnan(b) else math.nan
                value = got.at[label, level]
                assert (math.isnan(want) and math.isnan(value)) or value == want, (case, label, level)


def test_chart_points_are_one_row_per_level_in_draw_order():
    from ncu_roofline.render.chart.roofline import _points

    drawn = pd.DataFrame({
        "rank": [1, 2, 3], "flop_per_s": [1e12, 2e12, 3e12], "time_share": [0.5, np.nan, 0.5],
        "ai_dram": [1.0, 2.0, np.nan], "ai_l2": [10.0, np.nan, 30.0], "ai_l1": [100.0, np.nan, 300.0],
    }, index=[4, 7, 9])  # the kernel table's own index: not carried over
    has_level = drawn[["ai_dram", "ai_l2", "ai_l1"]].notna().set_axis(["dram", "l2", "l1"], axis=1)
    points = _points(drawn, has_level)
    # the largest marks first (time share falling, unknown as 0), then squares (L2), circles (DRAM), triangles (L1),
    # then rank
    expected = pd.DataFrame({
        "rank": [1, 3, 1, 1, 3, 2],
        "level": pd.array(["L2", "L2", "DRAM", "L1", "L1", "DRAM"], dtype="str"),
        "ai": [10.0, 30.0, 1.0, 100.0, 300.0, 2.0],
        "flop_per_s": [1e12, 3e12, 1e12, 1e12, 3e12, 2e12],
        "time_share": [0.5, 0.5, 0.5, 0.5, 0.5, 0.0],
    })
    pd.testing.assert_frame_equal(points, expected, check_exact=True)
    none = _points(drawn.iloc[:0], has_level.iloc[:0])
    assert list(none.columns) == list(expected.columns) and len(none) == 0
    assert list(none.dtypes) == list(expected.dtypes)


def test_main_precision_is_the_precision_with_the_most_flops():
    from ncu_roofline.core.vocabulary import UNKNOWN_BOUND, flop_column
    from ncu_roofline.render.chart.tooltips import main_precision

    kept = pd.DataFrame({
        flop_column("fp64"): [1.0, 0.0, np.nan, 5.0],
        flop_column("fp32"): [3.0, 0.0, np.nan, 5.0],
        flop_column("fp16"): pd.array([2, 0, None, None], dtype="Int64"),  # a nullable column: missing is none
    }, index=[10, 11, 12, 13])  # no tensor column at all: none of that precision
    best = main_precision(kept)
    assert best.index.tolist() == [10, 11, 12, 13]
    # FP32 most; no FLOPs anywhere: unknown; a tie goes to the first precision (fp64)
    assert best.tolist() == ["FP32", UNKNOWN_BOUND, UNKNOWN_BOUND, "FP64"]


def test_known_text_is_the_value_or_a_dash_where_missing_or_blank():
    from ncu_roofline.render.chart.tooltips import _known_text

    grid = pd.Series(pd.array(["(1, 1, 1)", None, " ", "(2, 1, 1)"], dtype="string"), index=[3, 1, 2, 0])
    assert _known_text(grid) == ["(1, 1, 1)", "—", "—", "(2, 1, 1)"]
    assert _known_text(pd.Series([np.nan, "(4, 1, 1)"], dtype=object)) == ["—", "(4, 1, 1)"]


def test_panel_frame_is_one_row_per_kernel_and_level_with_bytes_per_s():
    from ncu_roofline.render.chart.memory_panel import panel_frame

    table = pd.DataFrame({
        "rank": [3, 7], "time_s": [1.0, 2.0],
        "bytes_dram": [4e9, 0.0], "bytes_l2": [8e9, 6e9], "bytes_l1": [np.nan, 2e9],
        "peak_bytes_per_s_dram": [8e9, 8e9], "peak_bytes_per_s_l2": [np.nan, 6e9],
    }, index=[5, 2])
    frame = panel_frame(table)
    # by the kernel's column (slot), then left to right: DRAM at -0.3, L2 at 0, L1 at +0.3; a zero or unknown
    # bandwidth has no row; of_roof against the kernel's own roof at that level ("—" where it has none)
    assert frame["rank"].tolist() == [3, 3, 7, 7]
    assert frame["slot"].tolist() == [0, 0, 1, 1]
    assert frame["x"].tolist() == [-0.3, 0.0, 1.0, 1.3]
    assert frame["level"].tolist() == ["DRAM", "L2", "L2", "L1"]
    assert frame["bytes_per_s"].tolist() == [4e9, 8e9, 3e9, 1e9]
    assert frame["bandwidth"].tolist() == ["4.00 GB/s", "8.00 GB/s", "3.00 GB/s", "1.00 GB/s"]
    assert frame["of_roof"].tolist() == ["50.0%", "—", "50.0%", "—"]
    assert frame.index.tolist() == [0, 1, 2, 3]

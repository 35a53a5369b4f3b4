"""The trend chart's time axis: one unit chosen from the drawn times (ns, µs, ms or s), shared by the lines, the
bands, the axis title and the tooltips."""

from __future__ import annotations

import pandas as pd
import pytest

from ncu_roofline.render.history.chart import history_chart
from ncu_roofline.render.text.numbers import time_scale


def frames(times_s: list[float], band: tuple[float, float]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """One kernel over len(times_s) runs r1, r2, ...; its band (low, high) in seconds."""
    runs = pd.DataFrame({"run_id": [f"r{i + 1}" for i in range(len(times_s))]})
    summary = pd.DataFrame({"series_id": ["k"], "kernel_name": ["gemm(float*)"], "grid": ["(64,1,1)"],
                            "block": ["(128,1,1)"], "band_low": [band[0]], "band_high": [band[1]]})
    series = pd.DataFrame({"series_id": "k", "run_id": runs["run_id"], "run_index": range(len(times_s)),
                           "kernel_name": "gemm(float*)", "time_s": times_s, "roofline_fraction": 0.5,
                           "bound": "fp32"})
    return summary, series, runs


def y_channel(spec: dict) -> dict:
    [_, _, _, lines, _] = spec["layer"]  # band, its two edges, lines, failed-gate marks
    return lines["encoding"]["y"]


def test_times_of_tens_of_microseconds_are_drawn_in_microseconds():
    # 3.2e-5 s = 32 µs, 4.0e-5 s = 40 µs; the band 3.0e-5..3.6e-5 s = 30..36 µs. The largest drawn value, 40 µs,
    # lies in [1 µs, 1 ms): the unit is µs and every drawn value is seconds × 1e6.
    spec = history_chart(*frames([3.2e-5, 4.0e-5, 3.2e-5], (3.0e-5, 3.6e-5)), window=2)
    assert y_channel(spec)["title"] == "GPU time per run (µs, log)"
    assert [row["time_scaled"] for row in spec["datasets"]["times"]] == [32.0, 40.0, 32.0]
    assert [row["time_s"] for row in spec["datasets"]["times"]] == [3.2e-5, 4.0e-5, 3.2e-5]  # seconds kept
    bands = spec["datasets"]["bands"]
    assert {(row["band_low_scaled"], row["band_high_scaled"]) for row in bands} == {(30.0, 36.0)}
    [band, _, _, lines, _] = spec["layer"]
    assert (band["encoding"]["y"]["field"], band["encoding"]["y2"]["field"]) == ("band_low_scaled", "band_high_scaled")
    tooltip = {line["field"]: line["title"] for line in lines["encoding"]["tooltip"]}
    assert tooltip["time_scaled"] == "time (µs)"
    assert {line["title"] for line in band["encoding"]["tooltip"]} >= {"band low (µs)", "band high (µs)"}


def test_the_band_top_counts_when_it_is_the_largest_value():
    # Times 0.5 and 0.8 ms, band up to 1.2e-3 s: the largest drawn value is 1.2 ms, so ms (not µs); 0.5 ms = 0.5.
    spec = history_chart(*frames([5e-4, 8e-4], (4e-4, 1.2e-3)), window=1)
    assert y_channel(spec)["title"] == "GPU time per run (ms, log)"
    assert [row["time_scaled"] for row in spec["datasets"]["times"]] == [0.5, 0.8]
    assert {row["band_high_scaled"] for row in spec["datasets"]["bands"]} == {1.2}


@pytest.mark.parametrize(("seconds", "expected"), [
    ([2.5], ("s", 1.0)),  # 2.5 s
    ([1.0], ("s", 1.0)),  # exactly 1 s reads "1.00 s"
    ([3e-3, 7e-6], ("ms", 1e3)),  # the largest, 3 ms, decides
    ([9.9996e-4], ("ms", 1e3)),  # three digits round it to 1.00 ms, as format_si writes it (not 1000 µs)
    ([3.2e-5], ("µs", 1e6)),
    ([4.5e-7], ("ns", 1e9)),  # 450 ns
    ([5e-12], ("ns", 1e9)),  # below a nanosecond: still ns (0.005 ns), the smallest unit
    ([], ("s", 1.0)), ([0.0, float("nan")], ("s", 1.0)),  # nothing to scale: seconds
])
def test_time_scale_reads_the_largest_value_as_format_si_would(seconds, expected):
    assert time_scale(seconds) == expected

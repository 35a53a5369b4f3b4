"""The Python API: analyze() -> Analysis with tables, a chart notebooks can display, and write()."""

from __future__ import annotations

import json

import altair as alt
import pandas as pd
import pyarrow.parquet as pq
import pytest

from ncu_roofline import analyze
from ncu_roofline.analysis import SCHEMA_VERSION
from ncu_roofline.core.vocabulary import LEVELS, TRAFFIC_COLUMNS, WORK_COLUMNS, ai_column, bytes_column

from conftest import FIXTURES

EXAMPLE = FIXTURES / "example_h100_raw.csv"


def test_chart_is_an_altair_chart_with_the_kernels_points():
    result = analyze(EXAMPLE)
    chart = result.chart(top=3)
    assert isinstance(chart, alt.TopLevelMixin)
    spec = chart.to_dict()
    text = json.dumps(spec)
    top3 = result.kernels.head(3)
    for flop_per_s in top3["flop_per_s"]:
        assert repr(float(flop_per_s)) in text or f"{flop_per_s}" in text


def test_write_produces_the_documented_files_with_metadata(tmp_path):
    result = analyze(EXAMPLE)
    written = {p.name for p in result.write(tmp_path)}
    assert written == {"launches.parquet", "kernels.parquet", "roofline.vl.json", "roofline.html"}
    table = pq.read_table(tmp_path / "kernels.parquet")
    metadata = {k.decode(): v.decode() for k, v in table.schema.metadata.items()}
    assert metadata["ncu_roofline.schema_version"] == SCHEMA_VERSION
    inputs = json.loads(metadata["ncu_roofline.inputs"])
    assert inputs[0]["path"].endswith("example_h100_raw.csv") and len(inputs[0]["sha256"]) == 64
    assert json.loads(metadata["ncu_roofline.ceilings"]) == ["report"]
    kernels = pd.read_parquet(tmp_path / "kernels.parquet")
    assert list(kernels["rank"]) == list(range(1, len(kernels) + 1))
    launches = pd.read_parquet(tmp_path / "launches.parquet")
    assert len(launches) == 6
    for column in ("source_file", "launch_id", "kernel_name", "time_s", "flop_fp64", "flop_fp32", "flop_fp16",
                   "flop_tensor", "flop_total", "bytes_dram", "bytes_l2", "bytes_l1", "ai_dram", "ai_l2", "ai_l1",
                   "flop_per_s", "peak_flop_per_s_fp64", "peak_bytes_per_s_dram", "ceiling_source", "t_sol_s",
                   "bound", "roofline_fraction", "headroom_s", "def_bytes_l2", "status"):
        assert column in launches.columns, column
    assert launches["launch_id"].dtype == "int64"


def test_a_kernels_totals_are_the_sums_of_its_launches():
    """Group amounts are sums of the launches' amounts, and the group's ratios come from those sums.

    The example's two vectorized_elementwise launches form one kernel: if grouping took the first launch, the mean,
    or a mean of ratios, its row would not match the sums worked out here from the launch table.
    """
    result = analyze(EXAMPLE)
    keys = ["kernel_name", "grid", "block"]
    amounts = ["time_s", *WORK_COLUMNS, "flop_total", *TRAFFIC_COLUMNS, "launches"]
    sums = result.launches.groupby(keys, observed=True)[amounts].sum(min_count=1)
    kernels = result.kernels.set_index(keys)
    assert (sums["launches"] > 1).any(), "the example must hold a kernel with several launches"
    assert len(sums) == len(kernels)
    for key, expected in sums.iterrows():
        row = kernels.loc[key]
        for column in amounts:
            assert row[column] == pytest.approx(expected[column], nan_ok=True), (key, column)
        # FLOP/s and AI from the summed amounts: sum(FLOP) / sum(time), sum(FLOP) / sum(bytes)
        assert row["flop_per_s"] == pytest.approx(expected["flop_total"] / expected["time_s"], nan_ok=True)
        for level in LEVELS:
            assert row[ai_column(level)] == pytest.approx(expected["flop_total"] / expected[bytes_column(level)],
                                                          nan_ok=True), (key, level)
    by_key = result.launches.set_index(keys)
    for key in sums.index[sums["launches"] > 1]:
        # several launches: the group's time exceeds any one of them (a 'first launch' grouping would not)
        assert kernels.loc[key, "time_s"] > by_key.loc[[key], "time_s"].max()


def test_counts_agree_with_their_nouns_in_the_summaries(tmp_path):
    """One kernel of one launch reads "1 kernel, 1 launch", not "1 kernels, 1 launches" (terminal title, Markdown,
    the run note and the chart's bar title share `vocabulary.counted`)."""
    from ncu_roofline.core.vocabulary import counted

    assert [counted(1, "kernel"), counted(2, "kernel"), counted(1, "launch", "launches"),
            counted(3, "launch", "launches")] == ["1 kernel", "2 kernels", "1 launch", "3 launches"]
    lines = EXAMPLE.read_text().splitlines()
    one = tmp_path / "one.csv"  # the example's program output, header and units rows, then its first launch only
    one.write_text("\n".join(lines[:6]) + "\n")
    result = analyze(one)
    assert len(result.kernels) == 1 and result.launch_count == 1
    assert "**1 kernel**, 1 launch," in result.markdown()

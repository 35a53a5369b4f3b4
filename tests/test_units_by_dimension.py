"""A unit of the wrong dimension for its metric is refused for that value, never converted; a metric given twice in
one raw page is one value only where the copies agree. Every input is built here."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ncu_roofline import analyze
from ncu_roofline.cli import app
from ncu_roofline.core.metric_names import metric_kind
from ncu_roofline.readers.units import metric_unit_factor, unit_dimension

GPU = "Tesla V100-SXM2-16GB"
DETAILS = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
           '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')
KERNEL = "saxpy(int, float, const float *, float *)"


def details(path, rows):
    """rows: (launch ID, metric, unit, value)."""
    lines = [DETAILS] + [f'"{i}","5","app","host","{KERNEL}","1","7","(256, 1, 1)","(4096, 1, 1)","0","7.0",'
                         f'"Command line profiler metrics","{metric}","{unit}","{value}"'
                         for i, metric, unit, value in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def raw_page(path, metrics, units, rows):
    """metrics: column names after the identity; units: the units row; rows: one list of values per launch."""
    identity = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
                "Grid Size", "Device", "CC"]
    def quoted(fields):
        return ",".join(f'"{f}"' for f in fields)
    lines = [quoted(identity + metrics), quoted([""] * len(identity) + units)]
    for i, values in enumerate(rows):
        lines.append(quoted([str(i), "5", "app", "host", KERNEL, "1", "7", "(256, 1, 1)", "(4096, 1, 1)", "0", "7.0"]
                            + values))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("metric, kind", [
    ("gpu__time_duration.sum", "time"), ("gpu__time_active.avg", "time"), ("dram__bytes_read.sum", "bytes"),
    ("lts__t_bytes.sum", "bytes"), ("sm__cycles_elapsed.avg", "cycles"), ("SM.TriageA.sm__cycles_active.avg", "cycles"),
    ("sm__cycles_elapsed.avg.per_second", "rate"), ("dram__bytes.sum.peak_sustained", "per_cycle"),
    ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed", "per_cycle"),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "ratio"),
    # the name does not say: any unit ncu prints is taken
    ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", None), ("lts__t_sectors.sum", None),
    ("device__attribute_max_gpu_frequency_khz", None), ("launch__grid_size", None),
])
def test_the_kind_of_a_metric_comes_from_its_name(metric, kind):
    assert metric_kind(metric) == kind


@pytest.mark.parametrize("metric, unit, factor", [
    ("gpu__time_duration.sum", "usecond", 1e-6), ("gpu__time_duration.sum", "ns", 1e-9),
    ("dram__bytes.sum", "Mbyte", 1e6), ("dram__bytes.sum", "", 1.0), ("sm__cycles_elapsed.avg", "cycle", 1.0),
    ("sm__cycles_elapsed.avg.per_second", "Ghz", 1e9), ("sm__cycles_elapsed.avg.per_second", "cycle/nsecond", 1e9),
    ("dram__bytes.sum.per_second", "Gbyte/second", 1e9), ("dram__bytes.sum.peak_sustained", "byte/cycle", 1.0),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", 1.0),
])
def test_units_of_the_metrics_dimension_are_converted(metric, unit, factor):
    assert metric_unit_factor(metric, unit) == (factor, None)


@pytest.mark.parametrize("metric, unit, what", [
    ("gpu__time_duration.sum", "cycle", "a duration, in seconds"),
    ("gpu__time_duration.sum", "", "a duration, in seconds"),  # ncu's base for a duration is nanoseconds
    ("dram__bytes.sum", "inst/cycle", "a byte count"),
    ("dram__bytes.sum", "sector", "a byte count"),  # sectors are 32 bytes: a count, never bytes 1:1
    ("dram__bytes.sum", "bit", "a byte count"),
    ("sm__cycles_elapsed.avg", "msecond", "a cycle count"),
    ("sm__cycles_elapsed.avg.per_second", "cycle", "a rate per second"),
    ("dram__bytes.sum.peak_sustained", "byte/second", "a rate per cycle"),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "byte", "a ratio or percentage"),
])
def test_units_of_another_dimension_are_refused_naming_metric_and_unit(metric, unit, what):
    assert metric_unit_factor(metric, unit) == (
        None, f"unit '{unit}' does not fit {metric} ({what}): value not used")


def test_unit_dimensions():
    assert [unit_dimension(u) for u in ("nsecond", "Kbyte", "cycle", "inst", "inst/cycle", "byte/second", "Ghz", "%",
                                        "furlong")] == \
        ["time", "bytes", "cycle", "count", "per_cycle", "per_time", "frequency", "none", None]


def test_a_duration_in_cycles_is_refused_on_the_details_page(tmp_path):
    # launch 0: 850 "cycle" of gpu__time_duration.sum (read as seconds, it was 850 s); launch 1: 850 usecond
    path = details(tmp_path / "run.csv", [
        (0, "dram__bytes.sum", "byte", "12582912"), (0, "gpu__time_duration.sum", "cycle", "850"),
        (1, "dram__bytes.sum", "byte", "12582912"), (1, "gpu__time_duration.sum", "usecond", "850"),
    ])
    out = tmp_path / "out"
    # the kernel's time is unknown, so nothing can be placed: the outputs only with --allow-empty (issue 35)
    refused = CliRunner().invoke(app, ["analyze", str(path), "--gpu", GPU])
    assert refused.exit_code == 2 and "no kernel duration" in refused.output
    result = CliRunner().invoke(app, ["analyze", str(path), "--gpu", GPU, "-o", str(out), "--allow-empty",
                                      "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    import pandas as pd

    launches = pd.read_parquet(out / "launches.parquet").set_index("launch_id")
    assert np.isnan(launches.loc[0, "time_s"])  # unknown, never 850 s
    assert ("unit 'cycle' does not fit gpu__time_duration.sum (a duration, in seconds): value not used"
            in launches.loc[0, "status"])
    assert launches.loc[0, "bytes_dram"] == 12582912  # the launch's other values stay
    assert launches.loc[1, "time_s"] == pytest.approx(850e-6, rel=1e-12)
    assert "does not fit" not in launches.loc[1, "status"]
    # the kernel's time is unknown (one of its launches' is), and so is the run's
    totals = json.loads((tmp_path / "s.json").read_text())["totals"]
    assert totals["time_s"] is None and totals["kernels_unknown_time"] == 1


def test_a_per_cycle_rate_on_a_byte_counter_is_refused(tmp_path):
    path = details(tmp_path / "run.csv", [
        (0, "dram__bytes.sum", "inst/cycle", "3.5"), (0, "lts__t_bytes.sum", "Mbyte", "25"),
        (0, "gpu__time_duration.sum", "usecond", "10"),
    ])
    result = analyze(path, gpu=GPU)
    launch = result.launches.iloc[0]
    assert np.isnan(launch["bytes_dram"])
    assert "unit 'inst/cycle' does not fit dram__bytes.sum (a byte count): value not used" in launch["status"]
    assert launch["bytes_l2"] == 25e6 and launch["time_s"] == pytest.approx(10e-6, rel=1e-12)


def test_a_duration_in_cycles_is_refused_on_the_raw_page(tmp_path):
    path = raw_page(tmp_path / "raw.csv", ["dram__bytes.sum", "gpu__time_duration.sum"], ["Mbyte", "cycle"],
                    [["12.582912", "850"]])
    result = analyze(path, gpu=GPU, allow_empty=True)  # its one kernel has no time: nothing placed
    launch = result.launches.iloc[0]
    assert np.isnan(launch["time_s"]) and launch["bytes_dram"] == pytest.approx(12582912, rel=1e-12)
    assert "unit 'cycle' does not fit gpu__time_duration.sum (a duration, in seconds): value not used" \
        in launch["status"]


def test_a_metric_in_two_raw_columns_is_one_value_only_where_they_agree(tmp_path):
    # dram__bytes.sum twice: launch 0 12,582,912 B and 12,582.912 KB agree (one value in base units); launch 1
    # 12,582,912 B and 25,165.824 KB (25,165,824 B) disagree: neither is used, as on the details page
    path = raw_page(tmp_path / "raw.csv", ["dram__bytes.sum", "gpu__time_duration.sum", "dram__bytes.sum",
                                           "lts__t_bytes.sum"], ["byte", "usecond", "Kbyte", "byte"],
                    [["12582912", "15", "12582.912", "15000000"], ["12582912", "15", "25165.824", "15000000"]])
    out = CliRunner().invoke(app, ["analyze", str(path), "--gpu", GPU, "--json", str(tmp_path / "s.json")])
    assert out.exit_code == 0, out.output
    launches = json.loads((tmp_path / "s.json").read_text())
    result = analyze(path, gpu=GPU)
    rows = result.launches.set_index("launch_id")
    assert rows.loc[0, "bytes_dram"] == pytest.approx(12582912, rel=1e-12)
    # the only note on launch 0: its capture counts no FLOPs and no L1 bytes (pipeline/rank.py completeness)
    assert rows.loc[0, "status"] == "no FLOP counters, no L1 byte counters: speed of light is a lower bound"
    assert np.isnan(rows.loc[1, "bytes_dram"])
    assert rows.loc[1, "status"].startswith("dram__bytes.sum is in 2 columns with different values (1.25829e+07, "
                                            "2.51658e+07): neither is used")
    assert rows.loc[1, "time_s"] == pytest.approx(15e-6, rel=1e-12)
    assert launches["totals"]["launches"] == 2


def test_a_copy_that_is_not_a_number_never_hides_one_that_is(tmp_path):
    path = raw_page(tmp_path / "raw.csv", ["dram__bytes.sum", "gpu__time_duration.sum", "dram__bytes.sum"],
                    ["byte", "usecond", "byte"], [["n/a", "15", "12582912"]])
    launch = analyze(path, gpu=GPU).launches.iloc[0]
    assert launch["bytes_dram"] == 12582912
    assert launch["status"] == "no FLOP counters, no L2, L1 byte counters: speed of light is a lower bound"


def test_a_raw_page_without_units_row_reads_a_durations_rate_as_no_duration():
    """Without a units row only a duration defaults to nanoseconds (its kind read off the name): a rate or a peak
    of the same counter is not refused as a duration given in no unit."""
    from ncu_roofline.readers.units import default_unit

    assert default_unit("gpu__time_duration.sum") == "nsecond"
    assert metric_kind("gpu__time_duration.sum.per_second") == "rate"
    assert default_unit("gpu__time_duration.sum.per_second") == ""
    assert default_unit("gpu__time_active.avg.peak_sustained") == ""
    assert default_unit("dram__bytes.sum") == ""

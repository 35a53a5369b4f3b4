"""A report is read the way its own Nsight Compute version charted it: the hierarchical section's metrics win.

The RTX 2080 Ti sample report (ncu 2021-2022) charts L1 as `l1tex__t_bytes.sum.per_second` and L2 as
`lts__t_bytes.sum.per_second`, with `l1tex__t_bytes.sum.peak_sustained` / `lts__t_bytes.sum.peak_sustained` roofs,
although its other sections also collected `l1tex__lsu_writeback_active_mem_lg.sum` (today's L1 definition).
"""

from __future__ import annotations

import numpy as np
import pytest

from ncu_roofline import analyze
from ncu_roofline.pipeline.evaluate import evaluate
from ncu_roofline.pipeline.catalogue import load_catalogue
from ncu_roofline.pipeline.ceilings import CeilingOptions
from ncu_roofline.core.launch_table import finish_launch_table

SINGLE = "SpeedOfLight_HierarchicalSingleRooflineChart"


def test_rtx2080ti_report_charts_l1_and_l2_as_its_section_does(samples):
    ncu_report = pytest.importorskip("ncu_report")
    from ncu_sections import report_sections

    path = samples / "nsight-compute-files" / "3136_64_64_rtx2080ti_sgemm.ncu-rep"
    action = ncu_report.load_report(str(path)).range_by_idx(0).action_by_idx(0)

    def value(name: str) -> float:
        return action.metric_by_name(name).as_double()

    body = report_sections(path)[0][SINGLE]
    for name in ("l1tex__t_bytes.sum.per_second", "l1tex__t_bytes.sum.peak_sustained",
                 "lts__t_bytes.sum.per_second", "lts__t_bytes.sum.peak_sustained"):
        assert name in body
    row = analyze(path).launches.iloc[0]
    duration = value("gpu__time_duration.sum") / 1e9  # 10,720 ns
    # L1: 257,602,985,074.6 B/s x 10.72 us = 2,761,504 B (not 128 x 15,745 LSU writebacks = 2,015,360 B)
    assert row["def_bytes_l1"] == "l1tex__t_bytes_rate"
    assert row["bytes_l1"] == pytest.approx(value("l1tex__t_bytes.sum.per_second") * duration, rel=1e-12)
    assert row["bytes_l1"] == pytest.approx(2_761_504, rel=1e-9)
    assert 128 * value("l1tex__lsu_writeback_active_mem_lg.sum") == 2_015_360
    # its roof: 34,816 B/cycle x the L1 clock (1.3059 GHz) = 45.47 TB/s
    assert value("l1tex__t_bytes.sum.peak_sustained") == 34_816
    assert row["peak_bytes_per_s_l1"] == pytest.approx(34_816 * value("l1tex__cycles_elapsed.avg.per_second"),
                                                       rel=1e-12)
    # L2 the same way: lts__t_bytes rate x duration, 1,408 B/cycle x the L2 clock
    assert row["def_bytes_l2"] == "lts__t_bytes_rate"
    assert row["bytes_l2"] == pytest.approx(value("lts__t_bytes.sum.per_second") * duration, rel=1e-12)
    assert row["peak_bytes_per_s_l2"] == pytest.approx(1_408 * value("lts__cycles_elapsed.avg.per_second"),
                                                       rel=1e-12)
    # the L1 and L2 roofs are the report's own; the table fills what the report lacks, at the report's clock
    assert row["ceiling_source"] in ("report", "report+table:NVIDIA GeForce RTX 2080 Ti@measured_clock")


def hopper_half(hadd_x2, hmul_x2, hfma_x4):
    identity = {"source_file": "h100.ncu-rep", "launch_id": [0], "kernel_name": ["k"], "compute_capability": [9.0]}
    metrics = {"gpu__time_duration.sum": [2e-6], "smsp__cycles_elapsed.avg.per_second": [1.5e9],
               "derived__smsp__sass_thread_inst_executed_op_hadd_pred_on_x2": [hadd_x2],
               "derived__smsp__sass_thread_inst_executed_op_hmul_pred_on_x2": [hmul_x2],
               "derived__smsp__sass_thread_inst_executed_op_hfma_pred_on_x4": [hfma_x4]}
    return evaluate(finish_launch_table(identity, metrics, 1), load_catalogue(), CeilingOptions()).iloc[0]


def test_hopper_fp16_counts_the_hadd_and_hmul_forms():
    # per cycle: hadd_x2 = 2 x 10, hmul_x2 = 2 x 5, hfma_x4 = 4 x 20 -> 110 FLOP/cycle
    # x 1.5e9 cycles/s x 2e-6 s = 330,000 FLOP (2 hadd + 2 hmul + 4 hfma, the current convention)
    row = hopper_half(20.0, 10.0, 80.0)
    assert row["def_flop_fp16"] == "smsp_sass_hp_derived_rate"
    assert row["flop_fp16"] == pytest.approx((20 + 10 + 80) * 1.5e9 * 2e-6, rel=1e-12)
    assert "fp16_from_hfma_only" not in row["status"]
    # without values for hadd/hmul, hfma alone (80 x 1.5e9 x 2e-6 = 240,000) and the launch says so
    row = hopper_half(np.nan, np.nan, 80.0)
    assert row["flop_fp16"] == pytest.approx(80 * 1.5e9 * 2e-6, rel=1e-12)
    assert "fp16_from_hfma_only" in row["status"]


def test_h100_report_lists_hadd_hmul_without_values_so_fp16_is_hfma_only(samples):
    ncu_report = pytest.importorskip("ncu_report")
    from ncu_sections import report_sections

    path = samples / "cs599k" / "rms_norm_matrix_2025-04-21_v1.ncu-rep"
    action = ncu_report.load_report(str(path)).range_by_idx(0).action_by_idx(0)
    half = report_sections(path)[0]["SpeedOfLight_HierarchicalHalfRooflineChart"]
    for name in ("hadd_pred_on_x2", "hmul_pred_on_x2"):
        metric = f"derived__smsp__sass_thread_inst_executed_op_{name}"
        assert metric in half
        assert not action.metric_by_name(metric).has_value()  # its inputs were not collected
    launches = analyze(path).launches
    assert (launches["def_flop_fp16"] == "smsp_sass_hp_hfma_only_rate").all()


def report_paths() -> list[str]:
    from conftest import SAMPLES

    if not SAMPLES.is_dir():
        return ["(samples absent)"]
    return sorted(str(p.relative_to(SAMPLES)) for p in SAMPLES.rglob("*.ncu-rep"))


@pytest.mark.parametrize("name", report_paths())
def test_every_report_reads_traffic_the_way_its_roofline_sections_chart_it(name):
    """Where a report's roofline sections list the inputs of a traffic definition, that definition is the one
    used, on every launch (the RTX 2080 Ti's l1tex__t_bytes, the H100's lgds writeback, the RTX 4060's lg)."""
    pytest.importorskip("ncu_report")
    from conftest import SAMPLES
    from ncu_sections import report_sections

    path = SAMPLES / name
    if not path.exists():
        pytest.skip("../shared/ncu-samples is not present")
    catalogue = load_catalogue()
    launches = analyze(path, allow_empty=True).launches.set_index("launch_id")
    for launch_id, sections in enumerate(report_sections(path)):
        listed = {m for section, names in sections.items() if "Roofline" in section for m in names}
        for quantity in ("bytes_dram", "bytes_l2", "bytes_l1"):
            charted = [d.id for d in catalogue.definitions(quantity)
                       if d.expr.names and set(d.expr.names) - {"gpu__time_duration.sum"} <= listed]
            if charted:
                assert launches.loc[launch_id, f"def_{quantity}"] in charted, (launch_id, quantity)

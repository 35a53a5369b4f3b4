"""The limiter on synthetic launches built here: each limiter from the counters that make it, in the documented order,
its evidence with numbers worked out by hand, `unknown` naming what to collect, a group's limiter from its sums, and
the instruction roofline's arithmetic.

Thresholds (metrics/limiters.toml): roof where the busiest unit's SOL % is >= 80 (where the SOL counters are missing,
roofline_fraction >= 0.8); both SM and memory SOL under 60 % is the latency branch, otherwise compute, memory or
balanced by a 10-point gap (SpeedOfLight.py); launch below 1 wave or 5 µs; tail from
1 / (whole waves + 1) >= 0.2 with achieved < 0.8 x theoretical occupancy; uncoalesced and bank conflicts at
>= 1.5 x ideal; occupancy below 50 % with a theoretical occupancy under 100 %; issue at >= 0.8 issues per cycle.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ncu_roofline.core.launch_table import finish_launch_table
from ncu_roofline.pipeline.catalogue import load_catalogue
from ncu_roofline.pipeline.ceilings import CeilingOptions
from ncu_roofline.pipeline.evaluate import evaluate
from ncu_roofline.pipeline.group import group_keys, group_launches
from ncu_roofline.core.vocabulary import LIMITERS
from ncu_roofline.pipeline.limiter import group_limiters, limiter_settings

# A launch on a 108-SM GPU, 1 ms, 3e8 DRAM bytes against a 1e12 B/s roof (100 B/cycle x 1e10 cycles/s):
# t_sol = 3e8 / 1e12 = 3e-4 s, roofline fraction 0.3. Ten full waves, 90 % occupancy of 100 % possible,
# perfectly coalesced loads (4 sectors per request, 32 of 32 bytes used), no bank conflicts, issue slots 30 % busy:
# nothing but 'latency' holds.
BASE = {
    "gpu__time_duration.sum": 1e-3, "dram__bytes.sum": 3e8, "dram__bytes.sum.peak_sustained": 100.0,
    "dram__cycles_elapsed.avg.per_second": 1e10, "sm__cycles_elapsed.avg.per_second": 1e9,
    "launch__waves_per_multiprocessor": 10.0, "device__attribute_multiprocessor_count": 108.0,
    "device__attribute_num_schedulers_per_multiprocessor": 4.0, "launch__grid_size": 4320.0,
    "launch__block_size": 256.0, "launch__registers_per_thread": 32.0, "launch__shared_mem_per_block": 0.0,
    "sm__warps_active.avg.pct_of_peak_sustained_active": 90.0, "sm__maximum_warps_per_active_cycle_pct": 100.0,
    "launch__occupancy_limit_registers": 8.0, "launch__occupancy_limit_shared_mem": 16.0,
    "launch__occupancy_limit_warps": 8.0, "launch__occupancy_limit_blocks": 32.0,
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 4e6, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 1e6,
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 0.0, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 0.0,
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio": 32.0,
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio": 0.0,
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum": 0.0, "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum": 0.0,
    "lts__t_sectors.sum": 5e6, "dram__sectors_read.sum": 8e6, "dram__sectors_write.sum": 2e6,
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": 1e5, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum": 0.0,
    "smsp__issue_active.avg.per_cycle_active": 0.3, "smsp__average_warp_latency_per_inst_issued.ratio": 20.0,
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": 12.0,
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 3.0,
    "smsp__inst_executed.sum": 1e7,
}


def launch(**changes) -> dict:
    return {**BASE, **changes}


def evaluated(*rows: dict, same_kernel: bool = False):
    n = len(rows)
    names = sorted({k for row in rows for k in row})
    metrics = {k: [row.get(k, float("nan")) for row in rows] for k in names}
    identity = {"source_file": "run.ncu-rep", "launch_id": list(range(n)),
                "kernel_name": ["k"] * n if same_kernel else [f"k{i}" for i in range(n)],
                "grid": ["(1, 1, 1)"] * n, "block": ["(256, 1, 1)"] * n, "device_name": "Test GPU"}
    return evaluate(finish_launch_table(identity, metrics, n), load_catalogue(), CeilingOptions(use_table=False))


def only(row: dict) -> tuple[str, str]:
    out = evaluated(row).iloc[0]
    return str(out["limiter"]), str(out["limiter_evidence"])


def test_the_documented_order_is_the_vocabulary_less_unknown():
    assert limiter_settings().order == ("roof", "launch", "compute", "memory", "balanced", "tail", "uncoalesced",
                                        "bank_conflicts", "occupancy", "issue", "latency")
    assert (*limiter_settings().order, "unknown") == LIMITERS
    assert set(limiter_settings().rules) == set(limiter_settings().order)  # one table per rule
    assert all(limiter_settings().rules[r].get("next_step") for r in limiter_settings().order)


def test_latency_when_nothing_else_holds():
    # issue 0.3 -> 30 % busy; the largest stall is long scoreboard, 12 of 20 cycles per instruction
    assert only(launch()) == ("latency", "issue slots 30.0% busy; 12 of 20 cycles per instruction: waiting on "
                                         "global/local memory (long scoreboard)")


def test_a_grid_smaller_than_one_wave_is_launch():
    # 54 blocks at 4 per SM on 108 SMs: 54 / (108 x 4) = 0.125 waves as ncu reports it
    assert only(launch(**{"launch__waves_per_multiprocessor": 0.125, "launch__grid_size": 54.0})) == (
        "launch", "0.125 waves on 108 SMs (54 blocks)")


def test_a_launch_of_two_microseconds_is_launch():
    # 2e-6 s < 5e-6 s; its DRAM time 3e8 / 1e12 = 3e-4 s is above its duration (above_roof), so make it small:
    # 1e6 bytes -> 1e-6 s, fraction 0.5 (below the roof threshold)
    assert only(launch(**{"gpu__time_duration.sum": 2e-6, "dram__bytes.sum": 1e6})) == ("launch", "2 µs per launch")


def test_a_partial_last_wave_is_tail():
    # 1.5 waves: one whole wave and a half; the partial wave may take 1 / (1 + 1) = 50 % of the time;
    # occupancy 60 % < 0.8 x 100 %
    assert only(launch(**{"launch__waves_per_multiprocessor": 1.5,
                          "sm__warps_active.avg.pct_of_peak_sustained_active": 60.0})) == (
        "tail", "1.5 waves: the partial last wave may take up to 50.0% of the time (occupancy 60.0% of 100.0% "
                "theoretical)")


def test_register_limited_occupancy():
    # 128 registers per thread: 2 blocks of 256 threads per SM (the lowest limit) = 16 of 64 warps = 25 %
    # theoretical; 22 % achieved < 50 %
    assert only(launch(**{"launch__registers_per_thread": 128.0, "launch__occupancy_limit_registers": 2.0,
                          "sm__maximum_warps_per_active_cycle_pct": 25.0,
                          "sm__warps_active.avg.pct_of_peak_sustained_active": 22.0})) == (
        "occupancy", "occupancy 22.0% (theoretical 25.0%), limited by registers (128/thread)")


def test_strided_access_with_twice_the_ideal_sectors_per_request():
    # stride 2 x 4 B: each 32-byte sector brings 16 useful bytes: 8 sectors per request where 8 x 16 / 32 = 4 would
    # do; 8e6 / 4e6 = 2 >= 1.5
    assert only(launch(**{"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 8e6,
                          "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio": 16.0})) == (
        "uncoalesced", "8 sectors/request, ideal 4")


def test_the_older_excessive_sectors_give_the_ideal_where_bytes_per_sector_are_missing():
    # no used-bytes ratios: ncu's excess is a count of sectors: ideal = 8e6 - 4e6 excessive sectors = 4e6 sectors
    row = launch(**{"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 8e6,
                    "derived__memory_l2_theoretical_sectors_global_excessive": 4e6})
    del row["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"]
    assert only(row) == ("uncoalesced", "8 sectors/request, ideal 4")


def test_ncu_2020_names_of_the_excess_are_read():
    # NCU 2020.x: memory_l2_sectors_global 1.2e7 of which ideal 8e6: 4e6 excessive; ideal = 8e6 - 4e6 = 4e6
    row = launch(**{"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 8e6, "memory_l2_sectors_global": 1.2e7,
                    "memory_l2_sectors_global_ideal": 8e6})
    del row["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"]
    assert only(row) == ("uncoalesced", "8 sectors/request, ideal 4")


def test_bank_conflicted_shared_load():
    # a 2-way conflict: 2e5 wavefronts where 2e5 - 1e5 conflicts = 1e5 would do; 2e5 / 1e5 = 2 >= 1.5
    assert only(launch(**{"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": 2e5,
                          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum": 1e5})) == (
        "bank_conflicts", "2 shared wavefronts per conflict-free one (1e+05 of 2e+05 are bank conflicts)")


def test_full_issue_slots_are_issue():
    assert only(launch(**{"smsp__issue_active.avg.per_cycle_active": 0.9}))[0] == "issue"


def test_at_its_roof_is_roof_where_the_sol_counters_are_missing():
    # no SOL %: 9e8 / 1e12 = 9e-4 s of 1e-3 s: 90 % >= 80 % of the roofline, whatever else the counters say.
    # The launch counts no FLOPs, so its speed of light lacks terms (sol_complete false): 90 % is a lower bound
    out = evaluated(launch(**{"dram__bytes.sum": 9e8, "launch__waves_per_multiprocessor": 0.5})).iloc[0]
    assert not out["sol_complete"]
    assert (out["limiter"], out["limiter_evidence"]) == ("roof", "≥ 90.0% of its roof")


SM, MEMORY = "sm__throughput.avg.pct_of_peak_sustained_elapsed", \
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
L1, L2, DRAM = ("l1tex__throughput.avg.pct_of_peak_sustained_active",
                "lts__throughput.avg.pct_of_peak_sustained_elapsed",
                "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")


def test_the_busiest_unit_at_80_percent_is_the_roof_and_is_named():
    # naive.ncu-rep's numbers: SM 83.1, memory 83.1, L1TEX 84.1 (active), L2 10.5: max(83.1, 83.1) >= 80, and the
    # busiest unit named is L1TEX; the roofline fraction (0.3 here) does not matter
    row = launch(**{SM: 83.1, MEMORY: 83.1, L1: 84.1, L2: 10.5})
    out = evaluated(row).iloc[0]
    assert (out["limiter"], out["limiter_evidence"]) == ("roof", "L1TEX 84.1% of peak")
    assert out["limiter_gain_s"] == pytest.approx(1e-3 - 3e-4, rel=1e-12)  # the headroom: time - t_sol


def test_memory_heavier_than_compute_by_ten_points_is_memory():
    # MW_Baseline x_309: SM 51.7, memory 74.0: 74.0 >= 60, 74.0 - 51.7 = 22.3 >= 10
    out = evaluated(launch(**{SM: 51.7, MEMORY: 74.0, DRAM: 74.0, L2: 27.0})).iloc[0]
    assert (out["limiter"], out["limiter_evidence"]) == ("memory", "memory 74.0% (DRAM 74.0%), SM 51.7% of peak")
    assert out["limiter_gain_s"] == pytest.approx(1e-3 * (1 - 0.74), rel=1e-12)


def test_compute_heavier_by_ten_points_is_compute_and_closer_is_balanced():
    # 70.3 - 44.6 = 25.7 >= 10: compute; 72.4 and 72.4: balanced
    assert only(launch(**{SM: 70.3, MEMORY: 44.6}))[0] == "compute"
    assert only(launch(**{SM: 72.4, MEMORY: 72.4, L1: 81.1})) == (
        "balanced", "SM 72.4%, memory 72.4% (L1TEX 81.1%) of peak")
    assert only(launch(**{SM: 65.0, MEMORY: 56.0}))[0] == "balanced"  # 9 points apart


def test_both_units_under_60_percent_go_on_to_the_latency_rules():
    # 59.9 and 5: the latency branch; nothing else holds: latency, and the roofline fraction 0.3 is not consulted
    assert only(launch(**{SM: 59.9, MEMORY: 5.0}))[0] == "latency"


def test_the_largest_stall_of_every_reason_is_named():
    # dot_product #1: drain 1625 cycles is larger than long scoreboard 874: drain, and its gain is its share of
    # the 3690 cycles per instruction: 1e-3 s x 1625 / 3690
    row = launch(**{"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": 874.0,
                    "smsp__average_warps_issue_stalled_drain_per_issue_active.ratio": 1625.0,
                    "smsp__average_warp_latency_per_inst_issued.ratio": 3690.0,
                    "smsp__issue_active.avg.per_cycle_active": 0.0017})
    out = evaluated(row).iloc[0]
    assert out["limiter_evidence"] == ("issue slots 0.2% busy; 1.62e+03 of 3.69e+03 cycles per instruction: "
                                       "draining memory stores after EXIT (drain)")
    assert out["limiter_gain_s"] == pytest.approx(1e-3 * 1625 / 3690, rel=1e-12)


def test_the_first_thing_to_fix_wins():
    # a grid under one wave that also strides: the grid comes first
    assert only(launch(**{"launch__waves_per_multiprocessor": 0.5,
                          "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 8e6,
                          "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio": 16.0}))[0] == "launch"


def test_a_rule_without_its_counters_is_not_tested_and_later_rules_still_answer():
    # no waves: launch and tail cannot be tested; uncoalesced, bank conflicts, occupancy still are: a stride
    row = launch(**{"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 8e6,
                    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio": 16.0})
    del row["launch__waves_per_multiprocessor"]
    assert only(row) == ("uncoalesced", "8 sectors/request, ideal 4")


def test_missing_counters_give_unknown_naming_them():
    row = launch()
    del row["launch__waves_per_multiprocessor"], row["smsp__issue_active.avg.per_cycle_active"]
    limiter, evidence = only(row)
    assert limiter == "unknown"  # no rule held, and some could not be tested
    assert evidence.startswith("not collected: ")
    assert "launch__waves_per_multiprocessor" in evidence and "smsp__issue_active.avg.per_cycle_active" in evidence
    assert "smsp__average_warp_latency_per_inst_issued.ratio" not in evidence  # what is present is not asked for


def test_unknown_evidence_is_one_category_shared_by_every_launch():
    row = launch()
    del row["smsp__issue_active.avg.per_cycle_active"]
    out = evaluated(row, row, row)
    assert isinstance(out["limiter_evidence"].dtype, pd.CategoricalDtype)
    assert len(out["limiter_evidence"].cat.categories) == 1 and out["limiter"].astype(str).eq("unknown").all()


def test_a_test_that_holds_before_a_missing_counter_still_answers():
    row = launch(**{"launch__waves_per_multiprocessor": 0.5})
    del row["smsp__issue_active.avg.per_cycle_active"]  # only the last two tests need it
    assert only(row)[0] == "launch"


def test_a_group_limiter_comes_from_its_sums():
    # launch 1: 8e6 sectors over 1e6 requests, ideal 4e6 (2 x: uncoalesced alone); launch 2: 4e6, ideal 4e6 (1 x).
    # The group: (8e6 + 4e6) / (4e6 + 4e6) = 1.5 >= 1.5, 12e6 / 2e6 = 6 sectors/request, ideal 8e6 / 2e6 = 4.
    rows = evaluated(launch(**{"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 8e6,
                               "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio": 16.0}),
                     launch(), same_kernel=True)
    assert rows["limiter"].astype(str).tolist() == ["uncoalesced", "latency"]
    group = group_limiters(group_launches(rows, group_keys(False)), load_catalogue()).iloc[0]
    assert group["sectors_global"] == 12e6 and group["sectors_global_ideal"] == 8e6
    assert (group["limiter"], group["limiter_evidence"]) == ("uncoalesced", "6 sectors/request, ideal 4")


def test_time_weighted_group_rates():
    # issue 0.3 for 1 ms and 0.9 for 3 ms: (0.3 x 1e-3 + 0.9 x 3e-3) / 4e-3 = 0.75 < 0.8: latency, 75 % busy
    rows = evaluated(launch(), launch(**{"smsp__issue_active.avg.per_cycle_active": 0.9,
                                         "gpu__time_duration.sum": 3e-3}), same_kernel=True)
    group = group_limiters(group_launches(rows, group_keys(False)), load_catalogue()).iloc[0]
    assert group["issue_active"] == pytest.approx(0.75, rel=1e-12)
    assert group["limiter"] == "latency" and group["limiter_evidence"].startswith("issue slots 75.0% busy")


def test_instruction_roofline_arithmetic():
    row = evaluated(launch()).iloc[0]
    assert row["warp_inst"] == 1e7
    assert row["gips"] == pytest.approx(1e7 / 1e-3 / 1e9, rel=1e-12)  # 10 warp GIPS
    assert row["peak_warp_gips"] == pytest.approx(108 * 4 * 1e9 / 1e9, rel=1e-12)  # 432
    assert row["ii_l1"] == pytest.approx(1e7 / 4e6, rel=1e-12)  # global + local sectors
    assert row["ii_l2"] == pytest.approx(1e7 / 5e6, rel=1e-12)
    assert row["ii_dram"] == pytest.approx(1e7 / (8e6 + 2e6), rel=1e-12)
    assert row["ii_shared"] == pytest.approx(1e7 / 1e5, rel=1e-12)
    assert row["ii_shared_ideal"] == pytest.approx(1e7 / 1e5, rel=1e-12)  # no conflicts
    assert row["int_ops"] != row["int_ops"]  # not counted here: unknown (NaN), never 0


def test_a_group_instruction_intensity_is_a_ratio_of_sums():
    rows = evaluated(launch(), launch(**{"smsp__inst_executed.sum": 3e7, "lts__t_sectors.sum": 1e6}),
                     same_kernel=True)
    group = group_limiters(group_launches(rows, group_keys(False)), load_catalogue()).iloc[0]
    assert group["warp_inst"] == 4e7
    assert group["ii_l2"] == pytest.approx(4e7 / 6e6, rel=1e-12)  # never the mean of 2 and 30
    assert group["gips"] == pytest.approx(4e7 / 2e-3 / 1e9, rel=1e-12)


def test_the_gpu_table_gives_the_peak_where_the_report_has_no_device_attributes():
    from ncu_roofline.pipeline.ceilings import resolve_devices

    row = launch()
    del row["device__attribute_multiprocessor_count"], row["device__attribute_num_schedulers_per_multiprocessor"]
    identity = {"source_file": "run.csv", "launch_id": [0], "kernel_name": ["k"], "grid": ["(1, 1, 1)"],
                "block": ["(1, 1, 1)"], "device_name": "NVIDIA H100 PCIe"}
    devices = resolve_devices(["NVIDIA H100 PCIe"])
    out = evaluate(finish_launch_table(identity, {k: [v] for k, v in row.items()}, 1), load_catalogue(),
                   CeilingOptions(devices=devices)).iloc[0]
    spec = devices["NVIDIA H100 PCIe"]
    # the table's SM count x 4 schedulers x the measured SM clock (1e9 Hz)
    assert out["peak_warp_gips"] == pytest.approx(spec.sm_count * 4 * 1e9 / 1e9, rel=1e-12)


def test_clock_max_puts_the_instruction_roof_on_the_maximum_clock():
    # measured 1 GHz, maximum 2 GHz (2e6 kHz): 108 SMs x 4 schedulers x 2e9 / 1e9 = 864 warp GIPS
    row = launch(**{"device__attribute_max_gpu_frequency_khz": 2e6})
    identity = {"source_file": "run.ncu-rep", "launch_id": [0], "kernel_name": ["k"], "grid": ["(1, 1, 1)"],
                "block": ["(1, 1, 1)"]}
    out = evaluate(finish_launch_table(identity, {k: [v] for k, v in row.items()}, 1), load_catalogue(),
                   CeilingOptions(use_table=False, clock="max")).iloc[0]
    assert out["peak_warp_gips"] == pytest.approx(864.0, rel=1e-12)


def test_a_new_rule_added_the_documented_way_takes_effect(tmp_path, monkeypatch):
    """docs/limiters.md's recipe: a [rules.NAME] table and its threshold in a copy of limiters.toml, the name in
    [order], and one function registered under the name."""
    import numpy as np

    from ncu_roofline.core.data import METRICS_DIR
    from ncu_roofline.pipeline.limiter import limiter_columns, next_step
    from ncu_roofline.pipeline.limiter_rules import RULES, Verdict, rule
    from ncu_roofline.pipeline.limiter_rules.registry import col, fmt, phrases

    text = (METRICS_DIR / "limiters.toml").read_text(encoding="utf-8")
    assert 'limiters = ["roof", "launch",' in text
    text = text.replace('limiters = ["roof", "launch",', 'limiters = ["roof", "huge_blocks", "launch",')
    text += '''
[rules.huge_blocks]
holds = "blocks of at least huge_block_threads threads"
next_step = "try smaller blocks"
ncu = []

[thresholds.huge_block_threads]
value = 1024
meaning = "a block this large"
source = "ncu_roofline"
'''
    scratch = tmp_path / "limiters.toml"
    scratch.write_text(text, encoding="utf-8")
    monkeypatch.setitem(RULES, "huge_blocks", RULES.get("huge_blocks"))  # undone after the test

    @rule("huge_blocks")
    def check_huge_blocks(f, s):
        block = col(f, "block_size")
        holds = ~np.isnan(block) & (block >= s.thresholds["huge_block_threads"])
        return Verdict(holds, ~np.isnan(block), phrases(holds, lambda p: fmt(p(block)) + " threads per block"),
                       ("block_size",))

    settings = limiter_settings(scratch)
    rows = evaluated(launch(**{"launch__block_size": 1024.0}), launch())
    out = limiter_columns(rows, load_catalogue(), settings)
    assert out["limiter"].astype(str).tolist() == ["huge_blocks", "latency"]  # the second: as before
    assert out["limiter_evidence"].iloc[0] == "1.02e+03 threads per block"
    assert next_step("huge_blocks", settings) == "try smaller blocks"
    # a frame without block sizes: the new rule is not tested, the later rules still answer
    assert str(limiter_columns(rows.drop(columns=["block_size"]), load_catalogue(), settings)["limiter"].iloc[0]) \
        == "latency"


def _findings(**speedups: float) -> str:
    """An `ncu_rules` JSON text (readers/ncu_rules.py's shape) with one finding per rule id and its speedup %."""
    return json.dumps([{"rule": rule_id, "section": "", "title": rule_id, "message": "m", "type": 2,
                        "speedup_pct": pct, "speedup_type": 2} for rule_id, pct in speedups.items()])


def test_a_groups_gain_sums_its_launches_ncu_estimates_in_time_falling_back_per_launch():
    from ncu_roofline.pipeline.limiter import group_gain

    launches = pd.DataFrame({
        "time_s": [4.0, 3.0, 3.0, 2.0, 1.0, 1.0, 5.0, 2.0],
        "ncu_rules": [_findings(CPIStall=25.0), None, _findings(Occupancy=50.0), _findings(IssueSlotUtilization=9.0),
                      _findings(IssueSlotUtilization=10.0), None, _findings(CPIStall=50.0), _findings(CPIStall=10.0)],
        "limiter": ["latency", "latency", "occupancy", "latency", "issue", "issue", "latency", "latency"],
        "limiter_gain_s": [1.0, 0.9, 0.6, 0.3, 0.1, np.nan, 2.5, 0.2],
        "_invalid": [False] * 6 + [True, False],
    })
    codes = np.array([0, 0, 0, 1, 2, 2, 3, 3])
    limiter = pd.Series(["latency", "latency", "issue", "latency"])
    ours = np.array([0.5, 0.7, np.nan, 0.4])  # our formula's gains from the groups' sums
    group_time_s = np.array([10.0, 2.0, 2.0, 2.0])  # the invalid launch adds nothing to its group's time
    gain = group_gain(launches, codes, limiter, ours, group_time_s)
    # group 0: 4 s x 25 % (NCU's CPIStall) + 0.9 s (a latency launch's own gain) + 3 s / 10 s x 0.5 s (an occupancy
    # launch: its share of our group gain); an average of the fractions would give another number
    assert gain[0] == pytest.approx(4.0 * 0.25 + 0.9 + 0.3 * 0.5, rel=1e-12)
    assert gain[1] == pytest.approx(0.7, rel=1e-12)  # no NCU estimate for `latency` in it: ours
    assert np.isnan(gain[2])  # one launch's part unknown (no NCU estimate, no formula of ours): unknown, not 0.1
    assert gain[3] == pytest.approx(2.0 * 0.10, rel=1e-12)  # the launch left out of the totals adds nothing

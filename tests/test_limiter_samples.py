"""The limiter and the instruction roofline on the shared `--set full` reports, checked against their own counters.

Every launch and kernel of these reports gets a limiter other than `unknown`; each launch's evidence is rebuilt here
from the report's counters (read through the ncu-report wheel) with the arithmetic written out; `warp_inst` is
`smsp__inst_executed.sum` exactly and `gips` = warp_inst / gpu__time_duration / 1e9. A capture without these
counters (climate-seg, NERSC style) says `unknown` once for the run, with the command that collects them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import ncu_actions
from ncu_roofline import analyze

FULL_SET = ["CudaCode/vec_add.ncu-rep", "CudaCode/dot_product.ncu-rep", "CudaCode/naive.ncu-rep",
            "CudaCode/global_mem_coalesce.ncu-rep", "NCAR-GPU_workshop/MW_Baseline.ncu-rep",
            "NCAR-GPU_workshop/MW_DivToMult.ncu-rep", "cs599k/rms_norm_matrix_2025-04-21_v1.ncu-rep",
            "cuda-mlp-inference/report.ncu-rep", "nsight-compute-files/3136_64_64_rtx2080ti_sgemm.ncu-rep"]
CLIMATE = "DeepLearningProfiling/climate-seg-TF-fp16-batch2-fw-amp"
STALLS = {"long_scoreboard": "waiting on global/local memory (long scoreboard)",
          "short_scoreboard": "waiting on shared memory or special math (short scoreboard)",
          "mio_throttle": "memory input/output queue full (MIO throttle)",
          "lg_throttle": "local/global queue full (LG throttle)", "barrier": "waiting at a barrier",
          "math_pipe_throttle": "math pipe busy (math pipe throttle)", "wait": "fixed-latency dependency (wait)",
          "branch_resolving": "branch resolving", "no_instruction": "instruction cache miss (no instruction)",
          "not_selected": "eligible but not selected (scheduler busy)",
          "drain": "draining memory stores after EXIT (drain)", "membar": "waiting at a memory barrier (membar)",
          "imc_miss": "immediate constant cache miss (IMC miss)", "dispatch_stall": "dispatch stall",
          "tex_throttle": "texture queue full (tex throttle)", "sleeping": "sleeping (nanosleep or warp sync)",
          "misc": "miscellaneous hardware reasons (misc)"}
UNITS = {"SM": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
         "L1TEX": "l1tex__throughput.avg.pct_of_peak_sustained_active",
         "L2": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
         "DRAM": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"}
MEMORY = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"


def g(value: float) -> str:
    return f"{value:.3g}"


def counters(path) -> list[dict[str, float]]:
    """Each action's metrics, in the order the reader walks them (ranges, then actions)."""
    report, actions = ncu_actions(path)
    rows = []
    for action in actions:
        def value(name: str, action=action, report=report) -> float:  # the report kept alive with its action
            metric = action.metric_by_name(name)
            return math.nan if metric is None else float(metric.as_double())
        rows.append({"value": value, "ns": value("gpu__time_duration.sum")})
    return rows


def p(percent: float) -> str:
    return f"{percent:.1f}%"


def expected_evidence(limiter: str, value, fraction: float) -> str:
    """The evidence, rebuilt from the counters as metrics/limiters.toml defines it."""
    units = {name: value(metric) for name, metric in UNITS.items()}
    if limiter == "roof":
        name = max(units, key=lambda k: -math.inf if math.isnan(units[k]) else units[k])
        return f"{name} {p(units[name])} of peak"
    if limiter in ("memory", "compute", "balanced"):
        memory_units = {k: v for k, v in units.items() if k != "SM" and not math.isnan(v)}
        name = max(memory_units, key=memory_units.get)
        mem = f"memory {p(value(MEMORY))} ({name} {p(memory_units[name])})"
        sm = f"SM {p(units['SM'])}"
        return f"{mem}, {sm} of peak" if limiter == "memory" else f"{sm}, {mem} of peak"
    if limiter == "launch":
        time_s = value("gpu__time_duration.sum") * 1e-9  # the report gives ns
        if time_s < 5e-6:
            return f"{g(time_s * 1e6)} µs per launch"
        return (f"{g(value('launch__waves_per_multiprocessor'))} waves on "
                f"{g(value('device__attribute_multiprocessor_count'))} SMs ({g(value('launch__grid_size'))} blocks)")
    if limiter == "occupancy":
        limits = {"registers": value("launch__occupancy_limit_registers"),
                  "shared memory": value("launch__occupancy_limit_shared_mem"),
                  "block size": value("launch__occupancy_limit_warps"),
                  "blocks per SM": value("launch__occupancy_limit_blocks")}
        lowest = min(limits.values())
        detail = {"registers": f"{g(value('launch__registers_per_thread'))}/thread",
                  "shared memory": f"{g(value('launch__shared_mem_per_block'))} B/block",
                  "block size": f"{g(value('launch__block_size'))} threads/block",
                  "blocks per SM": f"{g(lowest)} blocks/SM"}
        why = " and ".join(f"{n} ({detail[n]})" for n, v in limits.items() if v == lowest)
        return (f"occupancy {p(value('sm__warps_active.avg.pct_of_peak_sustained_active'))} (theoretical "
                f"{p(value('sm__maximum_warps_per_active_cycle_pct'))}), limited by {why}")
    if limiter in ("latency", "issue"):
        stalls = {k: value(f"smsp__average_warps_issue_stalled_{k}_per_issue_active.ratio") for k in STALLS}
        top = max(stalls, key=lambda k: -math.inf if math.isnan(stalls[k]) else stalls[k])
        return (f"issue slots {p(100 * value('smsp__issue_active.avg.per_cycle_active'))} busy; "
                f"{g(stalls[top])} of {g(value('smsp__average_warp_latency_per_inst_issued.ratio'))} cycles per "
                f"instruction: {STALLS[top]}")
    raise AssertionError(f"no hand rule for {limiter}")


@pytest.fixture(scope="module")
def analysed():
    """Each report analysed once for the module, when a test first asks for it (read only: the tests compare the
    analysis with the report's own counters, read apart by `counters`)."""
    cache: dict = {}

    def analysis(path):
        if path not in cache:
            cache[path] = analyze(path)
        return cache[path]

    return analysis


@pytest.fixture(params=FULL_SET)
def report(request, samples, analysed):
    pytest.importorskip("ncu_report")
    path = samples / request.param
    return path, analysed(path)


def test_every_kernel_and_launch_has_a_limiter(report):
    _, result = report
    assert "unknown" not in set(result.kernels["limiter"].astype(str))
    assert "unknown" not in set(result.launches["limiter"].astype(str))
    assert result.kernels["limiter_evidence"].notna().all()


def test_evidence_is_the_report_counters_worked_by_hand(report):
    path, result = report
    launches = result.launches.sort_values("launch_id")
    rows = counters(path)
    assert len(rows) == len(launches)
    for (_, launch), raw in zip(launches.iterrows(), rows):
        assert launch["limiter_evidence"] == expected_evidence(str(launch["limiter"]), raw["value"],
                                                               launch["roofline_fraction"]), launch["kernel_name"]


def test_warp_inst_and_gips_are_the_counters(report):
    path, result = report
    launches = result.launches.sort_values("launch_id")
    for (_, launch), raw in zip(launches.iterrows(), counters(path)):
        warp_inst = raw["value"]("smsp__inst_executed.sum")
        assert launch["warp_inst"] == warp_inst  # exactly
        assert launch["gips"] == pytest.approx(warp_inst / (raw["ns"] * 1e-9) / 1e9, rel=1e-12)
        sms, schedulers = (raw["value"](f"device__attribute_{n}") for n in ("multiprocessor_count",
                                                                           "num_schedulers_per_multiprocessor"))
        assert launch["peak_warp_gips"] == pytest.approx(
            sms * schedulers * raw["value"]("sm__cycles_elapsed.avg.per_second") / 1e9, rel=1e-12)


def test_kernel_groups_sum_their_warp_instructions(report):
    _, result = report
    for _, kernel in result.kernels.iterrows():
        mine = result.launches[(result.launches["kernel_name"] == kernel["kernel_name"])
                               & (result.launches["grid"] == kernel["grid"])]
        assert kernel["warp_inst"] == mine["warp_inst"].sum()
        assert kernel["gips"] == pytest.approx(mine["warp_inst"].sum() / mine["time_s"].sum() / 1e9, rel=1e-12)


def test_one_real_example_of_each_kind_the_samples_show(samples, analysed):
    pytest.importorskip("ncu_report")
    seen = set()
    for name in FULL_SET:
        seen |= set(analysed(samples / name).kernels["limiter"].astype(str))
    # a one-wave grid (NCAR halo kernels: 0.267 waves), kernels at their roof (vec_add: DRAM 91.7 %), memory-heavy
    # (rms_norm: memory 67 %, SM 25 %), compute-heavy (MW_Baseline x_279), balanced (dot_prod), latency
    # (dot_prod_naive: both units under 60 %)
    assert {"launch", "roof", "memory", "compute", "balanced", "latency"} <= seen


def test_a_capture_without_the_counters_says_unknown_once_with_the_command(samples):
    result = analyze(samples / CLIMATE, allow_empty=True)
    assert (result.launches["limiter"].astype(str) == "unknown").sum() > 0
    notes = [n for n in result.notes if "is unknown on" in n and "limiter" in n]
    assert len(notes) == 1  # once per run, not per launch
    assert "launch__waves_per_multiprocessor" in notes[0] and "ncu --metrics" in notes[0]
    unknown = result.kernels[result.kernels["limiter"].astype(str) == "unknown"]
    assert len(unknown) and unknown["limiter_evidence"].str.startswith("not collected: ").all()
    assert np.isnan(result.kernels["warp_inst"].to_numpy(dtype="float64")).all()  # unknown, never 0

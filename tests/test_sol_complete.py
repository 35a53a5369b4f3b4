"""`sol_complete`: a speed of light is complete only when every term the GPU has was counted; otherwise it is a
lower bound, its headroom an upper bound, and the outputs say so (≤, `dram?`, the run totals)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT, cli_in_process
from ncu_roofline.core.status import StatusNotes
from ncu_roofline.core.vocabulary import ALL_TERMS, SOL_COMPLETE
from ncu_roofline.pipeline.rank import speed_of_light
from ncu_roofline.pipeline.totals import run_totals
from ncu_roofline.render.analysis.markdown import totals_sentence

# One launch of 1 ms on a GPU with FP64 1 TFLOP/s, FP32 2 TFLOP/s, FP16 4 TFLOP/s, tensor 8 TFLOP/s, DRAM 1 TB/s,
# L2 2 TB/s, L1 4 TB/s. Work: 1e8 FP32 FLOP (50 µs at the roof), 5e8 DRAM bytes (500 µs: the bound).
PEAKS = {"fp64": 1e12, "fp32": 2e12, "fp16": 4e12, "tensor": 8e12, "dram": 1e12, "l2": 2e12, "l1": 4e12}
AMOUNTS = {"fp64": 0.0, "fp32": 1e8, "fp16": 0.0, "tensor": 0.0, "dram": 5e8, "l2": 6e8, "l1": 8e8}


def _launch(**changes: float) -> dict[str, float]:
    """A launch row: amounts and roofs of every term (tensor input types not split: null), with `changes`
    (`fp64=nan` drops the FP64 counter, `peak_fp16=nan` the FP16 roof)."""
    row: dict[str, float] = {"time_s": 1e-3}
    for term in ALL_TERMS:
        row[term.amount] = AMOUNTS.get(term.key, np.nan)
        row[term.peak] = PEAKS.get(term.key, np.nan)
    for key, value in changes.items():
        if key.startswith("peak_"):
            row[next(t.peak for t in ALL_TERMS if t.key == key.removeprefix("peak_"))] = value
        else:
            row[next(t.amount for t in ALL_TERMS if t.key == key)] = value
    return row


CASES = {
    "everything counted": ({}, True, None),
    "FP64 counted as 0 is counted": ({"fp64": 0.0}, True, None),
    "no FLOP counter at all": ({"fp64": np.nan, "fp32": np.nan, "fp16": np.nan, "tensor": np.nan}, False,
                               "no FLOP counters: speed of light is a lower bound"),
    "FP64 and FP16 not collected": ({"fp64": np.nan, "fp16": np.nan}, False,
                                    "no FP64, FP16 FLOP counters: speed of light is a lower bound"),
    "L1 bytes not collected": ({"l1": np.nan}, False, "no L1 byte counters: speed of light is a lower bound"),
    "no FLOPs, no L2 bytes": ({"fp64": np.nan, "fp32": np.nan, "fp16": np.nan, "tensor": np.nan, "l2": np.nan},
                              False, "no FLOP counters, no L2 byte counters: speed of light is a lower bound"),
    # a GPU without tensor cores: no roof and no counter is a term the GPU lacks, not a missing one
    "no tensor pipe on this GPU": ({"tensor": np.nan, "peak_tensor": np.nan}, True, None),
    # work without a roof is left out of t_sol: not complete (the status says `no roof fp16`)
    "FP16 work without a roof": ({"fp16": 1e6, "peak_fp16": np.nan}, False, "no roof fp16"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_speed_of_light_is_complete_only_when_every_term_the_gpu_has_was_counted(name):
    changes, complete, note = CASES[name]
    frame = pd.DataFrame([_launch(**changes)])
    notes = StatusNotes(1)
    sol = speed_of_light(frame, notes)
    # t_sol = max(1e8 / 2e12 = 50 µs, 5e8 / 1e12 = 500 µs, 6e8 / 2e12 = 300 µs, 8e8 / 4e12 = 200 µs) = 500 µs
    assert sol["t_sol_s"].iloc[0] == pytest.approx(5e-4)
    assert sol[SOL_COMPLETE].iloc[0] == complete
    status = notes.render().iloc[0]
    assert status == "ok" if note is None else note in status.split("; ")


def test_a_launch_without_a_speed_of_light_is_not_complete_and_gets_no_lower_bound_note():
    frame = pd.DataFrame([_launch(**{key: np.nan for key in PEAKS})])  # counters, no roof at all
    notes = StatusNotes(1)
    sol = speed_of_light(frame, notes)
    assert np.isnan(sol["t_sol_s"].iloc[0]) and not sol[SOL_COMPLETE].iloc[0]
    assert "lower bound" not in notes.render().iloc[0]


def test_run_totals_say_how_much_headroom_is_an_upper_bound_only():
    # three kernels: 4 ms and 1 ms of headroom from complete speeds of light, 3 ms from an incomplete one
    kernels = pd.DataFrame({"launches": [1, 1, 1], "time_s": [0.01, 0.005, 0.004],
                            "flop_total": [1.0, 1.0, np.nan], "t_sol_s": [0.006, 0.004, 0.001],
                            "headroom_s": [0.004, 0.001, 0.003], SOL_COMPLETE: [True, True, False]})
    totals = run_totals(kernels)
    assert totals["headroom_s"] == pytest.approx(0.008)  # 4 + 1 + 3 ms
    assert totals["headroom_s_upper_bound_only"] == pytest.approx(0.003)
    assert totals["kernels_upper_bound"] == 1
    # 8 ms of 19 ms = 42.1 %, of which the 3 ms are an upper bound
    assert totals_sentence({**totals, "unknown_reasons": []}) == (
        "GPU time 19.0 ms, recoverable at the roofs 8.00 ms (42.1%), of which ≤ 3.00 ms is an upper bound only "
        "(1 kernel whose speed of light lacks terms, see status)")
    every = run_totals(kernels.assign(**{SOL_COMPLETE: False}))
    assert every["headroom_s_upper_bound_only"] == pytest.approx(0.008)
    assert totals_sentence({**every, "unknown_reasons": []}).startswith(
        "GPU time 19.0 ms, recoverable at the roofs ≤ 8.00 ms (42.1%), an upper bound")
    complete = run_totals(kernels.assign(**{SOL_COMPLETE: True}))
    assert complete["headroom_s_upper_bound_only"] == 0.0 and complete["kernels_upper_bound"] == 0
    assert totals_sentence({**complete, "unknown_reasons": []}) == \
        "GPU time 19.0 ms, recoverable at the roofs 8.00 ms (42.1%)"


def _cli(*args: str):
    return cli_in_process(*args, cwd=ROOT, env={"COLUMNS": "160"})


def test_a100_cutlass_export_without_flop_counters_is_an_upper_bound_everywhere(samples, tmp_path):
    """cuda-roofline/output_A100.csv holds byte counters and the tensor pipe only (FORMAT_NOTES: the
    sm__sass_thread_inst_executed_op_* FLOP counters are absent): every kernel's speed of light lacks FP64, FP32
    and FP16, the CUTLASS GEMM's the tensor pipe too."""
    out = tmp_path / "out"
    run = _cli("analyze", str(samples / "cuda-roofline" / "output_A100.csv"), "--gpu", "A100-PCIE-40GB", "-o",
               str(out), "--summary-md", str(tmp_path / "s.md"), "--json", str(tmp_path / "s.json"))
    assert run.returncode == 0, run.stderr
    kernels = pd.read_parquet(out / "kernels.parquet")
    launches = pd.read_parquet(out / "launches.parquet")
    assert not kernels[SOL_COMPLETE].any() and not launches[SOL_COMPLETE].any()
    gemm = kernels[kernels["kernel_name"].str.contains("cutlass::Kernel")].iloc[0]
    assert "no FLOP counters: speed of light is a lower bound" in gemm["status"]
    init = kernels[kernels["kernel_name"].str.contains("InitializeMatrix")].iloc[0]
    assert "no FP64, FP32, FP16 FLOP counters: speed of light is a lower bound" in init["status"]  # tensor: 0
    line = next(row for row in run.stdout.splitlines() if "cutlass::Kernel" in row)
    assert "dram?" in line and "≤ 221 ms" in line  # bound unproven, headroom an upper bound
    assert "recoverable at the roofs ≤ 299 ms" in run.stdout
    assert "≤ 221 ms" in (tmp_path / "s.md").read_text(encoding="utf-8")
    totals = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["totals"]
    assert totals["headroom_s_upper_bound_only"] == pytest.approx(totals["headroom_s"])
    spec = json.loads((out / "roofline.vl.json").read_text(encoding="utf-8"))
    rows = spec["datasets"]["kernels"]
    assert all(r["upper_bound"] for r in rows) and all(r["headroom"].startswith("≤ ") for r in rows)


@pytest.mark.parametrize("report", ["cs599k/rms_norm_matrix_2025-04-21_v1.ncu-rep", "CudaCode/naive.ncu-rep"])
def test_a_full_report_is_complete(samples, tmp_path, report):
    pytest.importorskip("ncu_report")
    run = _cli("analyze", str(samples / report), "-o", str(tmp_path))
    assert run.returncode == 0, run.stderr
    kernels = pd.read_parquet(tmp_path / "kernels.parquet")
    assert kernels[SOL_COMPLETE].all() and pd.read_parquet(tmp_path / "launches.parquet")[SOL_COMPLETE].all()
    assert "≤" not in run.stdout and "lower bound" not in run.stdout


def test_a_capture_with_roofs_of_its_own_is_judged_on_the_precisions_it_charts():
    """A report (or an export with `*.peak_sustained`) charts the precisions whose roofs it holds: a Turing
    `--set full` report holds FP32 and FP64 roofs, and its missing FP16 counters leave its speed of light complete
    as its ncu version draws it. Without roofs of its own (a CSV export of counters), the table's row decides."""
    from ncu_roofline.core.vocabulary import ROOF_COLUMNS, TERM_BY_KEY
    from ncu_roofline.pipeline.ceilings import OWN_ROOFS

    def bits(*keys: str) -> int:
        return sum(1 << ROOF_COLUMNS.index(TERM_BY_KEY[k].peak) for k in keys)

    own = bits("fp64", "fp32", "dram", "l2", "l1")
    rows = pd.DataFrame([
        {**_launch(fp16=np.nan, tensor=np.nan), OWN_ROOFS: own},  # charted: FP64, FP32 counted
        {**_launch(fp16=np.nan, tensor=np.nan), OWN_ROOFS: 0},  # table roofs only: FP16, Tensor required
        # no precision counted at all is never complete, whatever the roofs came from
        {**_launch(fp64=np.nan, fp32=np.nan, fp16=np.nan, tensor=np.nan), OWN_ROOFS: bits("dram", "l2", "l1")},
        {**_launch(l1=np.nan), OWN_ROOFS: bits("fp64", "fp32", "dram", "l2")},  # memory levels always count
    ])
    notes = StatusNotes(len(rows))
    sol = speed_of_light(rows, notes)
    assert sol[SOL_COMPLETE].tolist() == [True, False, False, False]
    status = notes.render().tolist()
    assert status[0] == "ok"
    assert status[1] == "no FP16, Tensor FLOP counters: speed of light is a lower bound"
    assert status[2] == "no FLOP counters: speed of light is a lower bound"
    assert status[3] == "no L1 byte counters: speed of light is a lower bound"


def test_a_kernel_is_complete_only_when_all_its_launches_are():
    from ncu_roofline.pipeline.group import group_launches

    launches = pd.DataFrame([_launch(), _launch(l1=np.nan), _launch()])
    launches["flop_total"] = 1e8  # FP32 only
    notes = StatusNotes(3)
    launches = pd.concat([launches, speed_of_light(launches, notes)], axis=1)
    launches["status"] = notes.render().to_numpy()
    launches = launches.assign(kernel_name=["a", "a", "b"], grid="(1, 1, 1)", block="(1, 1, 1)", device_name="G",
                               kernel_demangled=None, compute_capability=9.0, launches=1, source_file="f",
                               ceiling_source="table:G")
    kernels = group_launches(launches, ["kernel_name", "grid", "block", "device_name"])
    assert kernels.set_index("kernel_name")[SOL_COMPLETE].to_dict() == {"a": False, "b": True}
    assert kernels.set_index("kernel_name").loc["a", "status"] == \
        "no L1 byte counters: speed of light is a lower bound (1 of 2 launches)"

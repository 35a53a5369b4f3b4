"""`--group-by op`: PyTorch operators from emit_nvtx() ranges, built from the format documented in
docs/pytorch-ops.md (torch/csrc/profiler/util.cpp getNvtxStr; PyTorch <= 1.5: ", seq=" / ", stashed seq=")."""

from __future__ import annotations

import numpy as np
import pytest

import ncu_roofline.analysis as analysis_module
import ncu_roofline.pipeline.steps as steps_module
from ncu_roofline import analyze
from ncu_roofline.core.launch_table import finish_launch_table
from ncu_roofline.pipeline.torch_ranges import group_by_op, op_label, strip_decorations


@pytest.mark.parametrize("name, expected", [
    ("aten::addmm, seq = 12, op_id = 5, sizes = [[64, 128], [128, 256], []], input_op_ids = [(1,0), (2,0)]",
     ("aten::addmm", False)),
    ("aten::linear, sizes = [[8, 1024], [4096, 1024], [4096]]", ("aten::linear", False)),  # record_shapes, no seq
    ("aten::mm, seq = 0", ("aten::mm", False)),
    ("AddmmBackward0, seq = 12", ("AddmmBackward0", True)),  # backward node (PyTorch >= 1.10 names)
    ("autograd::engine::evaluate_function: AddmmBackward0", ("AddmmBackward0", True)),
    ("mm, seq=3", ("mm", False)),  # PyTorch <= 1.5
    ("MmBackward, stashed seq=7", ("MmBackward", True)),
    ("my range, step 3", ("my range, step 3", False)),  # a user's comma is not a decoration
])
def test_strip_decorations(name, expected):
    assert strip_decorations(name) == expected


def test_op_label_takes_the_innermost_range_and_marks_backward():
    assert op_label("train/aten::linear, seq = 1/aten::addmm, seq = 1, sizes = [[2, 3], [3, 4], [4]]") \
        == "aten::addmm"
    backward = ("autograd::engine::evaluate_function: AddmmBackward0/AddmmBackward0, seq = 4/"
                "aten::mm, seq = 0, sizes = [[4, 2], [2, 3]]")
    assert op_label(backward) == "aten::mm [backward]"  # the same aten::mm, kept apart from the forward one
    assert op_label("MmBackward, stashed seq=7/mm, seq=0") == "mm [backward]"
    assert op_label(None) is None and op_label("nccl@allreduce") is None  # only the default domain


def torch_launches():
    """Four launches of a tiny Linear layer under emit_nvtx(record_shapes=True): two kernels in the forward addmm
    (a GEMM and a bias add), one in the backward's grad-input mm, one outside any range."""
    paths = [
        "aten::linear, seq = 1, op_id = 1, sizes = [[8, 16], [32, 16], [32]]/aten::addmm, seq = 1, op_id = 3, "
        "sizes = [[32], [8, 16], [16, 32], [], []]",
        "aten::linear, seq = 1, op_id = 1, sizes = [[8, 16], [32, 16], [32]]/aten::addmm, seq = 1, op_id = 3, "
        "sizes = [[32], [8, 16], [16, 32], [], []]",
        "autograd::engine::evaluate_function: AddmmBackward0/AddmmBackward0, seq = 1, op_id = 9/"
        "aten::mm, seq = 0, op_id = 10, sizes = [[8, 32], [32, 16]]",
        None,
    ]
    n = len(paths)
    identity = {"source_file": "linear.ncu-rep", "launch_id": list(range(n)),
                "kernel_name": ["ampere_sgemm_32x32", "add_bias_kernel", "ampere_sgemm_32x32", "memset"],
                "grid": ["(1, 1, 1)", "(2, 1, 1)", "(1, 1, 1)", "(1, 1, 1)"], "block": ["(128, 1, 1)"] * n,
                "nvtx_range": paths, "device_name": ["NVIDIA H100 PCIe"] * n}
    metrics = {"gpu__time_duration.sum": [4e-6, 1e-6, 3e-6, 1e-6],
               "dram__bytes.sum": [3000.0, 1000.0, 2500.0, 512.0],
               "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": [4096.0, 0.0, 4096.0, 0.0],
               "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": [0.0, 256.0, 0.0, 0.0],
               "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": [0.0] * n}
    table = finish_launch_table(identity, metrics, n)
    table["_file_mask"] = np.int64(1)
    table["_capture"] = 0
    return table


def test_group_by_op_relabels_launches():
    frame = group_by_op(torch_launches())
    assert list(frame["kernel_name"]) == ["aten::addmm", "aten::addmm", "aten::mm [backward]", "memset"]
    assert frame["grid"].isna().tolist() == [True, True, True, False]  # an operator's kernels differ in shape


def test_analyze_group_by_op_sums_an_operators_kernels(monkeypatch):
    monkeypatch.setattr(analysis_module, "expand_paths", lambda paths, notes=None: [])
    monkeypatch.setattr(steps_module, "read_inputs", lambda files, wanted, progress=None: torch_launches())
    result = analyze(["linear.ncu-rep"], group_by="op", gpu="H100 PCIe")
    kernels = result.kernels.set_index("kernel_name")
    assert set(kernels.index) == {"aten::addmm", "aten::mm [backward]", "memset"}
    addmm = kernels.loc["aten::addmm"]
    assert addmm["launches"] == 2
    assert addmm["time_s"] == pytest.approx(4e-6 + 1e-6)
    assert addmm["flop_fp32"] == pytest.approx(2 * 4096 + 256)  # FFMA counts 2, FADD 1
    assert addmm["bytes_dram"] == pytest.approx(3000 + 1000)
    assert addmm["ai_dram"] == pytest.approx((2 * 4096 + 256) / 4000)
    backward = kernels.loc["aten::mm [backward]"]
    assert backward["launches"] == 1 and backward["bytes_dram"] == pytest.approx(2500)
    assert len(result.launches) == 4  # the launch table keeps every launch under its own kernel name
    assert set(result.launches["kernel_name"]) == {"ampere_sgemm_32x32", "add_bias_kernel", "memset"}


@pytest.mark.slow
def test_compare_and_batch_take_group_by_op(monkeypatch, tmp_path):
    """`compare --group-by op` matches operators across runs, and `batch --group-by op` records them: the head run's forward addmm GEMM takes 8 µs instead
    of 4, so aten::addmm goes from 4 + 1 = 5 µs to 8 + 1 = 9 µs (+80 %), the backward mm is unchanged."""
    import json

    from typer.testing import CliRunner

    from ncu_roofline.cli import app

    def launches(files, wanted, progress=None):
        table = torch_launches()
        if files[0].name.startswith("head"):
            table.loc[0, "gpu__time_duration.sum"] = 8e-6
        return table

    monkeypatch.setattr(analysis_module, "expand_paths", lambda paths, notes=None: [tmp_path / p for p in paths])
    monkeypatch.setattr(steps_module, "read_inputs", launches)
    monkeypatch.setattr(analysis_module, "_start_hashing", lambda files: (lambda: []))
    result = CliRunner().invoke(app, ["compare", "base.ncu-rep", "head.ncu-rep", "--group-by", "op",
                                      "--gpu", "H100 PCIe", "--json", "-", "--rows", "0"])
    assert result.exit_code == 0, result.output
    rows = {row["kernel_name"]: row for row in json.loads(result.stdout)["kernels"]}
    assert set(rows) == {"aten::addmm", "aten::mm [backward]", "memset"}
    addmm = rows["aten::addmm"]
    assert addmm["time_s_base"] == pytest.approx(5e-6) and addmm["time_s_head"] == pytest.approx(9e-6)
    assert rows["aten::mm [backward]"]["time_s_head"] == pytest.approx(rows["aten::mm [backward]"]["time_s_base"])
    bad = CliRunner().invoke(app, ["compare", "base.ncu-rep", "head.ncu-rep", "--group-by", "operator"])
    assert bad.exit_code == 2 and "--group-by must be 'kernel', 'nvtx' or 'op'" in bad.output

    # batch: each report one run of the history, grouped by operator as `analyze --group-by op` groups it
    import pandas as pd

    for name in ("base.ncu-rep", "head.ncu-rep"):
        (tmp_path / name).write_bytes(b"")
    history = tmp_path / "history"
    done = CliRunner().invoke(app, ["batch", str(tmp_path / "base.ncu-rep"), str(tmp_path / "head.ncu-rep"),
                                    "--history", str(history), "--jobs", "1", "--group-by", "op",
                                    "--gpu", "H100 PCIe"])
    assert done.exit_code == 0, done.output
    kernels = pd.read_parquet(history / "kernels")
    head = kernels[kernels["run_id"].astype(str) == "head"].set_index("kernel_name")
    assert set(head.index) == {"aten::addmm", "aten::mm [backward]", "memset"}
    assert head.loc["aten::addmm", "time_s"] == pytest.approx(8e-6 + 1e-6)

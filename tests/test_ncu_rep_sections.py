"""The H100 report with every hierarchical roofline section: our achieved rates and roofs equal the expressions
Nsight Compute's own sections evaluate, metric for metric (values read straight from the report with ncu_report)."""

from __future__ import annotations

import pytest

from conftest import ncu_actions
from ncu_roofline import analyze

pytest.importorskip("ncu_report")

SMSP_CLOCK = "smsp__cycles_elapsed.avg.per_second"
SM_CLOCK = "sm__cycles_elapsed.avg.per_second"
OP = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum.per_cycle_elapsed"
DERIVED_OP = "derived__smsp__sass_thread_inst_executed_op_{}_pred_on_x{}"
SECTION = "SpeedOfLight_Hierarchical{}RooflineChart"


@pytest.fixture(scope="module")
def report(request):
    from conftest import SAMPLES

    path = SAMPLES / "cs599k" / "rms_norm_matrix_2025-04-21_v1.ncu-rep"
    if not path.exists():
        pytest.skip("../shared/ncu-samples is not present")
    from ncu_sections import report_sections

    _context, actions = ncu_actions(path)
    return analyze(path), actions, report_sections(path)


def value(action, name: str) -> float:
    metric = action.metric_by_name(name)
    assert metric is not None, name
    return metric.as_double()


def test_achieved_rates_equal_the_sections_expressions(report):
    result, actions, sections = report
    assert len(actions) == 3
    for launch_id, action in enumerate(actions):
        row = result.launches[result.launches["launch_id"] == launch_id].iloc[0]
        body = sections[launch_id]
        for precision, letter in (("fp32", "f"), ("fp64", "d")):
            section = SECTION.format({"fp32": "Single", "fp64": "Double"}[precision])
            inputs = [OP.format(f"{letter}add"), OP.format(f"{letter}mul"), DERIVED_OP.format(f"{letter}fma", 2)]
            assert set(inputs) | {SMSP_CLOCK} <= set(body[section])
            # Nsight Compute: (add + mul + fma_x2) per cycle x SMSP cycles per second
            expected = sum(value(action, name) for name in inputs) * value(action, SMSP_CLOCK)
            assert row[f"flop_{precision}"] / row["time_s"] == pytest.approx(expected, rel=1e-9, abs=1e-3)
        for level, name in (("dram", "dram__bytes.sum.per_second"),
                            ("l2", "derived__lts__lts2xbar_bytes.sum.per_second")):
            for kind in ("Single", "Double", "Half", "Tensor"):
                assert name in body[SECTION.format(kind)]
            assert row[f"bytes_{level}"] / row["time_s"] == pytest.approx(value(action, name), rel=1e-9)
        # L1 on CC 9.0: only the Tensor section defines it; Single/Double list no L1 achieved metric
        l1 = "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second"
        assert l1 in body[SECTION.format("Tensor")]
        assert l1 not in body[SECTION.format("Single")] and l1 not in body[SECTION.format("Double")]
        assert row["bytes_l1"] / row["time_s"] == pytest.approx(value(action, l1), rel=1e-9)
        # Tensor: the aggregate paths' per-cycle work x SM clock (this kernel issues no tensor work)
        paths = [n for n in body[SECTION.format("Tensor")]
                 if n.startswith("sm__ops_path_tensor_src_") and n.endswith(".sum.per_cycle_elapsed")]
        assert paths
        expected = sum(value(action, n) for n in paths) * value(action, SM_CLOCK)
        assert row["flop_tensor"] / row["time_s"] == pytest.approx(expected, abs=1e-3)


def test_roofs_equal_the_sections_peak_expressions(report):
    result, actions, sections = report
    for launch_id, action in enumerate(actions):
        row = result.launches[result.launches["launch_id"] == launch_id].iloc[0]
        assert row["ceiling_source"] == "report"
        sm = value(action, SM_CLOCK)
        expect = {
            "peak_flop_per_s_fp32": value(action, "derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2") * sm,
            "peak_flop_per_s_fp64": value(action, "derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2") * sm,
            "peak_flop_per_s_fp16": value(action, "derived__sm__sass_thread_inst_executed_op_hfma_pred_on_x4") * sm,
            "peak_flop_per_s_tensor":
                value(action, "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained") * sm,
            "peak_bytes_per_s_dram": value(action, "dram__bytes.sum.peak_sustained")
                * value(action, "dram__cycles_elapsed.avg.per_second"),
            "peak_bytes_per_s_l2": value(action, "derived__lts__lts2xbar_bytes.sum.peak_sustained")
                * value(action, "lts__cycles_elapsed.avg.per_second"),
            "peak_bytes_per_s_l1": value(action, "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained")
                * value(action, "l1tex__cycles_elapsed.avg.per_second"),
        }
        for column, expected in expect.items():
            assert row[column] == pytest.approx(expected, rel=1e-9), column
        # the dense FP16 tensor roof: 4,096 FLOP per SM per cycle on 114 SMs, not the sparse aggregate
        assert value(action, "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained") == 114 * 4096


def test_ncar_before_and_after_pair_analyse_with_the_same_five_kernels(samples):
    base = analyze(samples / "NCAR-GPU_workshop" / "MW_Baseline.ncu-rep")
    head = analyze(samples / "NCAR-GPU_workshop" / "MW_DivToMult.ncu-rep")
    assert len(base.launches) == len(head.launches) == 5
    key = ["kernel_name", "grid", "block"]
    assert sorted(map(tuple, base.kernels[key].astype(str).values)) == \
        sorted(map(tuple, head.kernels[key].astype(str).values))
    assert base.kernels["time_s"].notna().all() and head.kernels["time_s"].notna().all()

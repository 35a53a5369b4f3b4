"""The projection's error on a real pair: the same program profiled on a V100 and an A100 (cuda-roofline sample).

Everything expected here is worked out from the two CSV files with the csv module and arithmetic written below, and
from the roofs of metrics/gpus.toml: per launch the time (cycles / cycles per second), the FLOPs (the NERSC
formulas; Volta's tensor FLOPs as 512 per instruction), the bytes per level; per group the sums; t_sol as the max
of work over roof. The published error table in docs/projection.md and the tool's projection are both checked
against it.
"""

from __future__ import annotations

import csv
import re
import statistics
import tomllib
from pathlib import Path

import pytest

from ncu_roofline import analyze

ROOT = Path(__file__).resolve().parents[1]
GPUS = {"V100": "Tesla V100-PCIE-16GB", "A100": "NVIDIA A100-PCIE-40GB"}
FLOOR_S = tomllib.loads((ROOT / "metrics" / "projection.toml").read_text())["launch_floor"]["seconds_per_launch"]


def read_launches(path: Path) -> dict[int, dict]:
    """Launch ID -> kernel name and its metrics (base units: every unit in these files is byte, cycle, inst)."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    launches: dict[int, dict] = {}
    for row in csv.DictReader(lines[start:]):
        launch = launches.setdefault(int(row["ID"]), {"name": row["Kernel Name"], "m": {}})
        launch["m"][row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    return launches


def work(m: dict) -> dict[str, float | None]:
    """One launch's time, FLOPs per precision (None: not collected) and bytes per level."""
    def inst(op: str) -> float | None:
        return m.get(f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum")

    def flops(add: str, mul: str, fma: str, per_op: int = 1) -> float | None:
        if inst(fma) is None:
            return None
        return per_op * (inst(add) + inst(mul)) + 2 * per_op * inst(fma)

    has_fp = inst("ffma") is not None
    return {
        "time": m["sm__cycles_elapsed.avg"] / m["sm__cycles_elapsed.avg.per_second"],
        "fp64": flops("dadd", "dmul", "dfma"), "fp32": flops("fadd", "fmul", "ffma"),
        "fp16": flops("hadd", "hmul", "hfma", per_op=2),
        # Volta: 512 FLOP per tensor instruction; the A100 capture counts instructions whose FLOPs vary by shape
        # and collected no FLOP counter at all: unknown there
        "tensor": 512 * m["sm__inst_executed_pipe_tensor.sum"] if has_fp else None,
        "dram": m["dram__bytes.sum"], "l2": m["lts__t_bytes.sum"], "l1": m["l1tex__t_bytes.sum"],
    }


def roofs(name: str, clock_hz: float | None = None) -> dict[str, float]:
    """The table's roofs; with `clock_hz`, the SM-clocked ones (compute, L2, L1) at that clock instead of the
    table's boost clock (DRAM has its own clock)."""
    spec = next(g for g in tomllib.loads((ROOT / "metrics" / "gpus.toml").read_text())["gpu"] if g["name"] == name)
    f = 1.0 if clock_hz is None else clock_hz / (spec["boost_clock_mhz"] * 1e6)
    return {"fp64": spec["fp64_tflops"] * 1e12 * f, "fp32": spec["fp32_tflops"] * 1e12 * f,
            "fp16": spec["fp16_tflops"] * 1e12 * f, "tensor": spec["tensor_fp16_tflops"] * 1e12 * f,
            "dram": spec["dram_gbps"] * 1e9, "l2": spec["l2_gbps"] * 1e9 * f, "l1": spec["l1_gbps"] * 1e9 * f}


def capture_clock(launches: dict[int, dict]) -> float:
    """The SM clock the capture ran at (Nsight Compute locks it, to base by default): the launches' mean."""
    return statistics.mean(launch["m"]["sm__cycles_elapsed.avg.per_second"] for launch in launches.values())


def groups(launches: dict[int, dict]) -> dict[tuple[int, ...], dict]:
    """Launches grouped by kernel name, keyed by their IDs (the same program launches in the same order)."""
    by_name: dict[str, list[int]] = {}
    for launch_id, launch in sorted(launches.items()):
        by_name.setdefault(launch["name"], []).append(launch_id)
    out = {}
    for name, ids in by_name.items():
        rows = [work(launches[i]["m"]) for i in ids]
        out[tuple(ids)] = {"name": name, "launches": len(ids),
                           **{k: None if any(r[k] is None for r in rows) else sum(r[k] for r in rows)
                              for k in rows[0]}}
    return out


def t_sol(group: dict, peaks: dict[str, float]) -> float:
    return max(group[k] / peaks[k] for k in peaks if group[k] is not None)


def expected(source: str, target: str, samples: Path, *, at_capture_clocks: bool = False) -> list[dict]:
    """Per group: measured time on the target, and the two models' projections from the source's profile (on the
    table's roofs, or with `at_capture_clocks` on roofs at the clock each capture ran at)."""
    folder = samples / "cuda-roofline"
    raw = {g: read_launches(folder / f"output_{g}.csv") for g in (source, target)}
    src, dst = groups(raw[source]), groups(raw[target])
    src_roofs, dst_roofs = (roofs(GPUS[g], capture_clock(raw[g]) if at_capture_clocks else None)
                            for g in (source, target))
    out = []
    for ids, group in src.items():
        floor = group["launches"] * FLOOR_S
        at_target = t_sol(group, dst_roofs)
        out.append({"name": group["name"], "ids": ids, "measured": dst[ids]["time"],
                    "at_roof": max(at_target, floor),
                    "same": max(group["time"] * at_target / t_sol(group, src_roofs), floor)})
    return out


def errors(rows: list[dict], model: str) -> tuple[float, float]:
    """Median absolute and worst (signed, largest in size) of projected / measured - 1."""
    values = [r[model] / r["measured"] - 1 for r in rows]
    return statistics.median(abs(v) for v in values), max(values, key=abs)


def published() -> dict[tuple[str, str], tuple[float, float]]:
    """docs/projection.md's error table: (direction, model) -> (median abs., worst), as fractions."""
    text = (ROOT / "docs" / "projection.md").read_text()
    found = re.findall(r"^\| (V100|A100) → (V100|A100)( at capture clocks)? \| (at roof|same efficiency) \| "
                       r"([\d.]+)% \| ([+\-\d.]+)% \|$", text, flags=re.M)
    return {(f"{a}→{b}{clocks}", m): (float(med) / 100, float(worst) / 100) for a, b, clocks, m, med, worst in found}


PAIRS = [("V100", "A100"), ("A100", "V100")]


@pytest.mark.parametrize("clocks", [False, True])
@pytest.mark.parametrize("source,target", PAIRS)
def test_the_published_error_is_what_the_two_files_give(source, target, clocks, samples):
    rows = expected(source, target, samples, at_capture_clocks=clocks)
    assert len(rows) == 4 and all(r["measured"] > 0 for r in rows)
    table = published()
    for key, model in (("at roof", "at_roof"), ("same efficiency", "same")):
        median, worst = errors(rows, model)
        doc_median, doc_worst = table[(f"{source}→{target}{' at capture clocks' if clocks else ''}", key)]
        assert round(median, 3) == pytest.approx(doc_median, abs=1e-9), (source, target, key)
        assert round(worst, 3) == pytest.approx(doc_worst, abs=1e-9), (source, target, key)


@pytest.mark.parametrize("source,target", PAIRS)
def test_the_tool_projects_what_the_arithmetic_gives(source, target, samples):
    rows = {r["ids"]: r for r in expected(source, target, samples)}
    result = analyze(samples / "cuda-roofline" / f"output_{source}.csv", gpu=GPUS[source])
    projected = result.project([GPUS[target]]).kernels
    launches = result.launches
    for row in projected.itertuples(index=False):
        ids = tuple(sorted(launches.loc[launches["kernel_name"] == row.kernel_name, "launch_id"]))
        want = rows[ids]
        assert row.time_at_roof_s == pytest.approx(want["at_roof"], rel=1e-9)
        assert row.time_same_efficiency_s == pytest.approx(want["same"], rel=1e-9)
        # the lower bound holds on the pair: no kernel ran faster on the target than at its roof
        assert row.time_at_roof_s < want["measured"]
    if source == "A100":  # no FLOP counters in the A100 capture: said, and the bound unproven
        assert projected["terms_lacking"].notna().all() and not projected["sol_complete_target"].any()

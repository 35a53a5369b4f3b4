"""Write a real `.ncu-rep`'s metrics as the raw-page CSV `ncu --csv --page raw` prints (header row, units row, one
row per launch), every numeric metric of every launch: the bundled example that the README's first command runs
is then a real capture with the limiter's counters, not a made-up one.

    python scripts/export_report_csv.py ../shared/ncu-samples/NCAR-GPU_workshop/MW_Baseline.ncu-rep \\
        fixtures/example_v100_miniweather_raw.csv

Values are written as NCU stores them, with the unit `IMetric.unit()` names (the readers convert units), so
the CSV reads back to the same numbers as the report (tests/test_limiter_example.py checks it); rates per cycle
get the `inst/cycle` style unit ncu's CSV prints, where the wheel names the counted thing only."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import ncu_report

DEVICE = "device__attribute_display_name"  # the one text metric kept: the GPU's name gives its roofs
IDENTITY = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
            "Grid Size", "Device", "CC"]


def _dims(action, kind: str) -> str:
    values = [action.metric_by_name(f"launch__{kind}_dim_{axis}") for axis in "xyz"]
    return "(" + ", ".join(str(int(v.as_uint64())) if v is not None else "1" for v in values) + ")"


def _value(metric) -> str:
    if metric.kind() == ncu_report.IMetric.ValueKind_STRING:
        return metric.as_string()
    try:
        if metric.kind() in (ncu_report.IMetric.ValueKind_UINT32, ncu_report.IMetric.ValueKind_UINT64):
            return str(metric.as_uint64())
        return repr(float(metric.as_double()))
    except Exception:  # noqa: BLE001  (a string or instanced metric without one value)
        return ""


def _unit(name: str, metric) -> str:
    """The unit the readers convert from; none for the metrics whose stored value is used as it is (the report
    reader's rule: derived__ and *.peak_sustained* metrics carry an empty or wrong unit)."""
    if name.startswith("derived__") or ".peak_sustained" in name:
        return ""
    unit = metric.unit() or ""
    if ".per_cycle_" in name and "/cycle" not in unit:  # the wheel names the counted thing only ('cycle', 'inst')
        return "inst/cycle" if "inst_executed" in name else f"{unit}/cycle"
    return unit


def export(report_path: Path, out: Path) -> int:
    report = ncu_report.load_report(str(report_path))
    actions = [report.range_by_idx(r).action_by_idx(a) for r in range(report.num_ranges())
               for a in range(report.range_by_idx(r).num_actions())]
    names = sorted({n for action in actions for n in action.metric_names()
                    if action.metric_by_name(n).kind() != ncu_report.IMetric.ValueKind_STRING or n == DEVICE})
    units: dict[str, str] = {}
    rows = []
    for i, action in enumerate(actions):
        device = action.metric_by_name("device__attribute_display_name")
        major = action.metric_by_name("device__attribute_compute_capability_major")
        minor = action.metric_by_name("device__attribute_compute_capability_minor")
        row = [str(i), "", "", "", action.name(ncu_report.IAction.NameBase_DEMANGLED) or action.name(), "", "",
               _dims(action, "block"), _dims(action, "grid"), device.as_string() if device is not None else "",
               f"{major.as_uint64()}.{minor.as_uint64()}" if major is not None and minor is not None else ""]
        for name in names:
            metric = action.metric_by_name(name)
            if metric is not None:
                units.setdefault(name, _unit(name, metric))
            row.append(_value(metric) if metric is not None else "")
        rows.append(row)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(IDENTITY + names)
        writer.writerow([""] * len(IDENTITY) + [units.get(n, "") for n in names])
        writer.writerows(rows)
    return len(rows)


if __name__ == "__main__":
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    print(f"wrote {export(source, target)} launches to {target}")

"""What a user reads about the limiter: `show RANK` gives NCU's findings in NCU's words ordered by its estimated
speedup, our limiter with its evidence, its gain in time and one next step; an `unknown` limiter gives the one ncu
command that collects exactly the missing counters (named only with --verbose); the terminal's `why` stays one
word with a short mark where NCU's own verdict differs, and a run note counts the agreements."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from ncu_roofline.cli import app
from ncu_roofline.pipeline.limiter import agrees_with_ncu, limiter_settings, ncu_mark
from ncu_roofline.pipeline.run_notes import ncu_agreement_note

runner = CliRunner()


def test_the_mark_and_the_note_follow_the_rule_tables_ncu_classes():
    # [rules.memory] ncu = ["High Memory Throughput"]; [rules.latency] ncu = ["Latency Issue"]
    assert agrees_with_ncu("memory", "High Memory Throughput") is True
    assert agrees_with_ncu("latency", "High Memory Throughput") is False
    assert agrees_with_ncu("latency", None) is None and agrees_with_ncu("unknown", "Latency Issue") is None
    assert ncu_mark("latency", "High Memory Throughput") == " ≠"
    assert ncu_mark("memory", "High Memory Throughput") == ""
    kernels = pd.DataFrame({"limiter": ["memory", "latency", "roof"],
                            "limiter_ncu": ["High Memory Throughput", "High Memory Throughput", None]})
    assert ncu_agreement_note(kernels) == [
        "the limiter agrees with Nsight Compute's own SpeedOfLight verdict on 1 of 2 kernel groups (the others "
        "marked ≠; `show RANK` gives NCU's findings)"]
    assert ncu_agreement_note(kernels.assign(limiter_ncu=None)) == []  # a CSV: NCU said nothing, no note


def test_show_gives_ncus_findings_our_gain_and_a_next_step(samples, tmp_path):
    pytest.importorskip("ncu_report")
    ncu_report = pytest.importorskip("ncu_report")
    path = samples / "CudaCode/dot_product.ncu-rep"
    out = tmp_path / "out"
    assert runner.invoke(app, ["analyze", str(path), "-o", str(out)]).exit_code == 0
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(out / "launches.parquet")  # one text per distinct sentence, not one per launch
    assert pa.types.is_dictionary(schema.field("limiter_evidence").type)
    result = runner.invoke(app, ["show", str(out), "dot_prod_naive"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = result.output
    assert "why: latency: issue slots 0.2% busy; " in text and "(drain)" in text
    assert "next step: " + limiter_settings().rules["latency"]["next_step"] in " ".join(text.split())
    # NCU's CPIStall estimate, 44.0 %, of the launch's 2.17 ms: 955 µs
    assert "gain if fixed: up to 955 µs of 2.17 ms" in text
    assert "NCU's SpeedOfLight verdict: Latency Issue (agrees)" in text
    # NCU's findings, as the report stores them, largest estimated speedup first
    action = ncu_report.load_report(str(path)).range_by_idx(0).action_by_idx(0)
    speedups = sorted((r["speedup_estimation"]["speedup"] for r in action.rule_results_as_dicts()
                       if "speedup_estimation" in r), reverse=True)
    shown = [line.split()[0] for line in text.splitlines() if line.startswith("  ") and "%" in line.split()[0]]
    assert shown == [f"{s:.1f}%" for s in speedups]
    assert "Drain Stalls: On average, each warp of this kernel spends 1624.7 cycles" in text
    assert "@section:" not in text  # NCU's link markup read as its label


def test_unknown_gives_one_ncu_command_and_the_counters_only_with_verbose(tmp_path):
    # a details CSV with time and DRAM bytes only: no limiter counter at all
    csv = tmp_path / "bare.csv"
    rows = [["ID", "Kernel Name", "Device", "CC", "Metric Name", "Metric Unit", "Metric Value"]]
    for metric, unit, value in (("gpu__time_duration.sum", "nsecond", "1000000"), ("dram__bytes.sum", "byte", "1e9"),
                                ("sm__cycles_elapsed.avg.per_second", "hertz", "1.4e9")):
        rows.append(["0", "k", "NVIDIA H100 PCIe", "9.0", metric, unit, value])
    csv.write_text("\n".join(",".join(f'"{c}"' for c in r) for r in rows) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    made = runner.invoke(app, ["analyze", str(csv), "--gpu", "NVIDIA H100 PCIe", "-o", str(out)])
    assert made.exit_code == 0, made.output
    kernels = pd.read_parquet(out / "kernels.parquet")
    assert kernels["limiter"].astype(str).tolist() == ["unknown"]
    needs = str(kernels["limiter_evidence"].iloc[0]).removeprefix("not collected: ").split(", ")
    plain = " ".join(runner.invoke(app, ["show", str(out), "1"], env={"COLUMNS": "400"}).output.split())
    assert "why: unknown (its counters were not collected)" in plain
    commands = [line for line in plain.split("next step: collect them: ")[1:]]
    assert len(commands) == 1 and commands[0].startswith("ncu --metrics " + ",".join(needs) + " --csv")
    assert "missing counters:" not in plain
    verbose = " ".join(runner.invoke(app, ["show", str(out), "1", "--verbose"],
                                     env={"COLUMNS": "400"}).output.split())
    assert "missing counters: " + ", ".join(needs) in verbose


def test_the_launch_json_is_valid_where_there_are_findings(samples):
    pytest.importorskip("ncu_report")
    from ncu_roofline import analyze

    launches = analyze(samples / "NCAR-GPU_workshop/MW_Baseline.ncu-rep").launches
    for text in launches["ncu_rules"]:
        found = json.loads(text)
        assert found and all({"rule", "section", "title", "message", "speedup_pct"} <= set(f) for f in found)

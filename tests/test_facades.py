"""The façades the thin commands call (modeling, analysis.collection, trends.sql) and the facts kept once (the
plain-value cleaner, the gate evaluation, the registry's listing of -o): checked against arithmetic written here and
against NCU-independent references (the GPU table's published figures as test_model.py quotes them)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ncu_roofline.core.values import plain_value
from ncu_roofline.pipeline.gates import parse_gate
from ncu_roofline.render.outputs import always_written, listed

H100_SXM = "H100 SXM"  # 989.4 TFLOP/s dense FP16 tensor, 66.9 TFLOP/s FP32, 3350 GB/s DRAM (metrics/gpus.toml)


def test_the_model_facade_places_a_gemm_by_its_own_arithmetic():
    from ncu_roofline.modeling import model, workload

    m, n, k = 4096, 2048, 1024
    result = model(workload("gemm", m, n, k, "fp32"), [H100_SXM])
    point = json.loads(result.json())["points"][0]
    flop, nbytes = 2.0 * m * n * k, (m * k + k * n + m * n) * 4.0
    assert point["flop"] == flop and point["bytes"] == nbytes
    assert point["ai"] == pytest.approx(flop / nbytes)
    # t_min = max(flop / P, bytes / B) on the FP32 roof
    assert point["t_min_s"] == pytest.approx(max(flop / 66.9e12, nbytes / 3350e9), rel=1e-3)
    assert set(result.bundle().files) == set(always_written("model").split(", "))


def test_the_gpus_facade_ridge_is_the_table_roofs_ratio():
    from ncu_roofline.modeling import compare_gpus

    gpus = json.loads(compare_gpus([H100_SXM]).json())["gpus"]
    ridges = gpus[0]["ridge_ai"]
    assert any(value == pytest.approx(989.4e12 / 3350e9, rel=1e-3) for value in ridges.values()), ridges


def test_the_collection_facade_lists_what_the_command_prints():
    from ncu_roofline.analysis import collection

    needed = collection(9.0)
    names = needed.metric_list()
    assert names and len(names) == len(set(names))
    assert needed.metrics_flag() == "--metrics " + ",".join(names)


def test_a_cell_is_a_plain_value_or_null():
    cells = [None, pd.NA, pd.NaT, float("nan"), np.float64("inf"), -math.inf, np.int64(7), np.float32(0.5), "k", 3]
    assert [plain_value(c) for c in cells] == [None, None, None, None, None, None, 7, 0.5, "k", 3]
    assert type(plain_value(np.int64(7))) is int


@pytest.mark.parametrize("text, change, pct, expected", [
    ("time_s>+5%", [0.0, 0.0, 0.0, 0.0, 0.0], [10.0, 5.0, 4.9, None, float("inf")], [1.0, 0.0, 0.0, None, None]),
    ("time_s>=+5%", [0.0, 0.0], [5.0, -1.0], [1.0, 0.0]),
    ("time_s>+50us", [51e-6, 50e-6, pd.NA], [0.0, 0.0, 0.0], [1.0, 0.0, None]),
    ("roofline_fraction<-0.05pt", [-0.06, -0.04, float("nan")], [0.0, 0.0, 0.0], [1.0, 0.0, None]),
])
def test_a_gate_is_evaluated_one_way_for_arrays_and_single_values(text, change, pct, expected):
    gate = parse_gate(text)
    verdicts = gate.verdicts(pd.Series(change, dtype=object), pd.Series(pct, dtype=object))
    assert [None if math.isnan(v) else v for v in verdicts] == expected
    singles = [gate.fails(c, p) for c, p in zip(change, pct)]
    assert singles == [None if e is None else e == 1.0 for e in expected]


def test_the_o_list_follows_the_registry_order(tmp_path):
    out = tmp_path / "out"
    committed = [out / "roofline.png", out / "roofline_fp32.html", tmp_path / "summary.md", out / "kernels.parquet",
                 out / "roofline.svg", out / "launches.parquet", out / "roofline.html"]
    assert [p.name for p in listed("analysis", out, committed)] == [
        "launches.parquet", "kernels.parquet", "roofline.html", "roofline.svg", "roofline.png", "roofline_fp32.html"]
    assert listed("analysis", None, committed) == []


def test_history_sql_through_the_facade_counts_the_run_appended(tmp_path):
    """trends.sql over a history of one appended run: its kernels view holds one row per kernel group of that
    analysis, and no run is left out (the notes are heard before the query runs)."""
    from ncu_roofline import analyze
    from ncu_roofline.trends import sql

    from conftest import FIXTURES

    analysis = analyze(FIXTURES / "example_h100_raw.csv")
    analysis.append_to_history(tmp_path / "h", run_id="r1", labels={}, replace=False)
    heard: list[list[str]] = []
    result = sql(tmp_path / "h", "SELECT count(*) AS n, count(DISTINCT run_id) AS runs FROM kernels", timeout_s=60,
                 memory_limit="512MB", on_notes=heard.append)
    assert heard == [[]]
    assert (int(result.frame["n"].iloc[0]), int(result.frame["runs"].iloc[0])) == (len(analysis.kernels), 1)
    assert json.loads(result.json())


def test_every_command_help_names_its_files_from_the_registry():
    from typer.testing import CliRunner

    from ncu_roofline.cli import app

    runner = CliRunner()
    for args, subject in ((["compare", "--help"], "compare"), (["history", "--help"], "history"),
                          (["model", "gemm", "--help"], "model"), (["project", "--help"], "projection")):
        shown = " ".join(runner.invoke(app, args, env={"COLUMNS": "300"}).output.split())
        assert always_written(subject).split(", ")[0] in shown, (args, shown[-400:])


def test_no_command_module_spells_an_output_file_name():
    import re

    from ncu_roofline.render.outputs import OUTPUTS

    cli = Path(__file__).resolve().parents[1] / "ncu_roofline" / "cli"
    for module in cli.glob("*.py"):
        text = module.read_text(encoding="utf-8")
        for output in OUTPUTS:  # a file name, not a module path (render.compare.json_summary)
            assert not re.search(rf"(?<![\w.]){re.escape(output.name)}(?![\w.])", text), (module.name, output.name)

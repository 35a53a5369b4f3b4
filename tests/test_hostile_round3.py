"""Hostile input, round 3 (issue 23): names safe in every command that prints them, size caps on compressed
reports, linear-time regexes, any finite float formatted, an unwritable stdout, the 100,040-column raw page, and
no Python warning on stderr. Each test builds its input and asserts the exit code and the one stderr line."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from ncu_roofline.cli import app

from test_hostile_values import CONTROL, HOSTILE_NAMES, _raw_page_with_names

runner = CliRunner()


def _no_control(text: str) -> bool:
    return not any(c in text for c in CONTROL if c != "\n")


# ----------------------------------------------------------------------------- item 4: every command's names


def test_show_history_compare_and_model_escape_control_sequences_in_names(tmp_path):
    source = tmp_path / "names.csv"
    _raw_page_with_names(source)
    out, history = tmp_path / "out", tmp_path / "history"
    result = runner.invoke(app, ["analyze", str(source), "-o", str(out), "--rows", "0", "--history", str(history),
                                 "--run-id", "r1"])
    assert result.exit_code == 0, result.output
    for rank in range(1, len(HOSTILE_NAMES) + 1):  # `show`: the C1 CSI of "bytes" reached the terminal raw
        shown = runner.invoke(app, ["show", str(out), str(rank)])
        assert shown.exit_code == 0, shown.output
        assert _no_control(shown.output), (rank, repr(shown.output))
    shown = runner.invoke(app, ["show", str(out), "d.e.f"])
    assert shown.exit_code == 0 and "a\\x00b\\x08c\\x0bd\\x0ce\\x7ff\\x9b" in shown.output, shown.output
    for args in (["history", str(history)], ["history", str(history), "--sql", "SELECT kernel_name FROM kernels"],
                 ["compare", str(source), str(source)]):
        printed = runner.invoke(app, args)
        assert printed.exit_code == 0, (args, printed.output)
        assert _no_control(printed.output), (args, repr(printed.output))
        assert "\\x1b[2J" in printed.output, args  # shown, escaped
    points = tmp_path / "points.csv"
    points.write_text('name,flop,bytes\n"p\x9b2J\x1b]0;t\x07",1e9,1e6\n', encoding="utf-8")
    placed = runner.invoke(app, ["model", "points", str(points), "--gpu", "H100 SXM"])
    assert placed.exit_code == 0, placed.output
    assert _no_control(placed.output) and "p\\x9b2J\\x1b]0;t\\x07" in placed.output.replace("\n", "")

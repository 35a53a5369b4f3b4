"""Markdown for a CI step summary (#35 item 6): no absolute path of the machine that ran the job in any output
(Markdown, JSON, notes), and without `--chart-url` the chart is a collapsible table of the top kernels rather
than a local link (a broken link in a GitHub step summary)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ncu_roofline.cli import app
from ncu_roofline.core.paths import shown_path, without_absolute_paths

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "fixtures" / "example_h100_raw.csv"
BASE, HEAD = ROOT / "fixtures" / "compare" / "base.csv", ROOT / "fixtures" / "compare" / "head.csv"
runner = CliRunner()
LINK = re.compile(r"\]\(([^)]*)\)")


def _no_absolute_path(text: str, where: str) -> None:
    # the checkout's own folder names the machine: it must not appear, wherever the job ran
    assert str(ROOT) not in text, f"{where} holds an absolute path: " + text[text.index(str(ROOT)) - 80:][:200]


def test_outputs_outside_the_working_folder_name_inputs_by_file_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the input is not under the working folder
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "-o", "out", "--summary-md", "s.md", "--json", "s.json"])
    assert result.exit_code == 0, result.output
    for name in ("s.md", "s.json", "out/roofline.html"):
        _no_absolute_path((tmp_path / name).read_text(), name)
    _no_absolute_path(result.output, "the terminal")
    summary = json.loads((tmp_path / "s.json").read_text())
    assert json.loads(summary["metadata"]["ncu_roofline.inputs"])[0]["path"] == "example_h100_raw.csv"
    # the example lacks the limiter's counters: its note names the file, by name
    assert any(note.startswith("example_h100_raw.csv: ") for note in summary["notes"]), summary["notes"]


def test_outputs_inside_the_working_folder_name_inputs_relative_to_it(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert json.loads(summary["metadata"]["ncu_roofline.inputs"])[0]["path"] == "fixtures/example_h100_raw.csv"
    assert any(note.startswith("fixtures/example_h100_raw.csv: ") for note in summary["notes"])


def test_compare_names_its_runs_without_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["compare", str(BASE), str(HEAD), "--summary-md", "c.md", "--json", "c.json"])
    assert result.exit_code == 0, result.output
    for name in ("c.md", "c.json"):
        _no_absolute_path((tmp_path / name).read_text(), name)
    assert "Base: `base.csv` → head: `head.csv`." in (tmp_path / "c.md").read_text()


def test_a_path_that_is_no_file_is_left_alone():
    assert without_absolute_paths("2.00 TB/s, 1/2 of the roof, /2 as written") == \
        "2.00 TB/s, 1/2 of the roof, /2 as written"
    assert without_absolute_paths(f"{EXAMPLE}: read.") == f"{shown_path(EXAMPLE)}: read."
    assert shown_path("runs/base.csv") == "runs/base.csv"


def test_without_chart_url_the_chart_is_a_collapsible_table_and_no_link_is_local(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "-o", "out", "--summary-md", "s.md"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "s.md").read_text()
    assert all(target.startswith("https://") for target in LINK.findall(text)), LINK.findall(text)
    block = text[text.index("<summary>Roofline chart as a table"):]
    block = block[:block.index("</details>")]
    rows = [line for line in block.splitlines() if re.match(r"\| \d+ \|", line)]
    assert [int(r.split("|")[1]) for r in rows] == [1, 2, 3, 4, 5]  # the example's five groups, in rank order
    # #1 stencil_fp64: 410 µs at 18.4 % of its L1 roof (the example's own numbers, as test_readable reads them)
    assert "`stencil_fp64(…)`" in rows[0] and "| l1 | 18.4% |" in rows[0]
    assert "`out/roofline.html`" in block  # named as text, for the artifact upload


def test_with_chart_url_the_image_replaces_the_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = "https://example.org/artifacts/roofline.png"
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "-o", "out", "--summary-md", "s.md", "--chart-url", url])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "s.md").read_text()
    assert f"![roofline]({url})" in text and "Roofline chart as a table" not in text


@pytest.mark.parametrize("chart_url", [None, "https://example.org/a/compare.png"])
def test_compare_summary_puts_the_gate_failures_first_in_its_chart_table(tmp_path, monkeypatch, chart_url):
    """fixtures/compare: gemm_tile [32×128] +20 % and tiny_kernel +100 % fail `time_s>+5%`; the others pass."""
    monkeypatch.chdir(tmp_path)
    args = ["compare", str(BASE), str(HEAD), "-o", "out", "--summary-md", "c.md", "--fail-on", "time_s>+5%"]
    result = runner.invoke(app, args + (["--chart-url", chart_url] if chart_url else []))
    assert result.exit_code == 1, result.output
    text = (tmp_path / "c.md").read_text()
    assert all(target.startswith("https://") for target in LINK.findall(text))
    if chart_url:
        assert f"![before → after roofline]({chart_url})" in text and "as a table" not in text
        return
    block = text[text.index("<summary>Roofline chart as a table"):]
    rows = [line for line in block[:block.index("</details>")].splitlines() if re.match(r"\| \d+ \|", line)]
    assert {rows[0].split("|")[2].strip(), rows[1].split("|")[2].strip()} == {"`gemm_tile(…) [32×128]`",
                                                                             "`tiny_kernel(…)`"}
    assert all("✗ gate" in r for r in rows[:2]) and not any("✗ gate" in r for r in rows[2:])

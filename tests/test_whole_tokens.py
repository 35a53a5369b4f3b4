"""Tables never break a value or a URL mid-token (#35 item 7): `show`'s launch table drops columns rather than
fold them, `ceilings show --sources` wraps between words and prints every URL whole on its own line."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from ncu_roofline.cli import app
from ncu_roofline.roofs.gpu_table import describe_gpu, match_gpu

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "fixtures" / "example_h100_raw.csv"
runner = CliRunner()
URL = re.compile(r"https?://[^\s)]+")


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("example")
    result = runner.invoke(app, ["analyze", str(EXAMPLE), "-o", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


def _launch_lines(output: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "launch rows" in line)
    return lines[start + 1:]


@pytest.mark.parametrize("columns", [60, 80])
def test_show_drops_launch_columns_rather_than_fold_a_value(out, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    result = runner.invoke(app, ["show", str(out), "3"])
    assert result.exit_code == 0, result.output
    lines = _launch_lines(result.output)
    header = lines[0].split()
    assert header[0] == "launch_id" and "time_s" in header and "bound" in header
    launches = pd.read_parquet(out / "launches.parquet")
    name = pd.read_parquet(out / "kernels.parquet").set_index("rank").at[3, "kernel_name"]
    ids = [str(i) for i in launches.loc[launches["kernel_name"] == name, "launch_id"]]
    rows = lines[1:1 + len(ids)]
    # one line per launch, its id first: nothing folded onto a second line
    assert [r.split()[0] for r in rows] == ids, result.output
    assert all(len(line) <= columns for line in lines if "status" not in line)
    if "source_file" not in header:
        assert f"not shown at {columns} columns: source_file" in " ".join(lines)
    else:  # the whole file name, as the launch table holds it
        assert all(EXAMPLE.name in r for r in rows)


def test_show_at_160_columns_keeps_every_column_whole(out, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    result = runner.invoke(app, ["show", str(out), "3"])
    lines = _launch_lines(result.output)
    assert lines[0].split()[:4] == ["launch_id", "source_file", "grid", "block"]
    assert EXAMPLE.name in lines[1] and "not shown" not in result.output


@pytest.mark.parametrize("columns", [80, 140])
def test_ceilings_sources_print_every_url_and_word_whole(monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    gpu = "Tesla V100-SXM2-16GB"
    result = runner.invoke(app, ["ceilings", "show", gpu, "--sources"])
    assert result.exit_code == 0, result.output
    described = describe_gpu(match_gpu(gpu))
    texts = [info.get("source") or "" for info in described["peaks"].values()]
    urls = {u.rstrip(".,;") for t in texts for u in URL.findall(t)}
    assert urls
    lines = result.output.splitlines()
    for url in urls:  # on one line, whole: it copies and clicks as one
        assert any(line.strip().endswith(url) for line in lines), url
    words = {w for t in texts for w in URL.sub(" ", t).split()}
    printed = {w for line in lines for w in re.split(r"[\s│┃]+", line)}
    assert words <= printed, words - printed  # no word of a source cut in two
    assert all(len(line) <= columns for line in lines if not URL.search(line))

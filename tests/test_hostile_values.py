"""Hostile input, round 2 (issue #14): impossible values, shared launch IDs, odd thousands separators, files that are
not files, files named twice, hostile --ceilings and --fail-on, corrupt reports. Each case is built here or read
from fixtures/bad/, and the test checks the reason given, not only that something was refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ncu_roofline import InputError, analyze
from ncu_roofline.cli import app
from ncu_roofline.roofs.user_file import load_user_ceilings

from conftest import FIXTURES, SAMPLES

BAD = FIXTURES / "bad"
GOOD = FIXTURES / "raw_base_units.csv"
SAXPY = "void saxpy<float>(int, float, const float *, float *)"


def quiet_analyze(*args, **kwargs):
    """analyze() with every warning an error: an impossible value must not reach numpy as a division by zero.
    The ok_ fixtures name no GPU, so they are analysed with every roof unknown (allow_empty)."""
    kwargs.setdefault("allow_empty", True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return analyze(*args, **kwargs)


def one_line_error(*args: str) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ncu-roofline: error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


# ------------------------------------------------------------------------------------- item 3: negative or zero


@pytest.mark.parametrize("block_cells", [None, 0])  # the metrics tested as one block, or column by column
def test_negative_and_zero_values_are_null_named_and_left_out_of_the_totals(block_cells, monkeypatch):
    # Four launches of one kernel (fixtures/bad/ok_negative_and_zero_values.csv): time -15 us, time 0, DRAM bytes
    # -12.58 MB, and one clean launch (15 us, 12.58 MB, 1,048,576 FFMA).
    if block_cells is not None:
        monkeypatch.setattr("ncu_roofline.pipeline.validity.BLOCK_CELLS", block_cells)
    result = quiet_analyze(BAD / "ok_negative_and_zero_values.csv")
    launches = result.launches.set_index("launch_id")
    status = launches["status"].astype(str)
    assert "invalid gpu__time_duration.sum = -1.5e-05 (not positive)" in status[0]
    assert "invalid gpu__time_duration.sum = 0 (not positive)" in status[1]
    assert "invalid dram__bytes.sum = -1.258e+07 (negative)" in status[2]
    assert "invalid" not in status[3]
    assert launches["time_s"].isna().tolist() == [True, True, False, False]
    assert launches["headroom_s"][[0, 1]].isna().all() and launches["roofline_fraction"][[0, 1]].isna().all()
    assert np.isnan(launches.loc[2, "bytes_dram"]) and launches.loc[2, "time_s"] == pytest.approx(15e-6)
    # the valid counters of an invalid launch stay at the launch level: 12.58 Mbyte
    assert launches.loc[0, "bytes_dram"] == pytest.approx(12.58e6)

    kernel = result.kernels.iloc[0]
    assert kernel["launches"] == 4
    assert "3 of 4 launches left out of the totals" in kernel["status"]
    # totals from launch 3 alone: 15 us and 12.58e6 bytes (not 4 x 12.58e6 - 2 x 12.58e6); nothing negative
    assert kernel["time_s"] == pytest.approx(15e-6)
    assert kernel["bytes_dram"] == pytest.approx(12.58e6)
    assert kernel["time_share"] == pytest.approx(1.0)
    numeric = result.kernels.select_dtypes("number")
    assert not (numeric < 0).any().any()


def test_impossible_launch_settings_are_null_and_named():
    result = quiet_analyze(BAD / "ok_impossible_launch_settings.csv")
    launches = result.launches.set_index("launch_id")
    status = launches["status"].astype(str)
    assert "PID -5 is not valid (negative)" in status[0] and launches["process_id"].isna()[0]
    assert "CC -7.0 is not a compute capability" in status[1] and launches["compute_capability"].isna()[1]
    assert "block '(-1, 1, 1)' is not a launch shape" in status[2] and launches["block"].isna()[2]
    assert launches.loc[3, "block"] == "(256, 1, 1)" and launches.loc[3, "process_id"] == 4242


# ------------------------------------------------------------------------------------- item 4: duplicates


def test_a_metric_on_two_rows_with_different_values_is_flagged_never_last_wins():
    # launch 0: time 15 us and 30 us -> neither; launch 1: 15 usecond and 15,000 nsecond are one value -> kept
    result = quiet_analyze(BAD / "ok_conflicting_metric_rows.csv")
    launches = result.launches.set_index("launch_id")
    assert np.isnan(launches.loc[0, "time_s"])
    assert "gpu__time_duration.sum is on 2 rows with different values (1.5e-05, 3e-05): neither is used" \
        in launches.loc[0, "status"]
    assert launches.loc[1, "time_s"] == pytest.approx(15e-6, rel=1e-12)
    assert "different values" not in launches.loc[1, "status"]


@pytest.mark.parametrize("spelling", ["1", "1.0", "+1", " 1", "01", "1e0"])
def test_every_spelling_of_an_id_is_the_same_id(tmp_path, spelling):
    rows = (BAD / "details_shared_id_separate_blocks.csv").read_text().splitlines()
    rows[7:] = [line.replace('"1",', f'"{spelling}",', 1) for line in rows[7:]]  # the second block of ID 1
    path = tmp_path / "ids.csv"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(InputError, match="launch ID 1 is used by two launches"):
        analyze(path)


# ------------------------------------------------------------------------------------- item 11: separators


def test_thousands_separators_only_in_groups_of_three():
    result = quiet_analyze(BAD / "ok_thousands_separators.csv")
    launches = result.launches.set_index("launch_id")
    assert "value of sm__sass_thread_inst_executed_op_ffma_pred_on.sum is not a number" in launches.loc[0, "status"]
    assert np.isnan(launches.loc[1, "bytes_dram"])  # "1.234,5" Mbyte is not 1.2345 MB
    assert "value of dram__bytes.sum is not a number" in launches.loc[1, "status"]
    assert "ffma_pred_on.sum is not a number" not in launches.loc[2, "status"]  # "1,048,576" is a number
    assert launches.loc[1, "time_s"] == pytest.approx(15e-6)


# ------------------------------------------------------------------------------------- items 5, 7, 8, 11: paths


def test_the_same_file_twice_is_read_once_and_said(tmp_path, monkeypatch):
    shutil.copyfile(GOOD, tmp_path / "run.csv")
    (tmp_path / "link.csv").symlink_to(tmp_path / "run.csv")
    monkeypatch.chdir(tmp_path)
    once = quiet_analyze("run.csv")
    result = quiet_analyze(["run.csv", tmp_path / "run.csv", "link.csv", "./run.csv"])
    assert len(result.launches) == len(once.launches) == 2
    assert result.kernels["launches"].sum() == 2
    # the absolute spelling is shown relative to the working folder (core/paths.py): no absolute path in notes
    assert result.notes[:3] == ["run.csv is the same file as run.csv: read once",
                                "link.csv is the same file as run.csv: read once",
                                "run.csv was given twice: read once"]
    cli = CliRunner().invoke(app, ["analyze", "run.csv", str(tmp_path / "run.csv")])
    assert cli.exit_code == 0
    assert "note: run.csv is the same file as run.csv: read once" in cli.output


def test_an_empty_path_is_refused_not_the_current_folder(tmp_path, monkeypatch, capsys):
    """Refused while the command line is parsed (cli/common.PATH), so through the console entry's parser edge
    (`run_command_line`, what `ncu-roofline` runs): one line, exit 2, nothing analysed."""
    from ncu_roofline.cli import run_command_line

    monkeypatch.chdir(tmp_path)
    shutil.copyfile(GOOD, tmp_path / "run.csv")  # what '' would have analysed
    assert run_command_line(["analyze", "", "-o", "out"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == ["ncu-roofline: error: the inputs argument was given an empty path ('')"]
    assert captured.out == "" and not (tmp_path / "out").exists()


def test_a_fifo_is_refused_at_once_without_opening_it(tmp_path):
    fifo = tmp_path / "run.csv"
    os.mkfifo(fifo)
    # Nobody writes to the FIFO: opening it would block forever, so a refusal proves it was never opened.
    line = one_line_error("analyze", fifo)
    assert line == f"ncu-roofline: error: {fifo}: is a pipe (FIFO), not a regular file: save the output to a file " \
                   "and name that file"
    assert "is a pipe (FIFO)" in one_line_error("analyze", GOOD, "--ceilings", fifo)


def test_dev_stdin_from_a_pipe_is_refused():
    proc = subprocess.run([sys.executable, "-m", "ncu_roofline.cli", "analyze", "/dev/stdin"],
                          input=GOOD.read_text(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["ncu-roofline: error: /dev/stdin: is a pipe (FIFO), not a regular file: "
                                        "save the output to a file and name that file"]


def test_unreadable_inputs_are_one_line(tmp_path, monkeypatch):
    """Tests run as root, which reads a chmod-000 file anyway: `os.access` is made to say no, which proves the tool
    asks before reading and words the answer; test_unreadable_inputs_as_another_user checks the real thing."""
    from ncu_roofline.readers import input_files
    locked = tmp_path / "locked.csv"
    shutil.copyfile(GOOD, locked)
    folder = tmp_path / "locked_folder"
    folder.mkdir()
    shutil.copyfile(GOOD, folder / "run.csv")
    ceilings = tmp_path / "c.toml"
    ceilings.write_text("[peaks]\ndram_gbps = 900\n")
    real = os.access
    monkeypatch.setattr(input_files.os, "access",
                        lambda p, mode: False if Path(p) in {locked, folder, ceilings} else real(p, mode))
    assert one_line_error("analyze", locked).endswith(f"{locked}: cannot be read: permission denied")
    assert one_line_error("analyze", folder).endswith(f"{folder}: cannot be read: permission denied")
    assert one_line_error("analyze", GOOD, "--ceilings", ceilings).endswith(
        f"{ceilings}: cannot be read: permission denied")


def _unprivileged() -> list[str] | None:
    """A command prefix that runs this package's Python as user `nobody`, or None where that cannot be done."""
    runuser = shutil.which("runuser")
    if os.geteuid() != 0 or runuser is None:
        return None
    # The test's own interpreter may live where nobody cannot go (/root/.pyenv); the system one of the same version
    # can import the package and its dependencies from the source tree and this environment's site-packages.
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for python in (os.path.realpath(sys.executable), f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        probe = subprocess.run([runuser, "-u", "nobody", "--", python, "-c", "import sys"], capture_output=True)
        if probe.returncode == 0:
            return [runuser, "-u", "nobody", "--", python]
    return None


@pytest.mark.slow
@pytest.mark.skipif(_unprivileged() is None, reason="needs root, runuser and a Python that user nobody can run")
def test_unreadable_inputs_as_another_user(tmp_path):
    """The real case: `nobody` cannot read a chmod-000 file, folder or ceilings file."""
    import site

    tmp_path.chmod(0o755)
    for parent in tmp_path.parents:  # pytest's base folder is 0700
        if str(parent).startswith("/tmp/") and parent.stat().st_uid == 0:
            parent.chmod(parent.stat().st_mode | 0o055)
    locked = tmp_path / "locked.csv"
    shutil.copyfile(GOOD, locked)
    readable = tmp_path / "run.csv"
    shutil.copyfile(GOOD, readable)
    readable.chmod(0o644)
    folder = tmp_path / "folder"
    folder.mkdir()
    shutil.copyfile(GOOD, folder / "run.csv")
    ceilings = tmp_path / "c.toml"
    ceilings.write_text("[peaks]\ndram_gbps = 900\n")
    for path in (locked, folder, ceilings):
        path.chmod(0o000)
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), *site.getsitepackages()]), "HOME": str(tmp_path)}
    for args, target in (([locked], locked), ([folder], folder), ([readable, "--ceilings", ceilings], ceilings)):
        proc = subprocess.run([*_unprivileged(), "-m", "ncu_roofline.cli", "analyze", *map(str, args), "--rows", "0"],
                              capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.splitlines() == [f"ncu-roofline: error: {target}: cannot be read: permission denied"]


# ------------------------------------------------------------------------------------- item 6: --ceilings


@pytest.mark.parametrize("body,reason", [
    ("[peaks]\ndram_gbps = " + "9" * 400 + "\n", "must be a positive finite number, got 99999999999999999999..."),
    ("[peaks]\npeak_bytes_per_s_dram = 5e-324\n", "is 4.94e-324 bytes/s, outside the range a GPU roof can have"),
    ("[peaks]\npeak_bytes_per_s_dram = 9e5\n", "is 9e+05 bytes/s, outside the range a GPU roof can have (1e+06 to"),
    ("[peaks]\nfp32_tflops = 2e6\n", "is 2e+18 FLOP/s, outside the range a GPU roof can have"),
    ("[peaks]\ndram_gbps = 0.0001\n", "is 1e+05 bytes/s, outside the range"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "arrays or tables nested too deep"),
    ("x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n", "arrays or tables nested too deep"),
])
def test_hostile_ceilings_files_are_one_line(tmp_path, body, reason):
    path = tmp_path / "c.toml"
    path.write_text(body)
    with pytest.raises(InputError) as caught:
        load_user_ceilings(path)
    assert reason in caught.value.message and "\n" not in str(caught.value)
    line = one_line_error("analyze", GOOD, "--ceilings", path)
    assert str(path) in line and reason in line


def test_a_roof_at_the_edges_of_the_range_is_taken(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[peaks]\npeak_bytes_per_s_dram = 1e6\npeak_flop_per_s_tensor = 1e18\n")
    assert load_user_ceilings(path).peaks == {"peak_flop_per_s_tensor": 1e18, "peak_bytes_per_s_dram": 1e6}


# ------------------------------------------------------------------------------------- items 2, 11: gates


def test_an_infinite_gate_threshold_is_refused_like_inf():
    line = one_line_error("compare", GOOD, GOOD, "--fail-on", "time_s>1e999%")
    assert "the threshold 1e999 is beyond any finite number" in line


def test_a_gate_that_judges_no_kernel_is_exit_2_never_pass(tmp_path):
    # Base and head share no kernel: the gate has nothing to judge.
    other = tmp_path / "other.csv"
    other.write_text(GOOD.read_text().replace("saxpy", "saxpz").replace("dgemm_naive", "dgemm_other"))
    result = CliRunner().invoke(app, ["compare", str(GOOD), str(other), "--fail-on", "time_s>+5%"])
    assert result.exit_code == 2, result.output
    assert "PASS" not in result.output and "all gates passed" not in result.output
    assert "ncu-roofline: error: --fail-on 'time_s>+5%' could not judge any kernel" in result.output


def _corrupt_vec_add(tmp_path: Path) -> Path:
    source = SAMPLES / "CudaCode" / "vec_add.ncu-rep"
    if not source.is_file():
        pytest.skip("../shared/ncu-samples is not present")
    pytest.importorskip("ncu_report")
    data = bytearray(source.read_bytes())
    assert data[114330] == 0x09
    data[114330] = 0x89  # the flip of issue #14: the wheel loads one launch with no name and no metric
    path = tmp_path / "corrupt.ncu-rep"
    path.write_bytes(bytes(data))
    return path


def test_a_report_with_a_nameless_empty_launch_is_refused(tmp_path):
    corrupt = _corrupt_vec_add(tmp_path)
    line = one_line_error("analyze", corrupt)
    assert line == (f"ncu-roofline: error: {corrupt}: corrupt Nsight Compute report: launch 0 has no kernel name "
                    "and no metric value; the file is damaged, copy or export it again")
    base = SAMPLES / "CudaCode" / "vec_add.ncu-rep"
    line = one_line_error("compare", base, corrupt, "--fail-on", "time_s>+5%")
    assert "corrupt Nsight Compute report" in line


# ------------------------------------------------------------------------------------- items 1, 10: names as text

HOSTILE_NAMES = {
    "clear": "k\x1b[2J\x1b]0;title\x07",  # clears the screen, sets the window title
    "ticks": "k`**BOLD**`k",  # ends a one-backtick code span
    "bytes": "a\x00b\x08c\x0bd\x0ce\x7ff\x9b",  # NUL, BS, VT, FF, DEL, C1 CSI
    "nonchar": "x\ufffey\uffff",
    "markup": "[bold red]loud[/] [/]",  # rich markup: styles, or a MarkupError
    "pipes": "a|b|c\nnext line",
}
CONTROL = [chr(c) for c in [*range(0x20), *range(0x7f, 0xa0)]]


def _raw_page_with_names(path: Path) -> None:
    lines = GOOD.read_text().splitlines()
    rows = [lines[2].replace('"1",', f'"{i}",', 1).replace("dgemm_naive", name.replace('"', '""'), 1)
            for i, name in enumerate(HOSTILE_NAMES.values())]
    path.write_text("\n".join([lines[0], *rows]) + "\n", encoding="utf-8", errors="surrogatepass")


def _markdown_code_and_strong(text: str) -> tuple[list[str], int]:
    """The code spans of a Markdown text, and how many times "BOLD" was parsed as anything but code."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    inline = [child for token in tokens if token.children for child in token.children]
    return [t.content for t in inline if t.type == "code_inline"], \
        sum("BOLD" in t.content for t in inline if t.type != "code_inline")


def test_hostile_kernel_names_are_exact_in_data_and_safe_on_screen_in_markdown_and_charts(tmp_path):
    pytest.importorskip("vl_convert")
    source = tmp_path / "names.csv"
    _raw_page_with_names(source)
    out, md, js = tmp_path / "out", tmp_path / "summary.md", tmp_path / "summary.json"
    result = CliRunner().invoke(app, ["analyze", str(source), "-o", str(out), "--format", "svg,png",
                                      "--summary-md", str(md), "--json", str(js), "--rows", "10"])
    assert result.exit_code == 0, result.output
    assert not any(c in result.output for c in CONTROL if c != "\n"), repr(result.output)
    assert "\\x1b[2J" in result.output and "[/](…)" in result.output  # shown, escaped, not acted on

    import pandas as pd
    names = set(pd.read_parquet(out / "launches.parquet")["kernel_name"])
    assert {n.replace("dgemm_naive", "") for n in HOSTILE_NAMES.values()} <= {n.split("(")[0] for n in names}
    import json
    assert {k["kernel_name"].split("(")[0] for k in json.loads(js.read_text())["kernels"]} >= {
        HOSTILE_NAMES["clear"], HOSTILE_NAMES["ticks"]}

    text = md.read_text(encoding="utf-8")
    assert not any(c in text for c in CONTROL if c != "\n")
    codes, strong = _markdown_code_and_strong(text)
    assert strong == 0  # **BOLD** stayed inside its code span
    assert any("k`**BOLD**`k" in code for code in codes)
    header = None
    for table_line in (line for line in text.splitlines() if line.startswith("| ")):
        # every row has its own table's column count (the compact table, then every column in <details>)
        header = table_line if table_line.startswith("| #") else header
        assert table_line.count(" | ") + 2 == header.count("|")

    assert (out / "roofline.svg").stat().st_size > 0 and (out / "roofline.png").read_bytes()[:4] == b"\x89PNG"
    svg = (out / "roofline.svg").read_text(encoding="utf-8")
    assert not any(c in svg for c in CONTROL if c not in "\n\t\r")


def test_hostile_kernel_names_in_compare_outputs(tmp_path):
    base, head = tmp_path / "base.csv", tmp_path / "head.csv"
    _raw_page_with_names(base)
    head.write_text(base.read_text(encoding="utf-8", errors="surrogatepass").replace('"4000000"', '"8000000"'),
                    encoding="utf-8", errors="surrogatepass")
    md = tmp_path / "compare.md"
    result = CliRunner().invoke(app, ["compare", str(base), str(head), "--summary-md", str(md),
                                      "--fail-on", "time_s>+5%", "--rows", "10"])
    assert result.exit_code == 1, result.output  # 4 ms -> 8 ms is +100 %
    assert not any(c in result.output for c in CONTROL if c != "\n"), repr(result.output)
    text = md.read_text(encoding="utf-8")
    assert not any(c in text for c in CONTROL if c != "\n")
    codes, strong = _markdown_code_and_strong(text)
    assert strong == 0 and any("k`**BOLD**`k" in code for code in codes)


def test_a_summary_row_with_an_impossible_invocation_count_has_no_totals():
    # kernel_A says Invocations "-3": Average x Invocations cannot be formed, so its totals are unknown (not -3 x
    # the average, not 1 x the average); kernel_B keeps 10 x 50 us = 0.5 ms.
    result = quiet_analyze(BAD / "ok_summary_negative_invocations.csv")
    rows = result.launches.set_index("kernel_name")
    assert np.isnan(rows.loc["kernel_A", "time_s"])
    assert rows.loc["kernel_A", "status"].startswith("Invocations '-3' is not a launch count: totals unknown")
    assert rows.loc["kernel_B", "time_s"] == pytest.approx(10 * 50e-6)


def test_the_run_says_that_launches_were_left_out():
    result = CliRunner().invoke(app, ["analyze", str(BAD / "ok_negative_and_zero_values.csv"), "--allow-empty"])
    assert result.exit_code == 0
    assert "note: 3 launch(es) hold impossible values" in result.output

"""Hostile input, round 3 (issue 23): names safe in every command that prints them, size caps on compressed
reports, linear-time regexes, any finite float formatted, an unwritable stdout, the 100,040-column raw page, and
no Python warning on stderr. Each test builds its input and asserts the exit code and the one stderr line."""

from __future__ import annotations

import re
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


# ------------------------------------------------------------------------------ item 5: budgets on input


def _bomb(path, declared: bool = True) -> None:
    """A zstd frame of 8192 RLE blocks of 128 KiB each: 32,781 bytes that inflate to 1 GiB (8192 × 131072 =
    1,073,741,824 bytes of "N"), its size declared in the frame header (single segment, 8-byte content size)."""
    block, count = 128 << 10, 8192
    frame = bytearray(b"\x28\xb5\x2f\xfd" + bytes([0xE0]) + (block * count).to_bytes(8, "little"))
    for i in range(count):
        frame += ((1 if i == count - 1 else 0) | 1 << 1 | block << 3).to_bytes(3, "little") + b"N"
    path.write_bytes(bytes(frame))


def _one_line(*args: str, env: dict | None = None, timeout: float = 120) -> tuple[int, str, str]:
    import os

    proc = subprocess.run([sys.executable, "-m", "ncu_roofline.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout, proc.stderr


def test_a_small_ncu_repz_that_inflates_to_a_gibibyte_is_refused_before_decoding(tmp_path):
    bomb = tmp_path / "bomb.ncu-repz"
    _bomb(bomb)
    assert bomb.stat().st_size == 4 + 1 + 8 + 8192 * 4 == 32_781
    code, _, err = _one_line("analyze", str(bomb))
    assert code == 2
    # limit: max(256 MiB, 1000 × 32,781 B) = 268,435,456 B < 1,073,741,824 B declared
    assert err.splitlines() == [
        f"ncu-roofline: error: {bomb}: refusing a .ncu-repz that declares 1,073,741,824 bytes decompressed (the "
        "limit is 268,435,456 bytes: 1000 times its 32,781 bytes, at least 256 MiB; set "
        "NCU_ROOFLINE_MAX_REPORT_BYTES to allow more)"]


def test_a_stream_without_declared_size_is_counted_against_the_limit(tmp_path):
    import shutil

    from conftest import SAMPLES, cli_in_process

    report = SAMPLES / "CudaCode" / "vec_add.ncu-rep"
    if not report.exists() or shutil.which("zstd") is None:
        pytest.skip("needs the shared samples and the zstd tool")
    packed = tmp_path / "vec_add.ncu-repz"
    packed.write_bytes(subprocess.run(["zstd", "-q", "--no-content-size", "-c", str(report)], check=True,
                                      capture_output=True).stdout)
    # in process (a 188,678 B report: nothing to bound by a process of its own), the variable set for each run
    run = cli_in_process("analyze", packed, env={"NCU_ROOFLINE_MAX_REPORT_BYTES": "1000"})
    assert run.returncode == 2 and run.stderr.splitlines() == [
        f"ncu-roofline: error: {packed}: refusing a .ncu-repz that decompresses to more than 1,000 bytes (the "
        "limit is 1,000 bytes; set NCU_ROOFLINE_MAX_REPORT_BYTES to allow more)"]
    run = cli_in_process("analyze", packed, "--rows", "0", env={"NCU_ROOFLINE_MAX_REPORT_BYTES": "abc"})
    assert run.returncode == 2 and run.stderr.splitlines() == [
        "ncu-roofline: error: NCU_ROOFLINE_MAX_REPORT_BYTES='abc': expected a whole number of bytes, at least 1"]
    run = cli_in_process("analyze", packed, "--rows", "0")  # 188,678 B: under 256 MiB
    assert run.returncode == 0, run.stderr


def _named_example(tmp_path, name: str):
    from conftest import FIXTURES

    text = (FIXTURES / "example_h100_raw.csv").read_text()
    assert text.count("stencil_fp64") == 1
    path = tmp_path / "named.csv"
    path.write_text(text.replace("stencil_fp64", name))
    return path


def test_a_catastrophic_regex_runs_in_linear_time_and_unsupported_syntax_is_one_line(tmp_path):
    source = _named_example(tmp_path, "a" * 36 + "!")  # 37 characters: Python's re backtracks 2^36 times
    code, _, err = _one_line("analyze", str(source), "--rows", "0", "--kernel", "(a+)+$", timeout=60)
    assert code == 2 and err.splitlines() == [
        "ncu-roofline: error: no kernel group left after --kernel '(a+)+$' (of 5 groups)"]
    result = runner.invoke(app, ["analyze", str(source), "--rows", "0", "--exclude", "(a+)+$"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["analyze", str(source), "--rows", "0", "--kernel", r"(a)\1"])
    assert result.exit_code == 2 and result.stderr.splitlines() == [
        r"ncu-roofline: error: --kernel '(a)\\1' is not a regular expression (invalid escape sequence: \1; RE2 "
        "syntax; backreferences and lookaround are not supported)"]
    points = tmp_path / "points.csv"
    points.write_text('name,flop,bytes,kernel\nslow,1e9,1e6,"(a+)+$"\nlook,1e9,1e6,"(?=a)"\n')
    result = runner.invoke(app, ["analyze", str(source), "--rows", "0", "--points", str(points)])
    assert result.exit_code == 2 and result.stderr.splitlines() == [
        f"ncu-roofline: error: {points}: line 3: kernel '(?=a)' is not a regular expression (invalid perl "
        "operator: (?=; RE2 syntax; backreferences and lookaround are not supported)"]


def test_a_points_regex_with_groups_warns_nothing(tmp_path):
    from conftest import FIXTURES

    points = tmp_path / "points.csv"
    points.write_text('name,flop,bytes,kernel\nstencil,1e9,1e6,"(stencil)_(fp64)"\n')
    code, out, err = _one_line("analyze", str(FIXTURES / "example_h100_raw.csv"), "--points", str(points),
                               "--rows", "3")
    assert code == 0 and err == "", err  # pandas' "This pattern is interpreted as a regular expression, and has
    assert "stencil" in out              # match groups" UserWarning, with a source path, used to land here


def test_any_finite_float_is_formatted():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ncu_roofline.render.text.numbers import format_number, format_si

    assert format_si(2e-310, "s") == "2.00e-310 s"  # a denormal: below every SI prefix
    assert format_si(sys.float_info.max, "FLOP/s") == "1.80e+308 FLOP/s"
    assert format_si(-sys.float_info.max, "B") == "-1.80e+308 B"
    assert format_si(5e-324, "s") == "4.94e-324 s"
    assert format_si(1.56e12, "B/s") == "1.56 TB/s" and format_si(1e-13, "s") == "0.100 ps"  # unchanged

    @settings(derandomize=True, max_examples=500, deadline=None)
    @given(st.floats(allow_nan=False, allow_infinity=False))
    def check(value: float) -> None:
        text = format_si(value, "s")
        assert re.fullmatch(r"-?\d+(\.\d+)?(e[+-]\d+)? [pnµmkMGTPE]?s", text), (value, text)
        assert re.fullmatch(r"-?\d+(\.\d+)?(e[+-]\d+)?", format_number(value)), value

    check()


def test_a_percentage_is_written_one_way_and_unknown_or_infinite_is_a_dash():
    """numbers.pct / signed_pct: every table, tooltip, memory panel and chart text ('72.0%', not also '72.0 %')."""
    from ncu_roofline.render.text.numbers import pct, signed_pct

    assert (pct(0.123), pct(1.0), pct(0.0)) == ("12.3%", "100.0%", "0.0%")  # 0.123 x 100 = 12.3
    assert (signed_pct(20.0), signed_pct(-6.25), signed_pct(0.0)) == ("+20.0%", "-6.2%", "+0.0%")  # .1f rounds half even
    for unknown in (None, float("nan"), float("inf"), -float("inf")):
        assert pct(unknown) == "—" and signed_pct(unknown) == "—"


def test_a_denormal_duration_is_analysed(tmp_path):
    from conftest import FIXTURES

    text = (FIXTURES / "example_h100_raw.csv").read_text()
    assert text.count('"850.5"') == 1
    source = tmp_path / "denormal.csv"
    source.write_text(text.replace('"850.5"', '"2e-310"'))  # usecond: 2e-316 s
    result = runner.invoke(app, ["analyze", str(source), "--rows", "10", "--summary-md", str(tmp_path / "s.md")])
    assert result.exit_code == 0, result.output


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--json", "-"], ["--rows", "5"]])
def test_an_unwritable_stdout_is_exit_2_in_one_line(args):
    from conftest import FIXTURES

    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "ncu_roofline.cli", "analyze",
                               str(FIXTURES / "example_h100_raw.csv"), *args], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["ncu-roofline: error: cannot write to standard output: No space left on "
                                        "device"]


def test_a_raw_page_of_100040_columns_is_read(tmp_path):
    import csv

    from conftest import FIXTURES

    import ncu_roofline

    lines = (FIXTURES / "example_h100_raw.csv").read_text().splitlines()[3:]  # past the ==PROF== lines
    header, units, *rows = list(csv.reader(lines))
    extra = 100_040 - len(header)
    source = tmp_path / "wide.csv"
    with open(source, "w", newline="") as out:
        writer = csv.writer(out, quoting=csv.QUOTE_ALL)
        writer.writerow(header + [f"smsp__extra_counter_{i:06d}.sum" for i in range(extra)])
        writer.writerow(units + [""] * extra)
        writer.writerows(row + ["1"] * extra for row in rows)
    analysis = ncu_roofline.analyze(source)
    assert len(analysis.launches) == 6 and len(analysis.kernels) == 5
    # 850.5 + 120.25 + 119.75 + 410.0 + 45.5 + 80.0 = 1626 µs
    assert analysis.launches["time_s"].sum() == pytest.approx(1626e-6, rel=1e-12)


def test_a_reader_that_left_ends_the_run_quietly():
    import os

    from conftest import FIXTURES

    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read: the first write fails with EPIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "ncu_roofline.cli", "analyze",
                               str(FIXTURES / "example_h100_raw.csv"), "--json", "-"], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (141, "")  # 128 + SIGPIPE, as the shell reports `yes | head`

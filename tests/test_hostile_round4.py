"""Hostile input, round 4 (issue 37): only regular files read, with a size bound; no traceback at the edge
(closed stdout or stderr, a symbolic-link loop, csv's field limit, TOML nested thousands deep, float overflow);
outputs checked before the first write; edge inputs (a 10 MB kernel name, a roof in hex, broken reports in a
batch). Each test builds its own input and checks the exit code and the reason given, in a real process where
the edge (cli.main) is what is tested."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ncu_roofline import InputError
from ncu_roofline.model.points import read_points
from ncu_roofline.roofs.user_file import load_user_ceilings

from conftest import FIXTURES

EXAMPLE = FIXTURES / "example_h100_raw.csv"
POINTS = "name,flop,bytes\nadd,100,400\n"


def cli(*args: str, cwd: Path | None = None, shell_redirect: str = "", timeout: float = 120
        ) -> tuple[int, str, str]:
    """The real command in its own process (`shell_redirect`: e.g. '>&-' to run it with stdout closed)."""
    command = " ".join(["exec", _quote(sys.executable), "-m", "ncu_roofline.cli", *map(_quote, args), shell_redirect])
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=timeout, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


def _quote(text: str) -> str:
    return "'" + str(text).replace("'", "'\\''") + "'"


def one_error(code: int, out: str, err: str) -> str:
    """The one stderr line of a refused run (exit 2, no traceback, nothing on stdout)."""
    assert out == "", out
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (code, err)
    assert lines[0].startswith("ncu-roofline: error: ")
    return lines[0]


# ------------------------------------------------------------------- item 2: only regular files, bounded reads


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_as_points_file_is_refused_before_it_is_opened(tmp_path):
    fifo = tmp_path / "points.csv"
    os.mkfifo(fifo)  # nobody writes it: opening it for reading would block forever (the timeout would fire)
    line = one_error(*cli("model", "points", str(fifo), "--gpu", "H100", timeout=60))
    assert line == f"ncu-roofline: error: {fifo}: is a pipe (FIFO), not a regular file: save the output to a file " \
                   "and name that file"
    line = one_error(*cli("analyze", str(EXAMPLE), "--points", str(fifo), timeout=60))
    assert f"{fifo}: is a pipe (FIFO)" in line


def test_an_endless_device_as_points_file_is_refused_not_read(tmp_path):
    line = one_error(*cli("model", "points", "/dev/zero", "--gpu", "H100", timeout=60))
    assert line.startswith("ncu-roofline: error: /dev/zero: is a character device")


def test_a_points_file_over_its_size_bound_is_refused_naming_the_bound(tmp_path, monkeypatch):
    import ncu_roofline.model.points as points

    path = tmp_path / "p.csv"
    path.write_text(POINTS + "".join(f"p{i},1,1\n" for i in range(100)))
    monkeypatch.setattr(points, "MAX_POINTS_BYTES", 512)
    with pytest.raises(InputError) as error:
        read_points(path)
    assert error.value.message == f"is {path.stat().st_size:,} bytes; a points file is at most 512 bytes"


def test_a_long_points_file_is_read_whole_and_its_first_bad_row_named(tmp_path):
    n = 200_000
    path = tmp_path / "many.csv"
    path.write_text("name,flop,bytes,roof\n" + "".join(f"p{i},{2 * i},{i + 1},fp32\n" for i in range(n)))
    frame = read_points(path)
    assert len(frame) == n and frame["flop"].sum() == n * (n - 1)  # 2·Σi
    assert frame["bytes"].sum() == n * (n + 1) / 2 and set(frame["roof"]) == {"fp32"}
    lines = path.read_text().splitlines(keepends=True)
    lines[150_001] = "broken,12,0,fp32\n"  # line 150,002: zero bytes
    lines[180_001] = "p5,1,1,fp32\n"  # a later duplicate: the earlier problem is the one named
    path.write_text("".join(lines))
    with pytest.raises(InputError) as error:
        read_points(path)
    assert error.value.message == "line 150002: bytes must be a positive number, got '0' (point 'broken')"


# --------------------------------------------------------------------------------- item 4: no traceback


def test_a_closed_stdout_is_exit_2_in_one_line(tmp_path):
    points = tmp_path / "p.csv"
    points.write_text(POINTS)
    for extra in ([], ["--json", "-"]):
        line = one_error(*cli("model", "points", str(points), "--gpu", "H100", *extra, shell_redirect=">&-"))
        assert line == "ncu-roofline: error: cannot write to standard output: standard output is closed"


def test_a_closed_stderr_still_gives_exit_2_on_bad_input(tmp_path):
    code, out, _ = cli("model", "points", str(tmp_path / "missing.csv"), "--gpu", "H100", shell_redirect="2>&-")
    assert code == 2 and out == ""
    code, _, _ = cli("model", "points", str(tmp_path / "missing.csv"), "--gpu", "H100", shell_redirect=">&- 2>&-")
    assert code == 2


def test_an_output_path_through_a_symlink_loop_is_one_line(tmp_path):
    points = tmp_path / "p.csv"
    points.write_text(POINTS)
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    loop = tmp_path / "a"
    for args in (["-o", str(loop)], ["-o", str(loop / "x")], ["--json", str(loop / "p.json")]):
        line = one_error(*cli("model", "points", str(points), "--gpu", "H100", *args))
        assert "loop of symbolic links" in line, line


def test_a_points_field_over_the_csv_limit_and_toml_nested_deep_are_one_line(tmp_path):
    wide = tmp_path / "wide.csv"
    wide.write_text("name,flop,bytes\n" + "a,1," + "9" * 200_000 + "\n")
    line = one_error(*cli("model", "points", str(wide), "--gpu", "H100"))
    assert line.startswith(f"ncu-roofline: error: {wide}: line 2: not a CSV row a points file can hold (field larger")
    deep = tmp_path / "deep.toml"
    deep.write_text('[[point]]\nname = "a"\nflop = 1\nbytes = 2\nkernel = ' + "[" * 5000 + "]" * 5000 + "\n")
    line = one_error(*cli("model", "points", str(deep), "--gpu", "H100"))
    assert line == f"ncu-roofline: error: {deep}: not valid TOML for points: arrays or tables nested too deep"


def test_float_overflow_prints_no_warning(tmp_path):
    points = tmp_path / "p.csv"
    points.write_text("name,flop,bytes\nhuge,1e308,1e-300\n")  # 1e308 / 1e-300 overflows to inf
    code, out, err = cli("model", "points", str(points), "--gpu", "H100", "--json", "-")
    assert code == 0 and err == ""
    assert json.loads(out)["points"][0]["flop"] == 1e308


# ---------------------------------------------------------------------- item 6: outputs checked before writing


def test_an_output_under_proc_is_refused_even_when_it_leads_back_here(tmp_path):
    points = tmp_path / "p.csv"
    points.write_text(POINTS)
    line = one_error(*cli("model", "points", str(points), "--gpu", "H100", "-o", "/proc/self/cwd/out",
                          cwd=tmp_path))
    assert line == "ncu-roofline: error: /proc/self/cwd/out: is a device or system folder: choose another -o folder"
    line = one_error(*cli("model", "points", str(points), "--gpu", "H100", "--json", "/proc/self/cwd/p.json",
                          cwd=tmp_path))
    assert "/proc/self/cwd/p.json: is in a device or system folder" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.csv"]  # /proc/self/cwd is tmp_path: nothing there


def test_a_folder_named_like_an_output_file_refuses_the_run_before_anything_is_written(tmp_path):
    points = tmp_path / "p.csv"
    points.write_text(POINTS)
    out = tmp_path / "out"
    (out / "model.html").mkdir(parents=True)
    summary = tmp_path / "p.json"
    line = one_error(*cli("model", "points", str(points), "--gpu", "H100", "-o", str(out), "--json", str(summary)))
    assert line == f"ncu-roofline: error: {out / 'model.html'}: is a folder: an output file of this name cannot be " \
                   "written there; move the folder or choose another -o folder"
    assert [p.name for p in out.iterdir()] == ["model.html"] and not summary.exists()


# ---------------------------------------------------------------------------------- item 7: edge inputs


def test_a_kernel_name_of_10_mb_is_read_exactly(tmp_path):
    name = "k" * (10 << 20)  # longer than the parser's 8 MiB block
    text = EXAMPLE.read_text()
    assert text.count("stencil_fp64") == 1
    path = tmp_path / "long.csv"
    path.write_text(text.replace("stencil_fp64", name))
    out = tmp_path / "k.json"
    code, _, err = cli("analyze", str(path), "--json", str(out), "--rows", "1")
    assert code == 0 and err == "", err
    names = [k["kernel_name"] for k in json.loads(out.read_text())["kernels"]]
    assert f"{name}(double *, const double *, int)" in names  # the export's own argument list, after the name


def test_a_row_longer_than_the_largest_block_is_refused_naming_the_limit(tmp_path, monkeypatch):
    import ncu_roofline.readers.csv_blocks as csv_blocks
    import ncu_roofline.readers.raw_page as raw_page
    from ncu_roofline import analyze

    monkeypatch.setattr(raw_page, "BLOCK_SIZE", 1 << 16)
    monkeypatch.setattr(csv_blocks, "LARGEST_BLOCK", 1 << 17)
    path = tmp_path / "long.csv"
    path.write_text(EXAMPLE.read_text().replace("stencil_fp64", "s" * (1 << 18)))
    with pytest.raises(InputError) as error:
        analyze([path])
    assert error.value.message == "a row of the table is longer than 131,072 bytes (a kernel name that long?): rows " \
                                  "of up to that size are read"


@pytest.mark.parametrize("body, literal, line", [
    ("[peaks]\ndram_gbps = 0x400\n", "0x400", 2),
    ("[peaks]\nfp32_tflops = 19.5\ndram_gbps = 0o777\n", "0o777", 3),
    ("peaks = {dram_gbps = 0b1010}\n", "0b1010", 1),
])
def test_a_roof_in_hex_octal_or_binary_is_refused(tmp_path, body, literal, line):
    path = tmp_path / "c.toml"
    path.write_text(body)
    with pytest.raises(InputError) as error:
        load_user_ceilings(path)
    assert error.value.message == f"line {line}: {literal!r} is not a decimal number; write roofs in decimal " \
                                  "(e.g. dram_gbps = 3350)"


def test_hex_inside_strings_and_comments_and_decimal_underscores_are_fine(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('name = "0x10 = 0x20" # dram_gbps = 0x30\n[peaks]\ndram_gbps = 3_350\n')
    assert load_user_ceilings(path).peaks == {"peak_bytes_per_s_dram": 3350e9}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_batch_names_each_broken_report_and_appends_the_others(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i in range(3):
        (inputs / f"good{i}.csv").write_text(EXAMPLE.read_text())
    (inputs / "dup.csv").write_text((FIXTURES / "bad" / "raw_duplicate_id.csv").read_text())
    (inputs / "garbage.ncu-rep").write_bytes((FIXTURES / "bad" / "nvr_garbage.ncu-rep").read_bytes())
    os.mkfifo(inputs / "pipe.csv")  # named like a report: refused by name, never skipped or opened
    history = tmp_path / "h"
    code, out, err = cli("batch", str(inputs), "--history", str(history), "--jobs", "1", timeout=300)
    assert code == 1, err
    errors = sorted(err.strip().splitlines())
    assert [e.split(": ")[2] for e in errors] == [str(inputs / n) for n in ("dup.csv", "garbage.ncu-rep",
                                                                            "pipe.csv")]
    assert "launch ID 3 is on 2 rows" in errors[0] and "is a pipe (FIFO)" in errors[2]
    assert "3 of 6 reports appended" in out and "3 failed" in out
    from ncu_roofline.history.store import run_ids

    assert run_ids(history) == {"good0", "good1", "good2"}


# ------------------------------------------------------------------------------ item 5: ceilings template


def test_ceilings_template_keeps_a_hostile_gpu_name_inert_and_valid_toml():
    import re
    import tomllib

    name = 'GPU\x1b]0;title\x07\x1b[2J\n[peaks]\nfp32_tflops = 1 \u202e"\\ \x9b'
    code, out, err = cli("ceilings", "template", name)
    assert code == 0 and err == ""
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", out), repr(out)
    data = tomllib.loads(out)
    assert data["name"] == name and "fp32_tflops" not in data["peaks"]  # the name's fake table stayed in its string

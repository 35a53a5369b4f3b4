"""Start-up: the command imports what the subcommand needs and nothing else (issue #16). Checked in a fresh
interpreter, since this test process has long imported everything."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pandas", "pyarrow", "altair", "numpy", "vl_convert", "ncu_report", "jsonschema")

PROBE = """
import json, os, sys
def leave(code):  # main() ends with os._exit (no interpreter finalization); here it must return to report
    raise SystemExit(code)
os._exit = leave
from ncu_roofline.cli import main
sys.argv = ["ncu-roofline", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit as exit:
    code = exit.code
else:
    code = 0
sys.stderr.write(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def imported_by(*args: str) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(args))], capture_output=True, text=True,
                          timeout=120)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], {name.split(".")[0] for name in report["modules"]}


@pytest.mark.slow
@pytest.mark.parametrize("args", [("--help",), ("analyze", "--help"), ("ceilings",), ("ceilings", "--json")])
def test_start_up_does_not_import_the_data_stack(args):
    code, modules = imported_by(*args)
    assert code in (0, None)
    assert sorted(set(HEAVY) & modules) == []


@pytest.mark.slow
def test_the_probe_does_see_imports():
    """The check above can fail: the same probe sees pandas and pyarrow once a file is analysed."""
    from conftest import FIXTURES

    code, modules = imported_by("analyze", str(FIXTURES / "example_h100_raw.csv"), "--rows", "0")
    assert code in (0, None)
    assert {"pandas", "pyarrow", "numpy"} <= modules


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, b"# notes\nnothing to see\n"],
                         ids=["binary", "text without an ncu table"])
def test_a_file_that_is_no_ncu_table_is_refused_before_the_data_stack_is_imported(content, tmp_path):
    """Issue #28: the reader's own one-line refusal (exit 2), without importing pandas, pyarrow or numpy first."""
    path = tmp_path / "not_a_profile.bin"
    path.write_bytes(content)
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(["analyze", str(path), "-o", str(tmp_path / "o")])],
                          capture_output=True, text=True, timeout=120)
    *lines, report = done.stderr.strip().splitlines()
    result = json.loads(report)
    assert result["code"] == 2
    assert lines == [f"ncu-roofline: error: {path}: " + ("this is a binary file, not an ncu --csv export or .ncu-rep "
                                                         "report" if content.startswith(b"\x89") else
                                                         'no ncu table found (expected a header line starting with '
                                                         '"ID", from ncu --csv)')]
    assert sorted(set(HEAVY) & {name.split(".")[0] for name in result["modules"]}) == []
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_a_run_without_images_does_not_load_vl_convert(tmp_path):
    """Issue #28: the HTML page's bundle is found in the cache by vl-convert's version, read from its metadata
    (render/chart/vega_bundle.py), so `analyze -o` without `--format svg,png` never loads the 90 MB extension."""
    from conftest import FIXTURES

    imported_by("analyze", str(FIXTURES / "example_h100_raw.csv"), "-o", str(tmp_path / "first"))  # the bundle
    # is built (with vl-convert) where the cache has none yet, as on a new machine
    code, modules = imported_by("analyze", str(FIXTURES / "example_h100_raw.csv"), "-o", str(tmp_path / "out"))
    assert code in (0, None)
    assert (tmp_path / "out" / "roofline.html").is_file() and "pandas" in modules
    assert "vl_convert" not in modules

"""Capture settings (#35 item 9): clock control and cache control read from the `ncu` command line a `.ncu-rep`
records (ncu's defaults where a flag is absent), 'unknown' for CSV exports; compare warns when both runs record
different settings and refuses under --strict."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ncu_roofline import analyze
from ncu_roofline.comparison import compare
from ncu_roofline.core.errors import InputError
from ncu_roofline.readers.capture_settings import settings_from_command

ROOT = Path(__file__).resolve().parents[1]
BASE, HEAD = ROOT / "fixtures" / "compare" / "base.csv", ROOT / "fixtures" / "compare" / "head.csv"


def test_flags_are_read_in_both_spellings_and_the_application_s_own_arguments_are_not():
    command = "/opt/ncu -o r -f --set full --clock-control none --cache-control=none ./app --clock-control x"
    assert settings_from_command(command) == {"clock_control": "none", "cache_control": "none"}
    # absent flags: ncu's defaults (--clock-control base, --cache-control all)
    assert settings_from_command("ncu -o report -f --set full ./cuda_example") == \
        {"clock_control": "base", "cache_control": "all"}


def test_a_report_s_recorded_command_line_gives_its_settings(samples):
    pytest.importorskip("ncu_report")
    # cuda-mlp-inference/report.ncu-rep records `ncu -o report -f --set full ./cuda_example`: no control flags
    result = analyze(samples / "cuda-mlp-inference" / "report.ncu-rep")
    assert set(result.launches["clock_control"]) == {"base"} and set(result.launches["cache_control"]) == {"all"}


def test_a_csv_export_records_neither():
    launches = analyze(BASE).launches
    assert launches["clock_control"].isna().all() and launches["cache_control"].isna().all()


def _with(run, **settings):
    return replace(run, launches=run.launches.assign(**settings))


def test_compare_warns_when_both_runs_record_different_settings_and_strict_refuses():
    base, head = analyze(BASE), analyze(HEAD)
    base, head = _with(base, clock_control="base", cache_control="all"), _with(head, clock_control="none",
                                                                            cache_control="all")
    comparison = compare(base, head)
    assert "clock control differs: base 'base', head 'none'" in comparison.warnings
    assert not any("cache control" in w for w in comparison.warnings)
    assert comparison.info()["capture_settings"] == {"clock_control": {"base": "base", "head": "none"},
                                                     "cache_control": {"base": "all", "head": "all"}}
    with pytest.raises(InputError, match="clock control differs"):
        compare(base, head, strict=True)


def test_unrecorded_settings_are_unknown_not_a_difference():
    comparison = compare(analyze(BASE), _with(analyze(HEAD), clock_control="base", cache_control="all"))
    assert not any("control" in w for w in comparison.warnings)
    assert comparison.info()["capture_settings"]["clock_control"] == {"base": "unknown", "head": "base"}
    from ncu_roofline.render.compare.markdown import comparison_markdown

    text = comparison_markdown(comparison.kernels, comparison.totals, comparison.info())
    assert "Capture: clock control unknown → base, cache control unknown → all." in text

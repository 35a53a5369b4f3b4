"""The analysis as its steps (pipeline/steps.py): written once, in order; each step returns a new Run and leaves
the one it was given as it was; the options are checked before any input is read."""

from __future__ import annotations

import json

import pytest

from ncu_roofline import InputError, analyze
from ncu_roofline.pipeline import steps
from ncu_roofline.pipeline.catalogue import load_catalogue
from ncu_roofline.pipeline.steps import AnalysisOptions, Run

from conftest import FIXTURES

EXAMPLE = FIXTURES / "example_h100_raw.csv"


def test_the_steps_are_listed_once_in_the_order_the_docs_give():
    assert [step.__name__ for step in steps.default_steps()] == [
        "read", "keep_nvtx_range", "validate", "choose_roofs", "derive", "attach_launch_roofs", "speed_of_light",
        "group", "rank", "notes", "weigh_by_timeline", "select", "hand_over"]


def test_a_step_adds_its_part_to_a_new_run_and_leaves_the_old_one_alone():
    run = Run(options=AnalysisOptions(), catalogue=load_catalogue(), files=(EXAMPLE,))
    after_read = steps.read(run)
    assert run.read is None and after_read.read is not None and after_read is not run
    validated = steps.validate(after_read)
    assert after_read.raw is None and "_invalid" in validated.raw
    # the steps run by hand give what analyze() gives
    for step in steps.default_steps()[2:]:
        validated = step(validated)
    whole = analyze(EXAMPLE)
    assert validated.kernels["headroom_s"].tolist() == whole.kernels["headroom_s"].tolist()
    from ncu_roofline.core.paths import without_absolute_paths  # the façade shows paths relative (issue 35)

    assert [without_absolute_paths(n) for n in validated.notes] == whole.notes


@pytest.mark.parametrize("options,reason", [
    ({"group_by": "stream"}, "--group-by must be 'kernel', 'nvtx' or 'op', not 'stream'"),
    ({"clock": "boost"}, "--clock must be 'measured' or 'max', not 'boost'"),
])
def test_options_are_checked_before_any_input_is_read(tmp_path, options, reason):
    with pytest.raises(InputError, match=reason):
        analyze(tmp_path / "does-not-exist.csv", **options)


def test_the_options_are_recorded_with_the_keys_older_files_carry():
    """One Literal for --group-by; the metadata still says group_by_nvtx (and group_by_op only when set)."""
    meta = json.loads(analyze(EXAMPLE).metadata()["ncu_roofline.options"])  # no NVTX ranges: --group-by nvtx is refused
    assert meta == {"gpu": None, "ceilings": None, "clock": "measured", "group_by_nvtx": False, "nvtx_include": None}
    assert AnalysisOptions(group_by="nvtx").metadata()["group_by_nvtx"] is True
    assert AnalysisOptions(group_by="op").metadata()["group_by_op"] is True
    assert "group_by_op" not in AnalysisOptions(group_by="kernel").metadata()

"""Choosing a definition per launch: the shortcuts taken where every launch agrees give the per-row answer.

`pick_definition` decides a definition once per column where it can (an input the capture lacks, a condition that
holds everywhere) and keeps per-row work for the rows that differ. These tests hold it to the per-row path
(`uniform=False`) and to a plain loop over rows written here from the rule (first applicable definition whose value
is finite; else the closest one: fewest missing inputs, the totals form on a tie, a flagged fallback last), on
random frames and on every shared sample.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ncu_roofline.pipeline.catalogue import Definition, Pick, load_catalogue, pick_definition
from ncu_roofline.pipeline.expressions import Columns, Expr

METRICS = ("a", "b", "c.sum", "d.sum.per_second", "g_1.sum", "g_2.sum")
EXPRESSIONS = ("a", "a * b", "a / b", "c.sum + d.sum.per_second * a", 'sum_of("g_*.sum")', 'sum_of("h_*.sum") * a',
               "b - -a", "isnull(b) * 2 + 0 * c.sum", "(a > 1) * 5")
CONDITIONS = (None, "compute_capability >= 8.0", "isnull(compute_capability) or compute_capability == 7.0",
              "a == 0")
VALUES = (0.0, 1.0, 2.5, -3.0, np.nan, 1e308)


@st.composite
def frames(draw) -> pd.DataFrame:
    """A capture of a few launches: each metric absent, null everywhere, the same everywhere, or per launch."""
    n = draw(st.integers(0, 7))
    data: dict[str, object] = {}
    for name in METRICS:
        kind = draw(st.sampled_from(("absent", "null", "constant", "per_launch")))
        if kind == "null":
            data[name] = np.full(n, np.nan)
        elif kind == "constant":
            data[name] = np.full(n, draw(st.sampled_from(VALUES)))
        elif kind == "per_launch":
            data[name] = np.asarray(draw(st.lists(st.sampled_from(VALUES), min_size=n, max_size=n)), dtype="float64")
    ccs = draw(st.sampled_from(((7.0,), (8.0,), (9.0,), (np.nan,), (7.0, 9.0, np.nan))))
    data["compute_capability"] = np.asarray(draw(st.lists(st.sampled_from(ccs), min_size=n, max_size=n)),
                                            dtype="float64")
    return pd.DataFrame(data, index=range(n))


@st.composite
def definitions(draw) -> list[Definition]:
    defs = []
    for index in range(draw(st.integers(0, 5))):
        when = draw(st.sampled_from(CONDITIONS))
        defs.append(Definition(quantity="q", id=f"d{index}", expr=Expr(draw(st.sampled_from(EXPRESSIONS))),
                               source="test", when=Expr(when) if when else None,
                               flag=draw(st.sampled_from((None, None, "fallback")))))
    return defs


def by_rows(frame: pd.DataFrame, defs: list[Definition], allowed: dict[str, np.ndarray] | None) -> list[tuple]:
    """The rule, one launch at a time: (value, definition index, what the closest definition lacked)."""
    out = []
    for row in range(len(frame)):
        one = Columns(frame.iloc[[row]])
        value, used, best, text = np.nan, -1, None, "no definition applies to this GPU"
        for index, definition in enumerate(defs):
            usable = definition.when is None or bool(one.holds(definition.when)[0])
            if allowed and definition.id in allowed:
                usable = usable and bool(allowed[definition.id][row])
            if not usable:
                continue
            result = definition.expr.evaluate(one)[0]
            if not np.isnan(result):
                value, used = result, index
                break
            lacking = [name for name in definition.expr.inputs
                       if (np.isnan(one.sum_of(name)[0]) if name in definition.expr.globs
                           else name not in frame or np.isnan(frame[name].iloc[row]))]
            score = 2 * len(lacking) + definition.is_rate_form + (1 << 20 if definition.flag else 0)
            if best is None or score < best:
                best = score
                text = (f"needs {', '.join(lacking)}" if lacking
                        else f"{definition.id} gave no finite value (division by zero?)")
        out.append((value, used, text if used < 0 else None))
    return out


def assert_same(fast: Pick, general: Pick) -> None:
    np.testing.assert_array_equal(fast.values, general.values)
    np.testing.assert_array_equal(fast.def_codes, general.def_codes)
    np.testing.assert_array_equal(fast.missing_codes, general.missing_codes)
    assert fast.missing_texts == general.missing_texts
    assert [flag for _, flag in fast.flags] == [flag for _, flag in general.flags]
    for (fast_mask, _), (general_mask, _) in zip(fast.flags, general.flags):
        np.testing.assert_array_equal(fast_mask, general_mask)


@pytest.mark.slow  # 400 random captures, a few seconds
@settings(max_examples=400)
@given(frames(), definitions(), st.data())
def test_shortcuts_give_the_per_row_pick_on_random_captures(frame, defs, data):
    allowed = None
    if defs and data.draw(st.booleans()):
        n = len(frame)
        allowed = {d.id: np.asarray(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
                   for d in defs if data.draw(st.booleans())}
    fast = pick_definition(frame, defs, allowed)
    general = pick_definition(frame, defs, allowed, uniform=False)
    assert_same(fast, general)
    expected = by_rows(frame, defs, allowed)
    np.testing.assert_array_equal(fast.values, [value for value, _, _ in expected])
    np.testing.assert_array_equal(fast.def_codes, [used for _, used, _ in expected])
    for row, (_, used, text) in enumerate(expected):
        if used < 0:
            assert fast.missing_texts[fast.missing_codes[row]] == text


def test_a_metric_the_capture_lacks_is_named_once_for_every_launch():
    # b is absent: "a * b" is null everywhere without being evaluated; "c.sum" is present but null on launch 1
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "c.sum": [4.0, np.nan, 6.0]})
    defs = [Definition("q", "ab", Expr("a * b"), "test"), Definition("q", "c", Expr("c.sum + a"), "test")]
    picked = pick_definition(frame, defs)
    np.testing.assert_array_equal(picked.values, [5.0, np.nan, 9.0])  # 4 + 1, none, 6 + 3
    np.testing.assert_array_equal(picked.def_codes, [1, -1, 1])
    # launch 1 lacks one input of each: the first definition is closest (ties go to the earlier one)
    assert picked.missing_texts[picked.missing_codes[1]] == "needs b"


def test_a_division_by_zero_on_one_launch_falls_through_to_the_next_definition():
    frame = pd.DataFrame({"a": [6.0, 6.0, 6.0], "b": [2.0, 0.0, 3.0]})
    defs = [Definition("q", "ratio", Expr("a / b"), "test"),
            Definition("q", "fallback", Expr("a"), "test", flag="a_only")]
    picked = pick_definition(frame, defs)
    np.testing.assert_array_equal(picked.values, [3.0, 6.0, 2.0])
    np.testing.assert_array_equal(picked.def_codes, [0, 1, 0])
    assert [(list(mask), flag) for mask, flag in picked.flags] == [([False, True, False], "a_only")]
    # with the fallback not allowed there, launch 1 says why the first gave nothing
    picked = pick_definition(frame, defs, {"fallback": np.array([True, False, True])})
    assert np.isnan(picked.values[1])
    assert picked.missing_texts[picked.missing_codes[1]] == "ratio gave no finite value (division by zero?)"


def sample_frames(samples) -> list[pd.DataFrame]:
    from ncu_roofline.core.errors import InputError
    from ncu_roofline.readers import read_inputs

    catalogue = load_catalogue()
    paths = sorted(p for p in samples.rglob("*") if p.suffix in (".csv", ".ncu-rep") and "nsys" not in p.parts)
    found = []
    for path in paths:
        try:
            found.append(read_inputs([path], catalogue.wants, None))
        except InputError:  # not an ncu export (ERT configs, a summary table): refused before any pick
            continue
    return found


def test_shortcuts_give_the_per_row_pick_on_every_shared_sample(samples):
    from ncu_roofline.pipeline.ceilings import _Uses
    from ncu_roofline.pipeline.derive import derive_quantities
    from ncu_roofline.core.status import StatusNotes
    from ncu_roofline.core.vocabulary import ROOF_COLUMNS
    from ncu_roofline.core.vocabulary import TERMS, TENSOR_TERMS

    catalogue = load_catalogue()
    frames_read = sample_frames(samples)
    assert len(frames_read) > 30
    # all of them in one run too: a mixed-architecture capture whose metrics differ from launch to launch
    together = pd.concat(frames_read, ignore_index=True)
    assert together["compute_capability"].nunique() >= 5
    amount = {t.peak: t.amount for t in (*TERMS, *TENSOR_TERMS)}
    for frame in (*frames_read, together):
        columns, general = Columns(frame), Columns(frame)
        for quantity, defs in catalogue.quantities.items():
            assert_same(pick_definition(columns, defs), pick_definition(general, defs, uniform=False))
        uses = _Uses(derive_quantities(frame, catalogue, StatusNotes(len(frame))))
        for column in ROOF_COLUMNS:  # the roofs, restricted to how the traffic was measured (a bool or per launch)
            defs = catalogue.definitions(column)
            allowed = {d.id: uses(amount[column], d.for_defs) for d in defs if d.for_defs}
            assert_same(pick_definition(columns, defs, allowed),
                        pick_definition(general, defs, allowed, uniform=False))


def test_only_arithmetic_on_a_metric_the_capture_lacks_is_null_without_evaluating():
    columns = Columns(pd.DataFrame({"a": [1.0, np.nan], "c.sum": [np.nan, np.nan]}))
    assert Expr("a * b").null_everywhere(columns)  # b absent: null on every launch
    assert Expr("a + c.sum").null_everywhere(columns)  # c.sum held but null on every launch
    assert Expr('a * sum_of("h_*.sum")').null_everywhere(columns)  # no column matches the glob
    assert not Expr("a * 2").null_everywhere(columns)  # a is null on one launch only
    # isnull and comparisons turn a null into a value: 2 on both launches, though b is absent
    assert not Expr("isnull(b) * 2").null_everywhere(columns)
    np.testing.assert_array_equal(Expr("isnull(b) * 2").evaluate(columns), [2.0, 2.0])
    assert not Expr("(b > 1) + a").null_everywhere(columns)
    # the masks a capture agrees on are one bool; the others stay per launch
    assert columns.nulls("b", uniform=True) is True and columns.nulls("c.sum", uniform=True) is True
    np.testing.assert_array_equal(columns.nulls("a", uniform=True), [False, True])

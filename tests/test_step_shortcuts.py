"""The steps' shortcuts where every launch agrees (no sort, no groupby, no sums, one bool for a mask) give what the
definitions say, on random launch tables: roofs shared by every launch, by a group or by none, unknown roofs and
amounts, amounts zero on every launch, distinct values that agree or not, tensor work split on some rows.

References are written here: a loop over each group's launches for the group roofs and the distinct values; pandas'
own groupby sum of the columns as one block for the sums (kept bit for bit); each launch alone for the speed of
light (per launch by definition); pandas' own conversion of an object array for the status texts."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ncu_roofline import InputError, analyze
from ncu_roofline.core.status import StatusNotes
from ncu_roofline.core.vocabulary import ALL_TERMS, TENSOR_FLOP_COLUMNS
from ncu_roofline.pipeline.ceilings import OWN_ROOFS
from ncu_roofline.pipeline.codes import category_texts, one_text, sorted_codes
from ncu_roofline.pipeline.group import _distinct, _group_roofs, _group_status, _group_sums_or_null
from ncu_roofline.pipeline.rank import speed_of_light

from conftest import FIXTURES

PEAKS = (1e12, 2e12, 7.5e11)
RAW_BASE_UNITS_LAUNCHES = len(FIXTURES.joinpath("raw_base_units.csv").read_text().splitlines()) - 1  # a header


def random_launches(rng: np.random.Generator, n: int, n_groups: int) -> pd.DataFrame:
    """`_group` (every group used) and `time_s`, and per term a roof and an amount each in one of several shapes."""
    group = np.concatenate([np.arange(n_groups), rng.integers(0, n_groups, n - n_groups)])
    rng.shuffle(group)
    columns: dict[str, object] = {"_group": group, "time_s": rng.uniform(1e-6, 1e-3, n)}
    for term in ALL_TERMS:
        shape = rng.integers(0, 5)
        if shape == 0:  # one roof on every launch
            peak = np.full(n, PEAKS[0])
        elif shape == 1:  # one roof per group
            peak = np.asarray(PEAKS)[group % len(PEAKS)]
        elif shape == 2:  # a roof per launch (its own clock)
            peak = rng.uniform(1e11, 1e12, n)
        elif shape == 3:  # unknown on every launch
            peak = np.full(n, np.nan)
        else:  # one roof, unknown on some launches
            peak = np.where(rng.random(n) < 0.2, np.nan, PEAKS[1])
        kind = rng.integers(0, 4)
        amount = {0: lambda: rng.uniform(0, 1e9, n), 1: lambda: np.zeros(n), 2: lambda: np.full(n, np.nan),
                  3: lambda: np.where(rng.random(n) < 0.3, 0.0, np.where(rng.random(n) < 0.1, np.nan,
                                                                           rng.uniform(0, 1e9, n)))}[kind]()
        if kind == 1 and rng.random() < 0.5:
            amount[::2] = -0.0
        columns[term.peak] = peak
        columns.setdefault(term.amount, amount)
    for column in TENSOR_FLOP_COLUMNS:  # split tensor work on some launches, or on none
        columns[column] = columns[column] if rng.random() < 0.5 else np.full(n, np.nan)
    return pd.DataFrame(columns)


def loop_sum(values) -> float:
    total = 0.0
    for value in values:
        total += value
    return total


def group_roof(rows: pd.DataFrame, term, split: np.ndarray) -> tuple[float, float]:
    """The group's roof and summed term time, from docs' definitions (pipeline/group.py's docstring)."""
    peak, amount, time_s = (rows[c].to_numpy(dtype="float64") for c in (term.peak, term.amount, "time_s"))
    if np.isnan(peak).any():
        return math.nan, math.nan
    known = peak[~np.isnan(peak)]
    if known.min() == known.max():
        return float(known[0]), _term_time(peak, amount, term, split)
    with np.errstate(invalid="ignore"):
        weighted = loop_sum(np.nan_to_num(peak * time_s)) / loop_sum(np.nan_to_num(time_s))
    time = _term_time(peak, amount, term, split)
    total = loop_sum(np.nan_to_num(amount))
    amounts_known = not (np.isnan(amount).all() and not (term.key == "tensor" and split.any()))
    with np.errstate(divide="ignore", invalid="ignore"):  # split tensor work: no whole-pipe time, an infinite roof
        roof = total / loop_sum(np.nan_to_num(_launch_times(peak, amount, term, split))) \
            if amounts_known and total > 0 else weighted
    return (roof if math.isfinite(roof) else math.nan), time


def _launch_times(peak, amount, term, split):
    with np.errstate(divide="ignore", invalid="ignore"):
        times = np.where(amount == 0, 0.0, amount / peak)
    if term.key == "tensor":
        times[split] = 0.0
    return times


def _term_time(peak, amount, term, split) -> float:
    if np.isnan(amount).all() and not (term.key == "tensor" and split.any()):
        return math.nan
    times = _launch_times(peak, amount, term, split)
    return math.nan if np.isnan(times).any() else loop_sum(times)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_groups=st.integers(1, 6), extra=st.integers(0, 40))
def test_group_roofs_and_term_times_are_the_definitions(seed: int, n_groups: int, extra: int) -> None:
    rng = np.random.default_rng(seed)
    frame = random_launches(rng, n_groups + extra, n_groups)
    out = pd.DataFrame({"t_sol_s": np.ones(n_groups)})
    got = _group_roofs(frame, out)
    for g in range(n_groups):
        rows = frame[frame["_group"] == g]
        split = np.zeros(len(rows), dtype=bool)
        for column in TENSOR_FLOP_COLUMNS:
            split |= ~np.isnan(rows[column].to_numpy(dtype="float64"))
        times = []
        for term in ALL_TERMS:
            roof, time = group_roof(rows, term, split)
            value = got[term.peak][g]
            assert (math.isnan(roof) and math.isnan(value)) or value == roof, (term.peak, g, value, roof)
            times.append(time)
        known = [t for t in times if not math.isnan(t)]
        want = ALL_TERMS[times.index(max(known))].key if known else None
        bound = got["bound"][g]
        assert (None if pd.isna(bound) else bound) == want


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_groups=st.integers(1, 6), extra=st.integers(0, 300),
       ordered=st.booleans(), holes=st.sampled_from(["none", "some", "every"]))
def test_group_sums_are_pandas_groupby_sums_of_the_block_or_null(seed, n_groups, extra, ordered, holes) -> None:
    """Bit for bit pandas' groupby sum of the summed columns as one float block, null where any launch has the
    column unknown. pandas sums a block by `reduceat` where the codes are sorted and the block holds no NaN, else
    by its compensated loop: codes sorted or not, columns with unknowns in none, some or all of them."""
    rng = np.random.default_rng(seed)
    n = n_groups + extra
    group = np.concatenate([np.arange(n_groups), rng.integers(0, n_groups, extra)])
    group = np.sort(group) if ordered else rng.permutation(group)
    columns = {"spread": rng.uniform(-1, 1, n) * 10.0 ** rng.integers(-5, 15, n), "zeros": np.zeros(n),
               "signed_zeros": np.where(rng.random(n) < 0.5, -0.0, 0.0), "negative_zeros": np.full(n, -0.0),
               "unknown": np.full(n, np.nan), "ones": np.ones(n), "large": rng.uniform(0, 1e12, n)}
    if holes != "none":
        for name in ("spread", "ones", "large") if holes == "every" else ("large",):
            columns[name] = np.where(rng.random(n) < 0.05, np.nan, columns[name])
    got = _group_sums_or_null(dict(columns), group)
    summed = [c for c in columns if not np.isnan(columns[c]).all()]
    block = pd.DataFrame(np.vstack([columns[c] for c in summed]).T, copy=False)
    sums = block.groupby(group, sort=True).sum(min_count=1).to_numpy()
    for j, name in enumerate(summed):
        unknown = pd.Series(np.isnan(columns[name])).groupby(group, sort=True).any().to_numpy()
        want = np.where(unknown, np.nan, sums[:, j])
        assert got[name].dtype == np.float64
        assert np.array_equal(np.isnan(got[name]), np.isnan(want)), name
        known = ~np.isnan(want)
        assert got[name][known].tobytes() == want[known].tobytes(), name  # -0.0 and 0.0 told apart
    assert np.isnan(got["unknown"]).all() and len(got["unknown"]) == n_groups


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_groups=st.integers(1, 5), extra=st.integers(0, 30),
       categories=st.integers(1, 5), nulls=st.sampled_from([0.0, 0.3, 1.0]), used=st.integers(1, 5),
       as_text=st.booleans())
def test_distinct_is_each_groups_sorted_values_joined(seed, n_groups, extra, categories, nulls, used,
                                                      as_text) -> None:
    rng = np.random.default_rng(seed)
    n = n_groups + extra
    group = np.concatenate([np.arange(n_groups), rng.integers(0, n_groups, extra)])
    names = [f"def_{chr(ord('e') - i)}" for i in range(categories)]  # listed out of sorted order
    picks = rng.choice(names, size=n).astype(object) if used > 1 else np.full(n, names[-1], dtype=object)
    picks[rng.random(n) < nulls] = None
    values = pd.Series(picks, dtype="string") if as_text else pd.Series(pd.Categorical(picks, categories=names))
    frame = pd.DataFrame({"def_x": values, "_group": group})
    got = _distinct(frame, "def_x").tolist()
    for g in range(n_groups):
        present = sorted({v for v, k in zip(picks, group) if k == g and v is not None})
        assert (None if pd.isna(got[g]) else got[g]) == ("+".join(present) if present else None), (g, got[g])


def random_placed(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """Launch rows as speed of light reads them: per term an amount and a roof, each shared by every row, varying,
    or unknown on some or every row; tensor work split by type on none, some or every row; own roofs or not."""
    columns: dict[str, object] = {"time_s": rng.uniform(1e-6, 1e-3, n)}
    for term in ALL_TERMS:
        roof = [np.full(n, 1e12), rng.uniform(1e11, 1e12, n), np.full(n, np.nan),
                np.where(rng.random(n) < 0.3, np.nan, 1e12)][rng.integers(0, 4)]
        amount = [rng.uniform(0, 1e9, n), np.zeros(n), np.full(n, np.nan),
                  np.where(rng.random(n) < 0.3, np.nan, rng.uniform(0, 1e9, n))][rng.integers(0, 4)]
        columns[term.peak] = roof
        columns.setdefault(term.amount, amount)
    split = [np.zeros(n, dtype=bool), np.ones(n, dtype=bool), rng.random(n) < 0.5][rng.integers(0, 3)]
    for column in TENSOR_FLOP_COLUMNS:
        columns[column] = np.where(split, columns[column], np.nan)
    own = [np.zeros(n), np.full(n, rng.integers(0, 1 << 13)), rng.integers(0, 1 << 13, n)][rng.integers(0, 3)]
    columns[OWN_ROOFS] = own.astype(np.int64)
    return pd.DataFrame(columns)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12))
def test_speed_of_light_of_many_rows_is_that_of_each_row_alone(seed: int, n: int) -> None:
    """Speed of light and completeness are per launch: a row's values and status are those it gets alone (where
    every mask of a one-row frame is one bool, and several rows take the per-row masks)."""
    frame = random_placed(np.random.default_rng(seed), n)
    notes = StatusNotes(n)
    together = speed_of_light(frame, notes)
    status = notes.render().astype(str).tolist()
    for i in range(n):
        alone_notes = StatusNotes(1)
        alone = speed_of_light(frame.iloc[[i]].reset_index(drop=True), alone_notes)
        pd.testing.assert_frame_equal(together.iloc[[i]].reset_index(drop=True), alone, check_categorical=False)
        assert status[i] == alone_notes.render().astype(str).tolist()[0]


@given(codes=st.lists(st.integers(-1, 3), max_size=30), texts=st.sampled_from([["ok", "no roof fp64", "é", ""]]))
def test_category_texts_are_what_a_frame_makes_of_the_texts(codes, texts) -> None:
    """pandas' own conversion of the object array (the `str` column a frame makes of it) is the reference."""
    values = pd.Categorical.from_codes(np.asarray(codes, dtype=np.int8), categories=pd.Index(texts, dtype=object))
    want, got = pd.DataFrame({"a": np.zeros(len(codes))}), pd.DataFrame({"a": np.zeros(len(codes))})
    want["status"] = pd.Series(values).to_numpy()
    got["status"] = category_texts(values)
    pd.testing.assert_frame_equal(got, want, check_exact=True)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_groups=st.integers(1, 5), extra=st.integers(0, 40))
def test_group_status_counts_each_note_over_the_groups_launches(seed: int, n_groups: int, extra: int) -> None:
    """A group's note is its launches' note, with '(k of n launches)' where only some launches have it; 'ok'
    where none has any. Launch rows may stand for several launches (`launches`)."""
    rng = np.random.default_rng(seed)
    n = n_groups + extra
    group = rng.permutation(np.concatenate([np.arange(n_groups), rng.integers(0, n_groups, extra)]))
    statuses = np.asarray(["ok", "no roof fp64", "above_roof dram", "no roof fp64; above_roof dram"], dtype=object)
    status = statuses[rng.integers(0, len(statuses), n) if rng.random() < 0.8 else np.zeros(n, dtype=int)]
    weights = rng.integers(1, 4, n)
    frame = pd.DataFrame({"_group": group, "status": pd.array(status, dtype="str"), "launches": weights})
    launches = np.bincount(group, weights=weights).astype(np.int64)
    got = _group_status(frame, launches, None)
    for g in range(n_groups):
        counts: dict[str, int] = {}  # notes in the order of the sorted status texts that hold them
        for text in sorted({t for t, k in zip(status, group) if k == g}):
            for note in text.split("; "):
                if note != "ok":
                    counts[note] = counts.get(note, 0) + sum(int(w) for t, k, w in zip(status, group, weights)
                                                             if k == g and t == text)
        want = "; ".join(note if c >= launches[g] else f"{note} ({c} of {launches[g]} launches)"
                         for note, c in counts.items())
        assert got[g] == (want or "ok"), (g, got[g], want)


@pytest.mark.parametrize("block_cells", [None, 0])
def test_a_capture_without_counters_is_refused_whether_tested_as_a_block_or_by_column(block_cells, monkeypatch):
    if block_cells is not None:
        monkeypatch.setattr("ncu_roofline.pipeline.evaluate.BLOCK_CELLS", block_cells)
    with pytest.raises(InputError, match="no roofline metrics"):
        analyze(FIXTURES / "details_section_labels.csv")
    assert len(analyze(FIXTURES / "raw_base_units.csv").launches) == RAW_BASE_UNITS_LAUNCHES


@given(values=st.lists(st.sampled_from([None, "", "gemm", "gemm ", "é"]), max_size=12), repeat=st.integers(1, 50),
       dtype=st.sampled_from(["string", "str", "object"]))
def test_one_text_and_sorted_codes_of_a_column_of_one_value(values, repeat, dtype) -> None:
    """`one_text` is pandas' `nunique() == 1` with no null; `sorted_codes` of such a column (and of one of nulls
    only) is what Python's sort of its texts gives, a null as ''."""
    column = pd.Series(values * repeat, dtype=dtype)
    assert one_text(column) == (len(column) > 0 and column.notna().all() and column.nunique() == 1)
    codes, uniques = sorted_codes(column)
    blanked = ["" if v is None else v for v in values * repeat]
    assert list(uniques) == sorted(set(blanked))
    assert [uniques[c] for c in codes] == blanked


def evaluated_rows(name: str) -> pd.DataFrame:
    """Every launch row of a fixture with every column the limiter reads (the speed-of-light step's rows)."""
    from dataclasses import replace

    from ncu_roofline.pipeline import steps
    from ncu_roofline.pipeline.catalogue import load_catalogue

    run = replace(steps.start(steps.AnalysisOptions(), load_catalogue()), files=(FIXTURES / name,))
    for step in steps.default_steps()[:7]:
        run = step(run)
    return run.evaluated


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_limiter_of_many_rows_is_that_of_each_row_alone(seed: int) -> None:
    """The limiter is per launch: with counters null on some launches and not others (each quantity null on no,
    some or every row), a row's limiter, evidence and gain are those it gets alone."""
    from ncu_roofline.pipeline.limiter import limiter_columns
    from ncu_roofline.pipeline.limiter_rules import RULES, limiter_settings

    rng = np.random.default_rng(seed)
    base = evaluated_rows("example_h100_raw.csv")
    frame = pd.concat([base] * 4, ignore_index=True)
    settings_ = limiter_settings()
    needs = sorted({q for name in settings_.order for q in RULES[name](frame, settings_).needs if q in frame})
    for quantity in needs:
        share = rng.choice([0.0, 0.5, 1.0])
        values = frame[quantity].to_numpy(dtype="float64").copy()
        values[rng.random(len(frame)) < share] = np.nan
        frame[quantity] = values
    together = limiter_columns(frame)
    for i in range(len(frame)):
        alone = limiter_columns(frame.iloc[[i]].reset_index(drop=True))
        for column in together.columns:
            got, want = together[column].iloc[i], alone[column].iloc[0]
            assert (pd.isna(got) and pd.isna(want)) or got == want, (i, column, got, want)

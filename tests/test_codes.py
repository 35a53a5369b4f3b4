"""Text columns as integer codes (pipeline/codes.py, group.group_codes, limiter.coded_categorical): the codes and
their order are the ones Python's own sort of the texts gives, with no text built per launch."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from ncu_roofline.pipeline.codes import sorted_codes
from ncu_roofline.pipeline.group import group_codes
from ncu_roofline.pipeline.limiter import coded_categorical

# A null, the empty text, case, a space, accents and a character outside the BMP: orders that a byte or a code point
# sort could disagree on, were the texts not compared as Python compares them.
TEXTS = [None, "", "a", "B", "a b", "é", "Z", "ß", "𝔸", "(128, 1, 1)", "(64, 1, 1)"]
text = st.sampled_from(TEXTS)


@given(st.lists(text, max_size=40), st.booleans())
def test_sorted_codes_rank_each_row_as_sorted_distinct_texts_with_null_as_empty(values, arrow):
    column = pd.Series(values, dtype="string" if arrow else "object")
    codes, uniques = sorted_codes(column)
    blanked = ["" if v is None else v for v in values]
    expected = sorted(set(blanked))
    assert list(uniques) == expected
    assert [expected[c] for c in codes] == blanked


@given(st.lists(st.tuples(text, text, text), min_size=1, max_size=40))
def test_group_codes_order_groups_as_python_sorts_their_key_tuples(rows):
    keys = ["kernel_name", "grid", "block"]
    frame = pd.DataFrame({key: pd.array([r[i] for r in rows], dtype="string") for i, key in enumerate(keys)})
    blanked = [tuple("" if v is None else v for v in r) for r in rows]
    order = sorted(set(blanked))
    assert group_codes(frame, keys).tolist() == [order.index(t) for t in blanked]


@given(st.lists(st.integers(-1, 4), max_size=40))
def test_coded_categorical_is_the_categorical_of_the_texts_in_order_of_first_appearance(codes):
    texts = ["unknown: needs x", "memory-bound", "memory-bound", "occupancy 12%", "unknown: needs x"]  # repeats
    values = [None if c < 0 else texts[c] for c in codes]
    built = coded_categorical(np.asarray(codes, dtype=np.int64), texts)
    seen = list(dict.fromkeys(v for v in values if v is not None))
    assert list(built.categories) == seen
    assert [None if pd.isna(v) else v for v in built] == values

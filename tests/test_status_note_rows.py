"""StatusNotes against a row-by-row list of the notes each row was given (written here, one Python list per row)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ncu_roofline.core.status import StatusNotes

TEXTS = ["missing flop_fp64", "above_roof dram", "a; b", "a", "b", ""]

_step = st.one_of(
    st.tuples(st.just("add"), st.lists(st.booleans(), min_size=40, max_size=40), st.sampled_from(TEXTS[:-1])),
    st.tuples(st.just("coded"), st.lists(st.booleans(), min_size=40, max_size=40),
              st.lists(st.integers(0, 2), min_size=40, max_size=40)),
    st.tuples(st.just("column"), st.lists(st.sampled_from([*TEXTS, None]), min_size=40, max_size=40)),
)


@given(n=st.integers(0, 40), steps=st.lists(_step, max_size=6))
def test_each_row_reads_the_notes_it_was_given_in_order(n, steps):
    notes, expected = StatusNotes(n), [[] for _ in range(n)]
    for step in steps:
        if step[0] == "add":
            mask = np.array(step[1][:n], dtype=bool)
            notes.add(mask, step[2])
            for i in np.flatnonzero(mask):
                expected[i].append(step[2])
        elif step[0] == "coded":
            mask, codes = np.array(step[1][:n], dtype=bool), np.array(step[2][:n], dtype=np.int64)
            notes.add_coded(mask, codes, TEXTS[:3])
            for i in np.flatnonzero(mask):
                expected[i].append(TEXTS[codes[i]])
        else:
            texts = np.array(step[1][:n], dtype=object)
            notes.add_column(texts)
            for i, text in enumerate(texts):
                if text:  # empty and null add nothing
                    expected[i].append(text)
    status = notes.render()
    written = ["; ".join(row) if row else "ok" for row in expected]
    assert status.astype(str).tolist() == written
    assert sorted(status.cat.categories) == sorted(set(written))  # every category used, each text once

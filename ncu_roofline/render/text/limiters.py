"""The limiter in words, as every table, tooltip and Markdown summary prints it."""

from __future__ import annotations


def limiter_word(value: object) -> str:
    """The limiter as the tables print it ('bank conflicts'), '—' where the tables have none."""
    import pandas as pd  # noqa: F811

    return "—" if value is None or pd.isna(value) else str(value).replace("_", " ")


def limiter_text(limiter: object, evidence: object) -> str:
    """'latency: issue slots 26 % busy; ...' in words; an unknown limiter points at the run notes for what to
    collect (its evidence names every missing metric: too long for a table cell)."""
    import pandas as pd  # noqa: F811

    word = limiter_word(limiter)
    if word == "unknown":
        return "unknown (counters not collected: see the notes)"
    return word if evidence is None or pd.isna(evidence) else f"{word}: {evidence}"

"""Parsing a CSV page in blocks: the block sizes, and what happens to a row longer than a block.

Arrow parses a page block by block, and a row must fit in one block ("straddling object straddles two block
boundaries" otherwise). Pages are read in blocks of 4 MiB (the readers' BLOCK_SIZE), and again in 64 MiB ones when
a row is longer (a kernel name of megabytes); a row beyond that is refused in the project's words, naming the limit.
"""

from __future__ import annotations

import csv
from pathlib import Path

from ..core.errors import InputError
from .text import printable

LARGEST_BLOCK = 64 * 1024 * 1024  # the block a page is read again in when a row is longer than the usual one


class RowTooLong(Exception):
    """A row of the page is longer than the parser's block: read again with larger blocks."""


def split_row(text: str) -> list[str]:
    """One CSV row's fields, however long they are (the csv module refuses fields over 131,072 characters by
    default; a row here already fits in a parser block, which bounds it)."""
    limit = csv.field_size_limit()
    if len(text) >= limit:
        csv.field_size_limit(len(text) + 1)
    try:
        return next(csv.reader([text]), [])
    finally:
        csv.field_size_limit(limit)


def block_sizes(usual: int) -> tuple[int, ...]:
    """The block sizes to try, in order: the reader's usual one, then LARGEST_BLOCK when that is larger."""
    return (usual, LARGEST_BLOCK) if LARGEST_BLOCK > usual else (usual,)


def row_too_long(limit: int) -> str:
    return (f"a row of the table is longer than {limit:,} bytes (a kernel name that long?): rows of up "
            "to that size are read")


def parse_failure(path: str | Path, exc: Exception) -> Exception:
    """What an Arrow parse error of a page means: RowTooLong for a row longer than the block (Arrow's "straddles
    two block boundaries", or a header row that does not fit: "header is larger than block size"), else one line
    naming the file."""
    if "straddl" in str(exc) or "larger than block size" in str(exc):
        return RowTooLong()
    first = printable(str(exc).strip().splitlines()[0]) if str(exc).strip() else type(exc).__name__
    return InputError(path, f"the CSV table could not be parsed: {first}")

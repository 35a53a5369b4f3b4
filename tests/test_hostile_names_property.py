"""Random kernel names through every output of `analyze`, and the Markdown of `compare` and `history` (issue 37,
item 8): pipes, backticks, line breaks, C0/C1
controls, OSC/CSI sequences, bidi overrides, `<`, `&` and spreadsheet-formula prefixes. Each output is checked by
a parser of its own medium, never by the escaping code: Markdown tables keep their cell counts (markdown-it-py)
and grow no HTML, links or emphasis; the terminal holds no control or bidi character; the HTML page has the same
tags as the page of plain names (html.parser); the SVG parses as XML and its text holds no control character;
Parquet and JSON give back the exact names the export holds."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from ncu_roofline.cli import app

from conftest import FIXTURES

GOOD = FIXTURES / "raw_base_units.csv"
# What the terminal must never receive: C0 (line breaks aside: they end the table's lines), DEL, C1, and the bidi
# embeddings, overrides and isolates, which reorder the text after them.
FORBIDDEN_ON_SCREEN = {chr(c) for c in [*range(0x20), *range(0x7f, 0xa0), *range(0x202a, 0x202f),
                                         *range(0x2066, 0x206a)]} - {"\n"}
FRAGMENTS = ["|", "`", "``", "\n", "\r\n", "\t", "\x00", "\x07", "\x08", "\x1b", "\x1b]0;title\x07", "\x1b[2J",
             "\x1b[31m", "\x9b", "\x85", "\u202e", "\u2066", "\u2028", "<", "<b>", "</script>", "&", "&amp;",
             "=", "+", "-", "@", "=HYPERLINK(\"http://x\")", "*", "_", "[x](http://y)", "\\", "#", " ", "a", "Z",
             "é", "::", "<int>"]
MARKDOWNS = ("markdown", "compare_md", "history_md")
NAMES = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=8).map("".join)


def _export(path: Path, names: list[str]) -> list[str]:
    """A raw page whose launches carry `names`; returns the Kernel Name cells as the export holds them."""
    header, first, second = GOOD.read_text().splitlines()
    cells, rows = [], []
    for i, name in enumerate(names):
        row = f'"{i}",' + (first if i % 2 == 0 else second).split(",", 1)[1]
        kernel = ("saxpy" if i % 2 == 0 else "dgemm_naive")
        # Each name starts like a spreadsheet formula (=, +, -, @: kept exactly in Parquet and JSON), never with a
        # blank (the reader strips what surrounds a name), and ends with its index.
        label = f"{'=+-@'[i % 4]}{name}{i}"
        cells.append(row.split('","')[4].replace(kernel, label, 1))
        rows.append(row.replace(kernel, label.replace('"', '""'), 1))
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return cells


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter[str] = Counter()

    def handle_starttag(self, tag, attrs):
        self.tags[tag] += 1

    def handle_endtag(self, tag):
        self.tags["/" + tag] += 1


def _tags(html: str) -> Counter[str]:
    parser = _Tags()
    parser.feed(html)
    parser.close()
    return parser.tags


def _run(tmp: Path, names: list[str]) -> dict[str, object]:
    source = tmp / "names.csv"
    cells = _export(source, names)
    out, md, js = tmp / "out", tmp / "summary.md", tmp / "summary.json"
    result = CliRunner().invoke(app, ["analyze", str(source), "-o", str(out), "--format", "svg",
                                      "--summary-md", str(md), "--json", str(js), "--rows", "10"],
                                env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    # compare and history write their own tables of the same names
    compared = CliRunner().invoke(app, ["compare", str(source), str(source), "--summary-md", str(tmp / "c.md")],
                                  env={"COLUMNS": "100"})
    assert compared.exit_code == 0, compared.output
    for run in ("r1", "r2"):
        appended = CliRunner().invoke(app, ["analyze", str(source), "--history", str(tmp / "h"), "--run-id", run,
                                            "--rows", "0"])
        assert appended.exit_code == 0, appended.output
    history = CliRunner().invoke(app, ["history", str(tmp / "h"), "--summary-md", str(tmp / "h.md")],
                                 env={"COLUMNS": "100"})
    assert history.exit_code == 0, history.output
    return {"cells": cells, "terminal": result.stdout + compared.stdout + history.stdout,
            "markdown": md.read_text(encoding="utf-8"), "compare_md": (tmp / "c.md").read_text(encoding="utf-8"),
            "history_md": (tmp / "h.md").read_text(encoding="utf-8"),
            "json": json.loads(js.read_text(encoding="utf-8")),
            "parquet": pd.read_parquet(out / "kernels.parquet")["kernel_name"].tolist(),
            "launches": pd.read_parquet(out / "launches.parquet")["kernel_name"].tolist(),
            "html": (out / "roofline.html").read_text(encoding="utf-8"),
            "svg": (out / "roofline.svg").read_text(encoding="utf-8")}


MARKUP = ("html_inline", "html_block", "link_open", "em_open", "strong_open", "image", "fence", "hr", "heading_open")


def _markup(text: str) -> Counter[str]:
    """How many elements of each kind other than text the Markdown parses into (links, emphasis, raw HTML...)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    every = [*tokens, *(child for token in tokens for child in (token.children or []))]
    return Counter(t.type for t in every if t.type in MARKUP)


def _check_markdown(text: str) -> None:
    """Every table row of `text` is one row of the parsed table, with as many cells as its header, and none of the
    row's letters or digits was dropped (GFM silently ignores cells beyond the header's count)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    lines = text.splitlines()
    header_cells, cells, row_line, row_text = None, 0, "", []
    for token in tokens:
        if token.type == "tr_open":
            cells, row_line, row_text = 0, lines[token.map[0]], []
            assert token.map[1] - token.map[0] == 1, token.map  # one line per row
        elif token.type in ("th_open", "td_open"):
            cells += 1
        elif token.type == "inline" and token.children is not None:
            row_text += [child.content for child in token.children]
        elif token.type == "tr_close":
            header_cells = cells if header_cells is None else header_cells
            assert cells == header_cells, (cells, header_cells, row_line)
            assert _alnum(row_line) == _alnum("".join(row_text)), row_line
        elif token.type == "table_close":
            header_cells = None
    rows = sum(1 for t in tokens if t.type == "tr_open")
    assert rows == sum(1 for line in lines if line.startswith("|") and set(line) - set("|-: "))


def _alnum(text: str) -> str:
    return "".join(c for c in text if c.isalnum())


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> tuple[Counter[str], Counter[str]]:
    """The HTML page's tags and the Markdown's elements for plain names: what every run must have, whatever its
    names."""
    pytest.importorskip("vl_convert")
    seen = _run(tmp_path_factory.mktemp("plain"), ["alpha", "beta", "gamma"])
    return _tags(seen["html"]), {kind: _markup(seen[kind]) for kind in MARKDOWNS}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(NAMES, min_size=3, max_size=3))
def test_random_kernel_names_stay_inert_and_exact_in_every_output(plain, tmp_path_factory, names):
    seen = _run(tmp_path_factory.mktemp("names"), names)
    exact = set(seen["cells"])
    assert set(seen["parquet"]) == exact and set(seen["launches"]) == exact  # exact, formulas included
    assert {k["kernel_name"] for k in seen["json"]["kernels"]} == exact
    assert not FORBIDDEN_ON_SCREEN & set(seen["terminal"]), repr(seen["terminal"])
    html_tags, markup = plain
    for kind in MARKDOWNS:  # analyze's, compare's and history's summaries
        assert not FORBIDDEN_ON_SCREEN & set(seen[kind]), kind
        _check_markdown(seen[kind])
        assert _markup(seen[kind]) == markup[kind]  # no link, emphasis, raw HTML, fence or heading from a name
    assert _tags(seen["html"]) == html_tags  # the names added no element and closed none
    root = ET.fromstring(seen["svg"])  # well-formed XML
    texts = "".join("".join(element.itertext()) for element in root.iter())
    assert not (FORBIDDEN_ON_SCREEN - {"\t", "\r"}) & set(texts)


def test_the_markdown_check_sees_a_broken_table():
    """The oracle itself: a raw pipe in a cell, or a line break in a row, fails the check."""
    good = "| # | kernel |\n|---:|---|\n| 1 | `a` |\n"
    _check_markdown(good)
    with pytest.raises(AssertionError):
        _check_markdown("| # | kernel |\n|---:|---|\n| 1 | a|b |\n")
    with pytest.raises(AssertionError):
        _check_markdown("| # | kernel |\n|---:|---|\n| 1 | `a\nb` |\n")


@settings(max_examples=200, deadline=None)
@given(text=NAMES)
def test_running_markdown_text_opens_no_markup(text):
    """A GPU name in the summary's bold (`GPU: **NAME**`): the bold stays one element holding only text."""
    from ncu_roofline.render.text.safe_text import for_markdown_text

    text = f"G{text}G"  # bold needs a non-blank first and last character (CommonMark's flanking rule)
    line = f"GPU: **{for_markdown_text(text)}**, ceilings from report."
    assert "\n" not in line and not FORBIDDEN_ON_SCREEN & set(line)
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parseInline(line)[0].children
    assert [t.type for t in tokens] == ["text", "strong_open", "text", "strong_close", "text"], tokens

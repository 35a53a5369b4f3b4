"""`ncu-roofline ceilings show NAME` in the terminal: every roof with its value, formula, source and caveat, the
dense tensor roof per input type, measured figures beside their roofs, the derivation inputs and the ridge points.

Takes the plain dict of `gpus.describe_gpu` and knows nothing of the table file.
"""

from __future__ import annotations

import re

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.padding import Padding
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ...core.vocabulary import LEVELS, TERMS, counted, display
from ..text.fit import Col, fit_table
from ..text.numbers import format_number
from ..text.numbers import format_si as fmt_si
from ..text.safe_text import for_terminal


def gpu_compact_view(described: dict) -> Group:
    """The default `ceilings show`: one line per roof (value, how it was derived in a few words), the tensor roof
    per input type on one line, the ridge points; `--sources` (`gpu_detail_view`) gives the URLs and caveats."""
    table = Table(title=f"{described.get('name')}: roofs (theoretical)", header_style="bold", box=None,
                  pad_edge=False, title_justify="left")
    for name, justify in (("roof", "left"), ("value", "right"), ("how", "left")):
        table.add_column(name, justify=justify, no_wrap=name != "how", overflow="fold")
    caveats = 0
    for key, info in described.get("peaks", {}).items():
        unit = "B/s" if "bytes" in key else "FLOP/s"
        value = info.get("value")
        caveats += bool(info.get("caveat"))
        table.add_row(display(key.rsplit("_", 1)[-1]) if key.startswith("peak_") else key,
                      fmt_si(float(value), unit) if value is not None else "—", escape(how_derived(info)))
    tensor = [f"{display(f'tensor_{kind}')} {fmt_si(float(value), 'OP/s' if kind == 'int8' else 'FLOP/s')}"
              for kind, value in described.get("tensor_roofs", {}).items() if value is not None]
    parts: list = [table]
    if tensor:
        parts.append(Text("dense tensor roof per input type: " + ", ".join(tensor)))
    if described.get("ridges"):
        parts.append(_ridges(described, compact=True))
    parts.append(Text(f"{'caveat on ' + counted(caveats, 'roof') + '; ' if caveats else ''}"
                      "`ncu-roofline ceilings show NAME --sources` gives every source URL, formula and caveat"))
    return Group(*parts)


def how_derived(info: dict) -> str:
    """'80 slices x 64 B/clk x 1.98 GHz' for a derived roof, 'spec: anandtech.com' for one read from a source,
    '* caveat' marked where the roof has one."""
    derived = info.get("derived")
    if derived:
        text = str(derived).split("; ", 1)[-1].split(" (", 1)[0]
    else:
        source = str(info.get("source") or "")
        host = re.match(r"https?://(?:www\.)?([^/\s]+)", source)
        text = f"spec: {host.group(1)}" if host else (source.split(" (", 1)[0][:40] or "read, not derived")
    return text + (" (caveat)" if info.get("caveat") else "")


def gpu_detail_view(described: dict) -> Group:
    """`--sources`, top to bottom: roofs, tensor roofs per type, measured figures, inputs, ridge points."""
    urls: list[str] = []
    parts = [_roofs(described, urls), _tensor_types(described, urls)]
    if described.get("measured"):
        parts.append(_measured(described, urls))
    if described.get("inputs"):
        parts.append(_inputs(described, urls))
    if described.get("ridges"):
        parts.append(_ridges(described))
    # A URL is never cut by a cell: the cell says [n], the URL is printed whole under the tables (a line a narrow
    # terminal may wrap, but no newline in it: it copies and clicks as one).
    parts += [Text(f"[{n}] {url}", no_wrap=True, overflow="ignore") for n, url in enumerate(urls, start=1)]
    return Group(*parts)


_URL = re.compile(r"https?://\S+")


class _Listing:
    """A titled listing whose cells wrap between words and never inside one (a value, a metric key, a file name):
    a table where every column can be as wide as its longest word, else one block per row, its first two cells on
    one line and each other cell on its own line under them."""

    def __init__(self, title: str, columns: tuple[str, ...]) -> None:
        self.title, self.columns, self.rows = title, columns, []

    def add_row(self, *cells: str) -> None:
        self.rows.append(list(cells))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widest = [max([len(h), *(len(w) for r in self.rows for w in Text.from_markup(r[i]).plain.split())])
                  for i, h in enumerate(self.columns)]
        if sum(widest) + 3 * len(widest) + 1 <= options.max_width:
            table = Table(title=self.title, header_style="bold", show_lines=True)
            for name, width in zip(self.columns, widest):
                table.add_column(name, min_width=width, overflow="fold")
            for row in self.rows:
                table.add_row(*row)
            yield table
            return
        yield Text.from_markup(f"[bold]{self.title}[/bold]")
        for first, value, *rest in self.rows:
            yield Text.from_markup(f"{first}  {value}")
            for name, cell in zip(self.columns[2:], rest):
                if Text.from_markup(cell).plain:
                    yield Padding(Text.from_markup(f"[dim]{name}:[/dim] {cell}"), (0, 0, 0, 2))


def _source_text(info: dict, urls: list[str]) -> str:
    """The source, caveat and NCU note of one figure; each URL becomes `[n]`, its number in `urls`."""

    def note(match: re.Match) -> str:
        url = match.group(0).rstrip(").,;")
        if url not in urls:
            urls.append(url)
        return f"[{urls.index(url) + 1}]" + match.group(0)[len(url):]

    bits = [_URL.sub(note, info.get("source") or "")]
    if info.get("caveat"):
        bits.append(f"caveat: {info['caveat']}")
    if info.get("ncu_factor"):
        bits.append(f"Nsight Compute's own peak = {info['ncu_factor']:g} x this (definitions differ)")
    return _safe("\n".join(b for b in bits if b))


def _safe(text: object) -> str:
    """Text from the table or a user's file, for a rich cell: terminal escapes shown, markup taken literally."""
    return escape(for_terminal(text))


def _listing(title: str, columns: tuple[str, ...]) -> _Listing:
    """Sources and formulas are long: a listing that wraps them between words (`_Listing`)."""
    return _Listing(title, columns)


def _roofs(described: dict, urls: list[str]) -> _Listing:
    table = _listing(f"{_safe(described.get('name'))}: roofs (theoretical)", ("roof", "value", "formula", "source"))
    for key, info in described.get("peaks", {}).items():
        unit = "B/s" if "bytes" in key else "FLOP/s"
        value = info.get("value")
        table.add_row(_safe(key), fmt_si(float(value), unit) if value is not None else "—",
                      _safe(info.get("derived") or "read, not derived"), _source_text(info, urls))
    return table


def _tensor_types(described: dict, urls: list[str]) -> _Listing:
    table = _listing("dense tensor roof per input type (fp16 = FP16/BF16)", ("type", "value", "formula", "source"))
    per_figure = described.get("tensor_peaks", {})
    for kind, value in described.get("tensor_roofs", {}).items():
        info = per_figure.get(kind) or per_figure.get("bf16" if kind == "fp16" else kind) or {}
        unit = "OP/s" if kind == "int8" else "FLOP/s"
        table.add_row(display(f"tensor_{kind}"), fmt_si(float(value), unit) if value is not None else "—",
                      _safe(info.get("derived") or ("" if value is None else "read, not derived")),
                      _source_text(info, urls))
    return table


def _measured(described: dict, urls: list[str]) -> _Listing:
    table = _listing("measured (not roofs)", ("figure", "value", "source"))
    for key, info in described["measured"].items():
        table.add_row(_safe(key), fmt_si(float(info["value"]), "B/s"), _source_text(info, urls))
    return table


def _inputs(described: dict, urls: list[str]) -> _Listing:
    table = _listing("inputs of derived roofs", ("input", "value", "source"))
    for key, info in described["inputs"].items():
        formula = "\n" + _safe(info["derived"]) if info.get("derived") else ""
        table.add_row(_safe(key), f"{info['value']:g}", _source_text(info, urls) + formula)
    return table


def _ridges(described: dict, *, compact: bool = False) -> Table:
    """One line per compute roof, one column per memory level: the ridge intensity in FLOP/byte."""
    table = Table(title="ridge points: arithmetic intensity (FLOP/byte) where each memory roof meets each compute roof",
                  header_style="bold") if not compact else Table(
        title="ridge points (FLOP/byte)", header_style="bold", box=None,
        pad_edge=False, title_justify="left")
    table.add_column("compute roof")
    for level in LEVELS:
        table.add_column(display(level), justify="right")
    by_compute: dict[str, dict[str, float]] = {}
    for ridge in described["ridges"]:
        by_compute.setdefault(ridge["compute"], {})[ridge["memory"]] = ridge["ai_flop_per_byte"]
    for compute, levels in by_compute.items():
        table.add_row(display(compute), *(f"{levels[lv]:.3g}" if lv in levels else "—" for lv in LEVELS))
    return table


def gpu_table(rows: list[dict], *, width: int = 120) -> Table:
    """`ncu-roofline ceilings`: one line per GPU of the built-in table, compute roofs in TFLOP/s and memory roofs in
    TB/s (the unit in the caption, not in every cell) so that every roof fits 80 columns beside the GPU's name."""
    columns = (Col("GPU", "left"), Col("CC"), *(Col(display(t.key), drop=9 - i) for i, t in enumerate(TERMS)))
    cells = []
    for row in rows:
        peaks = row.get("peaks", {})

        def roof(key: str, peaks: dict = peaks) -> str:
            value = peaks.get(key)
            value = value.get("value") if isinstance(value, dict) else value
            return format_number(float(value) / 1e12) if value is not None else "—"

        cells.append([for_terminal(row.get("name")), str(row.get("compute_capability") or "—"), *(roof(t.peak) for t in TERMS)])
    names = [c[0] for c in cells]
    return fit_table(columns, cells, width, name_index=0, names=lambda n: [
        name if len(name) <= n else name[: n - 1] + "…" for name in names],
        legend_prefix="compute roofs in TFLOP/s, memory roofs in TB/s; `ceilings show NAME` for one GPU",
        hint="`ceilings --json` lists every roof").table

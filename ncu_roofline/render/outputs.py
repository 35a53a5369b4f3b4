"""The output registry: every file an output folder (`-o DIR`) may hold, by subject and format, with its name, its
kind and the function that builds it. It is plain data, imported before pandas or any chart: the CLI checks
`--format`, claims the names `-o` will write and finds the chart a summary links to here, so that no command spells
a file name and a new format is one row (docs/architecture.md, "A new output")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError

ALWAYS_CHARTS = ("vl.json", "html")  # every chart is written as its spec and an offline page
ON_REQUEST = ("svg", "png")  # what `--format` may add to a chart


@dataclass(frozen=True)
class OutputFile:
    """One file of an output folder. `builder` names the function that renders the subject's files
    (`module:function` below ncu_roofline.render), so the registry stays data and imports no renderer."""

    subject: str  # analysis, compare, history, model, projection
    name: str  # the file's name inside -o DIR
    kind: str  # table (Parquet), summary (JSON) or chart
    format: str  # parquet, json, vl.json, html, svg, png
    builder: str
    on_request: bool = False  # written only when `--format` asks for it


def _chart(subject: str, stem: str, builder: str) -> tuple[OutputFile, ...]:
    return tuple(OutputFile(subject, f"{stem}.{fmt}", "chart", fmt, builder, fmt in ON_REQUEST)
                 for fmt in (*ALWAYS_CHARTS, *ON_REQUEST))


_ANALYSIS = "analysis.outputs:analysis_bundle"
_COMPARE = "compare.outputs:comparison_bundle"
_HISTORY = "history.outputs:history_bundle"
_MODEL = "model.outputs:model_bundle"
_PROJECTION = "projection.outputs:projection_bundle"
INSTRUCTION_STEM = "instruction_roofline"  # written where the capture counts warp instructions

OUTPUTS: tuple[OutputFile, ...] = (
    OutputFile("analysis", "launches.parquet", "table", "parquet", _ANALYSIS),
    OutputFile("analysis", "kernels.parquet", "table", "parquet", _ANALYSIS),
    *_chart("analysis", "roofline", _ANALYSIS),
    *_chart("analysis", INSTRUCTION_STEM, _ANALYSIS),
    OutputFile("compare", "compare.parquet", "table", "parquet", _COMPARE),
    OutputFile("compare", "compare.json", "summary", "json", _COMPARE),
    *_chart("compare", "compare", _COMPARE),
    OutputFile("history", "history.parquet", "table", "parquet", _HISTORY),
    OutputFile("history", "history.json", "summary", "json", _HISTORY),
    *_chart("history", "history", _HISTORY),
    OutputFile("model", "model.parquet", "table", "parquet", _MODEL),
    *_chart("model", "model", _MODEL),
    OutputFile("projection", "projection.parquet", "table", "parquet", _PROJECTION),
    *_chart("projection", "projection", _PROJECTION),
)


def names(subject: str) -> tuple[str, ...]:
    """Every file `subject`'s -o folder may hold: what its bundle removes when stale and what `--json` or
    `--summary-md` may not name inside that folder."""
    found = tuple(o.name for o in OUTPUTS if o.subject == subject)
    if not found:
        raise KeyError(f"no outputs registered for {subject!r}")
    return found


def chart_formats(value: str | Iterable[str] | None, subject: str | None = None) -> tuple[str, ...]:
    """`--format svg,png` (or a list of formats) checked against the registry: the one check every command and
    `Analysis.write` use. With a subject, only the formats its files come in (so none is accepted and ignored)."""
    allowed = tuple(dict.fromkeys(o.format for o in OUTPUTS if o.on_request and subject in (None, o.subject)))
    items = value.split(",") if isinstance(value, str) else list(value or ())
    formats = tuple(f.strip().lower() for f in items if f and f.strip())
    unknown = [f for f in formats if f not in allowed]
    if unknown:
        raise InputError(None, f"unknown --format {', '.join(unknown)}; choose from {', '.join(allowed)}")
    return formats


def requested(subject: str, formats: Iterable[str], kind: str) -> tuple[OutputFile, ...]:
    """The subject's files of `kind` that a run with these `--format`s writes: every file not on request, and
    those whose format was asked for."""
    wanted = set(formats)
    return tuple(o for o in OUTPUTS if o.subject == subject and o.kind == kind
                 and (not o.on_request or o.format in wanted))


def chart_set(subject: str, formats: Iterable[str]) -> list[str]:
    """The formats each of the subject's charts is written in: the spec and the page, then the `--format`s asked
    for that a chart comes in, in the order asked."""
    drawn = {o.format for o in OUTPUTS if o.subject == subject and o.kind == "chart"}
    return [*ALWAYS_CHARTS, *(f for f in chart_formats(formats, subject) if f in drawn and f not in ALWAYS_CHARTS)]


def always_written(subject: str) -> str:
    """'compare.parquet, compare.json, compare.vl.json, compare.html': the files `-o` always holds of the subject
    (main files, not `--format`'s), as a command's help names them."""
    return ", ".join(o.name for o in OUTPUTS if o.subject == subject and not o.on_request
                     and (o.kind != "chart" or o in main_chart(subject)))


def stem(output: OutputFile) -> str:
    """'kernels' for kernels.parquet: what a builder looks the file's table up by."""
    return output.name[: -len(output.format) - 1]


def main_chart(subject: str) -> tuple[OutputFile, ...]:
    """The subject's first chart, one row per format (the roofline of an analysis)."""
    charts = [o for o in OUTPUTS if o.subject == subject and o.kind == "chart"]
    stem = charts[0].name[: -len(charts[0].format) - 1]
    return tuple(o for o in charts if o.name == f"{stem}.{o.format}")


def chart_file(subject: str, fmt: str) -> str:
    """The name of the subject's main chart in `fmt` ('roofline.html')."""
    return next(o.name for o in main_chart(subject) if o.format == fmt)


def planned_charts(subject: str, outdir: Path | None, formats: Iterable[str]) -> list[Path]:
    """The main chart's files `-o outdir` will hold with these `--format`s (a Markdown summary links to one before
    the files are written); none without -o."""
    wanted = set(formats)
    return [] if outdir is None else [Path(outdir) / o.name for o in main_chart(subject)
                                      if not o.on_request or o.format in wanted]


def listed(subject: str, outdir: Path | None, committed: Iterable[Path]) -> list[Path]:
    """What `-o outdir` holds of this run, as the registry lists the subject's files (tables, summary, each chart
    in its formats); a file the registry has no row for (a `--precision` chart) follows in the order written."""
    if outdir is None:
        return []
    order = {name: position for position, name in enumerate(names(subject))}
    inside = [Path(p) for p in committed if Path(p).parent == Path(outdir)]
    return sorted(inside, key=lambda p: order.get(p.name, len(order)))


def linked_chart(subject: str, written: Iterable[Path]) -> Path | None:
    """The chart a summary links to among `written`: the PNG when one was written (it shows inline), else the page."""
    by_name = {Path(p).name: Path(p) for p in written}
    return by_name.get(chart_file(subject, "png")) or by_name.get(chart_file(subject, "html"))


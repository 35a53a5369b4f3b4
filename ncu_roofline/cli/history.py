"""`ncu-roofline history DIR`: per-kernel trends over a history folder's runs, gates on the newest; parse, call
`load_history()`, write the bundle and summaries, print.

Exit codes as everywhere: 0 success, 1 a --fail-on gate failed, 2 the command could not run (bad option, bad
dataset, bad --sql; one line, no traceback).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..render.outputs import always_written
from ..trends import SQL_MEMORY_LIMIT, SQL_TIMEOUT_S
from .common import PATH, SUMMARY_MD, output_options, path, say, say_written, stdout, user_errors, warn, write_run


def history(
    directory: str = typer.Argument(..., click_type=PATH, show_default=False,
                                    help="The history folder (`analyze --history DIR`, `batch`), file:///path "
                                         "s3://bucket/prefix or gs://bucket/prefix."),
    kernel: Optional[str] = typer.Option(None, "--kernel", help="Only kernels whose name matches this regex."),
    last: Optional[int] = typer.Option(None, "--last", min=1, help="Only the newest N runs."),
    label: List[str] = typer.Option([], "--label", help="Only runs with this label, repeatable: key=value."),
    fail_on: List[str] = typer.Option([], "--fail-on", help="Gate on the newest run against the band of the "
                                                             "window, repeatable, with a unit: "
                                                             "'time_s>+5%', 'time_s>+50us'."),
    label_key: Optional[str] = typer.Option(None, "--label-key", help="Name the chart's runs by this --label "
                                            "(e.g. 'sha': its first 8 characters), else by run id."),
    window: int = typer.Option(10, "--window", min=1, help="Runs before the newest that make the band."),
    band: str = typer.Option("mad", "--band", help="'mad' (median ± k·1.4826·MAD, the default) or 'minmax'."),
    k: float = typer.Option(3.0, "--k", min=0.0, help="Width of the 'mad' band in MADs (sigma-scaled)."),
    min_time: float = typer.Option(0.0, "--min-time", min=0.0, help="Gate only kernels whose newest time is "
                                                                    "at least this many seconds."),
    sql: Optional[str] = typer.Option(None, "--sql", help="Run this SQL over views `kernels` and `launches` "
                                                          "and print the result. Sandboxed: the query sees "
                                                          "those views only, no file or network access "
                                                          "(read_csv, COPY TO, ATTACH are refused)."),
    sql_timeout: float = typer.Option(SQL_TIMEOUT_S, "--sql-timeout", min=0.001, help="--sql: stop the query after this "
                                                                            "many seconds."),
    sql_memory: str = typer.Option(SQL_MEMORY_LIMIT, "--sql-memory", help="--sql: the most memory the query may hold "
                                                                "(DuckDB's memory_limit: 512MB, 4GB)."),
    repair: bool = typer.Option(False, "--repair", help="Remove temporary files and uncommitted parts left by "
                                                        "killed writers, commit old-layout runs with a manifest; "
                                                        "run it while no writer is active."),
    rows: int = typer.Option(10, "--rows", min=0, help="Kernels listed in the terminal and the Markdown."),
    top: int = typer.Option(10, "--top", min=1, help="Kernels drawn in the chart."),
    out_arg: Optional[str] = typer.Option(None, "-o", "--out", click_type=PATH,
                                          help=f"Write {always_written('history')} here."),
    fmt: Optional[str] = typer.Option(None, "--format", help="Extra chart formats: svg,png (needs -o)."),
    summary_md_arg: Optional[str] = SUMMARY_MD,
    json_arg: Optional[str] = typer.Option(None, "--json", click_type=PATH,
                                           help="Write the JSON here ('-' for stdout)."),
    wide: bool = typer.Option(False, "--wide", help="Every column of the table, however wide the terminal."),
) -> None:
    """Per-kernel trends over the runs of a history folder; noise-aware gates on the newest run."""
    from .. import parse_gates
    from ..trends import band_options, history_location, parse_labels

    with user_errors():
        path(directory, "DIRECTORY")  # not empty
        directory = history_location(directory)  # a folder, file://, s3:// or gs://; other URLs are refused
        options = output_options("history", out_arg, fmt, summary_md=summary_md_arg, json=json_arg)
        out, summary_md, json_out, formats = options.out, options.summary_md, options.json, options.formats
        gates = parse_gates(fail_on)
        labels = parse_labels(label)
        options = band_options(window=window, band=band, k=k)
        if repair:
            _repair(directory)
            return
        if sql is not None:
            _print_sql(directory, sql, json_out, timeout_s=sql_timeout, memory_limit=sql_memory)
            return
        from ..render.history.console import print_history
        from ..trends import trends

        result = trends(directory, kernel=kernel, last=last, labels=labels, gates=gates, band=options,
                        min_time_s=min_time)
        _print_notes(result.notes)
        written, to_stdout = write_run(result.input_paths, out, lambda: result.bundle(
            formats=formats, top=top, window=window, band_name=band, label_key=label_key), [
            (summary_md, lambda: result.markdown(top=rows or 10)), (json_out, result.json)], subject="history")
        sys.stdout.write(to_stdout)
        if str(json_out) != "-":
            print_history(result.summary, result.time_wide(), result.gates, runs=len(result.runs),
                          newest_run_id=result.newest_run_id, top=rows, console=stdout, wide=wide)
            say_written(written)
    if not result.passed:
        raise typer.Exit(1)


def _print_sql(directory: Path, query: str, json_out: Optional[Path], *, timeout_s: float, memory_limit: str
               ) -> None:
    from ..render.history.console import print_frame
    from ..trends import sql

    result = sql(directory, query, timeout_s=timeout_s, memory_limit=memory_limit, on_notes=_print_notes)
    _, to_stdout = write_run([], None, None, [(json_out, result.json)])
    sys.stdout.write(to_stdout)
    if str(json_out) != "-":
        print_frame(result.frame, console=stdout)


def _print_notes(notes: list[str]) -> None:
    """Runs left out of the history (damaged, ambiguous), one line each on stderr: never silently."""
    for note in notes:
        warn(f"note: {note}")


def _repair(directory: Path) -> None:
    from ..trends import repair

    removed, migrated, after = repair(directory)
    for removed_path in removed:
        say(f"removed {removed_path}", soft_wrap=True)
    for run_id in migrated:
        say(f"committed run {run_id} (an old-layout run) with its manifest", soft_wrap=True)
    _print_notes(after.problems)
    say(f"repair: {len(after.runs)} runs committed, {len(removed)} files removed, {len(after.problems)} left out")

"""The `history` and `batch` commands: parse, call the library, print. Registered on the main app by cli.py.

Exit codes as everywhere: 0 success, 1 a --fail-on gate failed (history) or some reports failed (batch: the
others are written), 2 the command could not run (bad option, bad dataset, bad --sql; one line, no traceback).
"""

from __future__ import annotations

import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Callable, List, Optional

import typer
from rich.console import Console

from .common import GROUP_BY_HELP, grouping


def register(app: typer.Typer, *, user_errors: Callable, stdout: Console, stderr: Console,
             formats: Callable[[Optional[str]], list[str]], emit: Callable) -> None:
    """Add `history` and `batch` to `app`, sharing the main CLI's error handling, consoles, `--format` parser and
    Markdown/JSON/'-' output helper (passed in: this module must not import cli, which imports it)."""

    @app.command()
    def history(
        directory: Path = typer.Argument(..., help="The history folder (`analyze --history DIR`, `batch`)."),
        kernel: Optional[str] = typer.Option(None, "--kernel", help="Only kernels whose name matches this regex."),
        last: Optional[int] = typer.Option(None, "--last", min=1, help="Only the newest N runs."),
        label: List[str] = typer.Option([], "--label", help="Only runs with this label, repeatable: key=value."),
        fail_on: List[str] = typer.Option([], "--fail-on", help="Gate on the newest run against the band of the "
                                                                 "window, repeatable: 'time_s>+5%'."),
        window: int = typer.Option(10, "--window", min=1, help="Runs before the newest that make the band."),
        band: str = typer.Option("mad", "--band", help="'mad' (median ± k·1.4826·MAD, the default) or 'minmax'."),
        k: float = typer.Option(3.0, "--k", min=0.0, help="Width of the 'mad' band in MADs (sigma-scaled)."),
        min_time: float = typer.Option(0.0, "--min-time", min=0.0, help="Gate only kernels whose newest time is "
                                                                        "at least this many seconds."),
        sql: Optional[str] = typer.Option(None, "--sql", help="Run this SQL over views `kernels` and `launches` "
                                                              "and print the result."),
        rows: int = typer.Option(10, "--rows", min=0, help="Kernels listed in the terminal and the Markdown."),
        top: int = typer.Option(10, "--top", min=1, help="Kernels drawn in the chart."),
        out: Optional[Path] = typer.Option(None, "-o", "--out", help="Write history.parquet, .json, the chart."),
        fmt: Optional[str] = typer.Option(None, "--format", help="Extra chart formats: svg,png."),
        summary_md: Optional[Path] = typer.Option(None, "--summary-md", help="Write a Markdown summary here."),
        json_out: Optional[Path] = typer.Option(None, "--json", help="Write the JSON here ('-' for stdout)."),
        wide: bool = typer.Option(False, "--wide", help="Every column of the table, however wide the terminal."),
    ) -> None:
        """Per-kernel trends over the runs of a history folder; noise-aware gates on the newest run."""
        from ..history.bands import BandOptions
        from ..history.store import parse_labels
        from ..pipeline.gates import parse_gates

        with user_errors():
            gates = parse_gates(fail_on)
            labels = parse_labels(label)
            options = BandOptions(window=window, band=band, k=k)
            if sql is not None:
                _print_sql(directory, sql, json_out, stdout, emit)
                return
            from ..history.report import load_history
            from ..history.series import wide_values
            from ..render.history.console import print_history

            result = load_history(directory, kernel=kernel, last=last, labels=labels, gates=gates, band=options,
                                  min_time_s=min_time)
            metadata = result.metadata()
            time_wide = wide_values(result.series, "time_s", len(result.runs))
            written = []
            if out is not None:
                from ..render.history.outputs import write_history

                written = write_history(out, runs=result.runs, summary=result.summary, series=result.series,
                                        gates=result.gates, metadata=metadata, formats=formats(fmt), top=top,
                                        window=window, band_name=band)
            from ..render.history.json_summary import history_json
            from ..render.history.markdown import history_markdown

            emit(summary_md, lambda: history_markdown(result.summary, time_wide, result.gates, metadata=metadata,
                                                      runs=len(result.runs), newest_run_id=result.newest_run_id,
                                                      top=rows or 10), [])
            emit(json_out, lambda: history_json(result.runs, result.summary, result.series, result.gates,
                                                metadata=metadata), [])
            if str(json_out) != "-":
                print_history(result.summary, time_wide, result.gates, runs=len(result.runs),
                              newest_run_id=result.newest_run_id, top=rows, console=stdout, wide=wide)
                for path in written:
                    stdout.print(f"wrote {path}", highlight=False)
        if not result.passed:
            raise typer.Exit(1)

    @app.command()
    def batch(
        inputs: List[Path] = typer.Argument(..., help="Reports or exports: files, folders or globs; one run each."),
        history_dir: Path = typer.Option(..., "--history", help="The history folder to append the runs to."),
        jobs: Optional[int] = typer.Option(None, "--jobs", min=1, help="Worker processes (default: CPU count)."),
        dask: Optional[str] = typer.Option(None, "--dask", help="A Dask scheduler address, or 'local' for a "
                                                                "LocalCluster of --jobs workers."),
        label: List[str] = typer.Option([], "--label", help="Label every run, repeatable: key=value."),
        replace: bool = typer.Option(False, "--replace", help="Replace runs whose id is already in the history."),
        skip_existing: bool = typer.Option(False, "--skip-existing", help="Leave out reports whose run id is "
                                                                          "already in the history."),
        gpu: Optional[str] = typer.Option(None, "--gpu", help="Use this GPU's row of the ceiling table."),
        ceilings: Optional[Path] = typer.Option(None, "--ceilings", help="TOML file of roofs that override others."),
        clock: str = typer.Option("measured", "--clock", help="Roofs at the 'measured' clock or the device's 'max'."),
        group_by: str = typer.Option("kernel", "--group-by", help=GROUP_BY_HELP),
        nsys: Optional[Path] = typer.Option(None, "--nsys", help="A folder of Nsight Systems timelines, one per "
                                                                 "report: STEM.sqlite, STEM_cuda_gpu_kern_sum.csv "
                                                                 "or STEM.csv (see analyze --nsys)."),
    ) -> None:
        """One analysis per report, each appended to the history as its own run (id: the file name's stem)."""
        from ..batch import BatchOptions, plan_jobs, run_batch
        from ..batch import skip_existing as split_existing
        from ..core.errors import InputError
        from ..history.store import parse_labels

        with user_errors():
            groups = grouping(group_by)
            if replace and skip_existing:
                raise InputError(None, "--replace and --skip-existing exclude each other")
            options = BatchOptions(history=str(history_dir), labels=parse_labels(label), replace=replace,
                                   analyze={"gpu": gpu, "ceilings": str(ceilings) if ceilings else None,
                                            "clock": clock, **groups},
                                   nsys_dir=str(nsys) if nsys is not None else None)
            planned = plan_jobs(inputs)
            skipped = []
            if skip_existing:
                planned, skipped = split_existing(planned, history_dir)
            started = time.monotonic()
            failed = []
            progress = None
            if sys.stderr.isatty() and planned:
                from .progress import BatchProgress

                progress = BatchProgress(len(planned), stderr)

            def report(outcome) -> None:
                if outcome.error:
                    failed.append(outcome)
                    stderr.print(f"ncu-roofline: error: {outcome.error}", markup=False, highlight=False,
                                 soft_wrap=True)
                if progress is not None:
                    progress.advance(bool(outcome.error))

            with progress if progress is not None else nullcontext():
                outcomes = run_batch(planned, options, processes=jobs, dask=dask, on_outcome=report)
            seconds = time.monotonic() - started
            stdout.print(f"batch: {len(outcomes) - len(failed)} of {len(outcomes)} reports appended to "
                         f"{history_dir}" + (f", {len(failed)} failed" if failed else "")
                         + (f", {len(skipped)} already there (skipped)" if skipped else "")
                         + f" in {seconds:.1f} s", highlight=False)
        if failed:
            raise typer.Exit(1)


def _print_sql(directory: Path, query: str, json_out: Optional[Path], console: Console, emit: Callable) -> None:
    from ..history.store import connect, run_sql
    from ..render.history.console import print_frame
    from ..render.history.json_summary import frame_json

    con = connect(directory)
    try:
        frame = run_sql(con, query)
    finally:
        con.close()
    emit(json_out, lambda: frame_json(frame), [])
    if str(json_out) != "-":
        print_frame(frame, console=console)

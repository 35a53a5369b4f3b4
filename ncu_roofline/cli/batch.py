"""`ncu-roofline batch`: one analysis per report into a history folder (ncu_roofline/batch.py), on a local
process pool or a Dask cluster; parse, call `run_batch()`, print each failure and the tally.

Exit codes: 0 every report appended, 1 some reports failed (the others are written), 2 the command could not run.
"""

from __future__ import annotations

import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import List, Optional

import typer

from ..core.errors import InputError
from .common import PATH, CLOCK, GPU, GROUP_BY, checked_text, grouping, path, say, stderr, user_errors, warn


def batch(
    inputs: List[Path] = typer.Argument(..., click_type=PATH,
                                        help="Reports or exports: files, folders or globs; one run each."),
    history_arg: str = typer.Option(..., "--history", click_type=PATH,
                                    help="The history folder to append the runs to."),
    jobs: Optional[int] = typer.Option(None, "--jobs", min=1, help="Worker processes (default: the CPUs not "
                                                                  "already busy, from the load average)."),
    dask: Optional[str] = typer.Option(None, "--dask", help="A Dask scheduler address, or 'local' for a "
                                                            "LocalCluster of --jobs workers."),
    label: List[str] = typer.Option([], "--label", help="Label every run, repeatable: key=value."),
    replace: bool = typer.Option(False, "--replace", help="Replace runs whose id is already in the history."),
    skip_existing: bool = typer.Option(False, "--skip-existing", help="Leave out reports whose run id is "
                                                                      "already in the history."),
    gpu: Optional[str] = GPU,
    ceilings: Optional[str] = typer.Option(None, "--ceilings", click_type=PATH,
                                           help="TOML file of roofs that override others."),
    clock: str = CLOCK,
    group_by: str = GROUP_BY,
    nsys: Optional[str] = typer.Option(None, "--nsys", click_type=PATH,
                                       help="A folder of Nsight Systems timelines, one per "
                                            "report: STEM.sqlite, STEM_cuda_gpu_kern_sum.csv "
                                            "or STEM.csv (see analyze --nsys)."),
) -> None:
    """One analysis per report, each appended to the history as its own run (id: the file name's stem)."""
    from ..batch import BatchOptions, plan_jobs, run_batch
    from ..batch import skip_existing as split_existing
    from ..trends import history_location, parse_labels

    with user_errors():
        history_dir = history_location(path(history_arg, "--history") and history_arg)  # folder, file://, s3://, gs://
        ceilings, nsys = checked_text(ceilings, "--ceilings"), checked_text(nsys, "--nsys")
        groups = grouping(group_by)
        if replace and skip_existing:
            raise InputError(None, "--replace and --skip-existing exclude each other")
        options = BatchOptions(history=str(history_dir), labels=parse_labels(label), replace=replace,
                               analyze={"gpu": gpu, "ceilings": str(ceilings) if ceilings else None, "clock": clock,
                                        **groups},
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
                warn(f"error: {outcome.error}")
            if progress is not None:
                progress.advance(bool(outcome.error))

        with progress if progress is not None else nullcontext():
            outcomes = run_batch(planned, options, processes=jobs, dask=dask, on_outcome=report)
        seconds = time.monotonic() - started
        say(f"batch: {len(outcomes) - len(failed)} of {len(outcomes)} reports appended to {history_dir}"
            + (f", {len(failed)} failed" if failed else "")
            + (f", {len(skipped)} already there (skipped)" if skipped else "")
            + f" in {seconds:.1f} s")
    if failed:
        raise typer.Exit(1)

"""`batch`: one analysis per report into the history dataset, on a local process pool or a Dask cluster.

`analyse_report` is the one function that does the work for a report, in both paths, so the two give the same
rows. It never raises for a bad report: it returns an outcome naming the report and the problem, and the others go
on. A report's run id is its file name without the extension (made unique within the batch by `-2`, `-3`, ...),
and its run time is the file's modification time (when ncu wrote it), so a backfill of old reports keeps their
order and the same reports give the same dataset whichever way they were run.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Callable, Iterator, Mapping

from .core.errors import InputError
from .history.store import run_ids, safe_run_id
from .readers import expand_paths

DASK_HINT = "--dask needs the optional extra: pip install 'ncu-roofline[dask]'"


@dataclass(frozen=True)
class BatchJob:
    path: str
    run_id: str


@dataclass(frozen=True)
class BatchOutcome:
    path: str
    run_id: str
    error: str | None = None  # one line, naming the report, when it failed
    kernels: int = 0
    launches: int = 0


@dataclass(frozen=True)
class BatchOptions:
    """What every report's analysis and write share (plain data: it travels to pool and Dask workers)."""

    history: str
    labels: Mapping[str, str] = field(default_factory=dict)
    replace: bool = False
    analyze: Mapping[str, object] = field(default_factory=dict)  # keyword arguments of ncu_roofline.analyze
    nsys_dir: str | None = None  # `batch --nsys DIR`: each report's Nsight Systems timeline, found by name there


# Where `batch --nsys DIR` looks for a report's timeline, in this order ({stem}: the report's name without suffix).
TIMELINE_NAMES = ("{stem}.sqlite", "{stem}_cuda_gpu_kern_sum.csv", "{stem}.csv")


def timeline_for(report: str | Path, folder: str | Path) -> Path:
    """The timeline of `report` in `folder` (TIMELINE_NAMES); an InputError naming what was looked for if none."""
    stem = _stem(Path(report).name)
    names = [pattern.format(stem=stem) for pattern in TIMELINE_NAMES]
    for name in names:
        if (Path(folder) / name).is_file():
            return Path(folder) / name
    raise InputError(report, f"no Nsight Systems timeline for it in {folder} (looked for {', '.join(names)})")


def plan_jobs(inputs: list[str | Path]) -> list[BatchJob]:
    """One job per report file (globs and folders expanded, in a stable order), each with a unique run id."""
    files = expand_paths(inputs, refused=[])  # a FIFO or unreadable report is a job that fails, naming it
    if not files:
        raise InputError(None, "no input files given")
    taken: set[str] = set()
    jobs = []
    for path in files:
        stem = safe_run_id(_stem(path.name))
        run_id, n = stem, 1
        while run_id in taken:
            n += 1
            run_id = f"{stem}-{n}"
        taken.add(run_id)
        jobs.append(BatchJob(str(path), run_id))
    return jobs


def skip_existing(jobs: list[BatchJob], history: Path) -> tuple[list[BatchJob], list[BatchJob]]:
    """(to run, already in the history)."""
    existing = run_ids(history)
    return [j for j in jobs if j.run_id not in existing], [j for j in jobs if j.run_id in existing]


def analyse_report(job: BatchJob, options: BatchOptions) -> BatchOutcome:
    """Analyse one report and append it to the history as its own run: the unit of work of both paths."""
    from . import analyze
    from .history.store import append_analysis

    try:
        timeline = {"nsys": timeline_for(job.path, options.nsys_dir)} if options.nsys_dir else {}
        analysis = analyze([job.path], **dict(options.analyze), **timeline)
        run_time = datetime.fromtimestamp(os.stat(job.path).st_mtime, tz=timezone.utc)
        append_analysis(Path(options.history), analysis, run_id=job.run_id, labels=options.labels,
                        run_time=run_time, replace=options.replace)
    except InputError as error:
        line = error.line()
        return BatchOutcome(job.path, job.run_id, line if job.path in line else f"{job.path}: {line}")
    except Exception as exc:  # an unexpected failure of one report must not stop the others
        return BatchOutcome(job.path, job.run_id, f"{job.path}: {type(exc).__name__}: {exc}")
    return BatchOutcome(job.path, job.run_id, None, len(analysis.kernels), len(analysis.launches))


def run_local(jobs: list[BatchJob], options: BatchOptions, *, processes: int) -> Iterator[BatchOutcome]:
    """Outcomes in completion order, from a pool of `processes` (1: in this process, no pool)."""
    work = partial(analyse_report, options=options)
    if processes <= 1 or len(jobs) <= 1:
        yield from map(work, jobs)
        return
    methods = multiprocessing.get_all_start_methods()
    # forkserver: workers start from a clean process, not a fork of one running a progress-bar thread.
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    with ProcessPoolExecutor(max_workers=min(processes, len(jobs)), mp_context=context) as pool:
        futures = {pool.submit(work, job): job for job in jobs}
        for future in as_completed(futures):
            yield _outcome(future, futures[future])


def run_dask(jobs: list[BatchJob], options: BatchOptions, *, address: str, processes: int) -> Iterator[BatchOutcome]:
    """Outcomes in completion order from a Dask cluster: `address` ("local": a LocalCluster of `processes`
    single-threaded workers). Workers must see the report files and the history folder at the same paths."""
    try:
        import logging

        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed
    except ImportError:
        raise InputError(None, DASK_HINT) from None
    cluster = None
    try:
        if address == "local":
            cluster = LocalCluster(n_workers=max(1, processes), threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster)
        else:
            client = Client(address, timeout="30s")
    except OSError as exc:
        raise InputError(None, f"--dask {address}: cannot reach the scheduler ({exc})") from None
    try:
        futures = client.map(analyse_report, jobs, options=options, pure=False)
        owners = {future.key: job for future, job in zip(futures, jobs)}
        for future in dask_completed(futures):
            yield _outcome(future, owners[future.key])
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def default_workers(reports: int, cpus: int | None = None, load: float | None = None) -> int:
    """Workers for `reports` when `--jobs` is not given: the CPUs this process may use that are not already busy
    (a 1-minute load average of 1.3 makes one busy), at least one, at most one per report. A pool over busy cores
    is slower than one worker: each worker pays the imports again and they take turns on the same cores (issue #38
    measured the CPU count 1.19x `--jobs 1` on a busy 2-core machine)."""
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if load is None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return max(1, min(cpus - int(load), reports))


def _outcome(future, job: BatchJob) -> BatchOutcome:
    try:
        return future.result()
    except Exception as exc:  # the worker died (killed, out of memory): name the report, go on
        return BatchOutcome(job.path, job.run_id, f"{job.path}: worker failed: {type(exc).__name__}: {exc}")


def run_batch(jobs: list[BatchJob], options: BatchOptions, *, processes: int | None = None,
              dask: str | None = None, on_outcome: Callable[[BatchOutcome], None] | None = None
              ) -> list[BatchOutcome]:
    """Run every job; `on_outcome` sees each outcome as it arrives (progress, error lines). In completion order."""
    processes = processes or default_workers(len(jobs))
    outcomes = run_dask(jobs, options, address=dask, processes=processes) if dask else \
        run_local(jobs, options, processes=processes)
    done = []
    for outcome in outcomes:
        if on_outcome is not None:
            on_outcome(outcome)
        done.append(outcome)
    return done


def _stem(name: str) -> str:
    for suffix in (".ncu-repz", ".ncu-rep", ".nsight-cuprof-report"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem

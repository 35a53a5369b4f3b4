"""Progress bars (rich, on stderr): reading inputs (appears only when reading takes more than a second), and
`batch`'s reports done of all. The CLI shows them only on a terminal."""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class ReadProgress:
    """Callable the readers report byte positions to; shows a bar after the first second."""

    def __init__(self, inputs: list[Path], console: Console, delay_s: float = 1.0) -> None:
        self._sizes = [p.stat().st_size for p in inputs if p.is_file()]
        self._total = sum(self._sizes) or 1
        self._console = console
        self._delay_s = delay_s
        self._start = time.monotonic()
        self._done_files = 0
        self._last = 0
        self._progress: Progress | None = None
        self._task = None

    def __enter__(self) -> "ReadProgress":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def __call__(self, position: int) -> None:
        if position < self._last:  # the readers moved on to the next file
            self._done_files += self._last
        self._last = position
        if self._progress is None:
            if time.monotonic() - self._start < self._delay_s:
                return
            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                                      TimeRemainingColumn(),
                                      console=self._console, transient=True)
            self._task = self._progress.add_task("reading", total=self._total)
            self._progress.start()
        done = min(self._done_files + position, self._total)
        # Reading is most of the wait, but not all: say so once the bytes are in.
        label = "analysing" if done >= self._total else "reading"
        self._progress.update(self._task, completed=done, description=label)


class BatchProgress:
    """Context manager; call `advance(failed)` once per finished report."""

    def __init__(self, total: int, console: Console) -> None:
        self._failed = 0
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=True)
        self._task = self._progress.add_task("analysing", total=total)

    def __enter__(self) -> "BatchProgress":
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def advance(self, failed: bool) -> None:
        self._failed += int(failed)
        label = f"analysing ({self._failed} failed)" if self._failed else "analysing"
        self._progress.update(self._task, advance=1, description=label)

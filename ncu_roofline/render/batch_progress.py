"""The batch progress bar (rich, on stderr): reports done of all, failures counted, time left. Only on a terminal."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
    TimeRemainingColumn


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

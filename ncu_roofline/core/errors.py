"""The one error type that reaches the user.

Readers and the library raise `InputError(path, message)`; only the CLI turns it into exit code 2 and a
single line on stderr. Nothing else may print a traceback for bad input.
"""

from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """Bad or unusable input, described in one line that names the file."""

    def __init__(self, path: str | Path | None, message: str) -> None:
        self.path = None if path is None else str(path)
        self.message = message
        super().__init__(self.line())

    def line(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

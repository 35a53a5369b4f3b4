"""What every command shares: the consoles, one-line errors with exit 2, and option lists.

Its own module so that command modules (`cli.py`, `cli_model.py`) import it, never each other.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator, Optional

import typer
from rich.console import Console

from .errors import InputError

# Logs and pipes get a wide table instead of rich's 80-column default.
stdout = Console(width=None if sys.stdout.isatty() else 160)
stderr = Console(stderr=True)


def fail(error: InputError) -> None:
    stderr.print(f"ncu-roofline: error: {error.line()}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


@contextmanager
def user_errors() -> Iterator[None]:
    """Bad input becomes exit 2 and one line; anything unexpected still says which input it was reading."""
    try:
        yield
    except InputError as error:
        fail(error)
    except KeyboardInterrupt:
        stderr.print("ncu-roofline: interrupted")
        raise typer.Exit(130) from None


def _formats(value: Optional[str]) -> list[str]:
    return [f.strip().lower() for f in (value or "").split(",") if f.strip()]

"""What every command shares: the consoles, one-line errors with exit 2, and option lists.

Its own module so that command modules (`cli.py`, `cli_model.py`) import it, never each other.
"""

from __future__ import annotations

import signal
import sys
from contextlib import contextmanager
from typing import Iterator, Optional

import typer
from rich.console import Console

from .errors import InputError
from .render.safe_text import for_terminal

# Logs and pipes get a wide table instead of rich's 80-column default.
stdout = Console(width=None if sys.stdout.isatty() else 160)
stderr = Console(stderr=True)


def fail(error: InputError) -> None:
    # for_terminal: a path or name holding a line break or an ESC sequence must not break the one line or the terminal
    stderr.print(f"ncu-roofline: error: {for_terminal(error.line())}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


@contextmanager
def user_errors() -> Iterator[None]:
    """Bad input becomes exit 2 and one line; anything unexpected still says which input it was reading."""
    try:
        yield
    except InputError as error:
        fail(error)
    except Terminated:
        stderr.print("ncu-roofline: terminated")
        raise typer.Exit(128 + signal.SIGTERM) from None
    except KeyboardInterrupt:
        stderr.print("ncu-roofline: interrupted")
        raise typer.Exit(130) from None


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C, so that every `finally` and cleanup runs for it too."""


def on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def _formats(value: Optional[str]) -> list[str]:
    """Extra chart formats, checked before anything is read or written."""
    from .render.outputs import EXTRA_FORMATS

    formats = [f.strip().lower() for f in (value or "").split(",") if f.strip()]
    unknown = [f for f in formats if f not in EXTRA_FORMATS]
    if unknown:
        raise InputError(None, f"unknown --format {', '.join(unknown)}; choose from {', '.join(EXTRA_FORMATS)}")
    return formats

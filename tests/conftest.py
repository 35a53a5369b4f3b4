"""Shared test helpers: where the fixtures and the shared real-world samples live, the hypothesis profile, and
the `conformance` marker on every test that reads the shared samples.

Markers (pyproject.toml, strict): `slow` (a test of several seconds: a property over hundreds of examples, whole
CLI processes, signals; `pytest -m "not slow"` is the quick loop) and `conformance` (a test on the real exports in
../shared/ncu-samples; `pytest -m conformance` runs the conformance suite alone).
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SAMPLES = ROOT.parent / "shared" / "ncu-samples"

# Every machine draws the same examples (no random seed, no example database carried between runs), and a loaded
# machine never fails a test for being slow. A test that needs more examples says so in its own @settings.
settings.register_profile("ncu-roofline", derandomize=True, database=None, deadline=None, max_examples=100,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                 HealthCheck.filter_too_much])
settings.load_profile("ncu-roofline")


def pytest_configure(config: pytest.Config) -> None:
    """A suite started with SIGINT ignored (a background job of a non-interactive shell, `cmd &` in a CI script, or
    nohup) gets Python's own SIGINT handler back, as when started from a terminal: the signal tests send SIGINT to
    the CLI and to this process, and a child inherits an ignored SIGINT (a handled one is reset to default by exec),
    so there the CLI would never see it and the tests would fail for where the suite was started."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _no_terminal_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts without COLUMNS/LINES: the tables' width is then the CLI's own pipe default unless the
    test asks for one, whatever the shell, CI runner or pytest-xdist worker (which sets COLUMNS=80) says."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture
def samples() -> Path:
    """The real ncu exports in ../shared/ncu-samples; tests using them skip when the folder is absent."""
    if not SAMPLES.is_dir():
        pytest.skip("../shared/ncu-samples is not present")
    return SAMPLES


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that takes the `samples` fixture is a conformance test (modules built on the samples say so in their
    own `pytestmark`)."""
    for item in items:
        if "samples" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.conformance)


def ncu_actions(path: Path) -> tuple[object, list]:
    """Every action (launch) of a report in the order ncu_report walks them (ranges, then actions), read with NVIDIA's
    package directly: the tests' reference, independent of readers/ncu_rep.py. The report comes back with them:
    its actions need it alive. Skips without the `ncu-report` wheel."""
    ncu_report = pytest.importorskip("ncu_report")
    report = ncu_report.load_report(str(path))
    return report, [report.range_by_idx(r).action_by_idx(a) for r in range(report.num_ranges())
                    for a in range(report.range_by_idx(r).num_actions())]


def cli_in_process(*args: object, cwd: Path | None = None, env: dict[str, str] | None = None):
    """The CLI run in this process (typer's CliRunner, from `cwd` and with `env` set when given): the same command a
    separate process would run, without ~0.5-1 s of interpreter and import start-up each. For a test that is not
    about the process itself (exit status of a real process, signals, closed streams, what gets imported). Returns
    returncode (also as exit_code), stdout and stderr. An exception that escapes the CLI is raised here, so it fails
    the test instead of passing as exit 1."""
    import contextlib
    from types import SimpleNamespace

    from typer.testing import CliRunner

    from ncu_roofline.cli import app

    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        result = CliRunner().invoke(app, [str(a) for a in args], env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return SimpleNamespace(returncode=result.exit_code, exit_code=result.exit_code, stdout=result.stdout,
                           stderr=result.stderr)

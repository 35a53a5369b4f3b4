"""SIGINT/SIGTERM inside the final renames of an output set (issue 23): the signal is held until the last rename,
whichever thread the kernel hands it to, so the set on disk is the whole new one, and the signal still ends the run.

In process: a helper thread sends SIGINT to itself (`pthread_kill`, so it is that thread, not the main one, that
receives it) at seeded instants between the renames. As a process: `analyze -o` with a pause after each rename
(NCU_ROOFLINE_TEST_RENAME_PAUSE_S) gets SIGINTs from outside at seeded instants of the window.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ncu_roofline.cli import app
from ncu_roofline.render.bundle import TEST_RENAME_PAUSE_VARIABLE, OutputSet

from conftest import FIXTURES

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
NAMES = [f"file{i}.txt" for i in range(6)]


def test_sigint_to_another_thread_mid_rename_waits_for_the_last_rename(tmp_path, monkeypatch):
    monkeypatch.setenv(TEST_RENAME_PAUSE_VARIABLE, "0.01")  # 6 renames: a 60 ms window
    rng = random.Random(23)
    for attempt in range(20):
        for name in NAMES:
            (tmp_path / name).write_text(f"old {attempt}")
        delay = rng.uniform(0.0, 0.05)

        def interrupt() -> None:
            while not (tmp_path / NAMES[0]).read_text().startswith("new"):  # the first rename is done
                time.sleep(0.001)
            time.sleep(delay)
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # this thread's, not the main thread's

        with OutputSet() as outputs:
            for name in NAMES:
                outputs.stage(tmp_path / name, f"new {attempt}".encode())
            sender = threading.Thread(target=interrupt)
            sender.start()
            with pytest.raises(KeyboardInterrupt):
                outputs.commit()
                time.sleep(1)  # a signal that arrived after commit returned still interrupts here
            sender.join()
        assert {(tmp_path / n).read_text() for n in NAMES} == {f"new {attempt}"}, attempt  # whole new set
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is given back


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_sigints_from_outside_during_the_renames_leave_the_whole_new_set(tmp_path):
    first, second = FIXTURES / "raw_base_units.csv", FIXTURES / "example_h100_raw.csv"
    reference = tmp_path / "reference"
    assert CliRunner().invoke(app, ["analyze", str(second), "-o", str(reference), "--rows", "0"]).exit_code == 0
    new = _snapshot(reference)
    out = tmp_path / "out"
    rng = random.Random(23)
    env = {**os.environ, TEST_RENAME_PAUSE_VARIABLE: "0.1"}  # 4 files, a pause after each rename: 0.4 s
    for attempt in range(6):
        assert CliRunner().invoke(app, ["analyze", str(first), "-o", str(out), "--rows", "0", "--format",
                                        "svg"]).exit_code == 0
        old = _snapshot(out)
        proc = subprocess.Popen([sys.executable, "-m", "ncu_roofline.cli", "analyze", str(second), "-o", str(out),
                                 "--rows", "0"], stderr=subprocess.PIPE, text=True, env=env)
        try:
            assert proc.stderr.readline().strip() == "committing"
            for _ in range(3):  # several signals, all inside the window
                time.sleep(rng.uniform(0.0, 0.1))
                proc.send_signal(signal.SIGINT)
            rest = proc.stderr.read()
            assert proc.wait(timeout=60) == 130, rest
        finally:
            proc.kill()
            proc.communicate()  # closes the pipe
        assert rest.strip().splitlines() == ["ncu-roofline: interrupted"]
        after = _snapshot(out)
        assert after == new and after != old, attempt  # the new set, byte for byte: no old roofline.svg beside it

"""A path or kernel name that holds an emoji code (`:rocket:`) is printed as it is, never as the emoji rich would
put in its place (the CLI's consoles are made with `emoji=False`)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import FIXTURES


def test_paths_and_kernel_names_with_emoji_codes_print_verbatim(tmp_path):
    folder = tmp_path / "run:fire:"
    folder.mkdir()
    source = folder / "k:smile:.csv"
    text = (FIXTURES / "example_h100_raw.csv").read_text(encoding="utf-8")
    source.write_text(text.replace("stencil_fp64", "stencil:tada:fp64"), encoding="utf-8")
    out = tmp_path / "out:rocket:"
    done = subprocess.run([sys.executable, "-m", "ncu_roofline.cli", "analyze", str(source), "-o", str(out)],
                          capture_output=True, text=True, encoding="utf-8", env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert f"wrote {out / 'roofline.html'}" in done.stdout
    assert "stencil:tada:fp64(" in done.stdout  # the kernel's row in the table
    assert not {"🔥", "😄", "🚀", "🎉"} & set(done.stdout + done.stderr)

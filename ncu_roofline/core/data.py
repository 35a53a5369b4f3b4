"""Where the data files live (`metrics/`: the catalogue, the GPU table): inside an installed wheel (package data),
else at the top of a source checkout. One answer, so every layer reads the same files."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]
METRICS_DIR = _PACKAGE / "metrics" if (_PACKAGE / "metrics").is_dir() else _PACKAGE.parent / "metrics"

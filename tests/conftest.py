"""Shared test helpers: where the fixtures and the shared real-world samples live."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SAMPLES = ROOT.parent / "shared" / "ncu-samples"


@pytest.fixture
def samples() -> Path:
    """The real ncu exports in ../shared/ncu-samples; tests using them skip when the folder is absent."""
    if not SAMPLES.is_dir():
        pytest.skip("../shared/ncu-samples is not present")
    return SAMPLES

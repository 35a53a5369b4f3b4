"""The app headroom of a kernel whose speed of light lacks terms is an upper bound and says so (issue 35, item 3).

fixtures/raw_base_units.csv counts FP64/FP32 FLOPs and DRAM bytes but no L1/L2 traffic, so both kernels'
`sol_complete` is false (analyze prints `≤` before their headroom); weighted by the nsys timeline
(fixtures/nsys/kern_sum_2024.csv) their app headroom is that headroom scaled, so it is an upper bound too.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from ncu_roofline import analyze
from ncu_roofline.render.analysis.console import print_summary
from ncu_roofline.render.text.numbers import format_si

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_app_headroom_keeps_the_upper_bound_mark():
    result = analyze(FIXTURES / "raw_base_units.csv", nsys=FIXTURES / "nsys" / "kern_sum_2024.csv")
    assert not result.kernels["sol_complete"].any()
    shown = [format_si(v, "s") for v in result.kernels["app_headroom_s"]]
    markdown = result.markdown()
    for value in shown:
        assert f"≤ {value}" in markdown
    console = Console(width=200, record=True, color_system=None)
    print_summary(result.kernels, console=console, wide=True)
    terminal = console.export_text()
    assert all(f"≤ {value}" in terminal for value in shown), terminal

"""What a roofline chart says about where its numbers come from (GPU, ceilings, clock, inputs, how many kernels):
the context every part of the chart (marks, subtitle, page title) reads; the kernel table carries the numbers."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChartContext:
    """What the chart says about where its numbers come from; the kernels table carries the numbers."""

    gpu: str
    ceiling_source: str
    clock: str  # "measured" or "max": which SM clock the ceilings assume
    inputs: list[str]
    top: int = 20
    precision: str | None = None  # one precision's chart (`--precision`): its FLOP/s and its roof only
    timeline: str | None = None  # with --nsys: how much of the run the profile covers, and the ranking it gives
    bars: str = "headroom_s"  # the column the headroom bars plot: app_headroom_s where the kernels are ranked by it

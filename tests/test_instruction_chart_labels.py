"""The instruction roofline's rank numbers: placed as the roofline's (render/chart/placement.py), one per spot of a
kernel, on no point and no other text. On the shared samples, in Chromium: tests/test_chart_overlap.py.

Before, every point carried its rank at a fixed offset: a kernel's L2 and DRAM points a few pixels apart printed
"1" twice side by side, which reads as "11" (NCAR MW_Baseline), and two kernels at one spot printed "33".
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ncu_roofline.render.analysis.instruction_chart import (
    HEIGHT, POINT_SIZE, RANK_FONT, WIDTH, instruction_chart_data, instruction_roofline_spec)
from ncu_roofline.render.chart.placement import Plot, box, overlaps, text_size

BASE = {"grid": "(80, 1, 1)", "block": "(256, 1, 1)", "peak_warp_gips": 400.0, "peak_bytes_per_s_dram": 1e12,
        "peak_bytes_per_s_l2": 4e12, "peak_bytes_per_s_l1": 16e12, "int_ops": math.nan, "launches": 1,
        "warp_inst": 1e9, "limiter": "latency", "limiter_evidence": "", "ii_shared_ideal": math.nan}


def kernel(rank: int, gips: float, l1: float, l2: float, dram: float, shared: float = math.nan) -> dict:
    return {**BASE, "rank": rank, "kernel_name": f"k{rank}", "gips": gips, "ii_l1": l1, "ii_l2": l2,
            "ii_dram": dram, "ii_shared": shared}


def boxes_px(data) -> tuple[list[np.ndarray], list[tuple[float, float, float]]]:
    """Each placed number's box and each point's disc, in the plot's pixels."""
    plot = Plot(WIDTH, HEIGHT, data.x_domain, data.y_domain)
    radius = math.sqrt(POINT_SIZE / math.pi)
    px, py = plot.to_px(data.points["ii"].to_numpy(float), data.points["gips"].to_numpy(float))
    discs = list(zip(px.tolist(), py.tolist(), [radius] * len(px)))
    lx, ly = plot.to_px(data.labels["x"].to_numpy(float), data.labels["y"].to_numpy(float))
    texts = [box(x, y, *text_size(t, RANK_FONT, "bold")) for x, y, t in zip(lx, ly, data.labels["text"])]
    return texts, discs


def test_a_kernels_points_a_few_pixels_apart_share_one_number():
    # Kernel 1: L2 10.0 and DRAM 10.1 warp instructions per transaction are log10(1.01) = 0.0043 decades apart,
    # under a pixel here, so they share one "1"; its L1 (1.0) and shared (100) points are decades away: 3 numbers.
    # Kernel 2 sits at the same L2/DRAM spot one kernel lower (gips 90): its own "2".
    data = instruction_chart_data(pd.DataFrame([kernel(1, 100.0, 1.0, 10.0, 10.1, shared=100.0),
                                                kernel(2, 90.0, 0.5, 10.0, 10.1)]))
    assert data.unnumbered == 0
    assert data.labels["text"].tolist().count("1") == 3
    assert data.labels["text"].tolist().count("2") == 2  # L1 alone, L2 and DRAM together
    texts, discs = boxes_px(data)
    for i, a in enumerate(texts):  # no number on a point or on another number
        assert not any(overlaps(a, b) for b in texts[i + 1:])
        assert not any(overlaps(a, box(x, y, 2 * r, 2 * r)) for x, y, r in discs)


def test_the_spec_draws_the_placed_numbers_centred_and_says_how_many_found_no_room():
    # twelve kernels on one spot at every level: the numbers run out of free places around it
    crowd = pd.DataFrame([kernel(r, 100.0, 1.0, 10.0, 10.0) for r in range(1, 13)])
    data = instruction_chart_data(crowd)
    spec = instruction_roofline_spec(crowd, title="t")
    [ranks] = [layer for layer in spec["layer"] if layer["data"] == {"name": "labels"}]
    assert ranks["mark"]["align"] == "center" and ranks["mark"]["baseline"] == "middle"
    assert ranks["encoding"]["text"]["field"] == "text"
    # two spots per kernel (L1; L2 and DRAM together): 24 numbers wanted, each placed or counted
    assert data.unnumbered > 0 and len(data.labels) + data.unnumbered == 12 * 2
    assert len(spec["datasets"]["labels"]) == len(data.labels)
    assert spec["title"]["subtitle"][-1] == (f"{data.unnumbered} crowded points without a rank number: the tooltip "
                                             "names the kernel")

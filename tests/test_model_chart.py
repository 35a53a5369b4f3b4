"""The model chart's roof labels: one per roof (memory roofs included), naming GPU, roof and value, placed along
their roof as the roofline's are, none over another or over a point; a roof's tooltip reads its label's text.

Geometry is checked twice: on the boxes the placement worked with (no browser), and on the SVG that vl-convert
writes as headless Chromium lays it out (the roofline's overlap test's method, skipped without Chromium)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ncu_roofline.model.llm import llm
from ncu_roofline.model.place import place_points, table_roofs, workloads_frame
from ncu_roofline.model.workloads import gemm, layernorm
from ncu_roofline.render.chart.roofline import ROOFLINE_HEIGHT_PX, ROOFLINE_WIDTH_PX
from ncu_roofline.render.chart.layout import ROOF_FONT
from ncu_roofline.render.model.chart import model_chart
from ncu_roofline.render.chart.gpu_roof_labels import POINT_RADIUS_PX, short_gpu_names
from ncu_roofline.render.text.numbers import format_si
from ncu_roofline.render.chart.placement import Plot, box, overlaps, text_size

H100, H200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"


def spec_for(gpus: list[str], works: list) -> dict:
    roof_sets = table_roofs(gpus)
    points = place_points(workloads_frame(works), roof_sets)
    return model_chart(points, {r.name: r.peaks for r in roof_sets})


@pytest.fixture(scope="module")
def decode() -> dict:
    """70B fp16 decode on H100 and H200 (test_model.py's two-GPU command): 1 FLOP/B, DRAM-bound on both."""
    return spec_for(["H100 SXM", "H200"], [llm(70e9, phase="decode")])


def label_boxes(spec: dict) -> list[tuple[str, np.ndarray]]:
    """Each drawn label's box in plot pixels, rebuilt from the spec: its centre (data x, y on the spec's own
    domains) and Vega angle (clockwise), with the size the placement reckons for an 11 px bold text."""
    [lines, *_] = spec["layer"]
    x_domain = tuple(lines["encoding"]["x"]["scale"]["domain"])
    y_domain = tuple(lines["encoding"]["y"]["scale"]["domain"])
    plot = Plot(ROOFLINE_WIDTH_PX, ROOFLINE_HEIGHT_PX, x_domain, y_domain)
    out = []
    for row in spec["datasets"]["roof_labels"]:
        px, py = plot.to_px(row["x"], row["y"])
        w, h = text_size(row["label"], ROOF_FONT, "bold")
        out.append((row["label"], box(float(px), float(py), w, h, (360.0 - row["angle"]) % 360.0)))
    return out


def point_boxes(spec: dict) -> list[np.ndarray]:
    [lines, *_] = spec["layer"]
    plot = Plot(ROOFLINE_WIDTH_PX, ROOFLINE_HEIGHT_PX, tuple(lines["encoding"]["x"]["scale"]["domain"]),
                tuple(lines["encoding"]["y"]["scale"]["domain"]))
    r = POINT_RADIUS_PX
    return [box(float(px), float(py), 2 * r, 2 * r) for px, py in
            (plot.to_px(p["x"], p["y"]) for p in spec["datasets"]["points"])]


def assert_apart(spec: dict) -> None:
    labels, points = label_boxes(spec), point_boxes(spec)
    for i, (a, qa) in enumerate(labels):
        assert all(not overlaps(qa, qb) for _, qb in labels[i + 1:]), a
        assert all(not overlaps(qa, qp) for qp in points), a
        assert (qa >= 0).all() and (qa[:, 0] <= ROOFLINE_WIDTH_PX).all() and (qa[:, 1] <= ROOFLINE_HEIGHT_PX).all()


def test_two_gpus_get_one_label_per_roof_memory_roofs_included(decode):
    # H100: DRAM 3350 GB/s = 3.35 TB/s, dense FP16 tensor 989.4 TFLOP/s -> "989"; H200: DRAM 4800 GB/s = 4.80 TB/s,
    # the same tensor roof. Four roofs, four labels, each naming its GPU.
    roofs = pd.DataFrame(decode["datasets"]["roofs"])
    labels = pd.DataFrame(decode["datasets"]["roof_labels"])
    assert roofs["roof"].nunique() == 4 == len(labels)
    assert sorted(labels["label"]) == ["H100 DRAM 3.35 TB/s", "H100 Tensor FP16 989 TFLOP/s",
                                       "H200 DRAM 4.80 TB/s", "H200 Tensor FP16 989 TFLOP/s"]
    assert set(labels["roof"]) == set(roofs["roof"])
    # A diagonal's label is turned along it: slope 1 on a plot of 640 px over 4 decades of x (160 px/decade) and
    # 480 px over 4 of y (120 px/decade) rises at atan(120/160) = 36.87° counter-clockwise, 323.13° as Vega turns.
    [lines, *_] = decode["layer"]
    assert lines["encoding"]["x"]["scale"]["domain"] == [0.1, 1000.0]
    assert lines["encoding"]["y"]["scale"]["domain"] == [1e12, 1e16]
    memory = labels[labels["kind"] == "memory"]
    assert memory["angle"].tolist() == pytest.approx([360 - math.degrees(math.atan2(120, 160))] * 2, abs=1e-3)
    assert (labels.loc[labels["kind"] == "compute", "angle"] == 0).all()
    assert_apart(decode)


def test_a_label_sits_along_its_own_roof(decode):
    # Each label's centre is half a text height (14.3 px / 2) plus 2 px off its line: 9.15 px, above or below.
    [lines, *_] = decode["layer"]
    plot = Plot(ROOFLINE_WIDTH_PX, ROOFLINE_HEIGHT_PX, tuple(lines["encoding"]["x"]["scale"]["domain"]),
                tuple(lines["encoding"]["y"]["scale"]["domain"]))
    roofs = pd.DataFrame(decode["datasets"]["roofs"])
    for row in decode["datasets"]["roof_labels"]:
        ends = roofs[roofs["roof"] == row["roof"]]
        (x0, x1), (y0, y1) = plot.to_px(ends["x"].to_numpy(), ends["y"].to_numpy())
        cx, cy = plot.to_px(row["x"], row["y"])
        distance = abs((x1 - x0) * (y0 - cy) - (x0 - cx) * (y1 - y0)) / math.hypot(x1 - x0, y1 - y0)
        assert distance == pytest.approx(ROOF_FONT * 1.3 / 2 + 2, abs=0.01), row["label"]


def test_tooltips_read_the_drawn_labels_number(decode):
    roofs = pd.DataFrame(decode["datasets"]["roofs"])
    labels = {row["roof"]: row["label"] for row in decode["datasets"]["roof_labels"]}
    [lines, *_] = decode["layer"]
    assert lines["encoding"]["tooltip"][0]["field"] == "label"  # the line's tooltip shows its label's text
    for roof, ends in roofs.groupby("roof"):
        assert set(ends["label"]) == {labels[roof]}
        unit = "B/s" if ends["kind"].iloc[0] == "memory" else "FLOP/s"
        assert labels[roof].endswith(format_si(ends["peak"].iloc[0], unit))
    # Each point's tooltip names the roof it sits under, in the same words: decode is DRAM-bound on both GPUs.
    assert [(p["gpu"], p["on_roof"]) for p in decode["datasets"]["points"]] == [
        (H100, "H100 DRAM 3.35 TB/s"), (H200, "H200 DRAM 4.80 TB/s")]
    # ... and its attainable FLOP/s is that roof's: 1 FLOP/B × 4.80 TB/s = 4.80 TFLOP/s.
    assert decode["datasets"]["points"][1]["attainable"] == "4.80 TFLOP/s"


def test_coinciding_roofs_get_a_label_each_side_by_side():
    # H100 and H200 share FP32 66.9 TFLOP/s: one line drawn twice, two labels that do not overlap.
    spec = spec_for(["H100 SXM", "H200"], [gemm(1024, 1024, 1024, "fp32")])
    words = sorted(row["label"] for row in spec["datasets"]["roof_labels"])
    assert words == ["H100 DRAM 3.35 TB/s", "H100 FP32 66.9 TFLOP/s", "H200 DRAM 4.80 TB/s", "H200 FP32 66.9 TFLOP/s"]
    assert_apart(spec)
    # 2·1024³ FLOP over 3·1024²·4 B = 170.7 FLOP/B, right of both ridges (66.9e12 / 3.35e12 = 19.97 and
    # 66.9e12 / 4.8e12 = 13.94): FP32-bound, and each point's tooltip names its own GPU's FP32 label.
    assert [p["on_roof"] for p in spec["datasets"]["points"]] == ["H100 FP32 66.9 TFLOP/s", "H200 FP32 66.9 TFLOP/s"]


def test_three_gpus_with_roofs_a_few_percent_apart_keep_every_label_apart():
    # H100 FP32 66.9, B200 FP32 75 and A100 FP16 78 TFLOP/s lie within 0.07 decade (6 px) of each other.
    spec = spec_for(["NVIDIA A100-SXM4-80GB", "H100 SXM", "B200"],
                    [gemm(1024, 1024, 1024, "fp32"), layernorm(4096, 1024, "fp16")])
    words = {row["label"] for row in spec["datasets"]["roof_labels"]}
    assert {"H100 FP32 66.9 TFLOP/s", "B200 FP32 75.0 TFLOP/s", "A100 FP16 78.0 TFLOP/s"} <= words
    assert {"A100 DRAM 2.04 TB/s", "H100 DRAM 3.35 TB/s", "B200 DRAM 7.70 TB/s"} <= words
    assert len(words) == pd.DataFrame(spec["datasets"]["roofs"])["roof"].nunique()
    assert_apart(spec)


def four_gpu_decode() -> dict:
    """The README's int4 decode on A100, H100, H200 and B200: four diagonals 0.15-0.4 decade apart, and compute
    roofs whose drawn part (ridge 150-295 FLOP/B to the right edge at 1000) is shorter than their labels."""
    return spec_for(["NVIDIA A100-SXM4-80GB", "H100 SXM", "H200", "B200"],
                    [llm(70e9, phase="decode", seq=4096, layers=80, kv_heads=8, head_dim=128, weight_dtype="int4")])


def test_four_gpus_label_every_roof_near_its_drawn_part():
    spec = four_gpu_decode()
    labels = pd.DataFrame(spec["datasets"]["roof_labels"])
    assert len(labels) == 8 == pd.DataFrame(spec["datasets"]["roofs"])["roof"].nunique()
    assert_apart(spec)
    # Every compute label reaches over its drawn roof, right of the GPU's ridge (A100: 312e12 / 2.039e12 = 153
    # FLOP/B), rather than floating further left over nothing.
    [lines, *_] = spec["layer"]
    plot = Plot(ROOFLINE_WIDTH_PX, ROOFLINE_HEIGHT_PX, tuple(lines["encoding"]["x"]["scale"]["domain"]),
                tuple(lines["encoding"]["y"]["scale"]["domain"]))
    roofs = pd.DataFrame(spec["datasets"]["roofs"])
    boxes = dict(label_boxes(spec))
    for row in labels[labels["kind"] == "compute"].itertuples():
        ridge_px, _ = plot.to_px(roofs.loc[roofs["roof"] == row.roof, "x"].min(), row.peak)
        assert boxes[row.label][:, 0].max() > ridge_px, row.label


def test_short_gpu_names_stay_distinct():
    assert short_gpu_names([H100, H200]) == {H100: "H100", H200: "H200"}
    assert short_gpu_names(["Tesla V100-SXM2-16GB", "NVIDIA A100-SXM4-80GB"]) == {
        "Tesla V100-SXM2-16GB": "V100", "NVIDIA A100-SXM4-80GB": "A100"}
    # Two A100s share the model word: the names without the vendor tell them apart.
    assert short_gpu_names(["NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB"]) == {
        "NVIDIA A100-SXM4-40GB": "A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB": "A100-SXM4-80GB"}
    # ... while a third GPU keeps its model word.
    assert short_gpu_names(["NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-16GB"]) == {
        "NVIDIA A100-SXM4-40GB": "A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB": "A100-SXM4-80GB",
        "Tesla V100-SXM2-16GB": "V100"}
    assert short_gpu_names(["A100 MIG 3g.40gb"]) == {"A100 MIG 3g.40gb": "A100"}


# ------------------------------------------------------------------------------------- as Chromium lays it out

CHROMIUM = Path("/usr/bin/chromium")
# The roofline overlap test's measure (tests/test_chart_overlap.py), less the halos: a halo is the white-stroked
# copy under its label, the same box by construction.
QUADS = """() => Array.from(document.querySelectorAll('text'))
    .filter(t => t.textContent.trim() && t.getAttribute('stroke') !== 'white').map(t => {
    const b = t.getBBox(), m = t.getScreenCTM();
    const corner = (x, y) => { const p = new DOMPoint(x, y).matrixTransform(m); return [p.x, p.y]; };
    return {text: t.textContent, quad: [corner(b.x, b.y), corner(b.x + b.width, b.y),
                                        corner(b.x + b.width, b.y + b.height), corner(b.x, b.y + b.height)]};
})"""


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")
def test_no_two_texts_of_the_drawn_model_charts_overlap(decode, tmp_path):
    pytest.importorskip("playwright.sync_api")
    from test_chart_overlap import offline_tab, overlapping_pairs

    from ncu_roofline.render.chart.chart_files import write_chart

    specs = {"decode": decode, "gemm": spec_for(["H100 SXM", "H200"], [gemm(1024, 1024, 1024, "fp32")]),
             "three": spec_for(["NVIDIA A100-SXM4-80GB", "H100 SXM", "B200"],
                               [gemm(1024, 1024, 1024, "fp32"), layernorm(4096, 1024, "fp16")]),
             "four": four_gpu_decode()}
    laid_out = {}
    with offline_tab(1400, 1000) as tab:
        for name, spec in specs.items():
            [svg] = write_chart(spec, tmp_path / name, ["svg"])
            tab.goto(svg.as_uri())
            laid_out[name] = tab.evaluate(QUADS)
    for name, texts in laid_out.items():
        words = [t["text"] for t in texts]
        labels = [row["label"] for row in specs[name]["datasets"]["roof_labels"]]
        assert all(words.count(label) == 1 for label in labels), (name, words)  # each drawn once, halos aside
        assert overlapping_pairs(texts) == [], name


def test_the_box_check_sees_a_label_on_another_and_on_a_point(decode):
    labels = decode["datasets"]["roof_labels"]
    twice = {**decode, "datasets": {**decode["datasets"], "roof_labels": [*labels, {**labels[0], "label": "X"}]}}
    with pytest.raises(AssertionError):
        assert_apart(twice)
    point = decode["datasets"]["points"][0]
    on_point = {**decode, "datasets": {**decode["datasets"], "roof_labels": [{**labels[0], "x": point["x"],
                                                                             "y": point["y"]}]}}
    with pytest.raises(AssertionError):
        assert_apart(on_point)

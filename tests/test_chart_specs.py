"""The compare, model and history charts are plain Vega-Lite dicts (render/chart/vegalite.py): nothing checks them
at run time, so these tests do what Altair's validation used to do, and a little more. Each spec validates against the
Vega-Lite schema Altair ships, every view reads a dataset the spec carries, and every selection names a view
that exists (a misspelt dataset or view name draws an empty chart or a dead hover, without an error).

Inputs: fixtures/compare/base.csv and head.csv (a made-up GPU, DRAM 2 TB/s, FP32 10 TFLOP/s; see test_compare.py):
gemm_tile (64,1,1)×(128,1,1) takes 100 µs in base and 80 µs in head.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

import altair as alt
import jsonschema
import pandas as pd
import pytest

from ncu_roofline import analyze
from ncu_roofline.comparison import compare
from ncu_roofline.history.store import append_analysis
from ncu_roofline.history.report import load_history
from ncu_roofline.model.place import place_points, table_roofs, workloads_frame
from ncu_roofline.model.workloads import gemm, layernorm
from ncu_roofline.render.compare.chart import compare_chart
from ncu_roofline.render.history.chart import history_chart
from ncu_roofline.render.model.chart import model_chart
from ncu_roofline.render.chart.vegalite import SCHEMA_URL, VL_CONVERT_VERSION

from conftest import FIXTURES

BASE, HEAD = FIXTURES / "compare" / "base.csv", FIXTURES / "compare" / "head.csv"
GEMM = "gemm_tile(float *, const float *, int)"


@pytest.fixture(scope="module")
def runs():
    return analyze(BASE), analyze(HEAD)


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    [path] = Path(alt.__file__).parent.glob("vegalite/v*/schema/vega-lite-schema.json")
    return json.loads(path.read_text())


def compare_spec(runs) -> dict[str, Any]:
    result = compare(*runs)
    return compare_chart(result.kernels, base_kernels=result.base.kernels, head_kernels=result.head.kernels,
                         ctx=result.chart_context(20))


def model_spec(_runs) -> dict[str, Any]:
    roof_sets = table_roofs(["NVIDIA A100-SXM4-80GB", "H100 SXM"])
    points = place_points(workloads_frame([gemm(1024, 1024, 1024, "fp32"), layernorm(4096, 1024, "fp16")]),
                          roof_sets)
    return model_chart(points, {r.name: r.peaks for r in roof_sets}, subtitle=["two GPUs"])


def history_of(runs, directory: Path):
    """Three runs, oldest first: base, head, base; the band is taken from the two before the newest."""
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for day, run in enumerate((runs[0], runs[1], runs[0])):
        append_analysis(directory, run, run_id=f"r{day + 1}", run_time=start + timedelta(days=day))
    return load_history(directory)


def views(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every unit view (a view with a mark), through layers and concatenations."""
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for child in spec.get(key, []):
            yield from views(child)
    if "mark" in spec:
        yield spec


@pytest.mark.parametrize("make", [compare_spec, model_spec, "history"])
def test_spec_validates_and_its_views_read_datasets_it_carries(make, runs, schema, tmp_path):
    if make == "history":
        result = history_of(runs, tmp_path)
        spec = history_chart(result.summary, result.series, result.runs)
    else:
        spec = make(runs)
    jsonschema.Draft7Validator(schema).validate(spec)
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/v6")
    read = {view["data"]["name"] for view in views(spec)}
    assert read == set(spec["datasets"]), "a view reads a dataset the spec lacks, or a dataset is never drawn"
    assert all(spec["datasets"][name] for name in read), "an empty dataset: nothing of it is drawn"
    named = {view["name"] for view in views(spec) if "name" in view}
    for param in spec.get("params", []):
        assert set(param["views"]) <= named, param


def test_compare_spec_draws_the_gemm_arrow_up_from_base_to_head(runs):
    spec = compare_spec(runs)
    arrows = pd.DataFrame(spec["datasets"]["arrows"])
    gemm_row = arrows[(arrows["kernel_name"] == GEMM) & (arrows["shape"] == "(64, 1, 1) × (128, 1, 1)")
                      & (arrows["level"] == "DRAM")].iloc[0]
    # 2.5e8 FFMA × 2 = 5e8 FLOP over 60 MB: AI 8.33 in both runs; 5e8 / 100 µs = 5 TFLOP/s, / 80 µs = 6.25 TFLOP/s
    assert gemm_row["x_base"] == pytest.approx(5e8 / 60e6) == pytest.approx(gemm_row["x_head"])
    assert (gemm_row["y_base"], gemm_row["y_head"]) == (pytest.approx(5e12), pytest.approx(6.25e12))
    assert gemm_row["head_shape"] == "triangle-up"  # the head point is the arrowhead
    [rule] = [view for view in views(spec["vconcat"][0]) if view["mark"]["type"] == "rule"]  # the roofline's
    assert (rule["encoding"]["x2"], rule["encoding"]["y2"]) == ({"field": "x_head"}, {"field": "y_head"})
    # Drawn (Vega computes the angle from the view's size): straight up is 0° clockwise from up; the (32,1,1)
    # gemm_tile went from 50 to 60 µs for its 2e8 FLOP, 4e12 -> 3.33e12 FLOP/s, so it points straight down (180°).
    heads = drawn_heads(spec)
    assert heads["6.25e+12"] == 0 and heads["3.33333333333e+12"] == 180


def drawn_heads(spec: dict[str, Any]) -> dict[str, float]:
    """{y as Vega prints it: arrowhead angle} of the head points vl-convert lays out."""
    import vl_convert

    found: list[dict] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("marktype") == "symbol" and node.get("name") == "heads_marks":
                found.extend(node["items"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(vl_convert.vegalite_to_scenegraph(spec, vl_version=VL_CONVERT_VERSION))
    return {re.search(r"performance \(FLOP/s\): ([^;]+);", item["description"]).group(1): item["angle"]
            for item in found}


def test_an_arrowhead_follows_its_move_at_any_plot_size():
    """A move one decade right and one decade up points at 45° clockwise from up only where a decade is as many
    pixels across as up: on the 640 × 480 plot over 10^-1..10^3 FLOP/byte (4 decades: 160 px each) and
    10^9..10^15 FLOP/s (6 decades: 80 px each) it is atan(160 / 80) = 63.43°; on a 1280 × 480 page, atan(320 / 80)."""
    from ncu_roofline.render.compare.chart import arrowhead_angle

    arrows = [{"x_base": 1.0, "y_base": 1e11, "x_head": 10.0, "y_head": 1e12}]
    spec = {"$schema": SCHEMA_URL, "data": {"values": arrows}, "width": 640, "height": 480, "name": "heads",
            "transform": [{"calculate": arrowhead_angle((0.1, 1e3), (1e9, 1e15)), "as": "angle"}],
            "mark": {"type": "point", "shape": "triangle-up"},
            "encoding": {"x": {"field": "x_head", "type": "quantitative",
                               "scale": {"type": "log", "domain": [0.1, 1e3]}},
                         "y": {"field": "y_head", "type": "quantitative",
                               "scale": {"type": "log", "domain": [1e9, 1e15]}, "title": "performance (FLOP/s)"},
                         "angle": {"field": "angle", "type": "quantitative", "scale": None}}}
    assert drawn_heads(spec)["1e+12"] == pytest.approx(math.degrees(math.atan(160 / 80)), abs=1e-6)
    assert drawn_heads({**spec, "width": 1280})["1e+12"] == pytest.approx(math.degrees(math.atan(320 / 80)),
                                                                         abs=1e-6)


def test_history_spec_band_spans_the_runs_before_the_newest(runs, tmp_path):
    from ncu_roofline.history.bands import BandOptions

    history_of(runs, tmp_path)
    result = load_history(tmp_path, band=BandOptions(band="minmax"))
    spec = history_chart(result.summary, result.series, result.runs, window=10, band_name="minmax")
    bands = pd.DataFrame(spec["datasets"]["bands"])
    # grid × block tells the two gemm_tile groups apart, as in the terminal's label
    gemm_band = bands[bands["label"].str.startswith("gemm_tile") & bands["label"].str.endswith("[64×128]")]
    # min–max of the two runs before the newest: base 100 µs, head 80 µs; drawn over all three runs
    assert gemm_band["run_id"].tolist() == ["r1", "r2", "r3"]
    assert gemm_band["band_low"].tolist() == pytest.approx([80e-6] * 3)
    assert gemm_band["band_high"].tolist() == pytest.approx([100e-6] * 3)
    band_view, *_, line_view, _ = spec["layer"]  # the band, its two edges, the lines, the failed-gate marks
    # the y scale fits the drawn times (no domain), so a band and its line share it
    assert band_view["encoding"]["y"]["scale"] == {"type": "log", "nice": False, "padding": 12}
    assert line_view["encoding"]["x"]["sort"] == ["r1", "r2", "r3"]


def test_the_vega_lite_version_is_one_vl_convert_renders():
    """Specs say which Vega-Lite they are written against; vl-convert (images, the page's bundle) must ship it."""
    import vl_convert

    from ncu_roofline.render.chart.vegalite import SCHEMA_URL, VEGALITE_VERSION, VL_CONVERT_VERSION

    major_minor = ".".join(VEGALITE_VERSION.split(".")[:2])  # "6.4.1" -> "6.4", vl-convert's "v6_4"
    assert VL_CONVERT_VERSION == "v" + major_minor.replace(".", "_")
    assert major_minor in vl_convert.get_vegalite_versions()
    assert SCHEMA_URL.endswith(f"/v{VEGALITE_VERSION}.json")

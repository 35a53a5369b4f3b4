"""Roofs: report-derived first, then the user's file, then the table; flags for points that cannot be right."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from ncu_roofline import InputError, analyze
from ncu_roofline.cli import app
from ncu_roofline.pipeline.catalogue import load_catalogue
from ncu_roofline.core.vocabulary import PEAK_COLUMNS
from ncu_roofline.pipeline.collect import collection_metrics
from ncu_roofline.roofs.gpu_table import match_gpu

from conftest import FIXTURES

EXAMPLE = FIXTURES / "example_h100_raw.csv"


def test_user_file_overrides_exactly_the_roof_it_names(tmp_path):
    ceilings = tmp_path / "slice.toml"
    ceilings.write_text('name = "my H100"\n[peaks]\npeak_bytes_per_s_dram = 1.5e12\n')
    base = analyze(EXAMPLE).launches
    user = analyze(EXAMPLE, ceilings=ceilings).launches
    assert (user["peak_bytes_per_s_dram"] == 1.5e12).all()
    for column in PEAK_COLUMNS:
        if column != "peak_bytes_per_s_dram":
            pd.testing.assert_series_equal(user[column], base[column])
    assert set(user["ceiling_source"]) == {"report+user:slice.toml"}
    # the AddFunctor launch is DRAM-bound: its t_sol follows the new roof, 201.33 MB / 1.5 TB/s
    add = user[user["launch_id"] == 1].iloc[0]
    assert add["t_sol_s"] == pytest.approx(201.33e6 / 1.5e12, rel=1e-12)


def test_malformed_user_file_is_one_line_and_exit_2(tmp_path):
    ceilings = tmp_path / "bad.toml"
    ceilings.write_text("[peaks\npeak_bytes_per_s_dram = 1\n")
    result = CliRunner().invoke(app, ["analyze", str(EXAMPLE), "--ceilings", str(ceilings), "--rows", "0"])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)  # not an escaped exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad.toml" in lines[0]


def test_clock_max_rescales_sm_clocked_roofs_only():
    measured = analyze(EXAMPLE).launches.iloc[0]
    at_max = analyze(EXAMPLE, clock="max").launches.iloc[0]
    scale = 1_755_000 * 1e3 / 1.10e9  # device__attribute_max_gpu_frequency_khz / sm__cycles_elapsed.avg.per_second
    for column in ("peak_flop_per_s_fp32", "peak_flop_per_s_fp64", "peak_flop_per_s_tensor", "peak_bytes_per_s_l2",
                   "peak_bytes_per_s_l1"):
        assert at_max[column] == pytest.approx(measured[column] * scale, rel=1e-12), column
    assert at_max["peak_bytes_per_s_dram"] == measured["peak_bytes_per_s_dram"]
    # 2 x 14,592 FFMA/cycle at 1.755 GHz: the datasheet's 51.2 TFLOP/s for the H100 PCIe
    assert at_max["peak_flop_per_s_fp32"] == pytest.approx(2 * 14_592 * 1.755e9, rel=1e-12)


def test_gpu_option_supplies_table_roofs_where_the_export_names_no_device():
    result = analyze(FIXTURES / "details_2020.txt", gpu="Tesla V100-SXM2-16GB")
    spec = match_gpu("Tesla V100-SXM2-16GB")
    row = result.launches[result.launches["launch_id"] == 1].iloc[0]
    assert row["ceiling_source"] == "table:Tesla V100-SXM2-16GB"
    expected = max(4e9 / spec.peaks["peak_flop_per_s_fp32"], 1.6e9 / spec.peaks["peak_bytes_per_s_dram"],
                   3.2e9 / spec.peaks["peak_bytes_per_s_l2"], 6.4e9 / spec.peaks["peak_bytes_per_s_l1"])
    assert row["t_sol_s"] == pytest.approx(expected, rel=1e-12)


def test_unknown_gpu_option_offers_no_stand_in():
    # "H20O" is a typo away from the H20 and H200 rows: neither is offered, the --ceilings route is
    with pytest.raises(InputError, match="no ceiling table entry") as caught:
        analyze(FIXTURES / "details_2020.txt", gpu="NVIDIA H20O")
    assert "H200" not in str(caught.value) and "ceilings template" in str(caught.value)


def test_point_above_its_roof_is_flagged_not_hidden(tmp_path):
    ceilings = tmp_path / "tiny.toml"
    ceilings.write_text("[peaks]\npeak_bytes_per_s_dram = 1e9\n")  # 1 GB/s: every kernel beats it
    launches = analyze(EXAMPLE, ceilings=ceilings).launches
    add = launches[launches["launch_id"] == 1].iloc[0]
    assert add["roofline_fraction"] == pytest.approx((201.33e6 / 1e9) / 120.25e-6, rel=1e-12)
    assert add["roofline_fraction"] > 1
    assert "above_roof dram" in add["status"]


def test_bytes_out_of_hierarchy_order_are_flagged():
    row = analyze(FIXTURES / "details_2023_crlf.csv", allow_empty=True).launches.iloc[0]
    # L2 carries fewer bytes (32 x 524.29e3) than DRAM (2 x 8.39e6)
    assert row["bytes_l2"] < row["bytes_dram"]
    assert "bytes_order l2<dram" in row["status"]


def test_integrated_memory_parts_get_no_dram_roof(tmp_path):
    text = EXAMPLE.read_text().replace(',"0","9.0",', ',"0","8.7",')
    orin = tmp_path / "orin.csv"
    orin.write_text(text)
    launches = analyze(orin).launches
    assert launches["compute_capability"].eq(8.7).all()
    assert launches["peak_bytes_per_s_dram"].isna().all()
    assert launches["status"].str.contains("no DRAM roof: integrated memory").all()


def test_report_roofs_of_the_turing_report_equal_peak_times_clock(samples):
    pytest.importorskip("ncu_report")
    import ncu_report

    path = samples / "nsight-compute-files" / "3136_64_64_rtx2080ti_sgemm.ncu-rep"
    row = analyze(path).launches.iloc[0]
    action = ncu_report.load_report(str(path)).range_by_idx(0).action_by_idx(0)
    value = lambda name: action.metric_by_name(name).as_double()  # noqa: E731
    assert row["peak_bytes_per_s_l2"] == pytest.approx(
        value("lts__t_bytes.sum.peak_sustained") * value("lts__cycles_elapsed.avg.per_second"), rel=1e-12)
    assert row["peak_bytes_per_s_dram"] == pytest.approx(
        value("dram__bytes.sum.peak_sustained") * value("dram__cycles_elapsed.avg.per_second"), rel=1e-12)
    assert row["peak_flop_per_s_fp32"] == pytest.approx(
        2 * value("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained")
        * value("sm__cycles_elapsed.avg.per_second"), rel=1e-12)


def test_every_catalogue_metric_is_in_the_complete_collection_list():
    catalogue = load_catalogue()
    listed = set(collection_metrics(catalogue, complete=True))
    needed = set()
    for definition in catalogue.all_definitions():
        needed.update(definition.expr.names)
        needed.update(f"regex:^{glob.replace('.', chr(92) + '.').replace('*', '.*')}$"
                      for glob in definition.expr.globs)
    assert needed <= listed


@pytest.mark.parametrize("cc", [7.0, 7.5, 8.0, 8.6, 8.9, 9.0, 10.0, 12.0])
def test_minimal_collection_list_covers_every_quantity_on_each_architecture(cc):
    catalogue = load_catalogue()
    listed = set(collection_metrics(catalogue, cc))
    arch = pd.DataFrame({"compute_capability": pd.array([cc], dtype="Float64")})
    for quantity in ("time_s", "flop_fp64", "flop_fp32", "flop_fp16", "flop_tensor", "bytes_dram", "bytes_l2",
                     "bytes_l1", *PEAK_COLUMNS):
        covered = [d for d in catalogue.definitions(quantity)
                   if set(d.expr.names) <= listed and (d.when is None or set(d.when.names) - {"compute_capability"}
                                                       or d.applies(arch)[0])
                   and all(any(entry.startswith("regex:") for entry in listed) for _ in d.expr.globs)]
        assert covered, (quantity, cc)


def test_ceilings_commands(tmp_path):
    run = lambda *args: CliRunner().invoke(app, list(args))  # noqa: E731
    listing = run("ceilings", "--json")
    assert listing.exit_code == 0
    import json

    names = [row["name"] for row in json.loads(listing.stdout)]
    assert "NVIDIA H200" in names and len(names) >= 24
    shown = json.loads(run("ceilings", "show", "NVIDIA H200", "--json").stdout)
    assert shown["peaks"]["peak_bytes_per_s_dram"]["value"] == 4.8e12
    assert shown["peaks"]["peak_bytes_per_s_dram"]["source"]
    unknown = run("ceilings", "show", "NVIDIA A11")
    assert unknown.exit_code == 2 and "ceilings template 'NVIDIA A11'" in unknown.stderr

"""The .ncu-rep reader against the public sample reports in ../shared/ncu-samples."""

from __future__ import annotations

import os
import random
import re
import shutil
import stat
import subprocess
import sys
import types
from pathlib import Path

import pandas as pd
import pytest

from ncu_roofline.core.errors import InputError
from ncu_roofline.core.launch_table import IDENTITY_COLUMNS, metric_columns
from ncu_roofline.readers import ncu_rep, report_container
from conftest import ncu_actions
from ncu_sections import report_sections, section_body_metrics
from ncu_roofline.readers.ncu_rep import (PASCAL_REFUSED, looks_like_ncu_rep, read_ncu_rep,
                                          scan_report)

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "ncu-samples"
ncu_report = pytest.importorskip("ncu_report")
if not SAMPLES.is_dir():
    pytest.skip(f"sample reports not found at {SAMPLES}", allow_module_level=True)

pytestmark = pytest.mark.conformance  # the real exports in ../shared/ncu-samples

CS599K = SAMPLES / "cs599k" / "rms_norm_matrix_2025-04-21_v1.ncu-rep"
PASCAL = SAMPLES / "PMKID_Brute-Force" / "profile.nsight-cuprof-report"
MATRIXMUL = SAMPLES / "matrixMul" / "profile.nsight-cuprof-report"

# launches per report: SOURCES.tsv notes (ncu command lines, NVR block walk), checked again against the walk below
LAUNCHES = {
    "cs599k/rms_norm_matrix_2025-04-21_v1.ncu-rep": 3,
    "cuda-mlp-inference/report.ncu-rep": 1,
    "NCAR-GPU_workshop/MW_Baseline.ncu-rep": 5,
    "NCAR-GPU_workshop/MW_DivToMult.ncu-rep": 5,
    "nsight-compute-files/3136_64_64_rtx2080ti_sgemm.ncu-rep": 1,
    "matrixMul/profile.nsight-cuprof-report": 8,
    "nersc-gpp/output0.ncu-rep": 2,
    "nersc-gpp/output1.ncu-rep": 2,
    "nersc-gpp/output2.ncu-rep": 2,
    "nersc-gpp/output3.ncu-rep": 2,
    "nersc-gpp/output4.ncu-rep": 2,
    "CudaCode/vec_add.ncu-rep": 1,
    "CudaCode/dot_product.ncu-rep": 2,
    "CudaCode/naive.ncu-rep": 2,
    "CudaCode/global_mem_coalesce.ncu-rep": 2,
    "GPU_Power_Model/PS1_100_profile.ncu-rep": 6,
    "GPU_Power_Model/PS1_10_profile.ncu-rep": 10,
    "GPU_Power_Model/PS9_10_profile.ncu-rep": 10,
}
DEVICES = {
    "cs599k": ("NVIDIA H100 PCIe", 9.0),
    "NCAR-GPU_workshop": ("Tesla V100-SXM2-32GB", 7.0),
    "cuda-mlp-inference": ("Tesla T4", 7.5),
    "nsight-compute-files": ("NVIDIA GeForce RTX 2080 Ti", 7.5),
    "matrixMul": ("GeForce RTX 2070", 7.5),
    "nersc-gpp": ("NVIDIA GeForce RTX 4060 Laptop GPU", 8.9),
    "CudaCode": ("NVIDIA GeForce GTX 1660 SUPER", 7.5),
    "GPU_Power_Model": ("NVIDIA GeForce RTX 2060 SUPER", 7.5),
}
TRIPLE = re.compile(r"^\(\d+, \d+, \d+\)$")


def sample(rel: str) -> Path:
    path = SAMPLES / rel
    if not path.is_file():
        pytest.skip(f"{rel} not in the samples")
    return path


@pytest.fixture(scope="module")
def cs599k() -> pd.DataFrame:
    return read_ncu_rep(sample("cs599k/rms_norm_matrix_2025-04-21_v1.ncu-rep"))


# --- every sample --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rel", sorted(LAUNCHES))
def test_launch_counts_schema_and_identity(rel: str) -> None:
    path = sample(rel)
    table = read_ncu_rep(path)
    expected = LAUNCHES[rel]
    assert len(table) == expected
    assert scan_report(path).n_results == expected  # the NVR block walk agrees with ncu_report
    assert list(table.columns[:len(IDENTITY_COLUMNS)]) == list(IDENTITY_COLUMNS)
    assert table["launch_id"].dtype == "int64" and table["launch_id"].tolist() == list(range(expected))
    assert (table["source_file"] == str(path)).all()
    assert (table["workload_type"] == "kernel").all() and (table["launches"] == 1).all()
    assert table["kernel_name"].notna().all() and (table["kernel_name"] == table["kernel_demangled"]).all()
    assert table["grid"].str.match(TRIPLE).all() and table["block"].str.match(TRIPLE).all()
    assert table["nvtx_range"].isna().all()  # no sample was collected with --nvtx ranges open
    assert (table["reader_notes"] == "").all()
    name, cc = DEVICES[rel.split("/")[0]]
    assert (table["device_name"] == name).all() and (table["compute_capability"] == cc).all()
    metrics = metric_columns(table)
    assert metrics and all(table[m].dtype == "float64" for m in metrics)
    assert "device__attribute_display_name" not in table.columns  # string metrics never become columns
    assert table["process_id"].notna().all()


@pytest.mark.parametrize("rel", sorted(k for k in LAUNCHES if not k.startswith("matrixMul")))
def test_time_is_seconds_and_ids_match_the_api(rel: str) -> None:
    path = sample(rel)
    table = read_ncu_rep(path, wanted=lambda n: n.startswith("gpu__time_duration"))
    _ctx, actions = ncu_actions(path)
    for row, action in enumerate(actions):
        metric = action.metric_by_name("gpu__time_duration.sum")
        assert metric.unit() in ("ns", "nsecond")
        assert table["gpu__time_duration.sum"][row] == pytest.approx(metric.as_double() * 1e-9, rel=1e-12)
        assert table["context"][row] == action.metric_by_name("launch__context_id").as_uint64()
        assert table["stream"][row] == action.metric_by_name("launch__stream_id").as_uint64()
        dims = [action.metric_by_name(f"launch__grid_dim_{a}").as_uint64() for a in "xyz"]
        assert table["grid"][row] == "({}, {}, {})".format(*dims)
        assert table["kernel_name"][row] == (action.name(ncu_report.IAction.NameBase_DEMANGLED)
                                             or action.name(ncu_report.IAction.NameBase_FUNCTION))


def test_sniffing_by_content() -> None:
    for rel in LAUNCHES:
        assert looks_like_ncu_rep(sample(rel).read_bytes()[:16])
    assert looks_like_ncu_rep(b"\x28\xb5\x2f\xfd\x04\x58")  # a zstd frame: .ncu-repz
    for csv in SAMPLES.glob("*/*.csv"):
        assert not looks_like_ncu_rep(csv.read_bytes()[:16])
    assert not looks_like_ncu_rep(b"") and not looks_like_ncu_rep(b"NVR")


# --- cs599k (H100, --set full) ---------------------------------------------------------------------------------------

def test_cs599k_identity(cs599k: pd.DataFrame) -> None:
    row = cs599k.iloc[0]
    assert row["kernel_name"] == "rms_norm_matrix_kernel(float *, float *, float *, int, int, float)"
    assert row["process_id"] == 11650 and row["process_name"] == "rms_norm_matrix"
    assert (row["grid"], row["block"], row["context"], row["stream"]) == ("(8192, 1, 1)", "(256, 1, 1)", 1, 7)
    assert "kernel_function" not in cs599k.columns and "kernel_mangled" not in cs599k.columns


def test_cs599k_units(cs599k: pd.DataFrame) -> None:
    row = cs599k.iloc[0]
    assert row["gpu__time_duration.sum"] == 526272 / 1e9
    assert row["sm__cycles_elapsed.avg.per_second"] == pytest.approx(1.103019904589e9, rel=1e-12)  # hertz
    assert row["dram__cycles_elapsed.avg.per_second"] == pytest.approx(1.592831083546e9, rel=1e-12)
    assert row["lts__cycles_elapsed.avg.per_second"] == pytest.approx(1.094016022133e9, rel=1e-12)
    # peaks per cycle and derived rates keep their stored value whatever unit() says
    assert row["dram__bytes.sum.peak_sustained"] == 1280
    assert row["derived__lts__lts2xbar_bytes.sum.peak_sustained"] == 5120
    assert row["derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained"] == 14592
    assert row["sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained"] == 466944
    assert row["sm__ops_path_tensor_src_fp16.sum.peak_sustained"] == 933888
    assert row["derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2"] == 29184
    assert row["derived__lts__lts2xbar_bytes.sum.per_second"] == pytest.approx(1.0098048157606713e12, rel=1e-12)
    # a derived metric whose inputs were not collected has no value (kind ANY): no column, never a 0
    assert "derived__smsp__sass_thread_inst_executed_op_hadd_pred_on_x2" not in cs599k.columns


def test_cs599k_rates_times_duration_give_the_totals(cs599k: pd.DataFrame) -> None:
    """Seconds, bytes/s and the raw derived rates are consistent with the .sum totals in the same report."""
    for _, row in cs599k.iterrows():
        t = row["gpu__time_duration.sum"]
        dram = row["dram__bytes_read.sum"] + row["dram__bytes_write.sum"]
        assert row["dram__bytes.sum.per_second"] * t == pytest.approx(dram, rel=2e-3)
        l1 = 128 * row["l1tex__lsu_writeback_active_mem_lgds.sum"]
        assert row["derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second"] * t == pytest.approx(l1, rel=2e-3)
        l2_from_cycles = 32 * row["lts__lts2xbar_cycles_active.sum.per_second"]
        assert row["derived__lts__lts2xbar_bytes.sum.per_second"] == pytest.approx(l2_from_cycles, rel=1e-9)


def test_wanted_selects_metric_columns() -> None:
    path = sample("cs599k/rms_norm_matrix_2025-04-21_v1.ncu-rep")
    table = read_ncu_rep(path, wanted=lambda n: n in {"dram__bytes.sum.per_second", "gpu__time_duration.sum",
                                                      "no__such_metric.sum"})
    assert metric_columns(table) == ["dram__bytes.sum.per_second", "gpu__time_duration.sum"]
    assert table["device_name"].eq("NVIDIA H100 PCIe").all()  # identity does not depend on wanted


def test_cs599k_hierarchical_section_body_metrics() -> None:
    sections = section_body_metrics(sample("cs599k/rms_norm_matrix_2025-04-21_v1.ncu-rep"))
    clocks_and_bandwidth = {
        "sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second",
        "dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second", "dram__bytes.sum.per_second",
        "derived__lts__lts2xbar_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second",
        "derived__lts__lts2xbar_bytes.sum.per_second", "l1tex__cycles_elapsed.avg.per_second"}
    work = {
        "Double": {"derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2",
                   "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed",
                   "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed",
                   "derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2"},
        "Single": {"derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2",
                   "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed",
                   "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed",
                   "derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2"},
        "Half": {"derived__sm__sass_thread_inst_executed_op_hfma_pred_on_x4",
                 "derived__smsp__sass_thread_inst_executed_op_hadd_pred_on_x2",
                 "derived__smsp__sass_thread_inst_executed_op_hmul_pred_on_x2",
                 "derived__smsp__sass_thread_inst_executed_op_hfma_pred_on_x4"},
    }
    for precision, names in work.items():
        assert set(sections[f"SpeedOfLight_Hierarchical{precision}RooflineChart"]) == clocks_and_bandwidth | names
    tensor = sections["SpeedOfLight_HierarchicalTensorRooflineChart"]
    assert len(tensor) == len(set(tensor)) == 66
    assert set(tensor) >= (clocks_and_bandwidth - {"smsp__cycles_elapsed.avg.per_second"}) | {
        "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained",
        "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second"}
    aggregates = {"src_bf16_dst_fp32", "src_fp16", "src_tf32_dst_fp32", "src_fp64", "src_int1", "src_int8",
                  "src_fp8_sparsity_off", "src_fp8_sparsity_on"}
    per_instruction = {f"op_{op}_src_{src}_sparsity_{s}" for s in ("off", "on") for op, src in (
        ("hgmma", "bf16_dst_fp32"), ("hgmma", "fp16"), ("hgmma", "tf32_dst_fp32"), ("hmma", "bf16_dst_fp32"),
        ("hmma", "fp16_dst_fp16"), ("hmma", "fp16_dst_fp32"), ("hmma", "tf32_dst_fp32"), ("igmma", "int8"),
        ("imma", "int8"))} | {"op_bgmma_src_int1", "op_bmma_src_int1"}
    paths = aggregates | per_instruction
    expected_tensor = {f"sm__ops_path_tensor_{p}.sum.{s}" for p in paths for s in ("peak_sustained",
                                                                                  "per_cycle_elapsed")}
    assert {n for n in tensor if n.startswith("sm__ops_path_tensor_")} == expected_tensor
    # the values the reader returns are the ones the section draws
    table = read_ncu_rep(CS599K, wanted=lambda n: n in set(tensor))
    _ctx, actions = ncu_actions(CS599K)
    for name in tensor:
        raw = actions[0].metric_by_name(name).as_double()
        assert table[name][0] == raw or "cycles_elapsed" in name  # clocks: hz, unchanged too
    assert all(report_sections(CS599K)[i] == section_body_metrics(CS599K, i) for i in range(3))


# --- old reports -----------------------------------------------------------------------------------------------------

def test_pascal_report_is_refused() -> None:
    with pytest.raises(InputError) as info:
        read_ncu_rep(sample("PMKID_Brute-Force/profile.nsight-cuprof-report"))
    assert info.value.message == PASCAL_REFUSED and str(PASCAL) in str(info.value)
    assert "\n" not in str(info.value)


def test_2019_report_dims_from_the_result_record() -> None:
    table = read_ncu_rep(sample("matrixMul/profile.nsight-cuprof-report"))
    assert (table["grid"] == "(20, 10, 1)").all() and (table["block"] == "(32, 32, 1)").all()
    assert (table["launch__grid_size"] == 200).all()
    assert (table["process_id"] == 66670).all() and table["process_name"].isna().all()  # no process block
    assert table["context"].isna().all() and "gpu__time_duration.sum" not in table.columns
    assert table["kernel_name"].tolist()[:2] == ["void matrixMulCUDA<int=32>(float*,float*,float*,int,int)",
                                                "void matrixMulCUDA_int<int=32>(int*,int*,int*,int,int)"]


def test_nersc_kernels_sharing_a_name_differ_by_shape() -> None:
    table = read_ncu_rep(sample("nersc-gpp/output0.ncu-rep"), wanted=lambda n: n == "gpu__time_duration.sum")
    assert table["kernel_name"].tolist() == ["sigma_gpp_gpu_34", "sigma_gpp_gpu_34"]
    assert table["grid"].tolist() == ["(65535, 1, 1)", "(4, 1, 1)"]
    assert table["gpu__time_duration.sum"][0] == pytest.approx(49.949994624)


# --- bad input -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fraction", [0.0005, 0.01, 0.1, 0.5, 0.9, 0.999])
def test_truncated_report(tmp_path: Path, fraction: float) -> None:
    data = CS599K.read_bytes()
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(data[:int(len(data) * fraction)])
    with pytest.raises(InputError) as info:
        read_ncu_rep(cut)
    assert str(cut) in str(info.value) and "truncated" in info.value.message and "\n" not in str(info.value)


@pytest.mark.parametrize("content", [b"", b"NVR", os.urandom(5000), b"NVR\x00" + os.urandom(5000),
                                     b"NVR\x00" + bytes(60), b"ID,Kernel Name\n0,k\n"])
def test_not_a_report(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "bad.ncu-rep"
    bad.write_bytes(content)
    with pytest.raises(InputError) as info:
        read_ncu_rep(bad)
    assert str(bad) in str(info.value) and "\n" not in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        read_ncu_rep(tmp_path / "nope.ncu-rep")


@pytest.mark.slow
def test_damaged_reports_give_a_table_or_one_input_error(tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    rng = random.Random(7)
    sources = [SAMPLES / rel for rel in LAUNCHES]
    for case in range(24):
        data = bytearray(rng.choice(sources).read_bytes())
        start = rng.randrange(len(data))
        if case % 3 == 0:
            data[start:start + 200] = bytes(rng.randrange(256) for _ in range(len(data[start:start + 200])))
        elif case % 3 == 1:
            data[start:start + 1000] = bytes(len(data[start:start + 1000]))
        else:
            for _ in range(5):
                data[rng.randrange(len(data))] ^= 0xFF
        damaged = tmp_path / f"d{case}.ncu-rep"
        damaged.write_bytes(bytes(data))
        try:
            read_ncu_rep(damaged)
        except InputError as exc:
            assert "\n" not in str(exc)
    assert capfd.readouterr().err == ""  # the wheel's protobuf log lines do not leak


# --- .ncu-repz and odd names -----------------------------------------------------------------------------------------

def zstd_copy(tmp_path: Path, name: str, data: bytes | None = None) -> Path:
    tool = shutil.which("zstd")
    if tool is None:
        pytest.skip("zstd tool not installed")
    plain = tmp_path / "plain.bin"
    plain.write_bytes(CS599K.read_bytes() if data is None else data)
    out = tmp_path / name
    subprocess.run([tool, "-q", "-f", str(plain), "-o", str(out)], check=True)
    return out


def comparable(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns=["source_file"])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["report.ncu-repz", "report.bin"])
def test_zstd_report_reads_like_the_plain_one(tmp_path: Path, name: str, cs599k: pd.DataFrame) -> None:
    packed = zstd_copy(tmp_path, name)
    assert looks_like_ncu_rep(packed.read_bytes()[:4])
    table = read_ncu_rep(packed)
    assert (table["source_file"] == str(packed)).all()
    pd.testing.assert_frame_equal(comparable(table), comparable(cs599k))


def test_plain_report_named_ncu_repz(tmp_path: Path, cs599k: pd.DataFrame) -> None:
    odd = tmp_path / "plain.ncu-repz"
    odd.write_bytes(CS599K.read_bytes())
    pd.testing.assert_frame_equal(comparable(read_ncu_rep(odd)), comparable(cs599k))


def test_truncated_and_foreign_zstd(tmp_path: Path) -> None:
    packed = zstd_copy(tmp_path, "r.ncu-repz")
    data = packed.read_bytes()
    for fraction in (0.3, 0.99):
        cut = tmp_path / f"cut{fraction}.ncu-repz"
        cut.write_bytes(data[:int(len(data) * fraction)])
        with pytest.raises(InputError, match="truncated") as info:
            read_ncu_rep(cut)
        assert str(cut) in str(info.value)
    foreign = zstd_copy(tmp_path, "hello.ncu-repz", b"hello, world\n" * 100)
    with pytest.raises(InputError, match="not an Nsight Compute report"):
        read_ncu_rep(foreign)


def test_zstd_without_a_decoder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cs599k: pd.DataFrame) -> None:
    packed = zstd_copy(tmp_path, "r.ncu-repz")

    class NoDecoder:
        def __enter__(self):
            return None

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(report_container, "_decompressed", lambda path: NoDecoder())
    table = read_ncu_rep(packed)
    assert table["process_id"].isna().all() and table["reader_notes"].str.contains("process id").all()
    same = ["kernel_name", "device_name", "grid", "block", "gpu__time_duration.sum"]
    pd.testing.assert_frame_equal(table[same], cs599k[same])
    cut = tmp_path / "cut.ncu-repz"
    cut.write_bytes(packed.read_bytes()[:-20])  # caught by the frame walk alone
    with pytest.raises(InputError, match="truncated"):
        read_ncu_rep(cut)


# --- without the wheel -----------------------------------------------------------------------------------------------

def no_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail():
        raise ImportError("No module named 'ncu_report'")
    monkeypatch.setattr(ncu_rep, "_import_ncu_report", fail)


def test_without_wheel_or_ncu(monkeypatch: pytest.MonkeyPatch) -> None:
    no_wheel(monkeypatch)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(InputError) as info:
        read_ncu_rep(CS599K)
    assert "pip install 'ncu-roofline[ncu-rep]'" in info.value.message and str(CS599K) in str(info.value)


def fake_ncu(tmp_path: Path, body: str) -> None:
    script = tmp_path / "bin" / "ncu"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_without_wheel_falls_back_to_ncu_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    no_wheel(monkeypatch)
    fake_ncu(tmp_path, 'echo "$@" > "${0%/*}/args"\necho \'"ID","Kernel Name"\'\necho \'"0","k"\'\n')
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    calls = []

    def read_csv_export(path, wanted=None, progress=None):
        calls.append((Path(path).read_text(), wanted))
        return pd.DataFrame({"source_file": [str(path)], "launch_id": [0]})

    fake = types.ModuleType("ncu_roofline.readers.csv_export")
    fake.read_csv_export = read_csv_export
    monkeypatch.setitem(sys.modules, "ncu_roofline.readers.csv_export", fake)
    wanted = lambda name: True  # noqa: E731
    table = read_ncu_rep(CS599K, wanted=wanted)
    assert calls == [('"ID","Kernel Name"\n"0","k"\n', wanted)]
    assert (tmp_path / "bin" / "args").read_text().split() == [
        "--import", str(CS599K), "--csv", "--page", "raw", "--print-units", "base"]
    assert table["source_file"].tolist() == [str(CS599K)]


def test_ncu_import_failure_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    no_wheel(monkeypatch)
    fake_ncu(tmp_path, 'echo "==ERROR== something odd" >&2\necho "==ERROR== Failed to import" >&2\nexit 1\n')
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with pytest.raises(InputError, match=r"ncu --import failed: ==ERROR== Failed to import$"):
        read_ncu_rep(CS599K)


# --- helpers ---------------------------------------------------------------------------------------------------------

class _Range:
    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class _Domain:
    def __init__(self, name: str, stack: list[str], start_end: list[str]) -> None:
        self._name, self._stack, self._start_end = name, stack, start_end

    def name(self) -> str:
        return self._name

    def push_pop_ranges(self) -> tuple[str, ...]:
        return tuple(sorted(self._stack))

    def push_pop_range(self, index: int) -> _Range | None:
        return _Range(self._stack[index]) if index < len(self._stack) else None

    def start_end_ranges(self) -> tuple[str, ...]:
        return tuple(self._start_end)


class _State:
    def __init__(self, domains: dict[int, _Domain]) -> None:
        self._domains = domains

    def domains(self) -> tuple[int, ...]:
        return tuple(self._domains)

    def domain_by_id(self, key: int) -> _Domain:
        return self._domains[key]


class _Action:
    def __init__(self, state) -> None:
        self._state = state

    def nvtx_state(self):
        return self._state


def test_nvtx_range_path() -> None:
    state = _State({0: _Domain("<default domain>", ["train", "step", "forward"], []),
                    7: _Domain("cuBLAS", ["gemm"], ["warmup"])})
    assert ncu_rep._nvtx_range(_Action(state)) == "train/step/forward;cuBLAS@gemm;cuBLAS@warmup"
    assert ncu_rep._nvtx_range(_Action(_State({0: _Domain("<default domain>", [], [])}))) is None
    assert ncu_rep._nvtx_range(_Action(None)) is None


def test_progress_reports_every_byte_in_order() -> None:
    """Progress counts bytes read, rising, up to the report's size. (How fast the read is: benchmarks/targets.py,
    "read every metric of cs599k", a ratio against loading the same report with NVIDIA's wheel.)"""
    seen: list[int] = []
    read_ncu_rep(CS599K, progress=seen.append)
    assert seen and seen[-1] == CS599K.stat().st_size and seen == sorted(seen)

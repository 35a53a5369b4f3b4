"""Synthetic but realistic ncu exports at any number of launches, for the scale benchmark (DESIGN §5).

Two pages, both as `ncu --csv` writes them (FORMAT_NOTES §2-§4):

- details: the 15-column layout of 2023+ (`Block Size`, `Grid Size`, `Device`, `CC`), one row per (launch, metric);
  long templated kernel names with commas inside quotes, thousands separators, auto-scaled units (`Kbyte`/`Mbyte`,
  `nsecond`/`usecond`/`msecond`, `Ghz`), 16 roofline metrics plus the device name and 6 metrics the reader must skip.
- raw: one row per launch with ~1,500 metric columns in alphabetical order (the full set), a units row, and the
  roofline metrics (counters and `.peak_sustained` roofs) among them.

No preamble and no rule columns, so that a plain `pyarrow.csv.read_csv(FILE)` reads the same file as a baseline.
Deterministic for a seed; written as it is generated (a pool of per-kernel row blocks is built once, then each
launch writes its ID and one block), so memory stays small whatever the launch count.

    python benchmarks/generate.py details 100000 /tmp/details_1e5.csv
    python benchmarks/generate.py raw 100000 /tmp/raw_1e5.csv --columns 1500
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import random
from pathlib import Path

DETAILS_HEADER = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
                  "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value")
RAW_IDENTITY = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
                "Grid Size", "Device", "CC")
DEVICE = "NVIDIA H100 80GB HBM3"
PROCESS = ("3141592", "python3.11", "127.0.0.1")
VARIANTS_PER_KERNEL = 8  # launches of one kernel differ a little, as they do in a training step

# (metric, kind) for the 16 roofline metrics of the details page; kind picks how values are printed.
DETAILS_ROOFLINE = (
    ("dram__bytes_read.sum", "bytes"), ("dram__bytes_write.sum", "bytes"), ("gpu__time_duration.sum", "time"),
    ("l1tex__t_bytes.sum", "bytes"), ("lts__t_bytes.sum", "bytes"), ("sm__cycles_elapsed.avg.per_second", "clock"),
    ("sm__inst_executed_pipe_tensor.sum", "inst"),
    *((f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum", "inst")
      for op in ("dadd", "dfma", "dmul", "fadd", "ffma", "fmul", "hadd", "hfma", "hmul")),
)
# Metrics a details page carries that the roofline does not use: the reader must skip them.
DETAILS_OTHER = (
    ("launch__block_size", ""), ("launch__occupancy_limit_registers", "block"), ("launch__registers_per_thread",
                                                                                 "register/thread"),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%"), ("sm__warps_active.avg.pct_of_peak_sustained_active",
                                                                "%"), ("smsp__inst_executed.sum", "inst"),
)
# Roofline metrics of the raw page: counters, clocks and the report's own roofs (name, unit).
RAW_ROOFLINE = (
    ("device__attribute_display_name", ""), ("device__attribute_max_gpu_frequency_khz", ""),
    ("dram__bytes.sum", "Mbyte"), ("dram__bytes.sum.peak_sustained", "byte/cycle"),
    ("dram__cycles_elapsed.avg.per_second", "Ghz"), ("gpu__time_duration.sum", "usecond"),
    ("l1tex__cycles_elapsed.avg.per_second", "Ghz"), ("l1tex__t_bytes.sum", "Mbyte"),
    ("l1tex__t_bytes.sum.peak_sustained", "byte/cycle"), ("lts__cycles_elapsed.avg.per_second", "Ghz"),
    ("lts__t_bytes.sum", "Mbyte"), ("lts__t_bytes.sum.peak_sustained", "byte/cycle"),
    ("sm__cycles_elapsed.avg.per_second", "Ghz"),
    ("sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained", ""),
    ("sm__ops_path_tensor_src_fp16.sum", ""),
    *((f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum", "inst")
      for op in ("dadd", "dfma", "dmul", "fadd", "ffma", "fmul", "hadd", "hfma", "hmul")),
    *((f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum.peak_sustained", "inst/cycle")
      for op in ("dfma", "ffma", "hfma")),
)

_NAMESPACES = ("at::native", "at::native::<unnamed>", "cutlass::gemm::kernel", "flash", "cub::CUB_200200_800_NS",
               "thrust::cuda_cub::core", "(anonymous namespace)", "transformer_engine::detail", "at::cuda::detail")
_KERNELS = ("vectorized_elementwise_kernel", "reduce_kernel", "GemmUniversal", "flash_fwd_kernel",
            "DeviceRadixSortOnesweepKernel", "cunn_SoftMaxForward", "layer_norm_kernel", "index_elementwise_kernel",
            "unrolled_elementwise_kernel", "multi_tensor_apply_kernel", "indexSelectLargeIndex", "RowwiseMomentsCUDAKernel")
_TYPES = ("float", "c10::Half", "c10::BFloat16", "double", "int", "long", "bool", "char *", "unsigned int",
          "at::native::AddFunctor<float>", "at::detail::Array<char *, (int)3>", "cutlass::half_t",
          "cutlass::arch::Sm90", "cute::tuple<cute::C<128>, cute::C<256>, cute::C<64>>",
          "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>",
          "at::native::<unnamed>::launch_clamp_scalar(at::TensorIteratorBase &, c10::Scalar, c10::Scalar, "
          "at::native::detail::ClampLimits)::[lambda() (instance 1)]::operator ()() const::"
          "[lambda() (instance 7)]::operator ()() const::[lambda(float) (instance 1)]")


def kernel_names(count: int, rng: random.Random) -> list[str]:
    """`count` distinct demangled names, 100 to 600 characters, with templates, commas and lambdas."""
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < count:
        template = ", ".join(rng.choice(_TYPES) for _ in range(rng.randint(2, 6)))
        args = ", ".join(rng.choice(_TYPES) for _ in range(rng.randint(1, 4)))
        name = (f"void {rng.choice(_NAMESPACES)}::{rng.choice(_KERNELS)}<(int){rng.choice((1, 2, 4, 8))}, "
                f"{template}>({args})")
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


def _grouped(value: float, decimals: int) -> str:
    return f"{value:,.{decimals}f}"


def _scaled(value: float, kind: str) -> tuple[str, str]:
    """(unit, text) the way ncu auto-scales: the value printed between 1 and 1000 of the largest prefix."""
    if kind == "bytes":
        for unit, scale in (("Gbyte", 1e9), ("Mbyte", 1e6), ("Kbyte", 1e3)):
            if value >= scale:
                return unit, _grouped(value / scale, 2)
        return "byte", _grouped(value, 0)
    if kind == "time":  # value in ns
        for unit, scale in (("msecond", 1e6), ("usecond", 1e3)):
            if value >= scale:
                return unit, _grouped(value / scale, 2)
        return "nsecond", _grouped(value, 2)
    if kind == "clock":
        return "Ghz", _grouped(value / 1e9, 2)
    return kind, _grouped(value, 0)


def _launch_profile(rng: random.Random) -> dict[str, float]:
    """One launch's counters: time in ns, bytes per level, instructions per op."""
    time_ns = 10 ** rng.uniform(3.3, 6.5)
    dram = 10 ** rng.uniform(4, 9.5)
    values = {
        "gpu__time_duration.sum": time_ns, "dram__bytes_read.sum": dram * 0.6, "dram__bytes_write.sum": dram * 0.4,
        "lts__t_bytes.sum": dram * rng.uniform(1, 4), "l1tex__t_bytes.sum": dram * rng.uniform(2, 12),
        "sm__cycles_elapsed.avg.per_second": rng.uniform(1.4e9, 1.98e9),
        "sm__inst_executed_pipe_tensor.sum": rng.choice((0, 10 ** rng.uniform(4, 8))),
    }
    for op in ("dadd", "dfma", "dmul", "fadd", "ffma", "fmul", "hadd", "hfma", "hmul"):
        present = op[0] == "f" or rng.random() < 0.2
        values[f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum"] = 10 ** rng.uniform(3, 10) if present else 0
    return values


def _details_block(kernel: str, rng: random.Random) -> bytes:
    """Every row of one launch, each without its leading `"ID",`; `_write_launches` adds it."""
    block = f'({rng.choice((64, 128, 256, 512))}, 1, 1)'
    grid = f'({rng.randint(1, 65535)}, {rng.randint(1, 8)}, 1)'
    prefix = (f'"{PROCESS[0]}","{PROCESS[1]}","{PROCESS[2]}","{kernel}","1","7","{block}","{grid}","0","9.0",'
              '"Command line profiler metrics",')
    values = _launch_profile(rng)
    rows = [f'"device__attribute_display_name","","{DEVICE}"']
    for metric, kind in DETAILS_ROOFLINE:
        unit, text = _scaled(values[metric], kind)
        rows.append(f'"{metric}","{unit}","{text}"')
    for metric, unit in DETAILS_OTHER:
        number = rng.uniform(0, 100) if unit == "%" else rng.randint(1, 10 ** rng.randint(1, 7))
        rows.append(f'"{metric}","{unit}","{_grouped(number, 2 if unit == "%" else 0)}"')
    rows.sort(key=lambda row: row.split('"', 2)[1])  # ncu sorts metrics by name within a launch
    return "".join(f"{prefix}{row}\n" for row in rows).encode()


def _raw_metric_names(columns: int, rng: random.Random) -> list[tuple[str, str]]:
    """(name, unit) for `columns` metrics: the roofline ones plus realistic others, sorted as ncu sorts them."""
    units = ("__", "cycle", "byte", "inst", "sector", "%", "warp", "request", "Ghz", "Mbyte", "usecond", "")
    families = ("dram", "fbpa", "gpc", "gpu", "l1tex", "lts", "ltc", "pcie", "sm", "smsp", "tpc", "idc", "launch")
    counters = ("cycles_active", "inst_executed", "warps_active", "throughput", "pipe_alu_cycles_active",
                "t_sectors_srcunit_tex", "t_requests_pipe_lsu_mem_global_op_ld", "average_t_sectors_per_request",
                "inst_executed_op_global_ld", "m_xbar2lts_cycles_active", "data_bank_conflicts_pipe_lsu",
                "warp_issue_stalled_long_scoreboard", "issue_active", "memory_throughput", "occupancy_limit_warps")
    rollups = ("sum", "avg", "max", "min", "sum.per_second", "avg.pct_of_peak_sustained_elapsed",
               "sum.pct_of_peak_sustained_active", "avg.per_cycle_active", "max_rate", "ratio")
    names = dict(RAW_ROOFLINE)
    for section, family, counter in (("FBPA.TriageA", "dramc", "read_throughput"), ("SM.TriageA", "sm",
                                                                                     "cycles_active")):
        names[f"{section}.{family}__{counter}.avg.pct_of_peak_sustained_elapsed"] = "%"
    for index in itertools.count():
        if len(names) >= columns:
            break
        name = (f"{rng.choice(families)}__{rng.choice(counters)}"
                f"{'' if index < 200 else f'_{index}'}.{rng.choice(rollups)}")
        unit = rng.choice(units)
        names.setdefault(name, "" if unit == "__" else unit)
    return sorted(names.items())


def _raw_value(name: str, unit: str, profile: dict[str, float], rng: random.Random) -> str:
    if name == "device__attribute_display_name":
        return DEVICE
    if name == "device__attribute_max_gpu_frequency_khz":
        return "1,980,000"
    if name.endswith(".peak_sustained"):
        return {"dram": "1,280", "l1tex": "14,592", "lts": "5,120"}.get(name.split("__")[0], "7,296" if "tensor" not in
                                                                      name else "466,944")
    if name == "sm__ops_path_tensor_src_fp16.sum":
        return _grouped(profile["sm__inst_executed_pipe_tensor.sum"] * 512, 0)
    if name == "dram__bytes.sum":
        return _grouped((profile["dram__bytes_read.sum"] + profile["dram__bytes_write.sum"]) / 1e6, 2)
    if name in ("lts__t_bytes.sum", "l1tex__t_bytes.sum"):
        return _grouped(profile[name] / 1e6, 2)
    if name == "gpu__time_duration.sum":
        return _grouped(profile[name] / 1e3, 2)
    if name.endswith("cycles_elapsed.avg.per_second"):
        return _grouped(profile["sm__cycles_elapsed.avg.per_second"] / 1e9, 2)
    if name in profile:
        return _grouped(profile[name], 0)
    if unit == "%":
        return f"{rng.uniform(0, 100):.2f}"
    if rng.random() < 0.25:
        return "0"
    return _grouped(rng.randint(1, 10 ** rng.randint(1, 9)), 0) if rng.random() < 0.7 else f"{rng.uniform(0, 1e4):.2f}"


def _raw_block(kernel: str, metrics: list[tuple[str, str]], rng: random.Random) -> bytes:
    block = f'({rng.choice((64, 128, 256, 512))}, 1, 1)'
    grid = f'({rng.randint(1, 65535)}, {rng.randint(1, 8)}, 1)'
    profile = _launch_profile(rng)
    cells = [PROCESS[0], PROCESS[1], PROCESS[2], kernel, "1", "7", block, grid, "0", "9.0"]
    cells += [_raw_value(name, unit, profile, rng) for name, unit in metrics]
    return ('"' + '","'.join(cells) + '"\n').encode()


def _write_launches(handle, launches: int, blocks: list[list[bytes]], rng: random.Random) -> None:
    """Launch i writes `"i",` before each row of a block of a kernel drawn with a skewed (Zipf-like) weight."""
    weights = [1.0 / (rank + 1) for rank in range(len(blocks))]
    cumulative = list(itertools.accumulate(weights))
    total = cumulative[-1]
    buffer: list[bytes] = []
    size = 0
    for launch in range(launches):
        kernel = min(bisect.bisect(cumulative, rng.random() * total), len(blocks) - 1)
        variants = blocks[kernel]
        block = variants[rng.randrange(len(variants))]
        prefix = b'"%d",' % launch
        chunk = prefix + block.replace(b"\n", b"\n" + prefix, block.count(b"\n") - 1)
        buffer.append(chunk)
        size += len(chunk)
        if size >= 1 << 22:
            handle.write(b"".join(buffer))
            buffer, size = [], 0
    handle.write(b"".join(buffer))


def generate_details(path: str | Path, launches: int, *, kernels: int = 200, seed: int = 0) -> Path:
    """A details page (15 columns, 23 metric rows per launch) with `launches` launches."""
    rng = random.Random(seed)
    names = kernel_names(kernels, rng)
    blocks = [[_details_block(name, rng) for _ in range(VARIANTS_PER_KERNEL)] for name in names]
    path = Path(path)
    with open(path, "wb", buffering=1 << 22) as handle:
        handle.write((",".join(f'"{h}"' for h in DETAILS_HEADER) + "\n").encode())
        _write_launches(handle, launches, blocks, rng)
    return path


def generate_raw(path: str | Path, launches: int, *, columns: int = 1500, kernels: int = 200, seed: int = 0) -> Path:
    """A raw page with `columns` metric columns, a units row and `launches` launch rows."""
    rng = random.Random(seed)
    names = kernel_names(kernels, rng)
    metrics = _raw_metric_names(columns, rng)
    blocks = [[_raw_block(name, metrics, rng) for _ in range(VARIANTS_PER_KERNEL)] for name in names]
    path = Path(path)
    with open(path, "wb", buffering=1 << 22) as handle:
        header = list(RAW_IDENTITY) + [name for name, _ in metrics]
        units = [""] * len(RAW_IDENTITY) + [unit for _, unit in metrics]
        handle.write(('"' + '","'.join(header) + '"\n').encode())
        handle.write(('"' + '","'.join(units) + '"\n').encode())
        _write_launches(handle, launches, blocks, rng)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page", choices=("details", "raw"))
    parser.add_argument("launches", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--columns", type=int, default=1500, help="metric columns of the raw page")
    parser.add_argument("--kernels", type=int, default=200, help="distinct kernel names")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.page == "details":
        generate_details(args.out, args.launches, kernels=args.kernels, seed=args.seed)
    else:
        generate_raw(args.out, args.launches, columns=args.columns, kernels=args.kernels, seed=args.seed)
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()

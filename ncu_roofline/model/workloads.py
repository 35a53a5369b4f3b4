"""FLOPs and minimum DRAM bytes of the roofline literature's worked examples, as pure functions.

Conventions, the same for every workload:

- FLOP: a multiply-add is 2 FLOP (the convention of BLAS operation counts, LAWN 41, and of Nsight Compute, which
  counts an FMA as 2). Only the arithmetic of the mathematical operation is counted: no index arithmetic.
- Bytes: the *minimum* DRAM traffic: every input read once, every output written once, nothing re-read (perfect
  on-chip reuse). Real kernels move more; `analyze --points` measures how much more (`dram_bytes_over_model`).
- Each function returns a `Workload` whose `formula` says how the two numbers were counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import InputError
from ..core.vocabulary import bytes_column
from .dtypes import ELEMENTWISE_ROOF, MATRIX_ROOF, element_bytes, roof_for


@dataclass(frozen=True)
class Workload:
    """An analytic point: work, minimum traffic, and which compute roof the work runs on."""

    name: str
    flop: float
    bytes: float
    roof: str  # compute roof key: "fp32", "tensor_fp16", ... (roofs.compute_peak)
    formula: str = ""
    parts: dict[str, float] = field(default_factory=dict)  # named terms of `bytes` (weights, kv cache, ...)


def _positive(**values: float) -> None:
    for name, value in values.items():
        if value is None or value <= 0:
            raise InputError(None, f"--{name.replace('_', '-')} must be positive, got {value!r}")


def _non_negative(**values: float) -> None:
    for name, value in values.items():
        if value is None or value < 0:
            raise InputError(None, f"--{name.replace('_', '-')} must be zero or positive, got {value!r}")


def gemm(m: int, n: int, k: int, dtype: str = "fp32", *, batch: int = 1, tf32: bool = False) -> Workload:
    """C[m,n] = A[m,k] · B[k,n], `batch` times.

    FLOP = 2·m·n·k·batch (m·n·k multiply-adds). Bytes = (m·k + k·n + m·n)·size·batch: A and B read once, C written
    once (beta = 0, so C is not read). fp32 runs on the FP32 roof unless `tf32`; fp16/bf16/fp8/int8 on the tensor
    roof of their type.
    """
    _positive(m=m, n=n, k=k, batch=batch)
    if tf32 and dtype != "fp32":
        raise InputError(None, "--tf32 applies to fp32 inputs only")
    size = element_bytes(dtype)
    roof = "tensor_tf32" if tf32 else roof_for(dtype, MATRIX_ROOF, "gemm")
    flop = 2.0 * m * n * k * batch
    nbytes = float((m * k + k * n + m * n) * batch) * size
    return Workload(f"gemm {m}x{n}x{k}" + (f" x{batch}" if batch > 1 else "") + f" {'tf32' if tf32 else dtype}",
                    flop, nbytes, roof, "2·m·n·k·batch FLOP; (m·k + k·n + m·n)·size·batch bytes")


def conv2d(batch: int, height: int, width: int, in_channels: int, out_channels: int, kernel_size: int = 3, *,
           stride: int = 1, padding: int | None = None, dtype: str = "fp32") -> Workload:
    """Direct 2-D convolution, groups = 1, dilation 1, no bias.

    Output size H_out = (H + 2·padding − kernel)/stride + 1 (floor), likewise W_out; padding defaults to
    kernel // 2 ("same" at stride 1). FLOP = 2·batch·H_out·W_out·C_out·C_in·kernel² (one multiply-add per output
    element per filter tap). Bytes = (batch·H·W·C_in + C_out·C_in·kernel² + batch·H_out·W_out·C_out)·size: input
    read once (padding is not stored), weights read once, output written once.

    The worked example 256×256×64 → 128, 3×3 (batch 1, stride 1, padding 1, fp32) gives 9,663,676,416 FLOP and
    50,626,560 bytes.
    """
    padding = kernel_size // 2 if padding is None else padding
    _positive(batch=batch, height=height, width=width, in_channels=in_channels, out_channels=out_channels,
              kernel_size=kernel_size, stride=stride)
    _non_negative(padding=padding)
    h_out = (height + 2 * padding - kernel_size) // stride + 1
    w_out = (width + 2 * padding - kernel_size) // stride + 1
    if h_out <= 0 or w_out <= 0:
        raise InputError(None, f"conv2d output would be {h_out}x{w_out}: kernel larger than the padded input")
    size = element_bytes(dtype)
    taps = kernel_size * kernel_size
    flop = 2.0 * batch * h_out * w_out * out_channels * in_channels * taps
    elements = {"input": batch * height * width * in_channels, "weights": out_channels * in_channels * taps,
                "output": batch * h_out * w_out * out_channels}
    return Workload(
        f"conv2d {batch}x{height}x{width}x{in_channels}->{out_channels} k{kernel_size} s{stride} p{padding} {dtype}",
        flop, float(sum(elements.values())) * size, roof_for(dtype, MATRIX_ROOF, "conv2d"),
        "2·N·Hout·Wout·Cout·Cin·k² FLOP; (N·H·W·Cin + Cout·Cin·k² + N·Hout·Wout·Cout)·size bytes",
        {bytes_column(k): float(v) * size for k, v in elements.items()},
    )


def elementwise(elements: int, *, inputs: int = 1, outputs: int = 1, flop_per_element: float = 1.0,
                dtype: str = "fp32", name: str | None = None, extra_bytes: float = 0.0) -> Workload:
    """An element-wise map over `elements` positions.

    FLOP = elements·flop_per_element. Bytes = elements·(inputs + outputs)·size (+ `extra_bytes`, e.g. a
    normalisation's per-column parameters). Runs on the CUDA-core roof of its type (FP16/BF16 as packed half2).
    """
    _positive(elements=elements)
    _non_negative(inputs=inputs, outputs=outputs, flop_per_element=flop_per_element)
    if inputs + outputs == 0:
        raise InputError(None, "--inputs and --outputs cannot both be zero: the operation would move no bytes")
    size = element_bytes(dtype)
    return Workload(name or f"elementwise {elements} x{flop_per_element:g} FLOP {dtype}",
                    float(elements) * flop_per_element, float(elements) * (inputs + outputs) * size + extra_bytes,
                    roof_for(dtype, ELEMENTWISE_ROOF, "elementwise"),
                    "elements·flop_per_element FLOP; elements·(inputs + outputs)·size bytes")


# FLOP per element of the normalisation presets, counted on the textbook algorithm (per-row reductions' final
# division, rsqrt and the row max's comparisons beyond one per element are O(rows) and left out):
LAYERNORM_FLOP_PER_ELEMENT = 8  # mean: 1 add; variance: sub, mul, add = 3; normalise: sub, mul = 2; affine: mul, add = 2
SOFTMAX_FLOP_PER_ELEMENT = 5  # max: 1 compare; x - max: 1; exp: 1; sum: 1 add; divide (or multiply by 1/sum): 1


def layernorm(rows: int, cols: int, dtype: str = "fp32") -> Workload:
    """LayerNorm over the last dimension (`cols`) of a rows×cols tensor, with a per-column scale and shift.

    FLOP = 8·rows·cols (see LAYERNORM_FLOP_PER_ELEMENT). Bytes = 2·rows·cols·size + 2·cols·size: x read once,
    y written once, gamma and beta read once.
    """
    _positive(rows=rows, cols=cols)
    size = element_bytes(dtype)
    work = elementwise(rows * cols, inputs=1, outputs=1, flop_per_element=LAYERNORM_FLOP_PER_ELEMENT, dtype=dtype,
                       name=f"layernorm {rows}x{cols} {dtype}", extra_bytes=2.0 * cols * size)
    return Workload(work.name, work.flop, work.bytes, work.roof,
                    "8·rows·cols FLOP; (2·rows·cols + 2·cols)·size bytes")


def softmax(rows: int, cols: int, dtype: str = "fp32") -> Workload:
    """Softmax over the last dimension of a rows×cols tensor, single pass over DRAM (online softmax).

    FLOP = 5·rows·cols (see SOFTMAX_FLOP_PER_ELEMENT; exp counted as 1). Bytes = 2·rows·cols·size.
    """
    _positive(rows=rows, cols=cols)
    work = elementwise(rows * cols, inputs=1, outputs=1, flop_per_element=SOFTMAX_FLOP_PER_ELEMENT, dtype=dtype,
                       name=f"softmax {rows}x{cols} {dtype}")
    return Workload(work.name, work.flop, work.bytes, work.roof, "5·rows·cols FLOP; 2·rows·cols·size bytes")

"""Data types of the analytic model: bytes per element and the compute roof a type runs on.

One table, so a new type is one line. Sizes are storage sizes: TF32 is stored as FP32 (4 bytes) and only
multiplied at reduced precision; INT4/FP4 pack two values per byte.
"""

from __future__ import annotations

from ..core.errors import InputError

BYTES_PER_ELEMENT: dict[str, float] = {
    "fp64": 8.0,
    "fp32": 4.0,
    "tf32": 4.0,
    "fp16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}

# Matrix products (GEMM, convolution, LLM layers) run on the tensor roof of their input type; FP32 runs on the
# FP32 pipe unless TF32 is asked for (PyTorch's default for matmul is FP32, `allow_tf32` opts in).
MATRIX_ROOF: dict[str, str] = {
    "fp64": "tensor_fp64",
    "fp32": "fp32",
    "tf32": "tensor_tf32",
    "fp16": "tensor_fp16",
    "bf16": "tensor_fp16",  # BF16 shares the FP16 tensor rate and roof
    "fp8": "tensor_fp8",
    "int8": "tensor_int8",
    "fp4": "tensor_fp4",
}
# Element-wise and normalisation kernels run on the CUDA cores (FP16/BF16 as packed half2).
ELEMENTWISE_ROOF: dict[str, str] = {"fp64": "fp64", "fp32": "fp32", "fp16": "fp16", "bf16": "fp16"}


def element_bytes(dtype: str) -> float:
    try:
        return BYTES_PER_ELEMENT[dtype]
    except KeyError:
        raise InputError(None, f"unknown dtype {dtype!r}; expected one of {', '.join(BYTES_PER_ELEMENT)}") from None


def roof_for(dtype: str, table: dict[str, str], what: str) -> str:
    """The compute roof key for `dtype` in `table`, or an InputError saying which types `what` supports."""
    try:
        return table[dtype]
    except KeyError:
        raise InputError(None, f"{what} does not support dtype {dtype!r}; expected one of {', '.join(table)}") \
            from None

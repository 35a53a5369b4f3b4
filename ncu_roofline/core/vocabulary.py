"""The one place where levels, precisions, roof terms and result columns are spelled.

Every layer imports its names from here: readers never need them, derive/ceilings/rank build their columns from
them, renderers label with `DISPLAY`. Adding a memory level or a tensor input type is a change here (and in
`metrics/`), not a hunt through the modules.

Column names carry their unit: `flop_<precision>` (FLOP), `bytes_<level>` (bytes), `ai_<level>` (FLOP/byte),
`peak_flop_per_s_<precision>` (FLOP/s), `peak_bytes_per_s_<level>` (bytes/s), `time_s` (seconds).
"""

from __future__ import annotations

from dataclasses import dataclass

# Compute precisions of the non-tensor pipes, then the tensor pipe as a whole.
PRECISIONS: tuple[str, ...] = ("fp64", "fp32", "fp16", "tensor")
# Tensor input types Nsight Compute draws a roof for ("fp16" covers FP16 and BF16); dense, never sparse.
TENSOR_TYPES: tuple[str, ...] = ("tf32", "fp16", "fp8", "int8", "fp4", "fp64")
# The compute roof a chart draws when the run counted no FLOP at all (the common case for CUDA cores).
FALLBACK_PRECISION: str = "fp32"
# Memory levels, farthest from the cores first: key -> (label, parent). The parent is the level one step farther
# out, whose bytes a level's should not undercut (the byte-order check, pipeline/derive.py, and its status words,
# core/status.py); None where no such check holds. A new level is one entry here plus its catalogue rows
# (metrics/catalogue.toml); the charts take its colour and shape from render/chart/roofline.py's one table.
MEMORY_LEVELS: dict[str, tuple[str, str | None]] = {"dram": ("DRAM", None), "l2": ("L2", "dram"), "l1": ("L1", "l2")}
LEVELS: tuple[str, ...] = tuple(MEMORY_LEVELS)
# (level, parent) pairs, farthest first: the byte-order checks.
LEVEL_PARENTS: tuple[tuple[str, str], ...] = tuple((lv, parent) for lv, (_, parent) in MEMORY_LEVELS.items()
                                                   if parent is not None)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """"1 kernel", "2 kernels", "1 launch", "3 launches": a count with its noun agreeing."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def flop_column(precision: str) -> str:
    return f"flop_{precision}"


def tensor_flop_column(tensor_type: str) -> str:
    return f"flop_tensor_{tensor_type}"


def bytes_column(level: str) -> str:
    return f"bytes_{level}"


def ai_column(level: str) -> str:
    return f"ai_{level}"


def def_column(quantity: str) -> str:
    """Which catalogue definition produced `quantity` (`def_bytes_l2 = "lts__t_bytes"`)."""
    return f"def_{quantity}"


def peak_flop_column(precision: str) -> str:
    return f"peak_flop_per_s_{precision}"


def tensor_peak_column(tensor_type: str) -> str:
    return f"peak_flop_per_s_tensor_{tensor_type}"


def peak_bytes_column(level: str) -> str:
    return f"peak_bytes_per_s_{level}"


@dataclass(frozen=True)
class Term:
    """One term of the speed of light: an amount of work or traffic over its roof."""

    key: str  # the `bound` value: "fp32", "tensor", "dram", ...
    kind: str  # "compute" or "memory"
    amount: str  # column of the amount (FLOP or bytes)
    peak: str  # column of the roof (FLOP/s or bytes/s)
    sm_clocked: bool  # the roof scales with the SM clock (DRAM has its own clock)


COMPUTE_TERMS: tuple[Term, ...] = tuple(Term(p, "compute", flop_column(p), peak_flop_column(p), True)
                                        for p in PRECISIONS)
MEMORY_TERMS: tuple[Term, ...] = tuple(Term(lv, "memory", bytes_column(lv), peak_bytes_column(lv), lv != "dram")
                                       for lv in LEVELS)
# One compute term per tensor input type, for captures that split tensor work by type (`bound` = "tensor_fp16").
TENSOR_TERMS: tuple[Term, ...] = tuple(
    Term(f"tensor_{t}", "compute", tensor_flop_column(t), tensor_peak_column(t), True) for t in TENSOR_TYPES)
TENSOR_PEAK_COLUMNS: tuple[str, ...] = tuple(t.peak for t in TENSOR_TERMS)
TENSOR_FLOP_COLUMNS: tuple[str, ...] = tuple(t.amount for t in TENSOR_TERMS)
TERMS: tuple[Term, ...] = (*COMPUTE_TERMS, *MEMORY_TERMS)
TERM_BY_KEY: dict[str, Term] = {t.key: t for t in TERMS}

# The level whose intensity a comparison and a gate follow: main memory, the farthest out.
AI_OFF_CHIP: str = ai_column(LEVELS[0])
BYTES_OFF_CHIP: str = bytes_column(LEVELS[0])
PEAK_OFF_CHIP: str = peak_bytes_column(LEVELS[0])
# How a bound that no known roof gives is shown.
UNKNOWN_BOUND = "unknown"
_DEF_PREFIX = def_column("")


def is_def_column(column: str) -> bool:
    return column.startswith(_DEF_PREFIX)


def def_quantity(column: str) -> str:
    """'bytes_l2' for 'def_bytes_l2'."""
    return column.removeprefix(_DEF_PREFIX)


WORK_COLUMNS: tuple[str, ...] = tuple(t.amount for t in COMPUTE_TERMS)
TRAFFIC_COLUMNS: tuple[str, ...] = tuple(t.amount for t in MEMORY_TERMS)
AI_COLUMNS: tuple[str, ...] = tuple(ai_column(lv) for lv in LEVELS)
PEAK_COLUMNS: tuple[str, ...] = tuple(t.peak for t in TERMS)
# The seven roofs, then one dense tensor roof per input type (used where the capture splits tensor work by type).
ROOF_COLUMNS: tuple[str, ...] = (*PEAK_COLUMNS, *TENSOR_PEAK_COLUMNS)
# Every term of a speed of light: the seven, then the tensor types (which replace `tensor` where a capture splits).
ALL_TERMS: tuple[Term, ...] = (*TERMS, *TENSOR_TERMS)
# The quantities a roofline places a launch by (work, then traffic): what "counted" means everywhere.
COUNTED_COLUMNS: tuple[str, ...] = (*WORK_COLUMNS, *TRAFFIC_COLUMNS)
# Quantities the catalogue defines per launch, in derivation order.
DERIVED_QUANTITIES: tuple[str, ...] = ("time_s", *COUNTED_COLUMNS)
DEF_COLUMNS: tuple[str, ...] = tuple(def_column(q) for q in DERIVED_QUANTITIES)

# Whether a speed of light counted every term the GPU has (bool): where false, `t_sol_s` is a lower bound, so
# `headroom_s` is an upper bound and `bound` is unproven (docs/status.md).
SOL_COMPLETE = "sol_complete"
SOL_COLUMNS: tuple[str, ...] = ("t_sol_s", "bound", "roofline_fraction", "headroom_s", SOL_COMPLETE)
RESULT_COLUMNS: tuple[str, ...] = (
    "time_s", *WORK_COLUMNS, "flop_total", *TRAFFIC_COLUMNS, *AI_COLUMNS, "flop_per_s", *PEAK_COLUMNS,
    "ceiling_source", *SOL_COLUMNS, *DEF_COLUMNS, "status",
    # tensor work and roofs per input type, null where the capture does not split tensor work by type
    *TENSOR_FLOP_COLUMNS, *TENSOR_PEAK_COLUMNS, *(def_column(q) for q in TENSOR_FLOP_COLUMNS),
)
LAUNCH_IDENTITY: tuple[str, ...] = (
    "source_file", "launch_id", "kernel_name", "kernel_demangled", "process_id", "process_name", "device_name",
    "compute_capability", "context", "stream", "grid", "block", "nvtx_range", "workload_type", "launches",
    "ncu_rules", "clock_control", "cache_control",  # capture settings, null where the input does not record them
)
KERNEL_IDENTITY: tuple[str, ...] = ("kernel_name", "kernel_demangled", "grid", "block", "device_name",
                                    "compute_capability", "nvtx_range", "launches", "source_files")

# Nsight Systems' timeline of the whole run (readers/nsys.py): one row per kernel as nsys summed it, each name form
# it carries (null where it has not that form), the launch shape where it says it, and its launches and GPU time.
TIMELINE_COLUMNS: tuple[str, ...] = ("name", "demangled", "base", "mangled", "grid", "block", "device_id",
                                     "instances", "time_s")
# The kernel groups weighted by that timeline (pipeline/app_weight.py; only with `--nsys`): the timeline's launches
# and time of the group's kernel, (1 - roofline_fraction) x that time, and how the group's name was found in it.
APP_LAUNCHES, APP_TIME, APP_HEADROOM, APP_MATCH = "app_launches", "app_time_s", "app_headroom_s", "app_match"
# Run totals of the weighting, and the share of one kernel (profiled or not) in the run's GPU kernel time.
APP_GPU_TIME, PROFILED_SHARE, APP_TIME_SHARE = "app_gpu_time_s", "profiled_share", "app_time_share"
APP_COLUMNS: tuple[str, ...] = (APP_LAUNCHES, APP_TIME, APP_HEADROOM, APP_MATCH, APP_TIME_SHARE)
# Where ambiguous groups leave the profiled share unknown (`profiled_share` null): the range it lies in.
PROFILED_SHARE_LOW, PROFILED_SHARE_HIGH = "profiled_share_low", "profiled_share_high"
# Why a kernel is slow (pipeline/limiter.py, thresholds and test order in metrics/limiters.toml), and the
# instruction roofline (Ding & Williams 2019): warp instructions, their rate, and warp instructions per transaction
# at each level (`ii_<level>`), shared memory included.
LIMITERS: tuple[str, ...] = ("roof", "launch", "compute", "memory", "balanced", "tail", "uncoalesced",
                             "bank_conflicts", "occupancy", "issue", "latency", "unknown")
# The time a fix of the limiter would save (s): the headroom for `roof`, NCU's estimated speedup or ours otherwise.
LIMITER_GAIN = "limiter_gain_s"
# NCU's own verdicts: the launch table's rule results in NCU's words (JSON, readers/ncu_rules.py), and NCU's
# SpeedOfLight title per launch and kernel group ('High Memory Throughput'), beside our limiter.
NCU_RULES, LIMITER_NCU = "ncu_rules", "limiter_ncu"
UNKNOWN_LIMITER = "unknown"
INSTRUCTION_LEVELS: tuple[str, ...] = ("l1", "l2", "dram", "shared")


def txn_column(level: str) -> str:
    """Transactions at a level: sectors (L1 global/local, L2, DRAM) or wavefronts (shared memory)."""
    return f"txn_{level}"


def ii_column(level: str) -> str:
    """Instruction intensity: warp instructions per transaction at a level."""
    return f"ii_{level}"


II_COLUMNS: tuple[str, ...] = tuple(ii_column(lv) for lv in INSTRUCTION_LEVELS)
# Published per launch and per kernel group (after the speed-of-light columns).
# `ii_shared_ideal`: warp instructions per conflict-free shared wavefront (the bank-conflict wall).
II_SHARED_IDEAL = "ii_shared_ideal"
LIMITER_COLUMNS: tuple[str, ...] = ("limiter", "limiter_evidence", LIMITER_GAIN, LIMITER_NCU, "warp_inst",
                                    "int_ops", "gips", "peak_warp_gips", *II_COLUMNS, II_SHARED_IDEAL)
# Limiter inputs that add up over a group's launches (its ratios are recomputed from these sums) ...
LIMITER_SUMMED: tuple[str, ...] = ("warp_inst", "int_ops", *(txn_column(lv) for lv in INSTRUCTION_LEVELS),
                                   "txn_shared_ideal", "sectors_global", "requests_global", "sectors_global_ideal")
# ... and those that are rates or settings of a launch: a group's value is sum(value x time_s) / sum(time_s).
LIMITER_TIME_WEIGHTED: tuple[str, ...] = (
    "waves", "sm_count", "grid_blocks", "occupancy_pct", "occupancy_theoretical_pct", "issue_active",
    "warp_cycles_per_issue", "registers_per_thread", "shared_mem_per_block", "block_size", "blocks_limit_registers",
    "blocks_limit_shared_mem", "blocks_limit_warps", "blocks_limit_blocks", "peak_warp_gips",
    "stall_long_scoreboard", "stall_short_scoreboard", "stall_mio_throttle", "stall_lg_throttle", "stall_barrier",
    "stall_math_pipe_throttle", "stall_wait", "stall_branch_resolving", "stall_no_instruction", "stall_not_selected",
    "stall_drain", "stall_membar", "stall_imc_miss", "stall_dispatch_stall", "stall_tex_throttle", "stall_sleeping",
    "stall_misc", "sol_sm_pct", "sol_memory_pct", "sol_l1tex_pct", "sol_l2_pct", "sol_dram_pct",
)

# What a person reads: labels for terms in charts, tables and messages.
DISPLAY: dict[str, str] = {
    "fp64": "FP64", "fp32": "FP32", "fp16": "FP16", "tensor": "Tensor",
    **{lv: label for lv, (label, _) in MEMORY_LEVELS.items()},
    **{f"tensor_{t}": f"Tensor {t.upper()}" for t in TENSOR_TYPES},
}
UNITS: dict[str, str] = {"compute": "FLOP/s", "memory": "B/s"}


def display(key: str) -> str:
    """'L2' for 'l2', 'Tensor' for 'tensor'; unknown keys as they are."""
    return DISPLAY.get(key, key)


# A measured profile projected onto other GPUs (projection/, docs/projection.md): per kernel group and target, the
# measured work on the target's roofs (`t_sol_target_s`, `bound_target`), the two models' times (the lower bound at
# the roof, and the measured roofline fraction kept), each at least the launch floor (`launch_floor_s`).
TARGET, BOUND_SOURCE, T_SOL_TARGET, BOUND_TARGET = "target", "bound_source", "t_sol_target_s", "bound_target"
TIME_AT_ROOF, TIME_SAME_EFFICIENCY, LAUNCH_FLOOR = "time_at_roof_s", "time_same_efficiency_s", "launch_floor_s"
AT_FLOOR, TERMS_LACKING, SOL_COMPLETE_TARGET = "at_launch_floor", "terms_lacking", "sol_complete_target"
SPEEDUP_AT_ROOF, SPEEDUP_SAME_EFFICIENCY = "speedup_at_roof", "speedup_same_efficiency"
PROJECTION_COLUMNS: tuple[str, ...] = (
    TARGET, "time_s", "t_sol_s", BOUND_SOURCE, "roofline_fraction", SOL_COMPLETE, T_SOL_TARGET, BOUND_TARGET,
    TIME_AT_ROOF, TIME_SAME_EFFICIENCY, LAUNCH_FLOOR, AT_FLOOR, SPEEDUP_AT_ROOF, SPEEDUP_SAME_EFFICIENCY,
    SOL_COMPLETE_TARGET, TERMS_LACKING, "status")
# The run per target: measured and projected GPU time of the kernels projected, the speedup range between the two
# models, and what was left out (kernels not projectable, timeline time of kernels never profiled).
SPEEDUP_LOW, SPEEDUP_HIGH, TIME_UNPROJECTED = "speedup_low", "speedup_high", "time_unprojected_s"
PROJECTION_RUN_COLUMNS: tuple[str, ...] = (
    TARGET, "kernels", "kernels_projected", "time_s", TIME_AT_ROOF, TIME_SAME_EFFICIENCY, SPEEDUP_LOW, SPEEDUP_HIGH,
    TIME_UNPROJECTED, SOL_COMPLETE, "status")

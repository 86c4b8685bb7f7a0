"""The roofline bound of a workload: the least time any schedule of it can take on a machine.

A workload needs at least ``flops / peak`` seconds of arithmetic and ``bytes / bandwidth`` seconds to
move its inputs and outputs once; no schedule is faster than the larger of the two. The peak and the
bandwidth are the analyzer's own hardware figures (:class:`~pruner_ms.hardware.CPUSpec`,
:class:`~pruner_ms.hardware.GPUSpec`), so the bound is what the analyzer says the task can reach. It
is an optimistic bound: real schedules reach a fraction of it, which differs by operator family
(a GEMM may reach half the FMA peak, an element-wise operator most of the bandwidth).
"""
from __future__ import annotations

import dataclasses
import math

from tvm import IRModule, tirx

from ..hardware.cpu import CPUSpec


@dataclasses.dataclass(frozen=True)
class Roofline:
    """The two bounds of one workload on one machine, in seconds."""

    compute_seconds: float
    memory_seconds: float
    flops: float
    bytes: float

    @property
    def seconds(self) -> float:
        """The roofline bound: the larger of the compute and the memory bound."""
        return max(self.compute_seconds, self.memory_seconds)

    @property
    def memory_bound(self) -> bool:
        return self.memory_seconds >= self.compute_seconds


def _prim_func(mod) -> tirx.PrimFunc:
    if isinstance(mod, tirx.PrimFunc):
        return mod
    if isinstance(mod, IRModule):
        funcs = [f for _, f in mod.functions.items() if isinstance(f, tirx.PrimFunc)]
        if len(funcs) == 1:
            return funcs[0]
        raise ValueError(f"expected a module with one PrimFunc (a tuning task), got {len(funcs)}")
    raise TypeError(f"expected an IRModule or PrimFunc, got {type(mod).__name__}")


def _dtype_bytes(dtype) -> int:
    dt = tirx.DataType(str(dtype)) if not hasattr(dtype, "bits") else dtype
    return max(1, dt.bits * dt.lanes // 8)


def _param_bytes(func: tirx.PrimFunc) -> tuple[float, int, int]:
    """Bytes of the function's buffers (inputs and outputs, each once), the widest and the narrowest
    element size."""
    total, widest, narrowest = 0.0, 1, 8
    for param in func.params:  # TVM 0.27: a buffer parameter carries its shape and dtype
        shape = getattr(param, "shape", None)
        if shape is None:  # a scalar parameter
            continue
        size = _dtype_bytes(param.dtype)
        widest, narrowest = max(widest, size), min(narrowest, size)
        extents = [int(s) if isinstance(s, (int, tirx.IntImm)) else None for s in shape]
        if None in extents:
            raise ValueError(f"buffer {param.name} has a symbolic shape {list(shape)}; the roofline "
                             "needs static shapes")
        total += size * math.prod(extents)
    return total, widest, min(narrowest, widest)


def workload_flops(mod) -> float:
    """FLOPs of a workload as MetaSchedule counts them (``estimate_tir_flops``)."""
    from tvm.s_tir.analysis import estimate_tir_flops

    return float(estimate_tir_flops(mod if isinstance(mod, IRModule) else IRModule({"main": mod})))


def _cpu_bandwidth(spec: CPUSpec, nbytes: float) -> float:
    """Bytes/s of the fastest memory level that holds ``nbytes`` across all cores (L2, L3, DRAM)."""
    cores = max(1, spec.cores)
    if nbytes <= spec.l2_bytes * cores:
        return spec.l2_bytes_per_cycle * spec.frequency_ghz * 1e9 * cores
    if nbytes <= spec.l3_bytes:
        return spec.l3_bandwidth(cores)
    return spec.dram_bandwidth(cores)


def roofline(mod, spec, *, flops: float | None = None) -> Roofline:
    """The roofline bound of an unscheduled workload (one PrimFunc) on ``spec``.

    Parameters
    ----------
    mod : IRModule or PrimFunc
        The workload, e.g. a tuning task's ``TuneContext.mod``.
    spec : CPUSpec or GPUSpec
        The machine, as the analyzer describes it.
    flops : float, optional
        The workload's FLOPs when known (``TaskRecord.flop``); counted with ``estimate_tir_flops``
        otherwise.
    """
    func = _prim_func(mod)
    nbytes, widest, narrowest = _param_bytes(func)
    flops = workload_flops(func) if flops is None else float(flops)
    if isinstance(spec, CPUSpec):
        peak = max(1, spec.cores) * spec.frequency_ghz * 1e9 * spec.flops_per_cycle(spec.lanes(widest), widest)
        bandwidth = _cpu_bandwidth(spec, nbytes)
    else:  # GPUSpec: tensor cores for 16-bit inputs, CUDA cores otherwise
        peak = spec.tensor_flops_per_s("float32") if narrowest <= 2 else spec.fp32_flops_per_s
        bandwidth = spec.dram_bytes_per_s
    return Roofline(compute_seconds=flops / peak if peak > 0 else 0.0,
                    memory_seconds=nbytes / bandwidth if bandwidth > 0 else 0.0, flops=flops, bytes=nbytes)

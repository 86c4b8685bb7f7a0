"""The symbolic analyzer: from a scheduled candidate to named symbols and a latency estimate."""
from __future__ import annotations

import dataclasses
import math

from tvm import IRModule, tirx

from ..hardware.cpu import CPUSpec
from .cpu_model import NestEstimate, estimate_nest
from .gpu_model import estimate_kernels
from .loop_nest import extract_nests


@dataclasses.dataclass
class Estimate:
    """Analyzer output for one program: estimated seconds and the per-block symbols behind it."""

    seconds: float
    nests: list[NestEstimate]  # per leaf block on a CPU, per kernel on a GPU

    @property
    def symbols(self) -> dict:
        """Per-program totals: seconds, FLOPs (by unit on a GPU) and bytes per memory level."""
        total = {"seconds": self.seconds}
        for n in self.nests:
            for key, value in n.symbols.items():
                if key.endswith("flops") or key.startswith("bytes_"):
                    total[key] = total.get(key, 0.0) + value
        return total


def _prim_funcs(mod) -> list[tirx.PrimFunc]:
    if isinstance(mod, tirx.PrimFunc):
        return [mod]
    if isinstance(mod, IRModule):
        return [f for _, f in mod.functions.items() if isinstance(f, tirx.PrimFunc)]
    if hasattr(mod, "mod"):  # s_tir.Schedule
        return _prim_funcs(mod.mod)
    raise TypeError(f"expected an IRModule, PrimFunc or Schedule, got {type(mod).__name__}")


def _program_bytes(nests) -> float:
    """Bytes of every buffer the nests touch, each counted once."""
    sizes = {a.buffer_uid: a.dtype_bytes * math.prod(a.shape) for n in nests for a in n.accesses}
    return float(sum(sizes.values()))


class SymbolicAnalyzer:
    """Estimate the latency of scheduled TensorIR on a CPU or an NVIDIA GPU.

    Parameters
    ----------
    spec : CPUSpec or GPUSpec
        The hardware: :func:`pruner_ms.hardware.host_cpu_spec` describes this machine,
        :func:`pruner_ms.hardware.gpu_spec_for_target` a GPU target.
    """

    def __init__(self, spec) -> None:
        self.spec = spec
        self.is_gpu = not isinstance(spec, CPUSpec)

    def analyze(self, mod) -> Estimate:
        if self.is_gpu:
            parts = [k for f in _prim_funcs(mod) for k in estimate_kernels(extract_nests(f), self.spec)]
        else:
            parts = []
            for f in _prim_funcs(mod):
                nests = extract_nests(f)
                program_bytes = _program_bytes(nests)
                parts += [estimate_nest(n, self.spec, program_bytes=program_bytes) for n in nests]
        return Estimate(sum(n.seconds for n in parts), parts)

    def estimate_seconds(self, mod) -> float:
        return self.analyze(mod).seconds


def analyzer_for_target(target) -> SymbolicAnalyzer:
    """The symbolic analyzer that matches a TVM target: the host spec for ``llvm`` (with the memory
    figures measured on this machine, :func:`~pruner_ms.hardware.calibration.calibrated_spec`), the GPU spec of
    ``configs/gpu`` for a ``cuda`` target (an unknown GPU raises :class:`~pruner_ms.hardware.UnknownGPUError`)."""
    from ..hardware.calibration import calibrated_spec
    from ..hardware.cpu import host_cpu_spec, load_cpu_spec
    from ..hardware.gpu import gpu_spec_for_target

    kind = str(target.kind.name)
    if kind == "cuda":
        return SymbolicAnalyzer(gpu_spec_for_target(target))
    if kind != "llvm":
        raise NotImplementedError(
            f"PrunerSearch has no analyzer for target kind {kind!r}; 'llvm' CPU and 'cuda' NVIDIA targets are "
            "supported. Pass analyzer=SymbolicAnalyzer(spec) for a custom description."
        )
    host = host_cpu_spec()
    mcpu = str(target.attrs.get("mcpu", "") or host.llvm_mcpu)
    cores = int(target.attrs.get("num-cores", 0) or host.cores)
    if mcpu == host.llvm_mcpu:  # this machine: its memory beyond the L2 is measured once (cached)
        return SymbolicAnalyzer(calibrated_spec(dataclasses.replace(host, cores=cores)))
    return SymbolicAnalyzer(load_cpu_spec(mcpu, cores=cores))

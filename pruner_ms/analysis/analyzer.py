"""The symbolic analyzer: from a scheduled candidate to named symbols and a latency estimate."""
from __future__ import annotations

import dataclasses

from tvm import IRModule, tirx

from ..hardware.cpu import CPUSpec
from .cpu_model import NestEstimate, estimate_nest
from .loop_nest import extract_nests


@dataclasses.dataclass
class Estimate:
    """Analyzer output for one program: estimated seconds and the per-block symbols behind it."""

    seconds: float
    nests: list[NestEstimate]

    @property
    def symbols(self) -> dict:
        """Per-program totals of the most telling symbols."""
        total = {"seconds": self.seconds, "flops": sum(n.symbols["flops"] for n in self.nests)}
        for key in ("bytes_from_l2", "bytes_from_l3", "bytes_from_dram"):
            total[key] = sum(n.symbols[key] for n in self.nests)
        return total


def _prim_funcs(mod) -> list[tirx.PrimFunc]:
    if isinstance(mod, tirx.PrimFunc):
        return [mod]
    if isinstance(mod, IRModule):
        return [f for _, f in mod.functions.items() if isinstance(f, tirx.PrimFunc)]
    if hasattr(mod, "mod"):  # s_tir.Schedule
        return _prim_funcs(mod.mod)
    raise TypeError(f"expected an IRModule, PrimFunc or Schedule, got {type(mod).__name__}")


class SymbolicAnalyzer:
    """Estimate the latency of scheduled TensorIR on a CPU described by a :class:`CPUSpec`.

    Parameters
    ----------
    spec : CPUSpec
        The hardware; :func:`pruner_ms.hardware.host_cpu_spec` describes this machine.
    """

    def __init__(self, spec: CPUSpec) -> None:
        self.spec = spec

    def analyze(self, mod) -> Estimate:
        nests = [estimate_nest(n, self.spec) for f in _prim_funcs(mod) for n in extract_nests(f)]
        return Estimate(sum(n.seconds for n in nests), nests)

    def estimate_seconds(self, mod) -> float:
        return self.analyze(mod).seconds

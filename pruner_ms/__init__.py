"""pruner_ms: Draft-then-Verify tensor-program tuning (Pruner, ASPLOS'25) for TVM MetaSchedule.

The names below are imported on first use, so ``import pruner_ms.cli`` does not import TVM before
the command line is read (see :mod:`pruner_ms.integration.workarounds.torch_import`).
"""
from __future__ import annotations

from .lazy_exports import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "Estimate": ".analysis", "SymbolicAnalyzer": ".analysis", "SymbolicCostModel": ".cost_model",
    "CPUSpec": ".hardware", "host_cpu_spec": ".hardware", "load_cpu_spec": ".hardware",
    "WorkloadError": ".integration.tune", "tune_tir": ".integration.tune",
    "TargetError": ".integration.workarounds", "WarmPoolBuilder": ".integration.builders",
    "CudaBuilder": ".integration.builders", "BackgroundStartLocalRunner": ".integration.runners",
    "normalize_target": ".integration.workarounds", "PrunerSearch": ".strategy",
    "EvolutionaryDraftSearch": ".strategy",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

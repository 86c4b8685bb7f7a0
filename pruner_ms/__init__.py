"""pruner_ms: Draft-then-Verify tensor-program tuning (Pruner, ASPLOS'25) for TVM MetaSchedule.

The names below are imported on first use, so ``import pruner_ms.cli`` does not import TVM before
the command line is read (see :mod:`pruner_ms.integration.workarounds.torch_import`).
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "Estimate": ".analysis", "SymbolicAnalyzer": ".analysis", "SymbolicCostModel": ".cost_model",
    "CPUSpec": ".hardware", "host_cpu_spec": ".hardware", "load_cpu_spec": ".hardware",
    "WorkloadError": ".integration.tune", "tune_tir": ".integration.tune",
    "TargetError": ".integration.workarounds", "WarmPoolBuilder": ".integration.workarounds",
    "normalize_target": ".integration.workarounds", "PrunerSearch": ".strategy",
    "EvolutionaryDraftSearch": ".strategy",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pruner_ms' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))

"""pruner_ms: Draft-then-Verify tensor-program tuning (Pruner, ASPLOS'25) for TVM MetaSchedule."""
from .analysis import Estimate, SymbolicAnalyzer
from .cost_model import SymbolicCostModel
from .hardware import CPUSpec, host_cpu_spec, load_cpu_spec
from .integration.tune import WorkloadError, tune_tir
from .integration.workarounds import TargetError, WarmPoolBuilder, normalize_target
from .strategy import PrunerSearch

__version__ = "0.1.0"
__all__ = [
    "CPUSpec", "Estimate", "PrunerSearch", "SymbolicAnalyzer", "SymbolicCostModel", "TargetError",
    "WarmPoolBuilder", "WorkloadError", "host_cpu_spec", "load_cpu_spec", "normalize_target", "tune_tir",
]

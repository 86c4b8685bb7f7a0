"""Cost models: the symbolic analyzer offered as a MetaSchedule CostModel, and PaCM (learned, torch)."""
from ..lazy_exports import lazy_exports
from .symbolic import SymbolicCostModel

# PaCM and training load on first use: ``import pruner_ms`` does not need the torch model code
_EXPORTS = {"CheckpointError": ".pacm", "PaCM": ".pacm", "train_offline": ".train"}
__all__ = ["SymbolicCostModel", *sorted(_EXPORTS)]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

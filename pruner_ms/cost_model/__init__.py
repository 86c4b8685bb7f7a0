"""Cost models: the symbolic analyzer offered as a MetaSchedule CostModel, and PaCM (learned, torch)."""
from .symbolic import SymbolicCostModel

__all__ = ["CheckpointError", "PaCM", "SymbolicCostModel", "train_offline"]


def __getattr__(name: str):
    # loaded on first use: ``import pruner_ms`` does not need the torch model code
    if name in ("PaCM", "CheckpointError"):
        from . import pacm

        return getattr(pacm, name)
    if name == "train_offline":
        from .train import train_offline

        return train_offline
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

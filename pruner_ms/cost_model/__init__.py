"""Cost models: the symbolic analyzer offered as a MetaSchedule CostModel."""
from .symbolic import SymbolicCostModel

__all__ = ["SymbolicCostModel"]

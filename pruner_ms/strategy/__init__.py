"""Search strategies."""
from ..analysis import analyzer_for_target  # re-exported: its home is pruner_ms.analysis
from .pruner_search import PrunerSearch

__all__ = ["PrunerSearch", "analyzer_for_target"]

"""Search strategies."""
from .pruner_search import PrunerSearch, analyzer_for_target

__all__ = ["PrunerSearch", "analyzer_for_target"]

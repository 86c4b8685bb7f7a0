"""Search strategies."""
from ..analysis import analyzer_for_target  # re-exported: its home is pruner_ms.analysis
from .evolutionary_draft import EvolutionaryDraftSearch
from .pruner_search import PrunerSearch

__all__ = ["EvolutionaryDraftSearch", "PrunerSearch", "analyzer_for_target"]

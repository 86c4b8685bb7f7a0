"""The symbolic analyzer as a MetaSchedule ``CostModel`` (usable with any search strategy)."""
from __future__ import annotations

import collections
import logging

import numpy as np
import tvm_ffi
from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.cost_model import PyCostModel

from ..analysis import SymbolicAnalyzer

logger = logging.getLogger("pruner_ms")


@derived_object
class SymbolicCostModel(PyCostModel):
    """Score = 1 / estimated seconds (higher is better); ``update`` learns nothing.

    Scores are cached by the program's structural hash (``cache_size`` programs, least recently used
    dropped first): MetaSchedule's evolutionary search scores the members that survive a generation
    again in the next, and :class:`~pruner_ms.strategy.EvolutionaryDraftSearch` scores its drafts once
    more; a hash costs ~0.07 ms, an estimate ~1 ms or more.

    Parameters
    ----------
    analyzer : SymbolicAnalyzer, optional
        Defaults to the analyzer for the tuning context's target.
    cache_size : int
        Programs whose scores are kept (0: no cache).
    """

    def __init__(self, analyzer: SymbolicAnalyzer | None = None, *, cache_size: int = 65536) -> None:
        if cache_size < 0:
            raise ValueError(f"SymbolicCostModel: cache_size must be >= 0, got {cache_size}")
        self.analyzer = analyzer
        self.cache_size = cache_size
        self._cache: collections.OrderedDict[int, float] = collections.OrderedDict()

    def load(self, path: str) -> None:  # stateless: nothing to load
        pass

    def save(self, path: str) -> None:
        pass

    def update(self, context, candidates, results) -> None:
        pass

    def predict(self, context, candidates) -> np.ndarray:
        if self.analyzer is None:
            from ..analysis import analyzer_for_target

            self.analyzer = analyzer_for_target(context.target)
        out = np.zeros(len(candidates), dtype="float64")
        for i, cand in enumerate(candidates):
            key = int(tvm_ffi.structural_hash(cand.sch.mod)) if self.cache_size > 0 else None
            score = self._cache.get(key) if key is not None else None
            if score is None:
                score = self._score(cand)
                if key is not None:
                    self._cache[key] = score
                    if len(self._cache) > self.cache_size:
                        self._cache.popitem(last=False)
            elif key is not None:
                self._cache.move_to_end(key)
            out[i] = score
        return out

    def _score(self, cand) -> float:
        try:
            return 1.0 / max(self.analyzer.estimate_seconds(cand.sch.mod), 1e-12)
        except Exception as err:  # noqa: BLE001  (an unanalyzable program scores 0, never aborts)
            logger.debug("analyzer failed on a candidate: %s", err)
            return 0.0

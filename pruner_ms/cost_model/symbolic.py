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

#: warn when the analyzer fails on more than this share of the new programs of one ``predict``
ANALYZER_FAILURE_WARN_SHARE = 0.1


@derived_object
class SymbolicCostModel(PyCostModel):
    """Score = 1 / estimated seconds (higher is better); ``update`` learns nothing.

    Scores are cached by the program's structural hash (``cache_size`` programs, least recently used
    dropped first): MetaSchedule's evolutionary search scores the members that survive a generation
    again in the next, and :class:`~pruner_ms.strategy.EvolutionaryDraftSearch` scores its drafts once
    more; a hash costs ~0.07 ms, an estimate ~1 ms or more.

    A program the analyzer cannot read scores 0 (ranks last) and the search goes on; when more than
    :data:`ANALYZER_FAILURE_WARN_SHARE` of the programs one ``predict`` estimates fail, a warning
    names how many and the first error (ranking then degrades towards random search).
    ``failures`` / ``evaluations`` count them over the model's life.

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
        self.evaluations = 0
        self.failures = 0

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
        evaluated, errors = 0, []
        for i, cand in enumerate(candidates):
            key = int(tvm_ffi.structural_hash(cand.sch.mod)) if self.cache_size > 0 else None
            score = self._cache.get(key) if key is not None else None
            if score is None:
                score, error = self._score(cand)
                evaluated += 1
                if error is not None:
                    errors.append(error)
                if key is not None:
                    self._cache[key] = score
                    if len(self._cache) > self.cache_size:
                        self._cache.popitem(last=False)
            elif key is not None:
                self._cache.move_to_end(key)
            out[i] = score
        self.evaluations += evaluated
        self.failures += len(errors)
        if evaluated and len(errors) > ANALYZER_FAILURE_WARN_SHARE * evaluated:
            logger.warning("SymbolicCostModel: the analyzer failed on %d of %d programs (they score 0 and rank "
                           "last, so the search degrades towards random); first error: %s",
                           len(errors), evaluated, errors[0])
        return out

    def _score(self, cand) -> tuple[float, str | None]:
        """The program's score and, where the analyzer raised, the error (the score is then 0)."""
        try:
            return 1.0 / max(self.analyzer.estimate_seconds(cand.sch.mod), 1e-12), None
        except Exception as err:  # noqa: BLE001  (an unanalyzable program scores 0, never aborts)
            return 0.0, f"{type(err).__name__}: {err}"

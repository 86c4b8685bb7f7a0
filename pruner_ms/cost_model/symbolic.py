"""The symbolic analyzer as a MetaSchedule ``CostModel`` (usable with any search strategy)."""
from __future__ import annotations

import logging

import numpy as np
from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.cost_model import PyCostModel

from ..analysis import SymbolicAnalyzer

logger = logging.getLogger("pruner_ms")


@derived_object
class SymbolicCostModel(PyCostModel):
    """Score = 1 / estimated seconds (higher is better); ``update`` learns nothing.

    Parameters
    ----------
    analyzer : SymbolicAnalyzer, optional
        Defaults to the analyzer for the tuning context's target.
    """

    def __init__(self, analyzer: SymbolicAnalyzer | None = None) -> None:
        self.analyzer = analyzer

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
            try:
                out[i] = 1.0 / max(self.analyzer.estimate_seconds(cand.sch.mod), 1e-12)
            except Exception as err:  # noqa: BLE001  (an unanalyzable program scores 0, never aborts)
                logger.debug("analyzer failed on a candidate: %s", err)
        return out

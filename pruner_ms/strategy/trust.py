"""How far the analyzer's drafts can be trusted on one task, learned online from what was measured.

Drafting is only as good as the analyzer: on an operator family it mis-models, the drafts are the
wrong region of the space, and a search that measures only drafts never leaves it. The evidence that
matters is whether drafting pays: :class:`AnalyzerTrust` compares the measured latencies of programs
picked from the drafts with those of programs picked at random from outside them (PrunerSearch's
``eps_greedy`` share, an unbiased sample of the space), as the probability ``auc`` that a draft beats
a random program (the Mann-Whitney statistic; ties count half). The trust level is

* ``1`` until ``min_drafts`` draft and ``min_random`` random programs have valid measurements (the
  paper's cold start: drafts are trusted);
* then ``clip((auc - 0.5) / (full_trust_auc - 0.5), 0, 1)``: an analyzer whose drafts are no better
  than chance (or worse: one that ranks backwards) earns no trust, one whose drafts beat
  ``full_trust_auc`` of random programs earns full trust.

Rank correlation among measured programs is a poor signal here: they are mostly the analyzer's own
top picks (range restriction) and its estimates tie on plateaus, so ``rho`` (Spearman between
analyzer score and measured throughput over every measured program) is reported, not used.

:class:`~pruner_ms.PrunerSearch` scales by the trust level the draft bar, the analyzer's weight in
the verify blend and the drafts' share of the verify population (the rest being fresh random
samples ranked by the learned model alone), and stops running the analyzer-driven genetic search
when trust falls below ``GA_MIN_TRUST``.
"""
from __future__ import annotations

import math

import numpy as np


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rank correlation (average ranks for ties); 0 when either side is constant."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) < 2:
        return 0.0
    rx, ry = _ranks(x), _ranks(y)
    sx, sy = rx.std(), ry.std()
    if sx == 0 or sy == 0:
        return 0.0
    return float(((rx - rx.mean()) * (ry - ry.mean())).mean() / (sx * sy))


def _ranks(v: np.ndarray) -> np.ndarray:
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(len(v))
    ranks[order] = np.arange(len(v), dtype=np.float64)
    # ties share their mean rank
    _, inverse, counts = np.unique(v, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return sums[inverse] / counts[inverse]


class AnalyzerTrust:
    """Online evidence of how much the analyzer's drafts beat random programs on one task.

    Parameters
    ----------
    min_drafts, min_random : int
        Valid measurements of draft and of random programs needed before the evidence is used
        (until then trust is 1).
    full_trust_auc : float
        Probability that a draft beats a random program which earns full trust (in ``(0.5, 1]``).
    """

    def __init__(self, *, min_drafts: int = 4, min_random: int = 2, full_trust_auc: float = 0.75) -> None:
        if min_drafts < 1 or min_random < 1 or not 0.5 < full_trust_auc <= 1.0:
            raise ValueError("AnalyzerTrust: min_drafts and min_random must be >= 1, full_trust_auc in (0.5, 1]")
        self.min_drafts, self.min_random, self.full_trust_auc = min_drafts, min_random, full_trust_auc
        self._scores: list[float] = []
        self._throughputs: list[float] = []
        self._by_source: dict[str, list[float]] = {"draft": [], "random": []}

    def add(self, analyzer_scores, latencies, sources) -> None:
        """Record measured programs: analyzer scores (higher is faster), latencies in seconds (``inf``
        or non-positive for a failed build or run, left out) and where each was picked from
        (``"draft"``, ``"random"``, or anything else for programs that are neither)."""
        for s, lat, src in zip(analyzer_scores, latencies, sources):
            if lat is None or not math.isfinite(lat) or lat <= 0:
                continue
            if math.isfinite(s):
                self._scores.append(float(s))
                self._throughputs.append(1.0 / float(lat))
            if src in self._by_source:
                self._by_source[src].append(float(lat))

    @property
    def pairs(self) -> int:
        return len(self._scores)

    @property
    def rho(self) -> float | None:
        """Spearman correlation of analyzer score and throughput over all measured programs."""
        if self.pairs < 3:
            return None
        return spearman(np.array(self._scores), np.array(self._throughputs))

    @property
    def auc(self) -> float | None:
        """P(a draft is faster than a random program), None until enough of both are measured."""
        drafts, rand = self._by_source["draft"], self._by_source["random"]
        if len(drafts) < self.min_drafts or len(rand) < self.min_random:
            return None
        d, r = np.asarray(drafts)[:, None], np.asarray(rand)[None, :]
        return float(((d < r).sum() + 0.5 * (d == r).sum()) / (d.size * r.size))

    @property
    def level(self) -> float:
        """Trust in ``[0, 1]``."""
        auc = self.auc
        if auc is None:
            return 1.0
        return float(min(1.0, max(0.0, (auc - 0.5) / (self.full_trust_auc - 0.5))))

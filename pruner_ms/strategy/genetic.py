"""A small genetic search over candidates with any fitness function (higher is better)."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .trace_replay import Candidate, TraceReplayer

Fitness = Callable[[Sequence[Candidate]], np.ndarray]


def evolve(
    replayer: TraceReplayer,
    init: list[Candidate],
    fitness: Fitness,
    *,
    iterations: int,
    keep: int,
    mutate_prob: float,
    exclude: set[int],
    offspring: int | None = None,
    eligible: Callable[[Sequence[Candidate]], np.ndarray] | None = None,
) -> list[tuple[float, Candidate]]:
    """Run ``iterations`` rounds of roulette selection + mutation from ``init``.

    Returns the best ``keep`` distinct candidates seen (scored by ``fitness``), best first, skipping
    those whose key is in ``exclude`` (e.g. already measured programs) and, if ``eligible`` is given,
    those it rejects (they may still be parents).
    """
    seen: dict[int, tuple[float, Candidate]] = {}
    current = _dedup(init)
    size = offspring or len(current)
    for it in range(iterations + 1):
        if not current:
            break
        scores = np.nan_to_num(np.asarray(fitness(current), dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
        ok = eligible(current) if eligible is not None else np.ones(len(current), dtype=bool)
        for s, c, e in zip(scores, current, ok):
            if e and c.key not in exclude and c.key not in seen:
                seen[c.key] = (float(s), c)
        if it == iterations:
            break
        weights = np.maximum(scores, 0.0)
        p = weights / weights.sum() if weights.sum() > 0 else None
        parents = [current[i] for i in replayer.rng.choice(len(current), size=size, p=p)]
        mutate = replayer.rng.random(size) < mutate_prob
        mutated = replayer.mutate_many([c for c, m in zip(parents, mutate) if m])
        children = [c for c in mutated if c is not None] + [c for c, m in zip(parents, mutate) if not m]
        current = _dedup(children)
    ranked = sorted(seen.values(), key=lambda sc: -sc[0])
    return ranked[:keep]


def _dedup(cands: list[Candidate]) -> list[Candidate]:
    out, keys = [], set()
    for c in cands:
        if c.key not in keys:
            keys.add(c.key)
            out.append(c)
    return out

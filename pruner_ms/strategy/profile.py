"""Where a search round's host time goes: sampling, mutation, analyzer, learned-model prediction."""
from __future__ import annotations

import contextlib
import time
from collections import defaultdict


class RoundProfile:
    """Seconds and counts per part of one search round (``sample_s``, ``mutate_s``, ``analyze_s``,
    ``predict_s``, ...), reset by :meth:`start` and read with :meth:`as_dict`."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)
        self._start = time.perf_counter()

    def start(self) -> None:
        self.seconds.clear()
        self.counts.clear()
        self._start = time.perf_counter()

    @contextlib.contextmanager
    def timed(self, key: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[key] += time.perf_counter() - t

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] += n

    def as_dict(self) -> dict:
        """``{part}_s`` seconds, ``total_s`` since :meth:`start`, ``other_s`` the rest, and the counts."""
        out = {k: float(v) for k, v in self.seconds.items()}
        out["total_s"] = time.perf_counter() - self._start
        out["other_s"] = max(0.0, out["total_s"] - sum(self.seconds.values()))
        out.update({k: int(v) for k, v in self.counts.items()})
        return out

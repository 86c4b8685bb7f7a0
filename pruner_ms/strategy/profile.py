"""Where a search round's host time goes: sampling, mutation, analyzer, learned-model prediction."""
from __future__ import annotations

import contextlib
import threading
import time
from collections import defaultdict

# Keys ending so are CPU time spent inside other parts (e.g. analyzer calls made in the replay
# workers, within ``mutate_s``): reported, but not subtracted again when computing ``other_s``.
OVERLAPPED_SUFFIX = "_cpu_s"


class RoundProfile:
    """Seconds and counts per part of one search round (``sample_s``, ``mutate_s``, ``analyze_s``,
    ``predict_s``, ...), reset by :meth:`start` and read with :meth:`as_dict`. Safe to update from
    several threads."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)
        self._first_errors: dict[str, str] = {}
        self._start = time.perf_counter()
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            self.seconds.clear()
            self.counts.clear()
            self._first_errors.clear()
            self._start = time.perf_counter()

    @contextlib.contextmanager
    def timed(self, key: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.add(key, time.perf_counter() - t)

    def add(self, key: str, seconds: float) -> None:
        with self._lock:
            self.seconds[key] += seconds

    def count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.counts[key] += n

    def fail(self, key: str, err: BaseException) -> None:
        """Count a failure under ``key`` and keep the round's first one for its warning."""
        with self._lock:
            self.counts[key] += 1
            self._first_errors.setdefault(key, f"{type(err).__name__}: {err}")

    def first_error(self, key: str) -> str | None:
        """The first failure counted under ``key`` since :meth:`start` (see :meth:`fail`)."""
        with self._lock:
            return self._first_errors.get(key)

    def as_dict(self) -> dict:
        """``{part}_s`` seconds, ``total_s`` since :meth:`start`, ``other_s`` the rest, and the counts."""
        with self._lock:
            out = {k: float(v) for k, v in self.seconds.items()}
            out["total_s"] = time.perf_counter() - self._start
            spent = sum(v for k, v in self.seconds.items() if not k.endswith(OVERLAPPED_SUFFIX))
            out["other_s"] = max(0.0, out["total_s"] - spent)
            out.update({k: int(v) for k, v in self.counts.items()})
        return out

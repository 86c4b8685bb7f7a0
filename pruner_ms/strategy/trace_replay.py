"""Candidate programs as the Python GA sees them: sampling, mutation and replay through TVM.

Everything here reuses MetaSchedule's own machinery (design-space traces, the context's mutators and
postprocs, and for random samples its C++ sampler, :class:`~pruner_ms.strategy.native_sampler.NativeSampler`);
a candidate that fails to replay or to pass a postproc is dropped, never raised. Replays run on a small
thread pool: TVM's FFI releases the GIL, so two threads replay ~1.6x faster on two cores. All random
choices are drawn up front from one generator (the native samplers' seeds too), so a seed reproduces a run.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import tvm_ffi
from tvm.s_tir import Schedule
from tvm.s_tir.meta_schedule import _ffi_api as ms_ffi
from tvm.s_tir.schedule import Trace

from .native_sampler import NativeSampler
from .profile import RoundProfile

logger = logging.getLogger(__name__)
_MAX_SEED = 2**31 - 1
# Attempts per call of a native sampler: small enough that the analyzer starts on the first chunk
# soon, large enough that the FFI call's overhead and the GIL hand-over stay negligible.
NATIVE_CHUNK = 128


@dataclasses.dataclass
class Candidate:
    sch: Schedule
    key: int  # structural hash of the scheduled module

    @property
    def trace(self) -> Trace:
        return self.sch.trace


class _Counter:
    """A count that several threads increment."""

    def __init__(self) -> None:
        self.value = 0
        self._lock = threading.Lock()

    def add(self, n: int = 1) -> None:
        with self._lock:
            self.value += n


class TraceReplayer:
    """Turns traces into postprocessed candidate programs for one tuning context: random samples of the
    design spaces, mutations, and replays of given traces (a failure is counted and dropped)."""

    def __init__(self, context, rng: np.random.Generator, *, num_threads: int = 1,
                 profile: RoundProfile | None = None, native_sampling: bool = True) -> None:
        self.context = context
        self.rng = rng
        self.profile = profile
        space = context.space_generator
        self.postprocs = list(space.postprocs)
        probs = dict(space.mutator_probs.items()) if space.mutator_probs else {}
        self.mutators = list(probs.keys())
        p = np.array([float(v) for v in probs.values()], dtype=np.float64)
        self.mutator_p = p / p.sum() if p.sum() > 0 else p
        self._failures = _Counter()  # shared with this replayer's views
        self.num_threads = max(1, num_threads)
        # called on every valid replay in the worker thread that made it (see ``scoring``)
        self._on_replay: Callable[[Candidate], None] | None = None
        self._pool = ThreadPoolExecutor(self.num_threads) if self.num_threads > 1 else None
        # random samples by TVM's C++ sampler (see ``sample``): one sampler per replay thread, made at
        # the first sample and shared with views; the lock keeps one sample at a time on them
        self.native_sampling = native_sampling
        self._native: dict = {"samplers": None, "spaces": None, "lock": threading.Lock()}

    @property
    def failures(self) -> int:
        """Replays and mutations that failed, over this replayer and its views."""
        return self._failures.value

    def view(self, rng: np.random.Generator, profile: RoundProfile | None) -> TraceReplayer:
        """This replayer drawing from ``rng`` and timing into ``profile``, for a search running in
        another thread: same context, mutators and replay threads, its own ``scoring`` hook; failures
        count in both. Closing is left to the original."""
        other = copy.copy(self)
        other.rng, other.profile, other._on_replay = rng, profile, None
        return other

    def close(self) -> None:
        with self._native["lock"]:
            for sampler in self._native["samplers"] or []:
                sampler.close()
            self._native["samplers"] = None
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None

    def _map(self, fn, items: list) -> list:
        if self._pool is None or len(items) < 8:
            return [fn(x) for x in items]
        return list(self._pool.map(fn, items))

    @contextlib.contextmanager
    def scoring(self, score: Callable[[Candidate], None]):
        """Within this block, run ``score`` on each valid replay in the worker thread that made it (on
        native samples, in the thread that called :meth:`sample`, while TVM samples the next chunk).

        A draft model written in Python holds the GIL while TVM's replays release it. Scoring in the
        workers was meant to overlap the two, but each Python replay re-enters Python about ten times and
        waits for the GIL each time. Measured on 2 cores (``docs/results/draft_cost_s21``), analysis
        and replay in two threads take as long as in sequence; in two processes they overlap fully.
        Native sampling (one FFI call per chunk) is what lets them overlap in one process.
        ``score`` must be thread-safe (e.g. fill a cache keyed by ``Candidate.key``) and must not raise.
        """
        previous, self._on_replay = self._on_replay, score
        try:
            yield
        finally:
            self._on_replay = previous

    def _timed(self, key: str):
        return self.profile.timed(key) if self.profile is not None else contextlib.nullcontext()

    def _failed(self, n: int = 1) -> None:
        self._failures.add(n)
        if self.profile is not None:
            self.profile.count("replay_failures", n)

    def _count(self, key: str) -> None:
        if self.profile is not None:
            self.profile.count(key)

    def _error(self, err: BaseException) -> None:
        """A replay or mutation that raised (not a program a postproc rejects: that is ``_failed`` only)."""
        if self.profile is not None:
            self.profile.fail("replay_errors", err)

    def _seeds(self, n: int) -> np.ndarray:
        return self.rng.integers(1, _MAX_SEED, size=n)

    def _candidate(self, sch: Schedule, key: int | None = None) -> Candidate:
        """A valid postprocessed schedule as a candidate (``key``: its module's structural hash, computed
        if not given), scored by the ``scoring`` hook if one is set."""
        cand = Candidate(sch, int(tvm_ffi.structural_hash(sch.mod)) if key is None else key)
        if self._on_replay is not None:
            self._on_replay(cand)
        return cand

    def replay(self, trace: Trace, seed: int | None = None) -> Candidate | None:
        """Apply ``trace`` (sampling undecided instructions) and the postprocs; None if invalid."""
        seed = int(seed if seed is not None else self._seeds(1)[0])
        self._count("replays")
        try:
            sch = Schedule(self.context.mod, seed=seed, debug_mask=0)
            trace.apply_to_schedule(sch, remove_postproc=True)
            sch.enter_postproc()
            for proc in self.postprocs:
                if not proc.apply(sch):
                    self._failed()
                    return None
            key = int(tvm_ffi.structural_hash(sch.mod))
        except Exception as err:  # noqa: BLE001  (a bad sample is data, not a crash; counted, warned per round)
            self._failed()
            self._error(err)
            logger.debug("replay failed: %s", err)
            return None
        return self._candidate(sch, key)

    def sample(self, design_spaces: list[Schedule], count: int, *, max_rounds: int = 4) -> list[Candidate]:
        """``count`` random valid programs drawn from the design spaces (fewer if too many fail).

        With ``native_sampling`` TVM's C++ sampler draws them in chunks of ``NATIVE_CHUNK`` attempts,
        one :class:`NativeSampler` per replay thread, while this thread turns the previous chunk into
        candidates and runs the ``scoring`` hook on them: TVM holds no GIL while it samples, so the
        analyzer overlaps the replays (in Python replays it does not, see ``scoring``)."""
        with self._timed("sample_s"):
            out: list[Candidate] = []
            traces: list[Trace] | None = None  # the spaces without decisions, for Python replays
            for _ in range(max_rounds):
                need = count - len(out)
                if need <= 0:
                    break
                if self.native_sampling:
                    try:
                        out += self._sample_native(design_spaces, need)
                        continue
                    except Exception as err:  # noqa: BLE001  (TVM's sampler is an accelerator: fall back, loudly)
                        logger.warning("pruner_ms: TVM's native sampler failed (%s: %s); sampling in Python "
                                       "replays from here on (slower, same distribution)", type(err).__name__, err)
                        self.native_sampling = False
                picks = self.rng.integers(len(design_spaces), size=need)
                seeds = self._seeds(need)
                traces = traces or [Trace(s.trace.insts, {}) for s in design_spaces]
                got = self._map(lambda ps: self.replay(traces[ps[0]], ps[1]), list(zip(picks, seeds)))
                out += [c for c in got if c is not None]
        return out

    def _sample_native(self, design_spaces: list[Schedule], need: int) -> list[Candidate]:
        """``need`` attempts by the native samplers, chunk ``i`` on sampler ``i % k``, each sampler's
        chunks in order on a thread of its own, so the result depends on the seeds only."""
        sizes = [min(NATIVE_CHUNK, need - lo) for lo in range(0, need, NATIVE_CHUNK)]
        out: list[Candidate] = []
        with self._native["lock"]:
            samplers = self._native_samplers(design_spaces)
            k = len(samplers) if self._pool is not None else 1
            chunks: list[Future] = [Future() for _ in sizes]

            def run(j: int) -> None:
                for i in range(j, len(sizes), k):
                    try:
                        chunks[i].set_result(samplers[j].sample(sizes[i]))
                    except Exception as err:  # noqa: BLE001  (set on the chunk, raised where it is read)
                        chunks[i].set_exception(err)

            if k == 1:
                run(0)
            else:
                for j in range(k):
                    self._pool.submit(run, j)
            for size, chunk in zip(sizes, chunks):
                schedules = chunk.result()
                if len(schedules) < size:
                    self._failed(size - len(schedules))
                out += [self._candidate(sch) for sch in schedules]
        return out

    def _native_samplers(self, design_spaces: list[Schedule]) -> list[NativeSampler]:
        """The native samplers of these design spaces, made at their first sample (seeds from ``rng``)."""
        spaces = [id(s) for s in design_spaces]
        if self._native["samplers"] is None or self._native["spaces"] != spaces:
            for sampler in self._native["samplers"] or []:
                sampler.close()
            self._native["samplers"] = [NativeSampler(self.context, design_spaces, seed=int(seed))
                                        for seed in self._seeds(self.num_threads)]
            self._native["spaces"] = spaces
        return self._native["samplers"]

    def mutate_many(self, parents: list[Candidate]) -> list[Candidate | None]:
        """One mutation of each parent, with mutators drawn by the space's probabilities."""
        if not self.mutators or not parents:
            return [None] * len(parents)
        which = self.rng.choice(len(self.mutators), size=len(parents), p=self.mutator_p)
        seeds = self._seeds(2 * len(parents)).reshape(-1, 2)

        def one(args):
            parent, m, (s_mut, s_replay) = args
            try:
                trace = ms_ffi.MutatorApply(self.mutators[m], parent.trace.simplified(remove_postproc=True), int(s_mut))
            except Exception as err:  # noqa: BLE001  (same policy as replay)
                self._count("replays")
                self._error(err)
                logger.debug("mutation failed: %s", err)
                return None
            return None if trace is None else self.replay(trace, int(s_replay))

        with self._timed("mutate_s"):
            return self._map(one, list(zip(parents, which, seeds)))

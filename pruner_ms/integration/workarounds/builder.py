"""TVM 0.27's ``LocalBuilder`` re-creates its worker pool for every batch, and each worker pays
``import tvm.s_tir.tensor_intrin`` (30-50 s on 2 cores) against a 30 s timeout: every build times out.
:class:`WarmPoolBuilder` keeps its workers between batches (:class:`WarmPopenPool`, which
:class:`~pruner_ms.integration.cuda.CudaBuilder` uses too) and builds with :func:`fast_build`, which
skips that import for targets that need no tensor intrinsics."""
from __future__ import annotations

from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.builder import LocalBuilder


def fast_build(mod, target, _params):
    """MetaSchedule's default build minus the tensor-intrinsics import (not needed for LLVM)."""
    import tvm
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock

    if str(target.kind.name) != "llvm":
        import tvm.s_tir.tensor_intrin
    mod = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)
    return tvm.tirx.build(mod, target=target)


class WarmPopenPool:
    """TVM's ``PopenPoolExecutor`` kept between batches and re-created every ``recycle_every`` of them.

    MetaSchedule's ``LocalBuilder`` starts fresh worker processes for every batch, to dodge a slow
    memory growth of long-lived TVM workers; this pool pays that start-up (``import tvm``) once per
    ``recycle_every`` batches instead. ``timeout_sec`` applies to each task from when a worker
    starts it; a task that passes it gets its worker killed and restarted.
    """

    def __init__(self, *, max_workers: int | None = None, timeout_sec: float | None = None,
                 recycle_every: int = 16, initializer=None) -> None:
        if recycle_every < 1:
            raise ValueError(f"recycle_every must be >= 1, not {recycle_every}")
        self.max_workers = max_workers
        self.timeout_sec = timeout_sec
        self.recycle_every = recycle_every
        self.initializer = initializer
        self._pool = None
        self._batches = 0

    def for_batch(self):
        """The pool for the next batch (a fresh one on first use and every ``recycle_every`` batches)."""
        pool = self._current()
        self._batches += 1
        return pool

    def run_once(self, fn, *args):
        """``fn(*args)`` in a worker of the pool the next batch will use, not counted as a batch
        (a start-up check that also starts a worker); returns its result or raises its error."""
        return self._current().submit(fn, *args).result()

    def _current(self):
        from tvm.support.popen_pool import PopenPoolExecutor

        if self._pool is None or self._batches >= self.recycle_every:
            self.shutdown()
            self._pool = PopenPoolExecutor(max_workers=self.max_workers, timeout=self.timeout_sec,
                                           initializer=self.initializer)
            self._batches = 0
        return self._pool

    def shutdown(self) -> None:
        """Stop the workers now; the next :meth:`for_batch` starts new ones."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown()


class _WarmPoolBuilder(LocalBuilder._cls):  # type: ignore[name-defined]
    """A ``LocalBuilder`` whose worker processes survive between batches.

    The stock builder re-creates its pool for every batch (worker start-up plus ``import tvm`` each
    time) to dodge a slow memory leak in long-lived workers; this one recycles the pool every
    ``recycle_every`` batches instead. A candidate that fails or times out becomes a build error.
    """

    def __init__(self, *, max_workers: int | None = None, timeout_sec: float = 60.0, recycle_every: int = 16,
                 f_build=fast_build, f_export=None, initializer=None) -> None:
        self.recycle_every = recycle_every
        super().__init__(max_workers=max_workers, timeout_sec=timeout_sec, f_build=f_build,
                         f_export=f_export, initializer=initializer)

    def _sanity_check(self) -> None:
        # Same check as LocalBuilder's, but in the pool the first batch will reuse.
        from tvm.s_tir.meta_schedule.builder.local_builder import (
            get_global_func_with_default_on_worker,
        )

        self._workers = WarmPopenPool(max_workers=self.max_workers, timeout_sec=self.timeout_sec,
                                      recycle_every=self.recycle_every, initializer=self.initializer)
        self._workers.run_once(get_global_func_with_default_on_worker, self.f_build, None)

    def build(self, build_inputs):
        from tvm.s_tir.meta_schedule.builder import BuilderResult
        from tvm.s_tir.meta_schedule.builder.local_builder import (
            _serialize_params,
            _worker_func,
        )
        from tvm.support.popen_pool import StatusKind

        pool = self._workers.for_batch()
        args = [(self.f_build, self.f_export, bi.mod, bi.target, _serialize_params(bi.params)) for bi in build_inputs]
        results = []
        for res in pool.map_with_error_catching(lambda x: _worker_func(*x), args):
            if res.status == StatusKind.COMPLETE:
                results.append(BuilderResult(res.value, None))
            elif res.status == StatusKind.TIMEOUT:
                results.append(BuilderResult(None, f"WarmPoolBuilder: timeout after {self.timeout_sec} s"))
            else:
                results.append(BuilderResult(None, f"WarmPoolBuilder: build failed\n{res.value}"))
        return results

    def __del__(self):
        if getattr(self, "_workers", None) is not None:
            try:
                self._workers.shutdown()
            except Exception:  # noqa: BLE001  (interpreter shutdown)
                pass


# LocalBuilder._cls is the undecorated class; decorating the subclass makes it an FFI Builder again.
WarmPoolBuilder = derived_object(_WarmPoolBuilder)

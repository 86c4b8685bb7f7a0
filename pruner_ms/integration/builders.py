"""MetaSchedule builders: :class:`WarmPoolBuilder` (LLVM and any target MetaSchedule's ``LocalBuilder``
builds) and :class:`CudaBuilder` (CUDA on a host without a GPU).

* :class:`WarmPoolBuilder` works around TVM 0.27's ``LocalBuilder``, which re-creates its worker pool
  for every batch, each worker paying ``import tvm.s_tir.tensor_intrin`` (30-50 s on 2 cores) against
  a 30 s timeout, so that every build times out: its workers live between batches
  (:class:`WarmPopenPool`, which :class:`CudaBuilder` uses too) and build with :func:`fast_build`,
  which skips that import for targets that need no tensor intrinsics (and makes it 4-9 s for the
  others: :func:`~pruner_ms.integration.workarounds.import_all_tensor_intrinsics`).
* :class:`CudaBuilder` lowers each candidate with ``tvm.compile``, compiles its CUDA source with nvcc
  for the target's arch, and exports an artifact whose CUDA module holds the fatbin instead of the
  source (see :func:`~pruner_ms.integration.workarounds.pack_imports_with_device_binary`). It works
  around TVM 0.27's wmma/``shared.dyn`` lowering bug and keeps build statistics.

What a GPU host needs to load a :class:`CudaBuilder` artifact (a ``.tar`` like ``LocalBuilder``'s:
``lib0.o`` with the host code and ``devc.o`` with the packed CUDA module): TVM with its CUDA runtime,
a C++ compiler to link the two objects (``tvm.runtime.load_module`` and the RPC server do it), and
a driver that runs the fatbin's SASS (``sm_XX`` of the target; CUDA 13 objects need an R580+
driver). It needs neither NVRTC (``cuda-bindings``) nor nvcc, because the module is stored with
``fmt="fatbin"``. An artifact exported the stock way (``fmt="cuda"``) instead needs NVRTC, or nvcc
with ``TVM_CUDA_COMPILE_MODE=nvcc``, on the GPU host.
"""
from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import dataclasses
import functools
import logging
import os
import shutil
import tempfile
import threading
import time
from typing import Literal

from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.builder import BuilderInput, BuilderResult, LocalBuilder, PyBuilder
from tvm.target import Target

from .measure_callbacks import short_error
from .workarounds import (
    WMMA_SMEM_WORKAROUND_CONFIG,
    compile_with_wmma_workaround,
    pack_imports_with_device_binary,
)

logger = logging.getLogger("pruner_ms")

ARTIFACT_NAME = "tvm_tmp_mod.tar"  # the name LocalBuilder's default export uses


# -- a warm pool of worker processes ----------------------------------------------------------------
def fast_build(mod, target, _params):
    """MetaSchedule's default build minus the tensor-intrinsics import (not needed for LLVM)."""
    import tvm
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock

    if str(target.kind.name) != "llvm":
        from .workarounds import import_all_tensor_intrinsics

        import_all_tensor_intrinsics()
    mod = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)
    return tvm.tirx.build(mod, target=target)


class WarmPopenPool:
    """TVM's ``PopenPoolExecutor`` kept between batches and re-created every ``recycle_every`` of them,
    its workers importing TVM without torch
    (:class:`~.workarounds.torch_free_workers.TorchFreePopenPoolExecutor`).

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

    def start(self, fn, *args) -> list:
        """``fn(*args)`` in each worker of the pool the next batch will use, not counted as a batch (a
        start-up check that also starts the workers); returns the futures at once, so the workers start
        (``import tvm``, seconds each) while the caller goes on. All of them: a worker started only at
        the first batch makes that batch wait for its start-up (``pruner-ms tune --trials 8`` waited
        6.9 s for its first 8 builds with one worker started ahead, thirty-second session)."""
        pool = self._current()
        return [pool.submit(fn, *args) for _ in range(self.max_workers or os.cpu_count() or 1)]

    def _current(self):
        from .workarounds.torch_free_workers import TorchFreePopenPoolExecutor

        if self._pool is None or self._batches >= self.recycle_every:
            self.shutdown()
            self._pool = TorchFreePopenPoolExecutor(max_workers=self.max_workers, timeout=self.timeout_sec,
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
        # checked at the first build: the worker starts while the search drafts the first batch
        self._startup_check = self._workers.start(get_global_func_with_default_on_worker, self.f_build, None)

    def build(self, build_inputs):
        from tvm.s_tir.meta_schedule.builder.local_builder import (
            _serialize_params,
            _worker_func,
        )
        from tvm.support.popen_pool import StatusKind

        if self._startup_check is not None:  # raises what LocalBuilder's sanity check would have
            checks, self._startup_check = self._startup_check, None
            for check in checks:
                check.result()
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


# -- builds ---------------------------------------------------------------------------------------
BuildPath = Literal["default", "workaround", "failed"]


@dataclasses.dataclass
class BuildRecord:
    """One candidate built by :class:`CudaBuilder`.

    Attributes
    ----------
    mod : tvm.IRModule
        The scheduled module MetaSchedule asked to build (what a synthetic latency is computed from).
    artifact_path : str or None
        The exported ``.tar`` (alone in its directory), ``None`` if the build failed.
    path : {"default", "workaround", "failed"}
        ``"workaround"``: it built only under :data:`WMMA_SMEM_WORKAROUND_CONFIG` (or
        ``workaround="always"`` was set).
    error : str or None
        Why it failed.
    compile_sec, nvcc_sec, export_sec, total_sec : float
        ``tvm.compile`` (failed attempts included), nvcc, export, and the whole build in its worker
        (process or thread).
    binary_bytes : int
        Size of the fatbin(s).
    source_path, binary_path : str or None
        ``kernels.cu`` and ``kernels.fatbin`` next to the artifact (``keep_sources=True``).
    """

    mod: object
    artifact_path: str | None = None
    path: BuildPath = "failed"
    error: str | None = None
    compile_sec: float = 0.0
    nvcc_sec: float = 0.0
    export_sec: float = 0.0
    total_sec: float = 0.0
    binary_bytes: int = 0
    source_path: str | None = None
    binary_path: str | None = None


@dataclasses.dataclass
class BuildStats:
    """Counts and times over all builds of one :class:`CudaBuilder`.

    Attributes
    ----------
    built : int
        Candidates attempted.
    ok_default, ok_workaround : int
        Built without / only with (or always with) the wmma workaround config.
    failed : int
        Not built; ``failures`` counts them by their telling line (:func:`~pruner_ms.integration.measure_callbacks.short_error`).
    """

    built: int = 0
    ok_default: int = 0
    ok_workaround: int = 0
    failed: int = 0
    failures: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    compile_sec: float = 0.0
    nvcc_sec: float = 0.0
    export_sec: float = 0.0
    total_sec: float = 0.0
    batch_wall_sec: float = 0.0

    @property
    def ok(self) -> int:
        return self.ok_default + self.ok_workaround

    @property
    def success_rate(self) -> float:
        """Share of candidates built (with the workaround where it was needed)."""
        return self.ok / self.built if self.built else 0.0

    @property
    def success_rate_without_workaround(self) -> float:
        """Share that built without the workaround (meaningful with ``workaround="retry"``)."""
        return self.ok_default / self.built if self.built else 0.0

    def add(self, rec: BuildRecord) -> None:
        self.built += 1
        if rec.path == "default":
            self.ok_default += 1
        elif rec.path == "workaround":
            self.ok_workaround += 1
        else:
            self.failed += 1
            self.failures[short_error(rec.error or "", 200)] += 1
        self.compile_sec += rec.compile_sec
        self.nvcc_sec += rec.nvcc_sec
        self.export_sec += rec.export_sec
        self.total_sec += rec.total_sec

    def as_dict(self) -> dict:
        n = max(self.built, 1)
        return {
            "built": self.built, "ok": self.ok, "ok_default": self.ok_default,
            "ok_workaround": self.ok_workaround, "failed": self.failed,
            "success_rate": self.success_rate,
            "success_rate_without_workaround": self.success_rate_without_workaround,
            "failures": dict(self.failures),
            "sec_per_build": self.total_sec / n, "compile_sec_per_build": self.compile_sec / n,
            "nvcc_sec_per_build": self.nvcc_sec / n, "export_sec_per_build": self.export_sec / n,
            "wall_sec_per_build": self.batch_wall_sec / n,
        }

    def summary(self) -> str:
        d = self.as_dict()
        text = (f"{self.ok}/{self.built} built ({d['success_rate']:.0%}; {self.ok_default} without the "
                f"workaround, {self.ok_workaround} with it), {self.failed} failed; per build "
                f"{d['sec_per_build']:.2f} s in its worker (compile {d['compile_sec_per_build']:.2f}, nvcc "
                f"{d['nvcc_sec_per_build']:.2f}, export {d['export_sec_per_build']:.2f}), "
                f"{d['wall_sec_per_build']:.2f} s wall")
        for reason, count in self.failures.most_common():
            text += f"\n  {count} x {reason}"
        return text


@dataclasses.dataclass(frozen=True)
class _BuildOptions:
    """What every build of one :class:`CudaBuilder` shares (sent to its worker processes)."""

    workaround: str
    workaround_config: dict
    nvcc: bool
    nvcc_options: tuple
    keep_sources: bool


def _build_artifact(mod, target: Target, workdir: str, options: _BuildOptions,
                    tvm_lock: threading.Lock | None = None) -> BuildRecord:
    """Lower ``mod`` (wmma workaround where needed), compile its CUDA source with nvcc and export the
    artifact into ``workdir``. Any error becomes the record's ``error``, never an exception; the
    caller removes ``workdir`` when the record has no ``artifact_path``. ``tvm_lock`` serializes
    the TVM steps when builds share a process (threads)."""
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock
    from tvm.support.tar import tar

    lock = tvm_lock if tvm_lock is not None else contextlib.nullcontext()
    rec = BuildRecord(mod=mod)
    t0 = time.perf_counter()
    try:
        with lock:
            mod = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)  # as MetaSchedule's default_build
            ex, rec.path = compile_with_wmma_workaround(mod, target, workaround=options.workaround,
                                                        config=options.workaround_config)
            rec.compile_sec = time.perf_counter() - t0
            cuda_mods = ex.mod._collect_from_import_tree(lambda m: m.kind == "cuda")
            sources = [m.inspect_source() for m in cuda_mods]
        binaries = {}
        if options.nvcc and sources:
            t1 = time.perf_counter()
            binaries = {src: _nvcc_fatbin(src, target, options.nvcc_options) for src in sources}
            rec.nvcc_sec = time.perf_counter() - t1
            rec.binary_bytes = sum(len(b) for b in binaries.values())
        if options.keep_sources and sources:
            rec.source_path = os.path.join(workdir, "kernels.cu")
            with open(rec.source_path, "w") as f:
                f.write("\n".join(sources))
            if binaries:
                rec.binary_path = os.path.join(workdir, "kernels.fatbin")
                with open(rec.binary_path, "wb") as f:
                    f.write(b"".join(binaries.values()))
        t2 = time.perf_counter()
        artifact = os.path.join(workdir, ARTIFACT_NAME)
        with lock:
            fpack = pack_imports_with_device_binary(binaries) if binaries else None
            ex.mod.export_library(artifact, fcompile=tar, fpack_imports=fpack)
        rec.export_sec = time.perf_counter() - t2
        rec.artifact_path = artifact
    except Exception as err:  # noqa: BLE001  (any build error becomes a BuilderResult error)
        rec.path, rec.error = "failed", f"CudaBuilder: {type(err).__name__}: {err}"
        rec.compile_sec = rec.compile_sec or time.perf_counter() - t0
    rec.total_sec = time.perf_counter() - t0
    return rec


def _build_artifact_in_worker(mod, target: Target, workdir: str, options: _BuildOptions) -> BuildRecord:
    """:func:`_build_artifact` in a worker process; the record goes back without the module (the
    parent has it)."""
    rec = _build_artifact(mod, target, workdir, options)
    rec.mod = None
    return rec


def _nvcc_fatbin(source: str, target: Target, options: tuple) -> bytes:
    from tvm.support import nvcc

    # compile_cuda takes the arch from Target.current(), also when there is no GPU.
    with target:
        return bytes(nvcc.compile_cuda(source, target_format="fatbin", compiler="nvcc",
                                       options=list(options) or None))


class _CudaBuilder(PyBuilder):
    """Build MetaSchedule candidates for CUDA on a host without a GPU: ``tvm.compile`` + nvcc.

    By default each candidate is built (lowered, compiled with nvcc, exported) in one of
    ``max_workers`` worker processes that live as long as the builder (TVM's ``PopenPoolExecutor``,
    recycled every ``recycle_every`` batches, as :class:`~pruner_ms.WarmPoolBuilder`), so lowering,
    most of a build's time, runs in parallel. With ``processes=False`` builds run on threads of this
    process instead: no worker start-up and no module transfer, but the TVM steps (lowering,
    export) hold one lock, because TVM's thread-safety is not documented, and only nvcc runs in
    parallel (on an H200 host with 16 cores, lowering under that lock took most of each round's
    ~25 s of builds). A lowering or nvcc error, a crashed worker or a timeout becomes a
    ``BuilderResult`` error, never an exception out of :meth:`build`.

    For each artifact the builder keeps a :class:`BuildRecord` (the scheduled module, the path the
    build took, timings) under its ``artifact_path``: :meth:`record` / :meth:`pop_record` return it,
    which is how :class:`SyntheticLatencyRunner` finds the module behind a ``RunnerInput``. At most
    ``max_records`` are kept (oldest dropped). Each artifact is alone in its own directory, which
    MetaSchedule's default ``RemoveBuildArtifact`` callback deletes after the run.

    Parameters
    ----------
    max_workers : int, optional
        Parallel builds; default ``os.cpu_count()``.
    timeout_sec : float
        Build time limit. Worker processes: per candidate, from when a worker starts it (the
        worker is then killed and restarted); threads: counted from the start of the batch (the
        thread finishes in the background).
    processes : bool
        Build in worker processes (default) or on threads of this process.
    recycle_every : int
        Worker processes are re-created every this many batches (long-lived TVM processes grow).
    workaround : {"retry", "always", "off"}
        ``"retry"``: build normally and, on TVM 0.27's wmma/``shared.dyn`` lowering error, again
        under ``workaround_config``; ``"always"``: always under it; ``"off"``: never.
    workaround_config : dict, optional
        ``PassContext`` config of the workaround; default :data:`WMMA_SMEM_WORKAROUND_CONFIG`.
    nvcc : bool, optional
        Compile the CUDA source with nvcc and embed the fatbin; ``False`` exports the source
        (``fmt="cuda"``), which a GPU host then compiles with NVRTC or nvcc. Default: whether nvcc
        is on PATH.
    nvcc_options : list of str, optional
        Extra nvcc options (the arch comes from the target).
    keep_sources : bool
        Also write ``kernels.cu`` and ``kernels.fatbin`` next to each artifact.
    artifact_dir : str, optional
        Where the per-artifact directories go; default the system temp dir.
    max_records : int
        Build records kept for :meth:`record`.
    """

    def __init__(self, *, max_workers: int | None = None, timeout_sec: float = 120.0, processes: bool = True,
                 recycle_every: int = 16, workaround: Literal["retry", "always", "off"] = "retry",
                 workaround_config: dict | None = None, nvcc: bool | None = None,
                 nvcc_options: list[str] | None = None, keep_sources: bool = True,
                 artifact_dir: str | None = None, max_records: int = 4096) -> None:
        if workaround not in ("retry", "always", "off"):
            raise ValueError(f"workaround must be 'retry', 'always' or 'off', not {workaround!r}")
        if nvcc is None:
            nvcc = shutil.which("nvcc") is not None
            if not nvcc:
                logger.warning("CudaBuilder: nvcc is not on PATH; artifacts keep the CUDA source, which the GPU "
                               "host must compile (NVRTC, or nvcc with TVM_CUDA_COMPILE_MODE=nvcc)")
        elif nvcc and shutil.which("nvcc") is None:
            raise RuntimeError("CudaBuilder(nvcc=True) needs nvcc on PATH; pass nvcc=False to export CUDA source")
        self.max_workers = max_workers or os.cpu_count() or 1
        self.timeout_sec = timeout_sec
        self.processes = processes
        self.workaround = workaround
        self.workaround_config = dict(workaround_config or WMMA_SMEM_WORKAROUND_CONFIG)
        self.nvcc = nvcc
        self.nvcc_options = list(nvcc_options or [])
        self.keep_sources = keep_sources
        self.artifact_dir = artifact_dir
        self.max_records = max_records
        self.stats = BuildStats()
        self._options = _BuildOptions(workaround, self.workaround_config, nvcc, tuple(self.nvcc_options),
                                      keep_sources)
        self._records: collections.OrderedDict[str, BuildRecord] = collections.OrderedDict()
        self._tvm_lock = threading.Lock()
        self._state_lock = threading.Lock()
        if processes:
            self._workers = WarmPopenPool(max_workers=self.max_workers, timeout_sec=timeout_sec,
                                          recycle_every=recycle_every)
            self._threads = None
        else:
            self._workers = None
            self._threads = concurrent.futures.ThreadPoolExecutor(self.max_workers, thread_name_prefix="cuda-build")

    # MetaSchedule entry point
    def build(self, build_inputs: list[BuilderInput]) -> list[BuilderResult]:
        start = time.perf_counter()
        workdirs = [tempfile.mkdtemp(prefix="cuda_build_", dir=self.artifact_dir) for _ in build_inputs]
        if self._workers is not None:
            pool = self._workers.for_batch()
            futures = [pool.submit(_build_artifact_in_worker, bi.mod, bi.target, wd, self._options)
                       for bi, wd in zip(build_inputs, workdirs)]
        else:
            futures = [self._threads.submit(_build_artifact, bi.mod, bi.target, wd, self._options, self._tvm_lock)
                       for bi, wd in zip(build_inputs, workdirs)]
        results = []
        for fut, bi, workdir in zip(futures, build_inputs, workdirs):
            rec = self._collect(fut, bi.mod, workdir, start)
            with self._state_lock:
                self.stats.add(rec)
                if rec.artifact_path is not None:
                    self._records[rec.artifact_path] = rec
                    while len(self._records) > self.max_records:
                        self._records.popitem(last=False)
            if rec.artifact_path is None:
                results.append(BuilderResult(None, rec.error or "CudaBuilder: build failed"))
            else:
                results.append(BuilderResult(rec.artifact_path, None))
        with self._state_lock:
            self.stats.batch_wall_sec += time.perf_counter() - start
        return results

    def _collect(self, fut: concurrent.futures.Future, mod, workdir: str, start: float) -> BuildRecord:
        """The record of one submitted build; a failed build's directory is removed."""
        try:
            if self._workers is not None:
                rec = fut.result()  # the worker applies the timeout
                rec.mod = mod
            else:
                rec = fut.result(timeout=max(self.timeout_sec - (time.perf_counter() - start), 0.0))
        except (TimeoutError, concurrent.futures.TimeoutError):
            rec = BuildRecord(mod=mod, error=f"CudaBuilder: timeout after {self.timeout_sec} s",
                              total_sec=self.timeout_sec)
            if self._threads is not None:  # the thread goes on; MetaSchedule never sees its artifact
                fut.add_done_callback(functools.partial(_remove_late_artifact, workdir=workdir))
                return rec
        except Exception as err:  # noqa: BLE001  (a crashed worker; _build_artifact catches the rest)
            rec = BuildRecord(mod=mod, error=f"CudaBuilder: {type(err).__name__}: {err}")
        if rec.artifact_path is None:
            shutil.rmtree(workdir, ignore_errors=True)
        return rec

    def record(self, artifact_path: str) -> BuildRecord | None:
        """The :class:`BuildRecord` of a built artifact, or ``None`` if unknown (or dropped)."""
        with self._state_lock:
            return self._records.get(str(artifact_path))

    def pop_record(self, artifact_path: str) -> BuildRecord | None:
        """Like :meth:`record`, and forget it."""
        with self._state_lock:
            return self._records.pop(str(artifact_path), None)

    def reset_stats(self) -> BuildStats:
        """Return the statistics so far and start counting afresh."""
        with self._state_lock:
            stats, self.stats = self.stats, BuildStats()
        return stats

    def shutdown(self) -> None:
        """Stop the worker processes (or threads); a later :meth:`build` starts fresh workers."""
        if getattr(self, "_workers", None) is not None:
            self._workers.shutdown()
        if getattr(self, "_threads", None) is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)

    def __del__(self):
        self.shutdown()


def _remove_late_artifact(fut: concurrent.futures.Future, *, workdir: str) -> None:
    shutil.rmtree(workdir, ignore_errors=True)


#: The MetaSchedule builder (an FFI ``Builder``); see :class:`_CudaBuilder` for the parameters.
CudaBuilder = derived_object(_CudaBuilder)

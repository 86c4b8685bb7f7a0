"""Every workaround for a TVM 0.27 rough edge lives here, each with the reason.

* ``import tvm.s_tir.tensor_intrin`` takes 30-50 s on 2 cores and the stock ``LocalBuilder`` pays it
  in every worker of a pool it re-creates per batch, with a 30 s timeout: every build times out.
  :class:`WarmPoolBuilder` keeps its workers between batches and builds with :func:`fast_build`,
  which skips that import for targets that do not need tensor intrinsics.
* CLI target strings (``"llvm -mcpu=x"``) were removed; :func:`normalize_target` turns them into an
  error that shows the dict to use.
* ``tune_tir`` rebuilds its logging config from the names of the handlers already on the
  ``tvm.s_tir.meta_schedule`` logger and crashes (``'NoneType' object has no attribute 'format'``)
  if one has no name, as pytest's capture handlers do (naming them is not enough: ``dictConfig``
  then looks the name up in its own table): :func:`detach_unnamed_log_handlers` detaches them.
* ``XGBModel`` predicts uniformly at random until 100 samples, i.e. for every run shorter than two
  default batches; :func:`shorten_xgb_warmup` caps that warm-up. The model reaches a search strategy
  only as an FFI handle, so :func:`python_object_of` finds the Python object behind it.
"""
from __future__ import annotations

import gc
import logging
import shlex

from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.builder import LocalBuilder
from tvm.target import Target

logger = logging.getLogger("pruner_ms")


# -- builder --------------------------------------------------------------------------------------
def fast_build(mod, target, _params):
    """MetaSchedule's default build minus the tensor-intrinsics import (not needed for LLVM)."""
    import tvm
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock

    if str(target.kind.name) != "llvm":
        import tvm.s_tir.tensor_intrin  # noqa: F401  (registers the intrinsics tensorized code uses)
    mod = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)
    return tvm.tirx.build(mod, target=target)


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

    def _fresh_pool(self):
        from tvm.support.popen_pool import PopenPoolExecutor

        if self._pool is None or self._batches >= self.recycle_every:
            if self._pool is not None:
                self._pool.shutdown()
            self._pool = PopenPoolExecutor(max_workers=self.max_workers, timeout=self.timeout_sec,
                                           initializer=self.initializer)
            self._batches = 0
        return self._pool

    def _sanity_check(self) -> None:
        # Same check as LocalBuilder's, but in the pool the first batch will reuse.
        from tvm.s_tir.meta_schedule.builder.local_builder import get_global_func_with_default_on_worker

        self._pool = None
        self._batches = 0
        pool = self._fresh_pool()
        pool.submit(get_global_func_with_default_on_worker, self.f_build, None).result()

    def build(self, build_inputs):
        from tvm.s_tir.meta_schedule.builder import BuilderResult
        from tvm.s_tir.meta_schedule.builder.local_builder import _serialize_params, _worker_func
        from tvm.support.popen_pool import StatusKind

        self._fresh_pool()
        self._batches += 1
        args = [(self.f_build, self.f_export, bi.mod, bi.target, _serialize_params(bi.params)) for bi in build_inputs]
        results = []
        for res in self._pool.map_with_error_catching(lambda x: _worker_func(*x), args):
            if res.status == StatusKind.COMPLETE:
                results.append(BuilderResult(res.value, None))
            elif res.status == StatusKind.TIMEOUT:
                results.append(BuilderResult(None, f"WarmPoolBuilder: timeout after {self.timeout_sec} s"))
            else:
                results.append(BuilderResult(None, f"WarmPoolBuilder: build failed\n{res.value}"))
        return results

    def __del__(self):
        if getattr(self, "_pool", None) is not None:
            try:
                self._pool.shutdown()
            except Exception:  # noqa: BLE001  (interpreter shutdown)
                pass


# LocalBuilder._cls is the undecorated class; decorating the subclass makes it an FFI Builder again.
WarmPoolBuilder = derived_object(_WarmPoolBuilder)


# -- targets --------------------------------------------------------------------------------------
class TargetError(ValueError):
    """A target TVM 0.27 cannot use, with the form it needs."""


def legacy_target_to_dict(text: str) -> dict:
    """``"llvm -mcpu=znver4 -num-cores=2"`` -> ``{"kind": "llvm", "mcpu": "znver4", "num-cores": 2}``."""
    parts = shlex.split(text)
    out: dict = {"kind": parts[0]}
    for tok in parts[1:]:
        key, _, value = tok.lstrip("-").partition("=")
        out[key] = int(value) if value.isdigit() else (value if value else True)
    return out


def normalize_target(target) -> Target:
    """Accept a ``Target``, a dict, or a tag; reject legacy CLI strings with the dict to use."""
    if isinstance(target, Target):
        return target
    if isinstance(target, dict):
        return Target(target)
    if isinstance(target, str):
        if " " in target.strip() or target.strip() in ("llvm", "cuda"):
            if target.strip() == "llvm":
                from ..hardware.cpu import host_cpu_spec

                suggestion = host_cpu_spec().target()
                why = "plain 'llvm' compiles for generic x86-64 (no AVX)"
            else:
                suggestion = legacy_target_to_dict(target)
                why = "CLI target strings were removed in TVM 0.24"
            raise TargetError(
                f"target {target!r} is not usable: {why}. Pass a dict instead, e.g. {suggestion!r} "
                "(pruner_ms.hardware.host_cpu_spec().target() describes this machine), or a tag such as "
                "'nvidia/nvidia-a100'."
            )
        return Target(target)
    raise TargetError(f"target must be a tvm.target.Target, a dict or a tag string, not {type(target).__name__}")


# -- logging --------------------------------------------------------------------------------------
def detach_unnamed_log_handlers() -> None:
    """Detach unnamed handlers from MetaSchedule's logger, which would crash ``tune_tir``'s set-up."""
    ms_logger = logging.getLogger("tvm.s_tir.meta_schedule")
    for handler in list(ms_logger.handlers):
        if handler.get_name() is None:
            logger.debug("detaching unnamed log handler %r from %s", handler, ms_logger.name)
            ms_logger.removeHandler(handler)


# -- cost models ----------------------------------------------------------------------------------
def python_object_of(ffi_obj):
    """The Python object (``@derived_object`` instance) behind an FFI handle, or ``ffi_obj`` itself."""
    if hasattr(ffi_obj, "_inst"):
        return ffi_obj._inst
    for obj in gc.get_objects():
        if getattr(type(obj), "_type", None) == "TVMDerivedObject" and obj.same_as(ffi_obj):
            return obj._inst
    return ffi_obj


def shorten_xgb_warmup(model, samples: int) -> bool:
    """Cap an ``XGBModel``'s random warm-up to ``samples``; return whether it was one."""
    from tvm.s_tir.meta_schedule.cost_model import XGBModel

    if isinstance(model, XGBModel._cls) and model.num_warmup_samples > samples:
        logger.info("XGBModel warm-up shortened from %d to %d samples", model.num_warmup_samples, samples)
        model.num_warmup_samples = samples
        return True
    return False

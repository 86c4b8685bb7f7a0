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
  then looks the name up in its own table): :func:`meta_schedule_logging` detaches them while tuning and restores them after.
* ``XGBModel`` predicts uniformly at random until 100 samples, i.e. for every run shorter than two
  default batches; :func:`shorten_xgb_warmup` caps that warm-up. The model reaches a search strategy
  only as an FFI handle, so :func:`python_object_of` finds the Python object behind it.

CUDA (used by :class:`~pruner_ms.integration.cuda.CudaBuilder`):

* wmma with fp32 accumulation through ``shared.dyn`` fails to lower for most tensor-core
  candidates: ``tvm_access_ptr element type must match the source buffer`` (lower_intrin.cc; a
  dtype clash between the fp16 and fp32 ``shared.dyn`` buffers once they share storage).
  :func:`is_wmma_smem_lowering_bug` recognises it; :data:`WMMA_SMEM_WORKAROUND_CONFIG`
  (``tirx.merge_static_smem``) is the ``PassContext`` config under which those candidates build.
* ``tvm.compile`` no longer runs nvcc: the CUDA module keeps its source (``fmt="cuda"``) and a GPU
  host compiles it when it loads the artifact (NVRTC by default, which needs ``cuda-bindings``
  there). :func:`pack_imports_with_device_binary` is an ``export_library(fpack_imports=...)``
  callback that embeds a binary compiled here (fatbin) in place of the source, so the GPU host
  loads it with ``cuModuleLoadData`` and needs neither NVRTC nor nvcc.
* ``tvm.support.nvcc.compile_cuda(..., compiler="nvcc")`` reads the arch from
  ``Target.current()`` even on a machine without a GPU: call it inside ``with target:``.
* Building an already tensorized candidate does not need ``tvm.s_tir.tensor_intrin`` (checked: a
  fresh process builds saved wmma candidates without it), so ``CudaBuilder`` never imports it.
* With a GPU target and no GPU, MetaSchedule's ``LocalRunner`` records every candidate at 1e10 s
  and tuning "succeeds" with nothing measured: ``pruner_ms.tune_tir`` raises
  :class:`~pruner_ms.integration.cuda.NoGPUError` first (:func:`~pruner_ms.integration.cuda.check_runner`).
"""
from __future__ import annotations

import contextlib
import gc
import logging
import os
import shlex
import struct

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
        import tvm.s_tir.tensor_intrin
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
        from tvm.s_tir.meta_schedule.builder.local_builder import (
            get_global_func_with_default_on_worker,
        )

        self._pool = None
        self._batches = 0
        pool = self._fresh_pool()
        pool.submit(get_global_func_with_default_on_worker, self.f_build, None).result()

    def build(self, build_inputs):
        from tvm.s_tir.meta_schedule.builder import BuilderResult
        from tvm.s_tir.meta_schedule.builder.local_builder import (
            _serialize_params,
            _worker_func,
        )
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
@contextlib.contextmanager
def meta_schedule_logging(level: int | None = None):
    """A block in which MetaSchedule's logger has no unnamed handlers (they crash ``tune_tir``'s
    logging set-up, which looks handlers up by name) and, if ``level`` is given, that level; the
    handlers and the level are restored when the block ends."""
    ms_logger = logging.getLogger("tvm.s_tir.meta_schedule")
    detached = [h for h in ms_logger.handlers if h.get_name() is None]
    previous_level = ms_logger.level
    for handler in detached:
        logger.debug("detaching unnamed log handler %r from %s while tuning", handler, ms_logger.name)
        ms_logger.removeHandler(handler)
    if level is not None:
        ms_logger.setLevel(level)
    try:
        yield ms_logger
    finally:
        ms_logger.setLevel(previous_level)
        for handler in detached:
            if handler not in ms_logger.handlers:
                ms_logger.addHandler(handler)


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


# -- CUDA (issue #3) ------------------------------------------------------------------------------
#: ``PassContext`` config under which wmma candidates with fp32 accumulation through ``shared.dyn``
#: lower in TVM 0.27. ``{"tirx.disable_storage_rewrite": True}`` also makes them build, but it
#: changes the CUDA code of every candidate; under this one, the candidates that build without it
#: give byte-identical CUDA source and the same dynamic shared memory (16/16 sampled 1024^3 fp16
#: GEMM candidates, fp16 and fp32 accumulation, checked), so it is also safe to apply always.
WMMA_SMEM_WORKAROUND_CONFIG: dict = {"tirx.merge_static_smem": True}

_WMMA_SMEM_BUG = "tvm_access_ptr element type must match the source buffer"


def is_wmma_smem_lowering_bug(error: BaseException | str) -> bool:
    """Whether a build error is TVM 0.27's wmma/``shared.dyn`` dtype clash in ``LowerAccessPtr``."""
    return _WMMA_SMEM_BUG in str(error)


def _read_u64(buf: bytes, pos: int) -> tuple[int, int]:
    return struct.unpack_from("<Q", buf, pos)[0], pos + 8


def _read_str(buf: bytes, pos: int) -> tuple[bytes, int]:
    size, pos = _read_u64(buf, pos)
    if pos + size > len(buf):
        raise ValueError("truncated string in module blob")
    return buf[pos:pos + size], pos + size


def _pack_str(data: bytes) -> bytes:
    return struct.pack("<Q", len(data)) + data


def replace_cuda_payload(blob: bytes, binaries: dict[str, bytes], *, fmt: str = "fatbin") -> bytes:
    """Rewrite a packed-imports blob so that each CUDA module carries a compiled binary.

    Parameters
    ----------
    blob : bytes
        What ``runtime.ModulePackImportsToTensor`` returns: ``<nbytes u64> <indptr vec<u64>>
        <child vec<u64>>`` then, per module, ``<kind str> [<payload str>]`` (no payload for
        ``"_lib"``), as read by ``ProcessLibraryBin`` in tvm_ffi's ``library_module.cc``.
    binaries : dict of str to bytes
        CUDA source -> compiled binary. A CUDA payload is ``<fmt str> <fmap> <code bytes>``
        (``CUDAModuleNode::SaveToBytes``); ``code`` is the source while ``fmt == "cuda"``.
    fmt : str
        Format recorded for the binary: ``"fatbin"``, ``"cubin"`` or ``"ptx"``.

    Returns
    -------
    bytes
        The same blob with ``fmt``/``code`` replaced in every CUDA module whose source is a key
        of ``binaries``. The function table between them is copied byte for byte.

    Raises
    ------
    ValueError
        If the blob does not have the expected layout or a CUDA module's source is unknown.
    """
    nbytes, pos = _read_u64(blob, 0)
    if nbytes != len(blob) - 8:
        raise ValueError(f"module blob header says {nbytes} bytes, found {len(blob) - 8}")
    start = pos
    n_indptr, pos = _read_u64(blob, pos)
    pos += 8 * n_indptr
    n_child, pos = _read_u64(blob, pos)
    pos += 8 * n_child
    out = [blob[start:pos]]
    for _ in range(n_indptr - 1):
        kind, pos = _read_str(blob, pos)
        out.append(_pack_str(kind))
        if kind == b"_lib":
            continue
        payload, pos = _read_str(blob, pos)
        if kind == b"cuda":
            payload = _replace_one_cuda_payload(payload, binaries, fmt)
        out.append(_pack_str(payload))
    if pos != len(blob):
        raise ValueError(f"{len(blob) - pos} trailing bytes in module blob")
    body = b"".join(out)
    return struct.pack("<Q", len(body)) + body


def _replace_one_cuda_payload(payload: bytes, binaries: dict[str, bytes], fmt: str) -> bytes:
    old_fmt, pos = _read_str(payload, 0)
    if old_fmt != b"cuda":
        return payload  # already compiled
    for source, binary in binaries.items():
        code = source.encode()
        tail = struct.pack("<Q", len(code)) + code
        if payload.endswith(tail):  # code is the last field: fmap is everything in between
            fmap = payload[pos:len(payload) - len(tail)]
            return _pack_str(fmt.encode()) + fmap + _pack_str(bytes(binary))
    raise ValueError("a CUDA module in the blob has a source that was not compiled")


def pack_imports_with_device_binary(binaries: dict[str, bytes], *, fmt: str = "fatbin"):
    """An ``export_library(fpack_imports=...)`` callback that embeds compiled CUDA binaries.

    Parameters
    ----------
    binaries : dict of str to bytes
        CUDA source (``module.inspect_source()``) -> binary compiled from it.
    fmt : str
        Format of the binaries (``"fatbin"``, ``"cubin"`` or ``"ptx"``).

    Returns
    -------
    callable
        ``f(mod, is_system_lib, symbol_prefix, workspace_dir) -> path`` of an object file holding
        the rewritten imports blob, as TVM's own ``ModulePackImportsToLLVM`` would write it.
    """
    import tvm

    def fpack(mod, is_system_lib: bool, symbol_prefix: str, workspace_dir: str) -> str:
        blob = tvm.get_global_func("runtime.ModulePackImportsToTensor")(mod).numpy().tobytes()
        blob = replace_cuda_payload(blob, binaries, fmt=fmt)
        llvm_target = mod.get_function("_get_target_string")()
        obj = tvm.get_global_func("codegen.codegen_blob")(blob, is_system_lib, llvm_target, symbol_prefix)
        path = os.path.join(workspace_dir, f"{symbol_prefix}devc.o")
        obj.write_to_file(path)
        return path

    return fpack

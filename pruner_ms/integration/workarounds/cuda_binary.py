"""CUDA (used by :class:`~pruner_ms.integration.builders.CudaBuilder`):

* wmma with fp32 accumulation through ``shared.dyn`` fails to lower for most tensor-core
  candidates: ``tvm_access_ptr element type must match the source buffer`` (lower_intrin.cc; a
  dtype clash between the fp16 and fp32 ``shared.dyn`` buffers once they share storage).
  :func:`is_wmma_smem_lowering_bug` recognises it; :data:`WMMA_SMEM_WORKAROUND_CONFIG`
  (``tirx.merge_static_smem``) is the ``PassContext`` config under which those candidates build;
  :func:`compile_with_wmma_workaround` is ``tvm.compile`` with it (the builder's and the benchmark's
  correctness check's one way to lower a tuned candidate).
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
  :class:`~pruner_ms.integration.runners.NoGPUError` first (:func:`~pruner_ms.integration.runners.check_runner`).
"""
from __future__ import annotations

import os
import struct


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


def compile_with_wmma_workaround(mod, target, *, workaround: str = "retry", config: dict | None = None):
    """``tvm.compile(mod, target=target)``, under :data:`WMMA_SMEM_WORKAROUND_CONFIG` where needed.

    Parameters
    ----------
    workaround : {"retry", "always", "off"}
        ``"retry"``: compile normally and, on the wmma/``shared.dyn`` lowering error, again under
        ``config``; ``"always"``: only under it; ``"off"``: never.
    config : dict, optional
        The workaround's ``PassContext`` config; default :data:`WMMA_SMEM_WORKAROUND_CONFIG`.

    Returns
    -------
    tuple
        ``(executable, path)``, ``path`` ``"default"`` or ``"workaround"`` (how it compiled).
    """
    import tvm

    if workaround not in ("retry", "always", "off"):
        raise ValueError(f"workaround must be 'retry', 'always' or 'off', not {workaround!r}")
    config = WMMA_SMEM_WORKAROUND_CONFIG if config is None else config
    if workaround != "always":
        try:
            return tvm.compile(mod, target=target), "default"
        except Exception as err:
            if workaround == "off" or not is_wmma_smem_lowering_bug(err):
                raise
    with tvm.transform.PassContext(config=config):
        return tvm.compile(mod, target=target), "workaround"


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

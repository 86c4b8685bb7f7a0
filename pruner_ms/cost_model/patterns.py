"""Dataflow-pattern tokens of a scheduled program: the PaCM's pattern branch input.

The reference PaCM (design note ``pruner_method.md`` section 3.1(b)) wrote a digit per buffer
access into a string and searched it for one GPU tiling pattern. Here the pattern is read from the
structure of the scheduled TensorIR instead (``pruner_ms.analysis.loop_nest.extract_nests``), so it
works for CPU (LLVM) programs and for SIMT and tensor-core (wmma / mma) CUDA programs alike.

Each leaf block, in program order, becomes one token: its **memory-movement step**

``kind:source->destination``

* ``kind``: ``init`` (a constant store or a fragment fill), ``copy`` (data movement, no arithmetic),
  ``compute`` (element-wise arithmetic), ``reduce`` (an update: reads the buffer it writes, or
  arithmetic under a loop that does not move the written index), ``mma`` (a tensor-core intrinsic
  call);
* ``source``: the slowest memory level the block reads from (the written buffer itself left out),
  ``none`` when it reads nothing;
* ``destination``: the memory level it writes.

Memory levels: ``global`` (a function parameter, i.e. DRAM), ``global.tmp`` (a buffer allocated
inside the function in global scope: CPU write caches, fused intermediates), ``shared``
(``shared``, ``shared.dyn``), ``local`` (registers: ``local``, ``warp``), ``fragment`` (wmma
``matrix_a``/``matrix_b``, mma ``matrixA``/``matrixB``) and ``accumulator`` (``wmma.accumulator``,
``matrixC``).

So a CPU GEMM with a write cache reads ``init:none->global.tmp, reduce:global->global.tmp,
copy:global.tmp->global``, and a tensor-core GEMM ``copy:global->shared`` (twice),
``init:none->accumulator``, ``copy:shared->fragment`` (twice), ``mma:fragment->accumulator``,
``copy:accumulator->shared``, ``copy:shared->global``.

Each token also carries a small numeric vector (:data:`TOKEN_FEATURES`, all ``slog``-scaled): the
analogue of the reference's 23-d token (arithmetic, bytes moved, footprint, parallelism, ...).
"""
from __future__ import annotations

import numpy as np

from ..analysis.gpu_model import call_name, is_tensor_core_nest, mma_shape
from ..analysis.loop_nest import LeafNest, extract_nests

KINDS = ("init", "copy", "compute", "reduce", "mma")
LEVELS = ("global", "global.tmp", "shared", "local", "fragment", "accumulator")
SOURCES = LEVELS + ("none",)
PAD = 0  # token id of padding
VOCAB_SIZE = 1 + len(KINDS) * len(SOURCES) * len(LEVELS)
DEFAULT_MAX_TOKENS = 23  # the reference's pattern length (its token vector had 23 entries)

TOKEN_FEATURES = (
    "flops",              # float ops per iteration x iterations (2mnk per call for mma)
    "iterations",         # product of the loop extents around the block
    "read_bytes",         # bytes read, every iteration counted
    "write_bytes",        # bytes written, every iteration counted
    "read_footprint",     # distinct cache-line bytes read over the whole nest
    "write_footprint",    # distinct cache-line bytes written over the whole nest
    "vector_lanes",       # product of vectorized loop extents
    "parallel",           # parallel x blockIdx x vthread extents
    "threads",            # threadIdx extents
    "unrolled",           # product of unrolled loop extents
    "auto_unroll",        # pragma_auto_unroll_max_step in force
    "reduction_loops",    # loops that do not move the written index
    "pipeline_stages",    # software pipeline stages annotated on the enclosing loops
)
N_TOKEN_FEATURES = len(TOKEN_FEATURES)

_FILL_CALLS = ("tvm_fill_fragment", "mma_fill", "mma_fill_legacy")
_LINE_BYTES = 64


def slog(x):
    """``sign(x) * log2(|x| + 1)``, the reference's feature scaling."""
    x = np.asarray(x, dtype=np.float64)
    return np.sign(x) * np.log2(np.abs(x) + 1.0)


def memory_level(scope: str, is_param: bool) -> int:
    """Index into :data:`LEVELS` of a buffer with storage ``scope``."""
    if scope.startswith("shared"):
        return LEVELS.index("shared")
    if scope.startswith("local") or scope == "warp":
        return LEVELS.index("local")
    if "accumulator" in scope or scope.endswith("matrixC"):
        return LEVELS.index("accumulator")
    if scope.startswith("wmma.") or ".matrix" in scope:
        return LEVELS.index("fragment")
    return LEVELS.index("global") if is_param else LEVELS.index("global.tmp")


def token_id(kind: str, source: str, destination: str) -> int:
    """The id (>= 1) of ``kind:source->destination``."""
    k, s, d = KINDS.index(kind), SOURCES.index(source), LEVELS.index(destination)
    return 1 + (k * len(SOURCES) + s) * len(LEVELS) + d


def token_name(tid: int) -> str:
    """Readable form of a token id (``"<pad>"`` for :data:`PAD`)."""
    if tid == PAD:
        return "<pad>"
    if not 0 < tid < VOCAB_SIZE:
        raise ValueError(f"token id {tid} is outside 0..{VOCAB_SIZE - 1}")
    rest, d = divmod(tid - 1, len(LEVELS))
    k, s = divmod(rest, len(SOURCES))
    return f"{KINDS[k]}:{SOURCES[s]}->{LEVELS[d]}"


def _nest_token(nest: LeafNest, params: set[str]) -> tuple[int, np.ndarray]:
    calls = {call_name(c) for c in nest.intrinsics}
    reads = [a for a in nest.accesses if not a.is_write]
    writes = [a for a in nest.accesses if a.is_write]
    written = {a.buffer for a in writes}
    inputs = [a for a in reads if a.buffer not in written]
    if is_tensor_core_nest(nest):
        kind = "mma"
    elif calls & set(_FILL_CALLS) or not reads:
        kind = "init"
    elif len(inputs) < len(reads) or (nest.float_ops > 0 and any(nest.reduction_loops)):
        kind = "reduce"  # an update (reads what it writes), or a reduction block whose init is not split off
    elif nest.float_ops > 0:
        kind = "compute"
    else:
        kind = "copy"
    src = min((memory_level(a.scope, a.buffer in params) for a in inputs), default=None)
    dst = min((memory_level(a.scope, a.buffer in params) for a in writes), default=LEVELS.index("global.tmp"))
    tid = token_id(kind, SOURCES[src] if src is not None else "none", LEVELS[dst])

    iters = float(np.prod([lp.extent for lp in nest.loops], dtype=np.float64)) if nest.loops else 1.0

    def moved(accs):
        return sum(iters * float(np.prod(a.base_extent)) * a.dtype_bytes for a in accs)

    def footprint(accs):
        return sum(float(a.line_footprints(_LINE_BYTES)[0]) for a in accs)

    def prod(pred):
        return float(np.prod([lp.extent for lp in nest.loops if pred(lp.kind)], dtype=np.float64))

    flops = nest.float_ops * iters
    if kind == "mma":  # an intrinsic call has no arithmetic nodes: count the tile's multiply-adds
        m, n, k = mma_shape(nest)
        flops = 2.0 * m * n * k * iters
    num = np.array([
        flops,
        iters,
        moved(reads),
        moved(writes),
        footprint(reads),
        footprint(writes),
        prod(lambda k: k == "vectorized"),
        prod(lambda k: k == "parallel" or k.startswith(("thread:blockIdx", "thread:vthread"))),
        prod(lambda k: k.startswith("thread:threadIdx")),
        prod(lambda k: k == "unrolled"),
        max((lp.auto_unroll for lp in nest.loops), default=0),
        sum(nest.reduction_loops),
        max((lp.pipeline_stages for lp in nest.loops), default=0),
    ], dtype=np.float64)
    return tid, slog(num).astype(np.float32)


def _params(func) -> set[str]:
    return {str(p.name) for p in func.params if hasattr(p, "name")}  # 0.27: buffer-typed Vars


def main_func(mod):
    """The PrimFunc of a scheduled module (``main`` or its only function)."""
    from tvm import tirx

    if isinstance(mod, tirx.PrimFunc):
        return mod
    funcs = [f for _, f in mod.functions.items() if isinstance(f, tirx.PrimFunc)]
    for gv, f in mod.functions.items():
        if gv.name_hint == "main" and isinstance(f, tirx.PrimFunc):
            return f
    if len(funcs) != 1:
        raise ValueError(f"expected one PrimFunc in the module, found {len(funcs)}")
    return funcs[0]


def pattern_features(mod, *, max_tokens: int = DEFAULT_MAX_TOKENS) -> tuple[np.ndarray, np.ndarray]:
    """Token ids and token vectors of a scheduled program.

    Parameters
    ----------
    mod : IRModule or PrimFunc
        A scheduled program (e.g. ``candidate.sch.mod``).
    max_tokens : int, default 23
        Length of the padded sequence; programs with more leaf blocks keep the first ``max_tokens``.

    Returns
    -------
    ids : ndarray of int64, shape (max_tokens,)
        One token per leaf block in program order, then :data:`PAD`.
    values : ndarray of float32, shape (max_tokens, N_TOKEN_FEATURES)
        The ``slog``-scaled :data:`TOKEN_FEATURES` of each token (zeros for padding).
    """
    func = main_func(mod)
    params = _params(func)
    ids = np.zeros(max_tokens, dtype=np.int64)
    values = np.zeros((max_tokens, N_TOKEN_FEATURES), dtype=np.float32)
    for i, nest in enumerate(extract_nests(func)[:max_tokens]):
        ids[i], values[i] = _nest_token(nest, params)
    return ids, values


def pattern_tokens(mod, *, max_tokens: int = DEFAULT_MAX_TOKENS) -> np.ndarray:
    """The padded token-id sequence of a scheduled program (see :func:`pattern_features`)."""
    return pattern_features(mod, max_tokens=max_tokens)[0]


def describe(mod, *, max_tokens: int = DEFAULT_MAX_TOKENS) -> list[str]:
    """The readable tokens of a program, padding left out (for logs and tests)."""
    return [token_name(int(t)) for t in pattern_tokens(mod, max_tokens=max_tokens) if t != PAD]

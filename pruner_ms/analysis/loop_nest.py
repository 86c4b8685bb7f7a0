"""Read a scheduled PrimFunc into loop nests: one :class:`LeafNest` per leaf block.

The analyzer works on the scheduled (not lowered) TensorIR that MetaSchedule candidates carry: loops
with their kinds and annotations, and leaf blocks with their buffer regions. A block's index
expressions become one flat list of numpy operations (:class:`_IndexProgram`, a small interpreter
over vectors of sample points), so the span of every access under every loop comes from a single
numeric pass instead of symbolic arithmetic through the FFI.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
import math
import operator

import numpy as np
from tvm import ir, sym, tirx
from tvm.s_tir import SBlockRealize
from tvm_ffi import _ffi_api as _ffi

_get, _size = _ffi.ArrayGetItem, _ffi.ArraySize
logger = logging.getLogger("pruner_ms")


def _items(arr) -> list:
    """The elements of an FFI Array (its Python iterator re-checks length and index per element)."""
    return [_get(arr, i) for i in range(_size(arr))]

_FLOAT_OPS = (tirx.Add, tirx.Sub, tirx.Mul, tirx.Div, tirx.FloorDiv, tirx.Max, tirx.Min)


@dataclasses.dataclass
class Loop:
    extent: int
    kind: str  # "serial" | "parallel" | "vectorized" | "unrolled" | "thread:<tag>"
    auto_unroll: int  # pragma_auto_unroll_max_step in force at this loop (0 when none)
    pipeline_stages: int = 0  # software_pipeline_stage annotation: number of stages (0 when none)
    uid: int = 0  # identity of the For statement: blocks under the same loop share it


@functools.lru_cache(maxsize=4096)
def _lines_per_run(run_bytes: float, granule: int, line_bytes: int) -> float:
    """Cache lines a contiguous run of ``run_bytes`` touches on average when it starts at a uniformly
    spread multiple of ``granule`` (a divisor of ``line_bytes``) within a line. Memoized: the same
    few runs recur in every candidate of a workload."""
    starts = np.arange(0, line_bytes, max(1, granule))
    return float(np.mean(np.floor((starts + run_bytes - 1.0) / line_bytes) + 1.0))


@dataclasses.dataclass
class Access:
    buffer: str
    scope: str
    dtype_bytes: int
    is_write: bool
    shape: tuple[int, ...]
    # spans[d, j]: how far dimension d moves while loop j sweeps its range (others fixed)
    spans: np.ndarray
    # strides[d, j]: change of index d for one step of loop j
    strides: np.ndarray
    base_extent: np.ndarray  # region extent of the block itself per dimension
    row_align: tuple[int, int] | None = None  # storage_align (factor, offset) of the row stride, if any
    buffer_uid: int = 0  # identity of the buffer object (names need not be unique)
    # the number of this nest's outer loops it shares with another block that produces (for a read)
    # or consumes (for a write) this buffer: per iteration of those loops the data passes between the
    # two blocks through the cache (a padded tile, an accumulator staged in a local buffer)
    shared_loops: int = 0
    _ext: np.ndarray | None = dataclasses.field(default=None, init=False, repr=False, compare=False)
    _flat_strides: list[int] | None = dataclasses.field(default=None, init=False, repr=False, compare=False)

    def _row_major(self) -> list[int]:
        """Elements between consecutive indices of each dimension in the row-major layout."""
        out, mult = [], 1
        for size in reversed(self.shape):
            out.append(mult)
            mult *= size
        return out[::-1]

    def elem_stride(self, loop: int) -> int:
        """Stride in elements of the flattened address for one step of ``loop``."""
        if self._flat_strides is None:  # computed once: strides do not change after extraction
            rm = np.asarray(self._row_major(), dtype=np.float64)  # integer-valued: exact in float64
            self._flat_strides = [int(x) for x in rm @ self.strides]
        return self._flat_strides[loop]

    def _extents(self) -> np.ndarray:
        """``ext[i, d]``: the extent of dimension ``d`` while loops ``i..`` sweep (``i = n``: one
        iteration of the block), capped by the buffer's shape. Computed once: the cache and page
        footprints both read it, and spans do not change after extraction."""
        if self._ext is not None:
            return self._ext
        nd, n = self.spans.shape
        suffix = np.zeros((n + 1, nd))
        if n:
            suffix[:n] = np.cumsum(self.spans[:, ::-1], axis=1)[:, ::-1].T
        ext = self.base_extent[None, :] + suffix
        self._ext = np.minimum(ext, np.asarray(self.shape, dtype=np.float64)[None, :]) if nd else ext
        return self._ext

    def line_footprints(self, line_bytes: int) -> np.ndarray:
        """Cache-line bytes touched while loops ``i..`` sweep their ranges, for every ``i`` in
        ``0..n`` (``i = n``: one iteration of the block).

        The box the loops sweep is a set of contiguous runs: its last dimension, merged with the
        dimensions before it while those after them are whole rows (a 28-float row swept whole
        continues into the next one). A run of ``B`` bytes touches ``ceil(B / line)`` lines if it
        starts on a line boundary, and up to one more if not: where runs start is decided by the
        byte strides that move them (the box's other dimensions and the loops outside ``i``), and a
        run starting at a multiple of ``g`` (their gcd with the line size) touches the lines counted
        by :func:`_lines_per_run` on average (14 floats at a 112-byte row pitch: 1.75 lines, not 1).
        Never more than the lines of the box's address span.
        """
        nd, n = self.spans.shape
        if not nd:
            return np.full(n + 1, float(line_bytes))
        ext = self._extents()
        size = self.dtype_bytes
        row_major = self._row_major()
        dim_moves = [m * size for m in row_major]
        spans = (ext - 1.0) @ np.asarray(row_major, dtype=np.float64) * size + size
        caps = (np.ceil(spans / line_bytes) + 1.0) * line_bytes
        whole = (ext >= np.asarray(self.shape, dtype=np.float64)[None, :]).tolist()
        rows = ext.tolist()
        lines = np.empty(n + 1)
        loops_gcd = line_bytes  # gcd of the line size and the byte strides of the loops outside i
        for i in range(n + 1):
            if i:
                loops_gcd = math.gcd(loops_gcd, abs(self.elem_stride(i - 1)) * size)
            row, k = rows[i], nd - 1
            while k > 0 and whole[i][k]:
                k -= 1
            g = loops_gcd
            for d in range(k):
                if row[d] > 1:
                    g = math.gcd(g, dim_moves[d])
            run = math.prod(row[k:]) * size
            lines[i] = min(math.prod(row[:k]) * _lines_per_run(run, g, line_bytes) * line_bytes, caps[i])
        return np.maximum(lines, ext.prod(axis=1) * size)

    def concurrent_runs(self, loops, footprints: np.ndarray, *, window_bytes: float) -> float:
        """How many separate contiguous runs this access advances side by side: the runs of the box
        swept inside the outermost non-parallel loop that moves it along its last (contiguous)
        dimension, when that loop's next step continues each run where it ended (a weight read row
        by row along k, k split in two and 192 rows swept inside the outer k loop: 192 runs; with 16
        rows: 16). 1 for an access that no such loop moves, whose runs it does not continue (a
        stride-2 window read: its runs overlap or leave gaps), or whose runs one step of that loop
        visits over more than ``window_bytes`` of lines (each visit then comes long after the last:
        the prefetchers meet each run as a new stream). ``footprints``: this access's
        :meth:`line_footprints`, which the caller has already computed."""
        nd, n = self.spans.shape
        if not nd:
            return 1.0
        movers = [j for j in range(n) if self.strides[nd - 1, j] != 0 and loops[j].kind != "parallel"]
        if not movers:
            return 1.0
        c = movers[0]
        ext = self._extents()[c + 1]
        if abs(self.strides[nd - 1, c]) != ext[nd - 1]:  # its next step does not continue the runs
            return 1.0
        if footprints[c + 1] > window_bytes:
            return 1.0
        k = nd - 1
        while k > 0 and ext[k] >= self.shape[k]:
            k -= 1
        return float(max(1.0, math.prod(ext[:k])))

    def page_footprints(self, page_bytes: int, line_bytes: int) -> np.ndarray:
        """Bytes of the memory pages touched while loops ``i..`` sweep, for every ``i`` in ``0..n``.

        Dimensions whose row-major stride is at least a page put each of their indices in pages of
        its own (the channel planes of an NCHW tensor); the remaining inner dimensions touch the
        pages of their address span (``span / page + 1``) or fewer, one per touched line at most.
        """
        nd, _ = self.spans.shape
        if not nd:
            return np.full(self.spans.shape[1] + 1, float(page_bytes))
        ext = self._extents()
        strides = [m * self.dtype_bytes for m in self._row_major()]  # bytes; they fall with the
        k = sum(st >= page_bytes for st in strides)  # dimension, so those of a page or more are a prefix
        if k == nd:
            return ext.prod(axis=1) * page_bytes
        inner = ext[:, k:]
        span = (inner - 1.0) @ np.asarray(strides[k:], dtype=np.float64) + self.dtype_bytes
        inner_lines = np.ceil(inner[:, -1] * self.dtype_bytes / line_bytes) * inner[:, :-1].prod(axis=1)
        per_group = np.minimum(np.maximum(inner_lines, 1.0), np.floor(span / page_bytes) + 1.0)
        return ext[:, :k].prod(axis=1) * per_group * page_bytes


@dataclasses.dataclass
class LeafNest:
    """A leaf block with the loops around it (outermost first, unit loops left out)."""

    name: str
    loops: list[Loop]
    accesses: list[Access]
    float_ops: int  # arithmetic ops per innermost iteration
    reduction_loops: list[bool]  # loop j carries no written index (a reduction loop of this block)
    intrinsics: list[str] = dataclasses.field(default_factory=list)  # calls in the body (tensor intrinsics)
    root: Loop | None = None  # outermost loop around the block, unit loops included (one GPU kernel each)
    # guarded[j]: a condition in the body (if_then_else / select, e.g. inlined zero padding) changes
    # as loop j moves; a vectorized loop with such a guard cannot run as plain SIMD
    guarded: list[bool] = dataclasses.field(default_factory=list)
    guard_compares: int = 0  # comparisons evaluated per innermost iteration by those conditions


class _IndexProgram:
    """Integer index expressions of one block as a flat list of numpy operations (a small interpreter).

    Registers hold numpy arrays (one value per sample point) or constants: registers ``0..n-1`` are
    the loop variables, read from the rows of the sample matrix. Each expression node becomes one
    operation ``(function, destination, left, right)``; a variable is the register of its loop or of
    the binding that defines it (named by handle: ``Var.__eq__`` builds an EQ expression, so TIR vars
    make slow dict keys). A variable defined nowhere, or a node kind the program does not know, reads
    as 0: its spans stay 0 and footprints are capped by shape; each unknown node kind is logged once
    (:func:`_note_unknown_index_node`).
    """

    def __init__(self, loop_vars: list) -> None:
        self.num_loops = len(loop_vars)
        self.registers: dict[int, int] = {v.__chandle__(): j for j, v in enumerate(loop_vars)}
        self.constants: list = []  # (register, value), set before the operations run
        self.ops: list[tuple] = []
        self.size = self.num_loops
        self._zero = self._constant(0)

    def _new(self) -> int:
        self.size += 1
        return self.size - 1

    def _constant(self, value) -> int:
        reg = self._new()
        self.constants.append((reg, value))
        return reg

    def bind(self, var, value) -> None:
        """``var`` takes the value of ``value`` from here on (a block's iter var and its binding)."""
        self.registers[var.__chandle__()] = self(value)

    def __call__(self, e) -> int:
        """The register that holds the value of expression ``e``."""
        t = type(e)  # exact-type dispatch: isinstance chains dominated the analyzer's profile
        fn = _BINARY.get(t)
        if fn is not None:
            a, b = self(e.a), self(e.b)
            dst = self._new()
            self.ops.append((fn, dst, a, b))
            return dst
        if t is tirx.IntImm or t is tirx.FloatImm:
            return self._constant(e.value)
        if t is tirx.Var:
            return self.registers.get(e.__chandle__(), self._zero)
        if t is tirx.Cast:
            return self(e.value)
        _note_unknown_index_node(t.__name__)
        return self._zero

    def evaluate(self, samples: np.ndarray, outputs: list[int]) -> np.ndarray:
        """The values of the ``outputs`` registers at every sample point: ``samples[j]`` holds loop
        ``j``'s value at each point; one row per output."""
        regs: list = [None] * self.size
        regs[: self.num_loops] = list(samples)
        for reg, value in self.constants:
            regs[reg] = value
        for fn, dst, a, b in self.ops:
            regs[dst] = fn(regs[a], regs[b])
        zero = samples[0] * 0  # broadcasts constant indices to one value per sample point
        return np.array([regs[o] + zero for o in outputs], dtype=np.float64)


@functools.lru_cache(maxsize=None)
def _note_unknown_index_node(kind: str) -> None:
    """Say once per node kind that an index expression holds a node the analyzer reads as 0."""
    logger.warning("pruner_ms analyzer: index expressions with %s nodes are read as 0 (the access is taken "
                   "as not moving with the loops they involve); estimates for such programs are less exact", kind)


def _floordiv(a, b):
    return a // b if np.all(b) else 0


def _floormod(a, b):
    return a % b if np.all(b) else 0


_BINARY = {
    tirx.Add: operator.add,
    tirx.Sub: operator.sub,
    tirx.Mul: operator.mul,
    tirx.FloorDiv: _floordiv,
    tirx.FloorMod: _floormod,
    tirx.Div: _floordiv,
    tirx.Mod: _floormod,
    tirx.Min: np.minimum,
    tirx.Max: np.maximum,
}


def _kind(loop: tirx.For) -> str:
    k = int(loop.kind)
    if k == int(tirx.ForKind.THREAD_BINDING):
        return "thread:" + str(loop.thread_binding.thread_tag)
    return ("serial", "parallel", "vectorized", "unrolled")[k] if k < 4 else "serial"


@functools.lru_cache(maxsize=None)
def _node_kind(t: type) -> str:
    """What the walks below do with a node of type ``t``, decided once per type (an ``isinstance``
    chain through the FFI's class hierarchy for every node was among the analyzer's top costs)."""
    kinds = (("float_op", _FLOAT_OPS), ("seq", tirx.SeqStmt), ("for", tirx.For), ("block", SBlockRealize),
             ("store", tirx.BufferStore), ("call", ir.Call), ("value", (tirx.Evaluate, tirx.Cast)),
             ("if", tirx.IfThenElse), ("select", tirx.Select), ("func", tirx.PrimFunc))
    return next((kind for kind, classes in kinds if issubclass(t, classes)), "other")


def _scan_body(node) -> tuple[int, list[str], list]:
    """One walk of a block body (no FFI visitor in 0.27): its floating-point arithmetic ops, the
    intrinsics it calls, and the conditions of its ``if_then_else`` calls and selects."""
    ops, calls, conditions = 0, [], []
    stack = [node]
    while stack:
        n = stack.pop()
        kind = _node_kind(type(n))
        if kind == "float_op":
            if str(n.ty).startswith(("float", "bfloat")):
                ops += 1
            stack += (n.a, n.b)
        elif kind == "store":
            stack.append(n.value)
        elif kind == "seq":
            stack += _items(n.seq)
        elif kind == "call":
            name = str(getattr(n.op, "name", n.op))
            calls.append(name)
            args = _items(n.args)
            if "if_then_else" in name and args:
                conditions.append(args[0])
            stack += args
        elif kind == "value":
            stack.append(n.value)
        elif kind == "if":
            stack.append(n.then_case)
            if n.else_case is not None:
                stack.append(n.else_case)
        elif kind == "select":
            conditions.append(n.condition)
            stack += (n.true_value, n.false_value)
        elif kind != "func" and hasattr(n, "body"):
            stack.append(n.body)
    return ops, calls, conditions


_COMPARES = (tirx.LT, tirx.LE, tirx.GT, tirx.GE, tirx.EQ, tirx.NE)


def _comparisons(conditions: list) -> list:
    """Every comparison in ``conditions`` (split at and / or / not)."""
    found, todo = [], list(conditions)
    while todo:
        e = todo.pop()
        if isinstance(e, (tirx.And, tirx.Or)):
            todo += (e.a, e.b)
        elif isinstance(e, tirx.Not):
            todo.append(e.a)
        elif isinstance(e, _COMPARES):
            found.append(e)
    return found


def _same_outcome(compare, lo: float, hi: float) -> bool:
    """Whether ``compare`` (a - b against 0) has one outcome for every difference in ``[lo, hi]``."""
    if isinstance(compare, (tirx.LT, tirx.GE)):
        return hi < 0 or lo >= 0
    if isinstance(compare, (tirx.LE, tirx.GT)):
        return hi <= 0 or lo > 0
    return lo == hi or lo > 0 or hi < 0  # EQ, NE


def _decided_over_loops(all_loops: list[Loop], all_vars: list, bindings: list):
    """A predicate: whether a comparison has the same outcome at every iteration of the loops, from
    the integer bounds of its two sides' difference (TVM's ``const_int_bound``, each loop variable in
    ``[0, extent)``, the block bindings substituted; sides that share a variable are bounded apart, so
    a comparison may stay undecided, never wrongly decided). TVM's lowering folds a decided comparison
    away: an ``if_then_else`` of zero padding where the padding is 0 (a 1x1 conv2d's
    ``0 <= y + ry < 56``, its padding block inlined) compiles to a plain load; priced as four compares
    per element (GUARD_FMA_SLOTS_PER_COMPARE) those programs were estimated 10x too slow (12.1 ms for
    one measured at 1.37 ms, docs/results/suite_cpu_issue10_s16)."""
    analyzer = sym.Analyzer()
    for var, loop in zip(all_vars, all_loops):
        analyzer.bind(var, ir.Range.from_min_extent(0, loop.extent))
    for var, value in bindings:
        analyzer.bind(var, value)

    def decided(e) -> bool:
        bound = analyzer.const_int_bound(e.a - e.b)
        return _same_outcome(e, bound.min_value, bound.max_value)

    return decided


def _dtype_bytes(dtype) -> int:
    return max(1, int(dtype.bits) * int(dtype.lanes) // 8)


def _int(x) -> int | None:
    return int(x.value) if isinstance(x, tirx.IntImm) else None


def extract_nests(func: tirx.PrimFunc) -> list[LeafNest]:
    """All leaf blocks of ``func`` with their loop nests, in program order."""
    nests: list[LeafNest] = []
    _walk(func.body, [], [], [], nests)
    _link_producers(nests)
    return nests


def _link_producers(nests: list[LeafNest]) -> None:
    """Set :attr:`Access.shared_loops`: for each access, the longest prefix of this nest's loops that
    it shares with another nest that writes (for a read) or reads (for a write) the same buffer."""
    touching: dict[int, list[tuple[int, bool]]] = {}
    for i, nest in enumerate(nests):
        for a in nest.accesses:
            touching.setdefault(a.buffer_uid, []).append((i, a.is_write))
    for i, nest in enumerate(nests):
        for a in nest.accesses:
            best = 0
            for k, is_write in touching.get(a.buffer_uid, ()):
                if k == i or is_write == a.is_write:
                    continue
                other = nests[k].loops
                depth = 0
                while depth < min(len(nest.loops), len(other)) and nest.loops[depth].uid == other[depth].uid:
                    depth += 1
                best = max(best, depth)
            a.shared_loops = best


def _walk(stmt, loops: list[Loop], loop_vars: list, bindings: list, out: list[LeafNest]) -> bool:
    """Append the leaf nests under ``stmt`` to ``out``; return whether any block was found."""
    kind = _node_kind(type(stmt))
    if kind == "seq":
        found = False
        for s in _items(stmt.seq):
            found |= _walk(s, loops, loop_vars, bindings, out)
        return found
    if kind == "for":
        unroll = loops[-1].auto_unroll if loops else 0
        annotations, stages = stmt.annotations, None
        if annotations:
            ann = annotations.get("pragma_auto_unroll_max_step")
            if ann is not None:
                unroll = int(ann)
            stages = annotations.get("software_pipeline_stage")
        var = stmt.loop_var
        loop = Loop(_int(stmt.extent) or 1, _kind(stmt), unroll,
                    max(int(x) for x in _items(stages)) + 1 if stages is not None and _size(stages) else 0,
                    var.__chandle__())
        return _walk(stmt.body, loops + [loop], loop_vars + [var], bindings, out)
    if kind == "block":
        block = stmt.block
        inner = bindings + list(zip((iv.var for iv in _items(block.iter_vars)), _items(stmt.iter_values)))
        children: list[LeafNest] = []
        if _walk(block.body, loops, loop_vars, inner, children):
            out.extend(children)
        else:
            out.append(_leaf(block, loops, loop_vars, inner))
        return True
    if kind == "if":
        found = _walk(stmt.then_case, loops, loop_vars, bindings, out)
        if stmt.else_case is not None:
            found |= _walk(stmt.else_case, loops, loop_vars, bindings, out)
        return found
    if hasattr(stmt, "body"):  # LetStmt, AttrStmt, DeclBuffer, ...
        return _walk(stmt.body, loops, loop_vars, bindings, out)
    return False


def _leaf(block, all_loops: list[Loop], all_vars: list, bindings: list) -> LeafNest:
    # unit loops neither iterate nor move an index: their variables are 0 and they are left out
    keep = [j for j, loop in enumerate(all_loops) if loop.extent > 1]
    loops = [all_loops[j] for j in keep]
    n = len(loops)
    # sample points: each kept loop alone at 0, 1, middle and last (the others, unit loops included, at
    # 0); every loop variable, unit loops included, reads its row of ``samples``
    segments, columns = [], []
    for j in keep:
        points = sorted({0, 1, all_loops[j].extent // 2, all_loops[j].extent - 1})
        segments.append((len(columns), len(columns) + len(points)))
        for p in points:
            col = [0] * len(all_loops)
            col[j] = p
            columns.append(col)
    samples = np.array(columns, dtype=np.int64).reshape(-1, len(all_loops)).T  # (all loops, S)

    program = _IndexProgram(all_vars)
    for var, value in bindings:  # outer blocks first, so chained bindings resolve
        program.bind(var, value)
    regions = [(False, r) for r in _items(block.reads)] + [(True, r) for r in _items(block.writes)]
    ranges = [_items(region.region) for _, region in regions]
    outs = [program(r.min) for rs in ranges for r in rs]
    ops, calls, conditions = _scan_body(block.body)
    compares = _comparisons(conditions)
    n_index = len(outs)
    # conditions are index expressions too: which loops move them
    outs += [program(side) for c in compares for side in (c.a, c.b)]

    # spans and unit strides of every index of every access, for all loops at once
    all_spans = np.zeros((len(outs), n))
    all_strides = np.zeros((len(outs), n))
    if outs and columns:
        mat = program.evaluate(samples, outs)
        starts = np.array([lo for lo, _ in segments])
        all_spans = np.maximum.reduceat(mat, starts, axis=1) - np.minimum.reduceat(mat, starts, axis=1)
        multi = np.array([hi - lo > 1 for lo, hi in segments])
        all_strides[:, multi] = mat[:, starts[multi] + 1] - mat[:, starts[multi]]
    written: set[int] = set()
    accesses: list[Access] = []
    row = 0
    for (is_write, region), rs in zip(regions, ranges):
        buf = region.source  # 0.27: a buffer-typed Var
        nd = len(rs)
        spans = all_spans[row:row + nd]
        strides = all_strides[row:row + nd]
        row += nd
        if is_write:
            written.update(np.flatnonzero(spans.any(axis=0)).tolist())
        accesses.append(
            Access(
                buffer=str(buf.name),
                scope=str(buf.scope()),
                dtype_bytes=_dtype_bytes(buf.dtype),
                is_write=is_write,
                shape=tuple(_int(s) or 1 for s in _items(buf.shape)),
                spans=spans,
                strides=strides,
                base_extent=np.array([float(_int(r.extent) or 1) for r in rs]),
                buffer_uid=buf.__chandle__(),
            )
        )
    # storage_align of written buffers, [[write index, axis, factor, offset], ...]: pads shared rows
    align = block.annotations.get("buffer_dim_align") if block.annotations else None
    writes = [a for a in accesses if a.is_write]
    for entry in _items(align) if align is not None else []:
        vals = [int(x) for x in _items(entry)]
        if len(vals) == 4 and vals[0] < len(writes) and vals[1] == len(writes[vals[0]].shape) - 2:
            writes[vals[0]].row_align = (vals[2], vals[3])
    # a guard is a comparison whose outcome changes over the loops. The sample points bound its two
    # sides' difference (exactly where it is affine in the loop variables: each loop's extreme points
    # added up); where that bound leaves one outcome, the integer bounds must confirm it
    # (:func:`_decided_over_loops`), so a non-affine index never drops a guard on the samples' word
    guard_rows, decided = [], None
    for i, c in enumerate(compares):
        rows = [n_index + 2 * i, n_index + 2 * i + 1]
        if outs and columns:
            diff = mat[rows[0]] - mat[rows[1]]
            base = diff[0]  # every loop at 0
            lo = base + float(np.minimum(np.minimum.reduceat(diff, starts) - base, 0).sum())
            hi = base + float(np.maximum(np.maximum.reduceat(diff, starts) - base, 0).sum())
            if not _same_outcome(c, lo, hi):
                guard_rows += rows
                continue
        decided = decided or _decided_over_loops(all_loops, all_vars, bindings)
        if not decided(c):
            guard_rows += rows
    guard_spans = all_spans[guard_rows] if guard_rows else np.zeros((0, n))
    guarded = guard_spans.any(axis=0).tolist()
    root = all_loops[0] if all_loops else None
    return LeafNest(str(block.name_hint), loops, accesses, ops, [j not in written for j in range(n)], calls, root,
                    guarded, len(guard_rows) // 2)

"""Latency model of a scheduled CUDA program, tensor cores included: a roofline per kernel.

The leaf blocks of a scheduled PrimFunc are grouped into kernels (one per top-level loop nest, as
lowering splits them). Per kernel the model derives the symbols of the Pruner reference analyzer and
extends them for tensor cores:

* launch shape: grid blocks (``blockIdx`` extents), threads and warps per block (``threadIdx``
  extents; a block tensorized with a warp-level intrinsic runs on whole warps);
* work: CUDA-core FLOPs from the arithmetic in each block, tensor-core FLOPs from every
  ``tvm_mma_sync`` / PTX ``mma`` call, sized from the intrinsic's operand tiles (2·m·n·k per call);
* memory, in bytes: global traffic between L2 and the SMs (every execution of every copy, so the
  reduction loop around a shared-memory fetch counts), DRAM traffic (the data touched, plus re-reads
  once it outgrows L2), uncoalesced accesses rounded up to 32-byte sectors, shared-memory traffic
  (fetch stores, ``load_matrix_sync``/``ldmatrix`` loads, accumulator staging);
* resources: shared memory per block (the tile each buffer holds under the loop that allocates it,
  times the software-pipeline stages), registers per thread (fragments and local buffers spread
  over the block's threads), hence blocks per SM (occupancy), waves and the tail-wave efficiency.

Kernel time = max(on-chip time, off-chip time) + the part of the smaller one that occupancy and
pipelining cannot hide + a launch cost, where on-chip = max(tensor-core + CUDA-core time,
shared-memory time) and off-chip = max(L2 time, DRAM time). Fixes of the reference's quirks: memory
terms are bytes over bytes/s (not elements), the reduction loop multiplies global->shared traffic, and
element-wise kernels pay for the memory they move.
"""
from __future__ import annotations

import math

import numpy as np

from .cpu_model import NestEstimate
from .loop_nest import Access, LeafNest

# Shared memory: 32 banks x 4 bytes per clock per SM (CUDA C Programming Guide, "Shared Memory"
# for compute capability 8.x/9.0).
SMEM_BYTES_PER_CLOCK = 128
# L2 -> SM bandwidth relative to DRAM. Not a datasheet figure: microbenchmarks put A100's L2 at
# ~3x its HBM bandwidth (Jia et al., "Dissecting the Ampere GPU architecture", 2021 measure ~5 TB/s).
L2_TO_DRAM_BANDWIDTH = 3.0
L2_USABLE_FRACTION = 0.75  # of the L2 one kernel's working set can keep (the rest: other data, conflicts)
SECTOR_BYTES = 32  # smallest global-memory transaction
# Independent MMAs per SM needed to keep the tensor cores busy: 4 sub-partitions x ~2 in flight
# (an HMMA's latency is about twice its issue interval).
TENSOR_CORE_INFLIGHT = 8
CUDA_CORE_WARPS = 8  # warps per SM that hide FMA latency (4 sub-partitions x 2)
HIDE_MEMORY_WARPS = 16  # resident warps per SM that hide memory latency without software pipelining
BASE_REGISTERS = 32  # addresses, loop indices, predicates
LAUNCH_SECONDS = 3e-6

# tensor-core MMA intrinsics (wmma, PTX mma, sparse mma), by the last component of the op name
MMA_CALLS = frozenset(("tvm_mma_sync", "tvm_bmma_sync", "mma_sync", "ptx_mma", "ptx_mma_sp", "mma"))


def call_name(name: str) -> str:
    return name.rsplit(".", 1)[-1]  # robust to the tir. -> tirx. and ptx_legacy. prefixes


def is_tensor_core_nest(nest: LeafNest) -> bool:
    return any(call_name(c) in MMA_CALLS for c in nest.intrinsics)


def _numel(a: Access) -> float:
    return float(np.prod(a.base_extent)) if a.base_extent.size else 1.0


def mma_shape(nest: LeafNest) -> tuple[int, int, int]:
    """(m, n, k) of a tensorized MMA block, from its operand tiles: C is m*n, A is m*k, B is n*k."""
    writes = [a for a in nest.accesses if a.is_write]
    out = writes[0]
    operands = [a for a in nest.accesses if not a.is_write and a.buffer != out.buffer]
    mn = _numel(out)
    if len(operands) < 2 or mn <= 0:
        return (16, 16, 16)
    k = math.sqrt(_numel(operands[0]) * _numel(operands[1]) / mn)
    m = _numel(operands[0]) / k
    return (round(m), round(mn / m), round(k))


def _thread_extent(nest: LeafNest, prefix: str) -> int:
    """Product of the thread extents whose tag starts with ``prefix``. A tag bound again inside
    a loop with the same tag (cooperative fetches under ``threadIdx``) is one hardware index, so each
    tag counts once."""
    tags: dict[str, int] = {}
    for l in nest.loops:
        if l.kind.startswith("thread:" + prefix):
            tags[l.kind] = max(tags.get(l.kind, 1), l.extent)
    return math.prod(tags.values())


def _executions(nest: LeafNest) -> float:
    """How many times the block runs in one launch: serial loops times the distinct thread indices."""
    serial = math.prod(l.extent for l in nest.loops if not l.kind.startswith("thread:"))
    return float(serial * _thread_extent(nest, ""))


def _is_register_scope(scope: str) -> bool:
    return scope not in ("global", "shared", "shared.dyn", "")


def _footprint(nest: LeafNest, access: Access, start: int, *, per_thread: bool = False) -> float:
    """Elements of ``access`` touched while loops ``start..`` of ``nest`` sweep their ranges
    (the thread-bound ones held fixed if ``per_thread``).

    The smaller of a count (base tile times the extents of the loops that move it) and a range
    (index spans), so strided and sliding accesses are neither under- nor over-counted.
    """
    sweep = [j for j in range(start, len(nest.loops))
             if not (per_thread and nest.loops[j].kind.startswith("thread:"))]
    moving = [j for j in sweep if access.spans[:, j].any()]
    count = _numel(access) * math.prod(nest.loops[j].extent for j in moving)
    if not access.shape:
        return count
    span = access.spans[:, sweep].sum(axis=1) if access.spans.size else 0
    extent = np.minimum(access.base_extent + span, np.asarray(access.shape, dtype=np.float64))
    return min(count, float(np.prod(extent)))


def _row_padding(pairs: list[tuple[LeafNest, Access]], start: int) -> float:
    """Growth of a buffer by its storage_align (rows padded to ``factor * k + offset`` elements)."""
    for n, a in pairs:
        if a.row_align is not None and a.shape:
            factor, offset = a.row_align
            span = a.spans[-1, start:].sum() if a.spans.size else 0.0
            row = float(min(a.shape[-1], a.base_extent[-1] + span))
            padded = math.ceil(max(row - offset, 0) / factor) * factor + offset if factor > 0 else row
            return max(1.0, padded / row) if row > 0 else 1.0
    return 1.0


def _common_prefix(nests: list[LeafNest]) -> int:
    p = 0
    while all(p < len(n.loops) for n in nests) and all(n.loops[p] is nests[0].loops[p] for n in nests):
        p += 1
    return p


def _on_chip_buffers(nests: list[LeafNest], warp_size: int) -> tuple[float, float, int]:
    """(shared bytes per block, buffer registers per thread, pipeline stages) of one kernel.

    Each buffer holds what its users touch under their innermost common loop (where lowering
    allocates it): the whole block's tile for shared memory, one thread's (``local``) or one warp's
    (fragments, spread over its lanes) for registers. Pipelined loops keep one copy per stage.
    """
    by_buffer: dict[str, list[tuple[LeafNest, Access]]] = {}
    live: dict[str, list[int]] = {}  # first and last block (program order) using each buffer
    for i, n in enumerate(nests):
        for a in n.accesses:
            if a.scope != "global":
                by_buffer.setdefault(a.buffer, []).append((n, a))
                live.setdefault(a.buffer, [i, i])[1] = i
    shared_bytes: dict[str, float] = {}
    registers = 0.0
    max_stages = 1
    for name, pairs in by_buffer.items():
        users = list({id(n): n for n, _ in pairs}.values())
        p = _common_prefix(users)
        stages = max(1, users[0].loops[p - 1].pipeline_stages if p else 0)
        max_stages = max(max_stages, stages)
        scope, nbytes = pairs[0][1].scope, pairs[0][1].dtype_bytes * stages
        if not _is_register_scope(scope):
            shared_bytes[name] = nbytes * max(_footprint(n, a, p) for n, a in pairs) * _row_padding(pairs, p)
        else:
            lanes = 1 if scope == "local" else warp_size  # fragments are spread over a warp's lanes
            registers += nbytes * max(_footprint(n, a, p, per_thread=True) for n, a in pairs) / 4.0 / lanes
    # lowering merges shared buffers whose lifetimes do not overlap (e.g. the epilogue's staging
    # buffer reuses the main loop's tiles): the block needs the peak of what is live at once
    shared = max((sum(b for k, b in shared_bytes.items() if live[k][0] <= i <= live[k][1])
                  for i in range(len(nests))), default=0.0)
    return shared, registers, max_stages


def _accumulators(nest: LeafNest, tile: int) -> tuple[int, float]:
    """(accumulator bytes, independent accumulator tiles per warp) of an MMA block: the tiles it
    updates between two steps of its innermost reduction loop, which the tensor cores can overlap."""
    out = next(a for a in nest.accesses if a.is_write)
    serial = [j for j, l in enumerate(nest.loops) if not l.kind.startswith("thread:")]
    red = [j for j in serial if nest.reduction_loops[j]]
    start = red[-1] + 1 if red else (serial[0] if serial else len(nest.loops))
    return out.dtype_bytes, max(1.0, _footprint(nest, out, start, per_thread=True) / max(1, tile))


def _global_bytes(nest: LeafNest, a: Access, execs: float) -> float:
    """Bytes moved between L2 and the SMs by ``a`` over the whole kernel (32-byte sectors)."""
    nbytes = execs * _numel(a) * a.dtype_bytes
    tx = [j for j, l in enumerate(nest.loops) if l.kind == "thread:threadIdx.x"]
    if not tx or is_tensor_core_nest(nest):
        return nbytes
    last = len(nest.loops) - 1
    vec = nest.loops[last].extent if nest.loops[last].kind == "vectorized" and a.elem_stride(last) == 1 else 1
    if abs(a.elem_stride(tx[-1])) <= vec:
        return nbytes
    return nbytes * max(1.0, SECTOR_BYTES / (a.dtype_bytes * vec))  # each thread a sector of its own


def _dram_bytes(nests: list[LeafNest], global_bytes: float, l2_bytes: float) -> float:
    """Data the kernel touches in DRAM, plus L2 re-reads once that data outgrows the L2."""
    touched: dict[str, float] = {}
    for n in nests:
        for a in n.accesses:
            if a.scope == "global":
                touched[a.buffer] = max(touched.get(a.buffer, 0.0), _footprint(n, a, 0) * a.dtype_bytes)
    unique = sum(touched.values())
    usable = l2_bytes * L2_USABLE_FRACTION
    miss = 0.0 if unique <= usable else 1.0 - usable / unique
    return unique + max(0.0, global_bytes - unique) * miss


def estimate_kernel(nests: list[LeafNest], spec) -> NestEstimate:
    """Estimate one kernel (the leaf blocks under one top-level loop) on the GPU ``spec``."""
    grid = max(_thread_extent(n, "blockIdx") for n in nests)
    threads = max(_thread_extent(n, "threadIdx") for n in nests)
    is_tc = [is_tensor_core_nest(n) for n in nests]
    for n in (n for n, tc in zip(nests, is_tc) if tc):  # a warp-level intrinsic runs on 32 lanes per warp (threadIdx.y/z count warps)
        threads = max(threads, spec.warp_size * _thread_extent(n, "threadIdx.y") * _thread_extent(n, "threadIdx.z"))
    warps = math.ceil(threads / spec.warp_size)

    tc_flops = cuda_flops = global_bytes = shared_bytes = 0.0
    acc_bytes, acc_tiles = 4, 1.0
    for n, tc in zip(nests, is_tc):
        execs = _executions(n)
        if tc:
            m, nn, k = mma_shape(n)
            tc_flops += execs * 2.0 * m * nn * k
            acc_bytes, tiles = _accumulators(n, m * nn)
            acc_tiles = max(acc_tiles, tiles)
        else:
            cuda_flops += execs * n.float_ops
        for a in n.accesses:
            if a.scope == "global":
                global_bytes += _global_bytes(n, a, execs)
            elif not _is_register_scope(a.scope):
                shared_bytes += execs * _numel(a) * a.dtype_bytes
    dram_bytes = _dram_bytes(nests, global_bytes, spec.l2_bytes)

    smem, buffer_regs, stages = _on_chip_buffers(nests, spec.warp_size)
    regs = BASE_REGISTERS + buffer_regs
    symbols = {
        "grid_blocks": float(grid), "threads_per_block": float(threads), "warps_per_block": float(warps),
        "registers_per_thread": regs, "smem_bytes_per_block": smem, "pipeline_stages": float(stages),
        "tensor_core_flops": tc_flops, "cuda_core_flops": cuda_flops, "flops": tc_flops + cuda_flops,
        "bytes_global": global_bytes, "bytes_from_dram": dram_bytes, "bytes_shared": shared_bytes,
    }
    # occupancy (registers beyond the per-thread limit spill instead of failing) and waves
    regs_alloc = min(spec.max_registers_per_thread, math.ceil(regs))
    blocks_per_sm = spec.blocks_per_sm(warps * spec.warp_size, int(math.ceil(smem)), regs_alloc)
    if blocks_per_sm == 0:
        return NestEstimate(nests[0].name, math.inf, {**symbols, "bound": "cannot launch"})
    resident = min(blocks_per_sm, math.ceil(grid / spec.sm_count))
    waves = math.ceil(grid / (spec.sm_count * resident))
    efficiency = grid / (waves * spec.sm_count * resident)
    active_warps = warps * resident

    # compute
    spill = max(1.0, regs / spec.max_registers_per_thread) ** 2  # spilled fragments go through local memory
    t_tc = 0.0
    if tc_flops:
        util = min(1.0, active_warps * acc_tiles / TENSOR_CORE_INFLIGHT)
        t_tc = tc_flops / (spec.tensor_flops_per_s("float32" if acc_bytes == 4 else "float16") * efficiency * util)
    t_cuda = cuda_flops / (spec.fp32_flops_per_s * efficiency * min(1.0, active_warps / CUDA_CORE_WARPS))
    clock = spec.boost_clock_mhz * 1e6
    t_shared = shared_bytes / (SMEM_BYTES_PER_CLOCK * clock * spec.sm_count * efficiency)
    t_l2 = global_bytes / (L2_TO_DRAM_BANDWIDTH * spec.dram_bytes_per_s * efficiency)
    t_dram = dram_bytes / spec.dram_bytes_per_s
    on_chip = max((t_tc + t_cuda) * spill, t_shared)
    off_chip = max(t_l2, t_dram)
    hidden = 1.0 if stages > 1 else min(1.0, active_warps / HIDE_MEMORY_WARPS)
    seconds = max(on_chip, off_chip) + (1.0 - hidden) * min(on_chip, off_chip) + LAUNCH_SECONDS
    terms = {"tensor_core": t_tc, "cuda_core": t_cuda, "shared": t_shared, "l2": t_l2, "dram": t_dram}
    symbols.update({
        "blocks_per_sm": float(blocks_per_sm), "active_warps_per_sm": float(active_warps),
        "waves": float(waves), "wave_efficiency": efficiency, "latency_hidden": hidden,
        **{f"{k}_s": v for k, v in terms.items()}, "bound": max(terms, key=terms.get),
    })
    return NestEstimate(nests[0].name, seconds, symbols)


def estimate_kernels(nests: list[LeafNest], spec) -> list[NestEstimate]:
    """Group leaf blocks into kernels (one per top-level loop) and estimate each."""
    kernels: dict[int, list[LeafNest]] = {}
    for n in nests:
        kernels.setdefault(id(n.root) if n.root is not None else id(n), []).append(n)
    return [estimate_kernel(group, spec) for group in kernels.values()]

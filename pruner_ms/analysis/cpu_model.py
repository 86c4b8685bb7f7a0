"""Latency model of a loop nest on a CPU: a roofline over compute and every cache level.

Per leaf block the model derives the symbols a performance engineer would look at:

* parallelism: product of the ``parallel`` loops against the core count (with load imbalance);
* SIMD: the innermost ``vectorized`` loop against the register width, and whether its accesses are
  contiguous (otherwise a gather: one load and one lane insert per lane);
* register blocking: for reductions, the independent accumulators inside the innermost reduction loop
  (the "micro-kernel"); they hide FMA latency only if they fit the register file and are unrolled,
  or if the reduction is short enough that the out-of-order window overlaps other outputs' chains;
* memory: for each cache level, the deepest loop whose working set fits, giving the traffic that
  level must draw from the one below it; data another block produces or consumes under shared
  loops (a padded tile, a staged accumulator) passes through the level its tile fits in. Beyond the
  L2, capacity and bandwidth are measured on the host (:mod:`pruner_ms.hardware.calibration`); a level
  that holds the whole program draws nothing from below it (measurements repeat the program warm);
* address translation: the pages a sweep touches against the second-level TLB's reach, each miss a
  page walk.

Latency = max(compute time, traffic/bandwidth per level, page walks) + parallel launch cost, summed over blocks.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..hardware.cpu import CPUSpec
from .loop_nest import LeafNest

# Only half of a cache is usable for one working set: associativity conflicts, other data.
CACHE_USABLE_FRACTION = 0.5
# Inner loops this short are fully unrolled by LLVM even without TVM's unroll pragma.
LLVM_FULL_UNROLL_ITERS = 16
# LLVM's loop vectorizer turns an innermost element-wise loop (no reduction: floating-point reductions
# stay scalar without fast-math) whose accesses are contiguous into SIMD code, although TVM did not
# vectorize it: a padding or copy block is not scalar code. Counting such loops as scalar made the
# suite's stride-2 depthwise conv rank no better than chance (Spearman 0.12 and 0.23 on the programs
# of docs/results/analyzer_report, seeds 1 and 0; 0.36 and 0.47 with them vectorized).
LLVM_AUTO_VECTORIZE_MIN_ITERS = 4
STORE_FORWARD_CYCLES = 4
# A condition in the body that changes along the innermost loop (inlined zero padding: an
# ``if_then_else`` around a load) is evaluated every iteration, and a vectorized loop with such a
# guard does not run as plain SIMD (TVM's vectorizer scalarizes a lane-varying ``if_then_else``;
# LLVM re-vectorizes it with compares, masks and blends at best). Each comparison costs about four
# FMA slots: measured on the suite's depthwise conv2d, programs with the padding inlined under the
# vectorized loop ran 2.6-8x slower than with a padding block, and with one FMA slot per comparison the
# analyzer still ranked them first (its top 8 of 128 measured programs were 2.6x the best; with four,
# its top 8 held the best; conv2d 3x3 Spearman 0.63 -> 0.74: ``scripts/analyzer_report.py --rescore``).
# On hand-made 3x3 conv2d schedules the inlined padding is 3.3-4.9x slower (tests/test_analyzer.py).
# In a scalar loop a comparison is one integer operation and a select: one slot.
GUARD_FMA_SLOTS_PER_COMPARE = 4.0
# Share of the reorder buffer that holds other outputs' accumulator chains (the rest: the loads and
# loop overhead in flight). Spearman on the suite's measured programs moved by < 0.03 between windows
# of 64 and 256 uops (scripts/analyzer_report.py --rescore).
OOO_WINDOW_SHARE = 0.25
# A vector access that is not contiguous along the vectorized loop (a gather or scatter) is
# scalarized by TVM's LLVM codegen: one scalar load (store) per lane plus one insert (extract) per
# lane to build (take apart) the vector. The inserts issue on the vector shuffle port, one per cycle
# on the x86 cores of configs/cpu (Intel since Haswell, one port for lane inserts; Zen's two shuffle
# pipes share the insert's integer-to-vector move), so each gathered lane costs about one cycle. With
# the former model (a gather ran at a quarter of the vector width) the suite's batch-1 dense layer,
# whose 16-lane gathers along the weight's rows measure 1.5-19x slower than contiguous code, ranked
# backwards (Spearman -0.10 on the programs of docs/results/analyzer_report, seed 1).
GATHER_CYCLES_PER_LANE = 1.0


@dataclasses.dataclass
class NestEstimate:
    name: str
    seconds: float
    symbols: dict


def _traffic(lines: np.ndarray, loops, capacity: float) -> float:
    """Bytes a cache of ``capacity`` must fetch (``lines[i]``: the footprint of the nest under loop
    ``i``, i.e. of loops ``i..``; ``lines[len(loops)]``: one iteration of the block).

    Let loop ``d`` be the innermost loop whose whole footprint does not fit. One iteration of it fits,
    so a line reused by consecutive iterations stays cached (a row of A read along k, an accumulator
    tile): each distinct line the loop touches is fetched once per execution of the loop, i.e.
    ``lines[d]`` times the trip count of the loops around it. (Charging ``lines[d + 1]`` for every
    iteration of loop ``d`` instead would ignore that reuse and make a long reduction loop around a
    register tile look L1-bound: 17x the traffic for a 512^3 GEMM with k outside an 8x32 tile.)
    """
    if lines[0] <= capacity or not loops:
        return float(lines[0])
    d = max(i for i in range(len(loops)) if lines[i] > capacity)
    return float(lines[d]) * float(math.prod(l.extent for l in loops[:d]))


def _overlapped_chains(chain: float, uops_per_step: float, spec: CPUSpec) -> float:
    """How many independent accumulator chains of ``chain`` steps (``uops_per_step`` each) the
    out-of-order window holds at once (at least 1)."""
    window = OOO_WINDOW_SHARE * spec.reorder_buffer_uops
    return max(1.0, window / max(1.0, chain * uops_per_step))


def estimate_nest(nest: LeafNest, spec: CPUSpec, *, program_bytes: float = math.inf) -> NestEstimate:
    """The latency of one leaf nest. ``program_bytes``: every buffer of the program together; a
    cache level that holds them all draws nothing from the level below it, as in the repeated
    runs of a measurement (a batch-1 dense layer's 9 MB weight stays in a 64 MB L3 between runs)."""
    loops, accesses, reduction = nest.loops, nest.accesses, nest.reduction_loops
    n = len(loops)
    iters = float(math.prod(l.extent for l in loops))
    writes = [a for a in accesses if a.is_write]
    dbytes = writes[0].dtype_bytes if writes else 4
    reg_lanes = spec.lanes(dbytes)
    unit_lanes = max(1, spec.simd_bits_per_fma_unit // (8 * dbytes))

    # SIMD
    inner_strides = [abs(a.elem_stride(n - 1)) for a in accesses] if n else [0] * len(accesses)
    v = loops[-1].extent if n and loops[-1].kind == "vectorized" else 1
    if (v == 1 and n and loops[-1].kind in ("serial", "unrolled") and not any(reduction)
            and loops[-1].extent >= LLVM_AUTO_VECTORIZE_MIN_ITERS and max(inner_strides, default=0) <= 1):
        v = min(loops[-1].extent, reg_lanes)  # LLVM's loop vectorizer takes a contiguous element-wise loop
    vec_regs = math.ceil(v / reg_lanes)
    lanes = v / vec_regs
    gathered = [s > 1 and v > 1 for s in inner_strides]
    contiguous = not any(gathered)
    guard_inner = bool(n and nest.guarded and nest.guarded[-1])
    unit_ops = math.ceil(lanes / unit_lanes)
    # memory uops per vector of each access (a gathered one: one per lane) and the inserts/extracts
    # of the gathered ones (see GATHER_CYCLES_PER_LANE)
    access_uops = [lanes if g else float(unit_ops) for g in gathered]
    gather_cycles = sum(gathered) * lanes * GATHER_CYCLES_PER_LANE
    fma_per_elem = max(1.0, nest.float_ops / 2.0)
    guard_slots = nest.guard_compares * (GUARD_FMA_SLOTS_PER_COMPARE if v > 1 else 1.0) if guard_inner else 0.0
    fma_per_elem += guard_slots

    # parallelism
    par_idx = [j for j, l in enumerate(loops) if l.kind == "parallel"]
    par = float(math.prod(loops[j].extent for j in par_idx))
    cores = min(spec.cores, par)
    eff_cores = par / math.ceil(par / spec.cores) if par > 1 else 1.0
    launches = float(math.prod(loops[j].extent for j in range(par_idx[0]))) if par_idx else 0.0

    # compute (micro-kernel)
    read_uops = sum(u for a, u in zip(accesses, access_uops) if not a.is_write)
    write_uops = sum(u for a, u in zip(accesses, access_uops) if a.is_write)
    red_idx = [j for j in range(n) if reduction[j]]
    chains = resident = None
    if red_idx and nest.float_ops > 0:
        r = red_idx[-1]
        inner = list(range(r + 1, n))
        inner_iters = float(math.prod(loops[j].extent for j in inner))
        chains = inner_iters / v * vec_regs  # independent vector accumulators
        unroll_limit = max(loops[r].auto_unroll, LLVM_FULL_UNROLL_ITERS)
        resident = bool(inner) and inner_iters / v <= unroll_limit and chains + 2 <= spec.vector_registers
        steps = iters / inner_iters
        # one accumulator is carried through the reduction loops around the micro-kernel: a chain of
        # `chain` dependent steps; the out-of-order window overlaps as many such chains (of other
        # outputs) as fit in it, so a short reduction (a 3x3 window) is not latency bound
        chain = 1.0
        for j in range(r, -1, -1):
            if not reduction[j]:
                break
            chain *= loops[j].extent
        if resident:
            written = {a.buffer for a in writes}
            load_uops = inserts = 0.0
            for a, u, g in zip(accesses, access_uops, gathered):
                if a.is_write or a.buffer in written:
                    continue
                cnt = 1.0
                for j in inner:
                    if a.spans[:, j].any():
                        cnt *= loops[j].extent if not (j == n - 1 and v > 1) else vec_regs
                load_uops += cnt * u
                inserts += cnt * lanes * GATHER_CYCLES_PER_LANE if g else 0.0
            uops = load_uops + inserts + chains * unit_ops * fma_per_elem
            per_step = max(load_uops / spec.load_ports, inserts, chains * unit_ops * fma_per_elem / spec.fma_units,
                           spec.fma_latency_cycles / _overlapped_chains(chain, uops, spec))
            cycles = steps * per_step
        else:
            per_vec = max(read_uops / spec.load_ports, write_uops, gather_cycles,
                          unit_ops * fma_per_elem / spec.fma_units)
            if not inner:  # the reduction is the innermost loop: one dependent chain through memory
                uops = read_uops + write_uops + gather_cycles + unit_ops * fma_per_elem
                per_vec = max(per_vec, (spec.fma_latency_cycles + STORE_FORWARD_CYCLES)
                              / _overlapped_chains(chain, uops, spec))
            cycles = iters / lanes * per_vec
    else:
        per_vec = max(read_uops / spec.load_ports, write_uops, gather_cycles,
                      unit_ops * (max(1.0, float(nest.float_ops)) + guard_slots) / spec.fma_units)
        cycles = iters / lanes * per_vec
    hz = spec.frequency_ghz * 1e9
    t_compute = cycles / hz / eff_cores

    # memory hierarchy
    line = spec.cache_line_bytes
    l3_per_core = spec.l3_bytes / max(1.0, cores)
    levels = (  # name, capacity for this nest's cores, whole capacity, bandwidth from the level below
        ("l1", spec.l1d_bytes, spec.l1d_bytes, spec.l2_bytes_per_cycle * hz * eff_cores),
        ("l2", spec.l2_bytes, spec.l2_bytes, spec.l3_bandwidth(eff_cores)),
        ("l3", l3_per_core, spec.l3_bytes, spec.dram_bandwidth(eff_cores)),
    )
    t_mem = {}
    traffic = {}
    per_access = [a.line_footprints(line) for a in accesses]
    for name, capacity, whole, bandwidth in levels:
        usable = capacity * CACHE_USABLE_FRACTION
        if program_bytes <= whole * CACHE_USABLE_FRACTION:
            traffic[name], t_mem[name] = 0.0, 0.0  # warm: the whole program stays in this level
            continue
        # an access whose data another block produces (or consumes) under shared loops, in a tile that
        # fits this level, passes between the two blocks through it: no traffic from the level below
        kept = [fp for a, fp in zip(accesses, per_access) if not (a.shared_loops and fp[a.shared_loops] <= usable)]
        lines = sum(kept) if kept else np.zeros(n + 1)
        traffic[name] = _traffic(lines, loops, usable) if kept else 0.0
        t_mem[name] = traffic[name] / bandwidth
    # address translation: a nest that sweeps more pages than the second-level TLB holds between
    # reuses takes a page walk per page (a batch-1 dense layer whose reduction loop is outside a sweep
    # over all 9 MB of weights: 5-19x slower than the same program with the rows swept inside)
    reach = spec.stlb_entries * spec.page_bytes * CACHE_USABLE_FRACTION
    if program_bytes <= reach:
        walks = 0.0
    else:
        pages = sum(a.page_footprints(spec.page_bytes, line) for a in accesses)
        walks = _traffic(pages, loops, reach) / spec.page_bytes
    t_tlb = walks * spec.page_walk_cycles / hz / eff_cores
    t_launch = launches * spec.parallel_launch_us * 1e-6
    terms = [("compute", t_compute)] + list(t_mem.items()) + [("tlb", t_tlb)]
    bound, t_bound = max(terms, key=lambda kv: kv[1])
    symbols = {
        "iterations": iters,
        "flops": iters * nest.float_ops,
        "parallel_extent": par,
        "effective_cores": eff_cores,
        "vector_lanes": lanes,
        "contiguous_vector": contiguous,
        "gathered_accesses": int(sum(gathered)),
        "guard_fma_slots": guard_slots,
        "accumulator_chains": chains,
        "register_resident": resident,
        "bytes_from_l2": traffic["l1"],
        "bytes_from_l3": traffic["l2"],
        "bytes_from_dram": traffic["l3"],
        "compute_s": t_compute,
        **{f"{k}_miss_s": t for k, t in t_mem.items()},
        "page_walks": walks,
        "tlb_s": t_tlb,
        "launch_s": t_launch,
        "bound": bound,
    }
    return NestEstimate(nest.name, t_bound + t_launch, symbols)

"""Latency model of a loop nest on a CPU: a roofline over compute and every cache level.

Per leaf block the model derives the symbols a performance engineer would look at:

* parallelism: product of the ``parallel`` loops against the core count (with load imbalance);
* SIMD: the innermost ``vectorized`` loop against the register width, and whether its accesses are
  contiguous (otherwise a gather: one load and one lane insert per lane);
* register blocking: for reductions, the independent accumulators inside the innermost reduction loop
  that stays a loop (the "micro-kernel"); they hide FMA latency only if they fit the register file and
  are unrolled, or if the reduction is short enough that the out-of-order window overlaps other
  outputs' chains; a reduction unrolled innermost keeps its accumulator in a register, and LLVM's loop
  vectorizer takes the spatial loop around it;
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
# Share of the first-level DTLB one nest's pages get before they miss: three quarters, between the
# hoisted-gather pair of tests/test_analyzer.py (a 128-batch dense layer sweeping ~40 pages per step
# of its parallel loop runs with no DTLB misses on 64-72 entries; 0.5 priced it as missing) and the
# records it was fitted on (Spearman against measurement, scripts/analyzer_on_records.py: the suite
# GEMV's default records on Zen 3 +0.46 at 0.5, +0.35 at 0.75, +0.27 at 1.0, +0.10 with no DTLB
# term; PrunerSearch's records +0.43 to +0.47 for all). Not a per-machine figure. Against it, on Intel
# (docs/results/suite_cpu_issue10_s11): PrunerSearch's gemm-256x1024x256 records +0.63 with no DTLB
# term, +0.25-0.37 at any fraction (the GEMV's default records +0.10 -> +0.28): open.
DTLB_USABLE_FRACTION = 0.75
# A condition in the body that changes along the innermost loop (inlined zero padding: an
# ``if_then_else`` around a load) is evaluated every iteration, and a vectorized loop with such a
# guard does not run as plain SIMD (TVM's vectorizer scalarizes a lane-varying ``if_then_else``;
# LLVM re-vectorizes it with compares, masks and blends at best). Each comparison costs about four
# FMA slots: measured on the suite's depthwise conv2d, programs with the padding inlined under the
# vectorized loop ran 2.6-8x slower than with a padding block, and with one FMA slot per comparison the
# analyzer still ranked them first (its top 8 of 128 measured programs were 2.6x the best; with four,
# its top 8 held the best; conv2d 3x3 Spearman 0.63 -> 0.74: ``scripts/analyzer_report.py --rescore``).
# On hand-made 3x3 conv2d schedules the inlined padding is 3.3-4.9x slower (tests/test_analyzer.py).
# In a scalar loop a comparison is one integer operation and a select: one slot. The four slots are
# per vector register, not per FMA-unit op: a compare gives one mask for the whole register, so where
# a register is two FMA-unit ops wide (AVX-512 on Zen 4's 256-bit units) each op carries two slots;
# charged per op, the stride-2 depthwise conv2d's fastest programs (28 columns, 16 + 8 + 4 lanes; with
# the stride-2 loads priced as LLVM interleaves them, LLVM_INTERLEAVE_MAX_STRIDE) ranked behind
# 8-column ones that measure 1.7-3x slower (docs/results/guarded_loops_s28).
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
# ... unless the gathered lanes do not change in a loop that stays a loop: LLVM's LICM then hoists
# the lane loads and inserts out of it, and inside it each use is a vector register or, past the
# register file, a reload from the stack (one vector load). LICM hoists about 400 gathered lanes out
# of one loop, whatever the vector width and the register count; the lanes beyond stay inside it and
# gather in every iteration. Compiled with TVM 0.27's LLVM (a 128-batch dense layer, 768 x 768
# weights gathered along 16 or 32 lanes, 2-32 reduction steps unrolled inside a 16-iteration loop
# over batch rows, tests/test_analyzer.py), for AVX2 (`znver3`, 16 ymm) and AVX-512 (`znver4`, 32
# zmm) alike: up to 384 lanes all hoisted (8-48 vector registers' worth), 512 lanes 78 % hoisted,
# 768 lanes 52 %, 1024 lanes 39 % (about 400 each time). The former rule, hoisted vectors limited to
# the free registers, priced the fastest program of the suite's dense-128x768x768 (256 lanes hoisted,
# 32 ymm: spilled, reloaded; 1.95 ms) as gathering in 91 % of its iterations, rank 301 of the 768
# programs the twelfth session measured. Measured on Intel (`rocketlake`): 12 gathers of 32 lanes
# hoisted (1.45 ms), 24 (768 lanes) 13.3 ms, 16 (512 lanes) a fifth of the lanes inside.
# Unrolled copies count one gather each: LLVM merged the copies' identical gathers in some programs
# (16-32 lanes, few copies) and not in others (48-64 lanes, or hundreds of copies: 9-40 ms), and
# counting the merge ranked the dense layers' slow programs first (:func:`_gather_share`).
HOIST_MAX_LANES = 400

# A core's hardware prefetchers follow a limited number of sequential streams (``prefetch_streams``
# of the CPU's family file). A nest that reads more contiguous runs side by side than that -- e.g. a
# batch-1 dense layer whose outer reduction loop steps 192 weight rows along together -- has more of
# its lines fetched on demand, at a fraction of the bandwidth. Its traffic from beyond the last cache
# level is charged ``sqrt(runs / prefetch_streams)`` times, at most PREFETCH_MAX_PENALTY times. On
# AMD Zen 3 (thirty-first session, docs/results/prefetch_streams_s31): 768 GEMV programs of a tuning
# benchmark are 0.56-0.67 ms (median) with 8-48 weight rows read side by side and 1.1-1.4 ms with
# more (where the analyzer had most of both at 0.549 ms: the same 9.4 MB of traffic); hand-made
# pairs that differ in nothing else measure 1.0-1.7x (48 rows against 16, noisy) to 1.3-1.6x (192),
# hence the square root (it ranked those programs as well as a linear price did before the L1
# window was added: Spearman 0.63 against 0.64).
PREFETCH_MAX_PENALTY = 2.0


# A vectorized loop wider than one register whose lane count is not a power of two (12, 24 or 48 fp32
# lanes on AVX2, 20-56 on AVX-512; even multiples of the register width) is split by LLVM's type
# legalization with lane inserts and shuffles, and in a reduction nest its accumulators spill to the
# stack: a register-tiled GEMM measured 3-17x the analyzer's estimate with such widths against
# 1.6-2.5x with 8, 16 or 32 lanes, whose compiled loops have no inserts and no stack traffic
# (AMD Zen 3, docs/results/suite_cpu_issue10_s13/vector_width_probe.py; the same code shapes compiled
# for AVX-512). Such a nest's vector accesses are priced lane by lane, as gathers. Narrower than one
# register (5-7 lanes on AVX2, 6-14 on AVX-512) LLVM shuffles but does not spill (see below). On the
# recorded programs (scripts/analyzer_on_records.py --pool, thirteenth session): the 1x1 conv2d's
# Spearman +0.59 -> +0.64, the Zen 4 dataset's 28x28 conv2d top 8 / best 1.30 -> 1.00 (Spearman +0.63
# -> +0.61), the stride-1 depthwise conv +0.70 -> +0.68, the rest unchanged. Element-wise nests (a
# padding copy of 58 lanes) are left out: priced so, the depthwise conv's top 8 lost its best (2.64).
# Narrower than one register (5-7 lanes on AVX2, 6-14 on AVX-512) LLVM does not spill, but it loads
# the vector in power-of-two pieces and joins them with lane inserts: 14 lanes are an 8-, a 4- and a
# 2-lane load and two inserts (`vinsertf32x4`, `vinsertf64x4`; compiled for `znver4`,
# tests/test_analyzer.py). In a register-resident micro-kernel that is priced
# (:func:`_narrow_vector_pieces`), and a read the vectorized loop does not move (a weight broadcast to
# every lane) as the one scalar load it is (`vbroadcastss`, or folded into the FMA as `{1to16}`)
# instead of a vector load per FMA unit (two for 16 lanes on 256-bit units); elsewhere neither. Each
# insert takes an FMA slot (:data:`INSERT_FMA_SLOTS`): the records rank best so, as if the shuffle
# pipe were an FMA pipe (Intel's server AVX-512 cores have their second FMA unit on the shuffle port
# 5); on their own port the inserts ranked worse. A fitted figure, from AMD Zen 4: on Intel client
# programs (`rocketlake`, whose port 5 has no FMA; 96-128 programs per workload measured in the third
# session) it is mixed, the 28x28 conv2d's top 8 / best 1.15 -> 1.06 and the 1x1 conv2d's 1.00 -> 1.35
# on another seed, where inserts on their own port change nothing
# (docs/results/insert_pricing_s26/intel_rescore). Measured on Zen 4 (twenty-fifth session,
# docs/results/redraft_share_s25): the suite's conv2d 1x128x28x28 micro-kernel of 8 output channels x
# 2 rows x 14 columns (4 inserts per 16 FMAs) ran 2.57 ms against 2.30 ms for 16 channels x 1 row (2
# per 16), which the analyzer had ranked the other way (1.67 vs 1.74 ms), and PrunerSearch stayed in
# that basin. On 4,224 recorded programs of that conv2d, Spearman +0.42 -> +0.82 and the analyzer's
# top 8 / best 1.12 -> 1.00 (inserts on a port of their own: +0.69, 1.12; the pieces without the
# broadcast price: +0.81, 1.00). The broadcast price, on records of the same machine kind: the bmm's,
# the stride-2 conv2d's and the dense-128x768x3072 and -768 layers' top 8 / best 1.15, 1.78, 1.21,
# 1.25 -> 1.00-1.02 and Spearman up 0.04-0.10 (the pieces alone change none of them); the GEMM's
# Spearman -0.02 (docs/results/insert_pricing_s26).
INSERT_FMA_SLOTS = 1.0


# TVM's vectorizer does not vectorize a loop whose body holds an ``if_then_else`` whose condition
# changes along it (inlined zero padding): it leaves the loop scalar, and LLVM's loop vectorizer
# vectorizes it again at a power-of-two width of its choice (no legalization split of the lanes TVM
# would have used), the guarded loads as masked loads and an access with a small constant stride as
# an interleave group: ``stride`` contiguous vectors loaded and their lanes picked out with shuffles
# (`vpermt2ps`, `vshufps`), not one load and insert per lane as TVM's own strided vector loads are.
# Compiled for `znver4` (the suite's stride-2 depthwise conv2d, 28 output columns under a guarded
# vector loop, 3x3 window unrolled: masked loads and 1.5 shuffles per FMA in the hot loop), the
# fastest of its 768 recorded programs (0.208 ms, priced 0.538 ms as 28 lanes gathered one by one).
# Only stride 2 is seen; wider interleave groups are left priced as gathers.
LLVM_INTERLEAVE_MAX_STRIDE = 2


def _split_by_legalization(v: int, reg_lanes: int) -> bool:
    """Whether LLVM splits a ``v``-lane vector lane by lane: wider than a register, not a power of two."""
    return v > reg_lanes and v & (v - 1) != 0


def _narrow_vector_pieces(v: int, reg_lanes: int) -> int:
    """The power-of-two loads LLVM builds a contiguous ``v``-lane vector from (8 + 4 + 2 for 14 lanes):
    1 for a power of two or a vector of one register or more."""
    return bin(v).count("1") if 1 < v < reg_lanes else 1


def _unrolled_loops(loops) -> list[bool]:
    """Which loops are fully unrolled in the compiled code: those TVM's ``UnrollLoop`` pass unrolls
    (kind ``unrolled``, or a serial loop whose steps, its extent times those of the unrolled loops
    inside it, stay within the ``pragma_auto_unroll_max_step`` in force; a vectorized loop is one
    step) and the short loops LLVM unrolls itself (:data:`LLVM_FULL_UNROLL_ITERS`). Outside a loop
    that stays a loop, nothing is auto-unrolled."""
    out = [False] * len(loops)
    steps, inner_rolled = 1, False
    for j in range(len(loops) - 1, -1, -1):
        loop = loops[j]
        if loop.kind == "vectorized" and j == len(loops) - 1:
            continue
        if loop.kind == "unrolled" or (loop.kind == "serial" and not inner_rolled
                                       and steps * loop.extent <= max(loop.auto_unroll, LLVM_FULL_UNROLL_ITERS)):
            out[j] = True
            steps *= loop.extent
        else:
            inner_rolled = True
    return out


def _accumulator_loop(loops, reduction, unrolled: list[bool], v: int) -> int:
    """The reduction loop whose steps the micro-kernel's accumulators are carried through: the
    innermost reduction loop, or, where it is unrolled together with every loop inside it, the
    innermost reduction loop that stays a loop. LLVM then gives every output of the unrolled body its
    own register across that loop: a batch-1 dense layer with 8 rows x 6 reduction steps unrolled inside
    a rolled 128-step loop compiles to 4 two-lane accumulators that never leave their registers
    (0.38 ms measured on Intel `rocketlake`, priced at 0.34 ms; as one chain through memory per row:
    0.86 ms). An unrolled body with more outputs than registers spills: GEMMs whose unrolled body holds
    16 x 4 x 2 x 32 lanes (256 accumulators) measured 2.8-3.4x the workload's best and were priced as
    16 resident accumulators of the innermost reduction, at its best's estimate."""
    n = len(loops)
    red_idx = [j for j in range(n) if reduction[j]]
    r = red_idx[-1]
    if v > 1 and r == n - 1:  # a vectorized reduction: its lanes are the accumulators
        return r

    def stays_loop(j: int) -> bool:
        return not unrolled[j] and not (j == n - 1 and v > 1)

    if not stays_loop(r):
        rolled = [j for j in red_idx if stays_loop(j)]
        if rolled and not any(stays_loop(j) for j in range(rolled[-1] + 1, n)):
            return rolled[-1]
    return r


def _unrolled_reduction_run(loops, reduction, unrolled: list[bool]) -> tuple[int, float]:
    """The innermost reduction loops that are unrolled, counted from the innermost loop out: the index
    of the outermost of them (``len(loops)`` if none) and their steps."""
    steps, j = 1.0, len(loops) - 1
    while j >= 0 and reduction[j] and unrolled[j]:
        steps *= loops[j].extent
        j -= 1
    return j + 1, steps


def _llvm_loop_vector_lanes(loops, j: int, accesses, reg_lanes: int) -> float:
    """Elements per iteration of LLVM's loop vectorizer on the serial spatial loop ``j`` once the
    unrolled reduction inside it is flattened and ``j`` is the innermost loop: at least
    :data:`LLVM_AUTO_VECTORIZE_MIN_ITERS` iterations, writes contiguous and reads contiguous or
    invariant along it; a power-of-two width up to the register's, the remainder run as a scalar
    epilogue. 1 where it does not apply (a read gathered along ``j``: left scalar here).

    A GEMM with ``j`` (128) around 32 reduction steps that TVM's unroll pragma unrolls compiles to
    8-lane FMAs on Intel `rocketlake` (LLVM's preferred 256-bit width there), one accumulator chained
    through the 32 steps: 2.8 ms measured, priced at 2.6 ms (as scalar chains through memory: 103 ms).
    A stride-1 depthwise conv2d whose 14-wide rows (8 lanes + a 6-element epilogue) run around its
    unrolled 3x3 window: 0.67 ms measured, priced at 0.54 ms (0.25 ms without the epilogue, 2.3 ms as
    chains through memory). docs/results/suite_cpu_issue10_s20."""
    loop = loops[j]
    if loop.kind != "serial" or loop.extent < LLVM_AUTO_VECTORIZE_MIN_ITERS:
        return 1.0
    for a in accesses:
        stride = abs(a.elem_stride(j))
        if stride > 1 or (a.is_write and stride != 1):
            return 1.0
    vf = min(1 << (loop.extent.bit_length() - 1), reg_lanes)
    return loop.extent / (loop.extent // vf + loop.extent % vf)


def _gather_share(access, loops, unrolled: list[bool], last: int, *, lanes: int) -> float:
    """The share of the iterations of loops ``0..last`` in which a gathered access (``lanes`` lanes)
    really gathers. Going outwards from loop ``last``, a loop that stays a loop and does not move the
    access has the gather hoisted out of it, as far as :data:`HOIST_MAX_LANES` reaches (the rest are
    gathered in every iteration); hoisting ends at the first loop that stays a loop and moves the
    access, one that keeps part of the gathers, or a parallel loop (each task gathers for itself).
    Each unrolled copy gathers."""
    outer_iters = float(math.prod(l.extent for l in loops[:last + 1]))
    if outer_iters <= 1:
        return 1.0
    gathers, hoisting = 1.0, True
    for j in range(last, -1, -1):
        rolled = not unrolled[j] and loops[j].kind != "parallel"
        if rolled and hoisting and not access.spans[:, j].any():
            # the lanes LICM hoists are gathered once for all of this loop's iterations, the rest in each
            fit = min(1.0, HOIST_MAX_LANES / (gathers * lanes))
            gathers *= fit + (1.0 - fit) * loops[j].extent
            hoisting = fit >= 1.0
        else:
            gathers *= loops[j].extent
            hoisting = hoisting and unrolled[j]
    return gathers / outer_iters


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


def _page_footprints(accesses, spec: CPUSpec) -> np.ndarray:
    """Page bytes the nest's accesses touch under each loop (see :func:`_traffic`), a buffer read and
    written (an accumulator) counted once: its read and its write touch the same pages."""
    per_buffer: dict[str, np.ndarray] = {}
    for a in accesses:
        fp = a.page_footprints(spec.page_bytes, spec.cache_line_bytes)
        per_buffer[a.buffer] = np.maximum(per_buffer[a.buffer], fp) if a.buffer in per_buffer else fp
    return sum(per_buffer.values())


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
    guard_inner = bool(n and nest.guarded and nest.guarded[-1])
    # a guarded vector loop is vectorized by LLVM, not TVM (see LLVM_INTERLEAVE_MAX_STRIDE)
    revectorized = v > 1 and guard_inner
    lane_wise = bool(any(reduction)) and _split_by_legalization(v, reg_lanes) and not revectorized
    interleaved = [revectorized and 1 < s <= LLVM_INTERLEAVE_MAX_STRIDE for s in inner_strides]
    gathered = [v > 1 and not il and (s > 1 or (lane_wise and s > 0)) for s, il in zip(inner_strides, interleaved)]
    contiguous = not any(gathered)
    unit_ops = math.ceil(lanes / unit_lanes)
    # memory uops per vector of each access (a gathered one: one per lane where it really gathers,
    # a register or a vector reload where the gather was hoisted) and the inserts/extracts of the
    # gathered ones (see GATHER_CYCLES_PER_LANE)
    unrolled = _unrolled_loops(loops) if any(gathered) else []
    rules = {"lanes": v}
    # per vector iteration: the loops around the vectorized one
    share = [_gather_share(a, loops, unrolled, n - 2, **rules) if g else 0.0 for a, g in zip(accesses, gathered)]

    def vector_uops(gather_share: float) -> float:
        """Memory uops per vector of an access that really gathers in ``gather_share`` of its uses."""
        return lanes * gather_share + unit_ops * (1.0 - gather_share)

    # an interleaved access: ``stride`` whole vectors loaded per vector used, and a shuffle per vector
    # loaded to pick its lanes out (an FMA slot each, as the inserts of INSERT_FMA_SLOTS)
    strides_loaded = [s if il else 1 for s, il in zip(inner_strides, interleaved)]
    access_uops = [vector_uops(sh) * k for sh, k in zip(share, strides_loaded)]
    gather_cycles = sum(share) * lanes * GATHER_CYCLES_PER_LANE
    fma_per_elem = max(1.0, nest.float_ops / 2.0)
    # per FMA-unit op: a comparison and its blend take a whole vector register at once (one mask), so
    # a register twice as wide as the FMA units (AVX-512 on Zen 4) pays it once for two unit ops
    guard_slots = (nest.guard_compares * (GUARD_FMA_SLOTS_PER_COMPARE if v > 1 else 1.0) / unit_ops
                   if guard_inner else 0.0)
    fma_per_elem += guard_slots
    # FMA-unit slots per element with the interleave shuffles, where they go with each vector used
    # (the register-blocked path counts them with its loads instead)
    slots_per_elem = fma_per_elem + sum(k for k, il in zip(strides_loaded, interleaved) if il) * INSERT_FMA_SLOTS

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
        unrolled = unrolled or _unrolled_loops(loops)
        r = _accumulator_loop(loops, reduction, unrolled, v)
        inner = list(range(r + 1, n))
        inner_iters = float(math.prod(loops[j].extent for j in inner))
        inner_steps = float(math.prod(loops[j].extent for j in inner if reduction[j]))  # unrolled steps
        chains = inner_iters / inner_steps / v * vec_regs  # independent vector accumulators
        # the accumulators stay in registers where every loop inside the reduction is unrolled (the
        # same rule as for gathers: an explicitly unrolled 24-row tile is, whatever its length) and
        # they fit: AVX-512 holds 24-30 accumulators of 24-30 unrolled rows without a spill, 32 spill
        # (compiled code, docs/results/suite_cpu_issue10_s14/register_spill_probe.md)
        resident = (bool(inner) and all(unrolled[j] for j in inner if not (j == n - 1 and v > 1))
                    and chains + 2 <= spec.vector_registers)
        steps = iters / inner_iters
        # one accumulator is carried through the reduction loops around the micro-kernel: a chain of
        # `chain` dependent steps; the out-of-order window overlaps as many such chains (of other
        # outputs) as fit in it, so a short reduction (a 3x3 window) is not latency bound
        chain = inner_steps
        for j in range(r, -1, -1):
            if not reduction[j]:
                break
            chain *= loops[j].extent
        if resident:
            written = {a.buffer for a in writes}
            pieces = _narrow_vector_pieces(v, reg_lanes)
            load_uops = inserts = fma_slots = 0.0
            for a, g, k in zip(accesses, gathered, strides_loaded):
                if a.is_write or a.buffer in written:
                    continue
                cnt = 1.0  # vectors of this access per step (its reuse inside the micro-kernel)
                for j in inner:
                    if a.spans[:, j].any():
                        cnt *= loops[j].extent if not (j == n - 1 and v > 1) else vec_regs
                if g:
                    sh = _gather_share(a, loops, unrolled, r, **rules)  # per step: the loops around it
                    load_uops += cnt * vector_uops(sh)
                    inserts += cnt * lanes * GATHER_CYCLES_PER_LANE * sh
                elif v > 1 and not a.spans[:, n - 1].any():
                    load_uops += cnt  # a broadcast: one scalar load (folded into the FMA on AVX-512)
                elif k > 1:  # interleaved: k vectors loaded, a shuffle each
                    load_uops += cnt * unit_ops * k
                    fma_slots += cnt * unit_ops * k * INSERT_FMA_SLOTS
                elif pieces > 1:
                    load_uops += cnt * pieces
                    fma_slots += cnt * (pieces - 1) * INSERT_FMA_SLOTS
                else:
                    load_uops += cnt * unit_ops
            fmas = chains * inner_steps * unit_ops * fma_per_elem
            uops = load_uops + inserts + fmas + fma_slots
            per_step = max(load_uops / spec.load_ports, inserts, (fmas + fma_slots) / spec.fma_units,
                           inner_steps * spec.fma_latency_cycles / _overlapped_chains(chain, uops / inner_steps, spec))
            cycles = steps * per_step
        else:
            per_vec = max(read_uops / spec.load_ports, write_uops, gather_cycles,
                          unit_ops * slots_per_elem / spec.fma_units)
            cycle_lanes = lanes
            first, unrolled_steps = _unrolled_reduction_run(loops, reduction, unrolled) if not inner else (n, 1.0)
            if not inner and (unrolled_steps == 1.0 or v > 1):
                # the reduction is the innermost loop: one dependent chain through memory
                uops = read_uops + write_uops + gather_cycles + unit_ops * slots_per_elem
                per_vec = max(per_vec, (spec.fma_latency_cycles + STORE_FORWARD_CYCLES)
                              / _overlapped_chains(chain, uops, spec))
            elif not inner:
                # ... unrolled (TVM's pragma or LLVM's own): the accumulator stays in a register through
                # the unrolled steps, loaded and stored once, and LLVM's loop vectorizer takes the
                # spatial loop around them where it can, each lane an output (see
                # :func:`_llvm_loop_vector_lanes`)
                around = first - 1
                cycle_lanes = (_llvm_loop_vector_lanes(loops, around, accesses, reg_lanes)
                               if around >= 0 and not reduction[around] and not unrolled[around] else 1.0)
                vec_ops = math.ceil(cycle_lanes / unit_lanes)
                written = {a.buffer for a in writes}
                loads = sum(1.0 / unrolled_steps if a.buffer in written else 1.0 for a in accesses if not a.is_write)
                stores = 1.0 / unrolled_steps
                uops = loads + stores + vec_ops * slots_per_elem
                per_vec = max(loads / spec.load_ports, stores, vec_ops * slots_per_elem / spec.fma_units,
                              (spec.fma_latency_cycles + STORE_FORWARD_CYCLES / unrolled_steps)
                              / _overlapped_chains(chain, uops, spec))
            cycles = iters / cycle_lanes * per_vec
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
    # streams beyond what the prefetchers follow (see PREFETCH_MAX_PENALTY): reads only, the runs of
    # each read that its outer loop continues side by side
    runs = sum(a.concurrent_runs(loops, fp, window_bytes=spec.l1d_bytes)
               for a, fp in zip(accesses, per_access) if not a.is_write)
    prefetch_penalty = min(PREFETCH_MAX_PENALTY, math.sqrt(max(1.0, runs / spec.prefetch_streams)))
    if t_mem.get("l3"):
        t_mem["l3"] *= prefetch_penalty
    # address translation: a nest that sweeps more pages than the second-level TLB holds between
    # reuses takes a page walk per page (a batch-1 dense layer whose reduction loop is outside a sweep
    # over all 9 MB of weights: 5-19x slower than the same program with the rows swept inside)
    # ... and one that sweeps more pages than the first-level DTLB holds between reuses looks each
    # page up in the second-level TLB again: a batch-1 dense layer with the reduction outside a sweep
    # over 192-512 weight rows (3 KB apart: 144-384 pages, within the STLB) measured 5-6 ms against
    # 0.5-0.7 ms with 16-96 rows swept inside the reduction (AMD Zen 3, tenth session; the analyzer
    # had both at 0.86 ms)
    stlb_reach = spec.stlb_entries * spec.page_bytes * CACHE_USABLE_FRACTION
    dtlb_reach = spec.dtlb_entries * spec.page_bytes * DTLB_USABLE_FRACTION
    walks = lookups = 0.0
    if program_bytes > min(stlb_reach, dtlb_reach):
        pages = _page_footprints(accesses, spec)
        if program_bytes > stlb_reach:
            walks = _traffic(pages, loops, stlb_reach) / spec.page_bytes
        lookups = max(0.0, _traffic(pages, loops, dtlb_reach) / spec.page_bytes - walks)
    t_tlb = (walks * spec.page_walk_cycles + lookups * spec.stlb_hit_cycles) / hz / eff_cores
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
        "gather_share": max(share, default=0.0),
        "guard_fma_slots": guard_slots,
        "accumulator_chains": chains,
        "register_resident": resident,
        "bytes_from_l2": traffic["l1"],
        "bytes_from_l3": traffic["l2"],
        "bytes_from_dram": traffic["l3"],
        "compute_s": t_compute,
        **{f"{k}_miss_s": t for k, t in t_mem.items()},
        "concurrent_runs": runs,
        "prefetch_penalty": prefetch_penalty,
        "page_walks": walks,
        "stlb_lookups": lookups,
        "tlb_s": t_tlb,
        "launch_s": t_launch,
        "bound": bound,
    }
    return NestEstimate(nest.name, t_bound + t_launch, symbols)

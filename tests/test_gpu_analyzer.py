"""The GPU analyzer on hand-made CUDA schedules and sampled tensor-core programs (no GPU needed).

Three quirks of the reference analyzer are fixed here, one test each: memory time is bytes over
bytes/s (not elements), the reduction loop around a shared-memory fetch multiplies its traffic, and
element-wise kernels pay for the memory they move.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from tvm import te
from tvm.s_tir import Schedule

from pruner_ms.analysis import SymbolicAnalyzer
from pruner_ms.analysis.gpu_model import mma_shape
from pruner_ms.bench.workloads import gemm


@pytest.fixture(scope="module")
def a100():
    from pruner_ms.hardware import load_gpu_spec

    return SymbolicAnalyzer(load_gpu_spec("a100-40gb-sxm"))


def elementwise_add(n: int, dtype: str, *, threads: int = 256) -> Schedule:
    A = te.placeholder((n,), dtype, name="A")
    B = te.placeholder((n,), dtype, name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    sch = Schedule(te.create_prim_func([A, B, C]))
    (i,) = sch.get_loops(sch.get_sblock("C"))
    bx, tx = sch.split(i, [None, threads])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return sch


def simt_gemm(m: int, n: int, k: int, *, bm: int = 64, bn: int = 64, bk: int = 16, tm: int = 4, tn: int = 4,
              func=None):
    """Shared-memory tiled GEMM on CUDA cores (fp32 unless ``func`` is given): a bm x bn block tile,
    tm x tn per thread, k tiles of bk."""
    sch = Schedule(func if func is not None else gemm(m, n, k).func)
    c = sch.get_sblock("C")
    cw = sch.cache_write(c, 0, "local")
    i, j, kk = sch.get_loops(c)
    i0, i1, i2 = sch.split(i, [None, bm // tm, tm])
    j0, j1, j2 = sch.split(j, [None, bn // tn, tn])
    k0, k1 = sch.split(kk, [None, bk])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.bind(sch.fuse(i0, j0), "blockIdx.x")
    tx = sch.fuse(i1, j1)
    sch.bind(tx, "threadIdx.x")
    sch.reverse_compute_at(cw, tx)
    threads = (bm // tm) * (bn // tn)
    for idx in (0, 1):
        s = sch.cache_read(c, idx, "shared")
        sch.compute_at(s, k0)
        fused = sch.fuse(*sch.get_loops(s)[-2:])
        _, t = sch.split(fused, [None, threads])
        sch.bind(t, "threadIdx.x")
    sch.decompose_reduction(c, k0)
    return sch


def test_memory_time_is_bytes_over_bandwidth(a100):
    # quirk 3 of the reference: element counts divided by bytes/s. Same elements, twice the bytes.
    n = 1 << 22
    e32 = a100.analyze(elementwise_add(n, "float32").mod).nests[0].symbols
    e16 = a100.analyze(elementwise_add(n, "float16").mod).nests[0].symbols
    assert e32["bytes_from_dram"] == pytest.approx(3 * n * 4)
    assert e16["bytes_from_dram"] == pytest.approx(3 * n * 2)
    assert e32["dram_s"] == pytest.approx(2 * e16["dram_s"])
    assert e32["dram_s"] == pytest.approx(3 * n * 4 / a100.spec.dram_bytes_per_s)


def test_elementwise_kernels_pay_for_memory(a100):
    # quirk 2 of the reference: element-wise ops with arithmetic got DRAM = 0 (compute-only rows)
    n = 1 << 22
    est = a100.analyze(elementwise_add(n, "float32").mod)
    k = est.nests[0].symbols
    assert k["bound"] == "dram"
    assert est.seconds >= 3 * n * 4 / a100.spec.dram_bytes_per_s
    assert k["cuda_core_flops"] == n


def test_reduction_loop_multiplies_shared_fetches(a100):
    # quirk 1 of the reference: the k loop around a cooperative fetch did not count, so one tile
    # per block was charged whatever K was. Doubling K must add exactly one more K's worth of tiles.
    m = n = 256
    bm = bn = 64
    bk = 16
    g256 = a100.analyze(simt_gemm(m, n, 256, bm=bm, bn=bn, bk=bk).mod).symbols["bytes_global"]
    g512 = a100.analyze(simt_gemm(m, n, 512, bm=bm, bn=bn, bk=bk).mod).symbols["bytes_global"]
    blocks = (m // bm) * (n // bn)
    tiles_for_256 = blocks * (256 // bk) * (bm * bk + bk * bn) * 4
    assert g512 - g256 == pytest.approx(tiles_for_256)


def test_simt_gemm_symbols(a100):
    k = a100.analyze(simt_gemm(256, 256, 256).mod).nests[0].symbols
    assert k["grid_blocks"] == 16 and k["threads_per_block"] == 256
    assert k["cuda_core_flops"] == pytest.approx(2 * 256 ** 3)
    assert k["smem_bytes_per_block"] == pytest.approx((64 * 16 + 16 * 64) * 4)  # the A and B tiles
    assert k["registers_per_thread"] == 32 + 16  # base + the 4x4 fp32 accumulator tile
    # A100 occupancy for 256 threads x 48 registers (1536 per warp -> 42 warps) and 8 KiB: 5 blocks
    assert k["blocks_per_sm"] == 5
    assert k["waves"] == 1 and k["wave_efficiency"] == pytest.approx(16 / 108)


def test_larger_block_tiles_lower_dram_traffic(a100):
    # 4096^3 fp32 (192 MiB) outgrows the L2, so tile re-reads reach DRAM; bigger tiles re-read less
    small = a100.analyze(simt_gemm(4096, 4096, 4096, bm=32, bn=32, tm=2, tn=2).mod).symbols
    large = a100.analyze(simt_gemm(4096, 4096, 4096, bm=128, bn=128, tm=8, tn=8).mod).symbols
    assert large["bytes_from_dram"] < small["bytes_from_dram"] / 2
    assert large["bytes_global"] < small["bytes_global"] / 2


def test_occupancy_and_parallelism_move_the_right_way(a100):
    small_blocks = a100.estimate_seconds(simt_gemm(1024, 1024, 1024, bm=16, bn=16, tm=4, tn=4).mod)
    big_blocks = a100.estimate_seconds(simt_gemm(1024, 1024, 1024, bm=64, bn=64, tm=4, tn=4).mod)
    assert big_blocks < small_blocks  # 16 threads per block leave the SMs starved of warps
    one_block = a100.analyze(elementwise_add(1 << 14, "float32", threads=1024).mod).nests[0].symbols
    assert one_block["wave_efficiency"] < 0.2  # 16 blocks on 108 SMs


def test_oversized_shared_tiles_are_invalid(a100):
    sch = simt_gemm(1024, 1024, 1024, bm=128, bn=128, bk=256, tm=8, tn=8)  # 256 KiB of fp32 tiles
    assert a100.estimate_seconds(sch.mod) == float("inf")


@pytest.fixture(scope="module")
def tensor_core_candidates():
    """Schedules sampled from MetaSchedule's cuda-tensorcore space, postprocs applied (tensorized)."""
    import tvm
    import tvm.s_tir.tensor_intrin
    from tvm.s_tir import meta_schedule as ms

    from pruner_ms.bench.workloads import gemm_fp16

    wl = gemm_fp16(256, 256, 256)
    target = tvm.target.Target("nvidia/nvidia-a100", host=tvm.target.Target({"kind": "llvm", "num-cores": 2}))
    ctx = ms.TuneContext(
        tvm.IRModule({"main": wl.func}), target=target,
        space_generator=ms.space_generator.PostOrderApply(
            sch_rules="cuda-tensorcore", postprocs="cuda-tensorcore", mutator_probs="cuda-tensorcore"),
        search_strategy=ms.search_strategy.EvolutionarySearch(population_size=16, init_min_unmeasured=8,
                                                              genetic_num_iters=1),
        num_threads=2, rand_state=3,
    )
    spaces = ctx.generate_design_space()
    ctx.pre_tuning(8, 8, spaces, ms.database.MemoryDatabase(), ms.cost_model.RandomModel())
    cands = ctx.generate_measure_candidates()
    assert cands, "no tensor-core candidate could be sampled"
    return wl, [c.sch for c in cands]


def test_tensor_core_flops_come_from_the_intrinsics(a100, tensor_core_candidates):
    wl, schedules = tensor_core_candidates
    for sch in schedules:
        est = a100.analyze(sch.mod)
        s = est.symbols
        assert s["tensor_core_flops"] == pytest.approx(wl.flops), sch.mod.script()
        assert s["cuda_core_flops"] == 0
        assert s["bytes_global"] >= 2 * 256 * 256 * 2 + 256 * 256 * 4  # A, B read and C written at least once
        kernel = est.nests[0].symbols
        if est.seconds < float("inf"):
            assert kernel["tensor_core_s"] > 0 and kernel["smem_bytes_per_block"] > 0
            assert 0 < kernel["wave_efficiency"] <= 1


def test_tensor_cores_beat_cuda_cores_on_the_same_gemm(a100, tensor_core_candidates):
    wl, schedules = tensor_core_candidates
    simt = a100.estimate_seconds(simt_gemm(256, 256, 256, func=wl.func).mod)
    best_tc = min(a100.estimate_seconds(s.mod) for s in schedules)
    assert best_tc < simt


def test_mma_shape_from_operand_tiles(tensor_core_candidates):
    from pruner_ms.analysis.gpu_model import is_tensor_core_nest
    from pruner_ms.analysis.loop_nest import extract_nests

    _, schedules = tensor_core_candidates
    nests = [n for n in extract_nests(schedules[0].mod["main"]) if is_tensor_core_nest(n)]
    assert nests and all(mma_shape(n) == (16, 16, 16) for n in nests)


def _lowered_shared_bytes(mod, target) -> int:
    """Shared memory the lowered program allocates (TVM's own pipeline, merged allocations)."""
    import tvm
    from tvm import tirx

    pipeline = tvm.tirx.get_tir_pipeline("s_tir")[0]
    with tvm.transform.PassContext(config={"tirx.merge_static_smem": True}):
        lowered = pipeline(tvm.tirx.transform.BindTarget(target)(mod))
    total, stack = 0, [f.body for _, f in lowered.functions.items() if isinstance(f, tirx.PrimFunc)]
    while stack:
        node = stack.pop()
        if isinstance(node, tirx.AllocBuffer) and node.buffer.scope().startswith("shared"):
            total += int(node.buffer.dtype.bits) // 8 * int(np.prod([int(x) for x in node.buffer.shape]))
        if isinstance(node, tirx.SeqStmt):
            stack += list(node.seq)
        for attr in ("body", "then_case", "else_case"):
            child = getattr(node, attr, None)
            if child is not None:
                stack.append(child)
    return total


def test_shared_memory_and_occupancy_match_the_lowered_program(a100, tensor_core_candidates):
    import tvm

    target = tvm.target.Target("nvidia/nvidia-a100", host={"kind": "llvm", "num-cores": 2})
    _, schedules = tensor_core_candidates
    close = 0
    for sch in schedules:
        k = a100.analyze(sch.mod).nests[0].symbols
        lowered = _lowered_shared_bytes(sch.mod, target)
        assert lowered > 0
        close += abs(k["smem_bytes_per_block"] - lowered) <= 0.15 * lowered
        if "blocks_per_sm" in k:  # occupancy follows from the same footprint and the block's threads
            regs = min(a100.spec.max_registers_per_thread, math.ceil(k["registers_per_thread"]))
            assert k["blocks_per_sm"] == a100.spec.blocks_per_sm(
                int(k["threads_per_block"]), math.ceil(k["smem_bytes_per_block"]), regs)
    assert close >= len(schedules) - 1  # padding/merging heuristics may miss one

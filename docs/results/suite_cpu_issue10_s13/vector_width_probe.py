#!/usr/bin/env python
"""A register-tiled GEMM (192 x 768 x 768, fp32, accumulating in a local tile) whose vectorized loop
has 8-48 lanes: measured on this CPU against the analyzer, with what the compiled innermost loop
holds (lane inserts and shuffles, stack accesses). Non-power-of-two widths are the open question.

    python docs/results/suite_cpu_issue10_s13/vector_width_probe.py
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


def schedule(rows: int, lanes: int, *, m=192, n=768, k=768, k_tile=64):
    from tvm.s_tir import Schedule

    from pruner_ms.bench.workloads import gemm

    wl = gemm(m, n, k)
    sch = Schedule(wl.func)
    block = sch.get_sblock("C")
    tile = sch.cache_write(block, 0, "global")
    i, j, kk = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, rows])
    j0, j1 = sch.split(j, [None, lanes])
    k0, k1 = sch.split(kk, [None, k_tile])
    sch.reorder(i0, j0, k0, k1, i1, j1)
    outer = sch.fuse(i0, j0)
    sch.parallel(outer)
    sch.reverse_compute_at(tile, outer)
    sch.unroll(i1)
    sch.vectorize(j1)
    sch.decompose_reduction(block, k0)
    return wl, sch


def innermost_fma_loop(asm: str) -> str:
    lines = asm[asm.index("main_compute_:"):].splitlines()
    labels = {line[:-1]: i for i, line in enumerate(lines) if re.fullmatch(r"\.LBB\d+_\d+:", line)}
    loops = []
    for i, line in enumerate(lines):
        jump = re.match(r"\s+j\w+\s+(\.LBB\d+_\d+)", line)
        if jump and labels.get(jump.group(1), i) < i and "vfmadd" in "\n".join(lines[labels[jump.group(1)]:i]):
            loops.append("\n".join(lines[labels[jump.group(1)]:i]))
    return min(loops, key=len)


def run_and_read(wl, sch, target):
    """Build ``sch`` for ``target``, check it against the workload's reference, and return its
    median time (seconds) and the assembly of its innermost FMA loop."""
    import numpy as np
    import tvm

    ex = tvm.compile(sch.mod, target=target)
    args = [tvm.runtime.tensor(a) for a in wl.make_inputs(np.random.default_rng(0))]
    out = tvm.runtime.empty(wl.output_shape, wl.output_dtype)
    sec = ex.mod.time_evaluator("main", tvm.cpu(), number=5, repeat=3, min_repeat_ms=30)(*args, out).median
    np.testing.assert_allclose(out.numpy(), wl.reference(*[a.numpy() for a in args]), rtol=1e-4, atol=1e-3)
    return sec, innermost_fma_loop(ex.mod.inspect_source("asm"))


def main():
    import tvm

    from pruner_ms.analysis import SymbolicAnalyzer
    from pruner_ms.hardware import host_cpu_spec

    spec = host_cpu_spec()
    analyzer, target = SymbolicAnalyzer(spec), tvm.target.Target(spec.target())
    print(f"{spec.name}, {spec.simd_bits}-bit vectors\n")
    print("| rows x lanes | measured ms | analyzer ms | measured / analyzer | FMAs | lane inserts, shuffles | stack accesses |")
    print("|---|---|---|---|---|---|---|")
    for rows, lanes in [(4, 8), (6, 8), (4, 16), (3, 16), (2, 32), (2, 12), (4, 12), (6, 12), (2, 24), (4, 24),
                        (1, 48), (2, 48)]:
        wl, sch = schedule(rows, lanes)
        est = analyzer.analyze(sch.mod).seconds
        sec, loop = run_and_read(wl, sch, target)
        fmas = len(re.findall(r"vfmadd", loop))
        lane_ops = len(re.findall(r"vinsertps|vinsert[fi](?:128|32x4|64x4)|vpermps|vshufps|vblendps|vextract", loop))
        stack = len(re.findall(r"\(%rsp\)", loop))
        print(f"| {rows} x {lanes} | {sec * 1e3:.2f} | {est * 1e3:.2f} | {sec / est:.2f} | {fmas} | {lane_ops} | {stack} |",
              flush=True)


if __name__ == "__main__":
    main()

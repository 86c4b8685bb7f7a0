#!/usr/bin/env python
"""How many vector accumulators a register-tiled GEMM micro-kernel holds before LLVM spills, for AVX2
(``znver3``, 16 ymm) and AVX-512 (``znver4``, 32 zmm), against the analyzer's residency rule
(accumulator chains + 2 <= vector registers). Compile only: no timing, any x86 machine.

    python docs/results/suite_cpu_issue10_s14/register_spill_probe.py > register_spill_probe.md
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "suite_cpu_issue10_s13"))

from vector_width_probe import innermost_fma_loop, schedule  # noqa: E402  (the same micro-kernel)

KERNELS = {  # rows x lanes (fp32): accumulators = rows * lanes / register lanes
    "znver3": [(4, 16), (5, 16), (6, 16), (7, 16), (8, 16), (10, 8), (12, 8), (13, 8), (14, 8), (15, 8), (16, 8),
               (3, 32), (4, 32), (2, 64)],
    "znver4": [(6, 32), (8, 32), (12, 16), (14, 16), (16, 16), (24, 16), (28, 16), (30, 16), (32, 16), (4, 64),
               (7, 64), (8, 64)],
}


def main():
    import tvm

    from pruner_ms.analysis import SymbolicAnalyzer
    from pruner_ms.hardware import load_cpu_spec

    for mcpu, kernels in KERNELS.items():
        spec = load_cpu_spec(mcpu)
        analyzer, target = SymbolicAnalyzer(spec), tvm.target.Target(spec.target())
        print(f"\n## {mcpu}: {spec.simd_bits}-bit vectors, {spec.vector_registers} registers\n")
        print("| rows x lanes | accumulators | FMAs in the innermost loop | stack accesses | analyzer: register resident | analyzer ms |")
        print("|---|---|---|---|---|---|")
        for rows, lanes in kernels:
            _, sch = schedule(rows, lanes)
            est = analyzer.analyze(sch.mod)
            resident = any(n.symbols.get("register_resident") for n in est.nests)
            loop = innermost_fma_loop(tvm.compile(sch.mod, target=target).mod.inspect_source("asm"))
            print(f"| {rows} x {lanes} | {rows * lanes * 32 // spec.simd_bits} | {len(re.findall(r'vfmadd', loop))} "
                  f"| {len(re.findall(r'[(]%rsp[)]', loop))} | {resident} | {est.seconds * 1e3:.2f} |", flush=True)


if __name__ == "__main__":
    main()

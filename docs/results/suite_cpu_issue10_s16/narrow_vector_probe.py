#!/usr/bin/env python
"""Vectors narrower than one register whose lane count is not a power of two (7 and 14 fp32 lanes on
AVX-512, 6-7 on AVX2) against power-of-two widths: the thirteenth session's register-tiled GEMM
(``../suite_cpu_issue10_s13/vector_width_probe.py``: 192 x N x 768, N a multiple of every width tried,
accumulating in a local tile), measured on this CPU against the analyzer, with what the compiled
innermost FMA loop holds (FMAs, lane inserts/shuffles, masked operations, stack accesses). The
analyzer prices such a vector as a full one (``cpu_model._split_by_legalization`` covers only widths
above a register).

    python docs/results/suite_cpu_issue10_s16/narrow_vector_probe.py
"""
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "suite_cpu_issue10_s13"))

from vector_width_probe import run_and_read, schedule  # noqa: E402


def main():
    import tvm

    from pruner_ms.analysis import SymbolicAnalyzer
    from pruner_ms.hardware import host_cpu_spec

    spec = host_cpu_spec()
    analyzer, target = SymbolicAnalyzer(spec), tvm.target.Target(spec.target())
    reg = spec.simd_bits // 32
    print(f"{spec.name}, {spec.simd_bits}-bit vectors ({reg} fp32 lanes)\n")
    widths = [(4, reg), (8, reg), (4, reg // 2), (8, reg // 2), (4, reg - 2), (8, reg - 2), (4, reg // 2 - 1),
              (8, reg // 2 - 1)]
    # one GEMM for every width: N a multiple of every lane count (no guarded tail), near 768
    multiple = math.lcm(*(lanes for _, lanes in widths))
    n = multiple * max(1, round(768 / multiple))
    print(f"GEMM 192 x {n} x 768\n")
    print("| rows x lanes | measured ms | analyzer ms | measured / analyzer | FMAs | lane inserts, shuffles | "
          "masked ops | stack accesses |")
    print("|---|---|---|---|---|---|---|---|")
    for rows, lanes in widths:
        wl, sch = schedule(rows, lanes, n=n)
        est = analyzer.analyze(sch.mod).seconds
        sec, loop = run_and_read(wl, sch, target)
        fmas = len(re.findall(r"vfmadd", loop))
        lane_ops = len(re.findall(r"vinsertps|vinsert[fi](?:128|32x4|64x4)|vpermps|vpermt2ps|vshufps|vblendps|"
                                  r"vextract|vmovlhps|vunpck", loop))
        masked = len(re.findall(r"\{%k\d\}", loop))
        stack = len(re.findall(r"\(%rsp\)", loop))
        print(f"| {rows} x {lanes} | {sec * 1e3:.2f} | {est * 1e3:.2f} | {sec / est:.2f} | {fmas} | {lane_ops} | "
              f"{masked} | {stack} |", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""How many gathered lanes LLVM's LICM takes out of a loop, read from the compiled code (nothing runs).

The schedule of tests/test_analyzer.py (`_dense_gathered_schedule`: a 128-batch dense layer, the
weight rows gathered along `lanes` vector lanes, `k` reduction steps unrolled inside a 16-iteration
loop over batch rows that does not move the weights), compiled for each `-mcpu` given; prints the
lane loads and inserts left in the innermost loop that has FMAs, against all of them.

    python docs/results/suite_cpu_issue10_s13/llvm_gather_hoisting.py znver3 znver4
"""
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]


def main(mcpus):
    import tvm
    from test_analyzer import _dense_gathered_schedule, _lane_ops_in_innermost_fma_loop

    print("| -mcpu | lanes | unrolled steps | gathered lanes | lane ops in the loop / all | lanes hoisted |")
    print("|---|---|---|---|---|---|")
    for mcpu in mcpus:
        target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu, "num-cores": 2})
        for lanes in (16, 32):
            for steps in (2, 4, 8, 12, 16, 24, 32):
                if lanes * steps > 1024:
                    continue
                _, sch = _dense_gathered_schedule(unrolled_k=steps, lanes=lanes)
                inside, everywhere = _lane_ops_in_innermost_fma_loop(
                    tvm.compile(sch.mod, target=target).mod.inspect_source("asm"))
                hoisted = round((1 - inside / everywhere) * lanes * steps)
                print(f"| {mcpu} | {lanes} | {steps} | {lanes * steps} | {inside} / {everywhere} | {hoisted} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["znver3", "znver4"])

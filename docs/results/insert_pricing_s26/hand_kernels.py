#!/usr/bin/env python
"""Hand-made register tiles of the suite's conv2d 1x128x28x28 (3x3, padding 1): the analyzer of this
host against the measured time, rounds interleaved. The tiles are those of
tests/test_analyzer.py::_conv_register_tile (``channels`` x ``rows`` unrolled, 14 columns vectorized).

    PYTHONPATH=. python docs/results/insert_pricing_s26/hand_kernels.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests"))


def main() -> None:
    import tvm

    from pruner_ms.analysis import SymbolicAnalyzer
    from pruner_ms.hardware import host_cpu_spec
    from test_analyzer import _conv_register_tile, _innermost_fma_loop

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    spec = host_cpu_spec()
    analyzer, target = SymbolicAnalyzer(spec), tvm.target.Target(spec.target())
    tiles = [(16, 1), (8, 2), (4, 4)]
    kernels = {}
    for tile in tiles:
        wl, sch = _conv_register_tile(*tile)
        ex = tvm.compile(sch.mod, target=target)
        inputs = wl.make_inputs(np.random.default_rng(0))
        buffers = [tvm.runtime.tensor(a) for a in inputs] + [tvm.runtime.empty(wl.output_shape, wl.output_dtype)]
        ex["main"](*buffers)
        np.testing.assert_allclose(buffers[-1].numpy(), wl.reference(*inputs), rtol=1e-4, atol=1e-3)
        loop, _ = _innermost_fma_loop(ex.mod.inspect_source("asm"))
        counts = {op: loop.count(op) for op in ("vfmadd", "vinsertf", "vmovsd", "vbroadcastss", "{1to16}")}
        timer = ex.mod.time_evaluator("main", tvm.cpu(), number=5, repeat=5, min_repeat_ms=50)
        kernels[tile] = (analyzer.analyze(sch.mod).seconds, timer, buffers, counts, [])
    for _ in range(args.rounds):
        for tile in tiles:
            _, timer, buffers, _, ms = kernels[tile]
            ms.append(timer(*buffers).median * 1e3)
    print(f"host: {spec.describe()}")
    print("| tile (channels x rows x 14 columns) | analyzer ms | measured ms (median of rounds; min-max) | "
          "innermost FMA loop: FMAs, inserts, 2-lane pieces, broadcasts, folded broadcasts |")
    print("|---|---|---|---|")
    for tile in tiles:
        est, _, _, counts, ms = kernels[tile]
        print(f"| {tile[0]} x {tile[1]} | {est * 1e3:.3f} | {statistics.median(ms):.3f} ({min(ms):.3f}-{max(ms):.3f}) | "
              + ", ".join(str(v) for v in counts.values()) + " |")


if __name__ == "__main__":
    main()

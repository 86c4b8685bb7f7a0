#!/usr/bin/env python
"""Is the row pitch what makes some register-tiled GEMM programs 3-5x slower than the analyzer says?

Every row of the 512x512 fp32 matrices of gemm-512 is 2 KiB (4 KiB for B and C of gemm-256x1024x256),
so the rows that one tile touches fall into 2 of the 64 sets of a 32 KiB 8-way L1 (1 set at 4 KiB),
and they share their low 12 address bits (4K aliasing). This script takes a GEMM work dir's records
(the analyzer's top ``--top`` and the measured best ``--best``), replays each record's trace on the
same GEMM with every row padded by ``P`` floats (``--pads``; the loops, tiles and vector code are the
same, only the addresses move), compiles it for the record's target and times all variants
interleaved (``--passes`` rounds of a time evaluator each), after checking each result against
numpy. If the slow programs are fast once padded, the pitch (set conflicts or 4K aliasing) is the
cause, not their register tiling.

    PYTHONPATH=. python docs/results/set_conflicts_s27/pitch_check.py WORK_DIR... [--pads 0,16]
"""
import argparse
import math
import os
import statistics
import sys

import numpy as np
import tvm

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "insert_pricing_s26", "gemm_tail"))
import _paths  # noqa: F401,E402
from pruner_ms.analysis import analyzer_for_target  # noqa: E402
from pruner_ms.integration.database import compiled_schedule  # noqa: E402
from pruner_ms.integration.measured_latency import record_seconds  # noqa: E402
from records import best_records, decisions  # noqa: E402

SOURCE = """
@T.prim_func(s_tir=True)
def main(A: T.Buffer(({m}, {k_pitch}), "float32"), B: T.Buffer(({k}, {n_pitch}), "float32"),
         C: T.Buffer(({m}, {n_pitch}), "float32")):
    T.func_attr({{"tirx.noalias": True}})
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.sblock("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
"""


def gemm_shape(mod) -> tuple[int, int, int]:
    """``(m, n, k)`` of a GEMM workload ``C[m, n] = A[m, k] B[k, n]``."""
    a, b = list(mod["main"].params)[:2]  # TVM 0.27: buffer parameters carry their shape
    return int(a.shape[0]), int(b.shape[1]), int(a.shape[1])


def padded_gemm(m: int, n: int, k: int, pad: int):
    """The GEMM with every row of A, B and C ``pad`` floats longer than it is used."""
    return tvm.script.from_source(SOURCE.format(m=m, n=n, k=k, k_pitch=k + pad, n_pitch=n + pad))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--pads", default="0,16")
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--best", type=int, default=4)
    parser.add_argument("--ceiling", type=int, default=0,
                        help="also the slowest N of the programs priced within 5 %% of the analyzer's best")
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    pads = [int(p) for p in args.pads.split(",")]

    rows, analyzers = [], {}
    for run in args.runs:
        for rec in best_records(run):
            if math.isfinite(record_seconds(rec)):
                analyzer = analyzers.setdefault(str(rec.target), analyzer_for_target(rec.target))
                est = analyzer.estimate_seconds(compiled_schedule(rec.workload.mod, rec.trace).mod)
                rows.append((record_seconds(rec), est, rec))
    chosen = sorted(rows, key=lambda r: r[1])[: args.top] + sorted(rows, key=lambda r: r[0])[: args.best]
    floor = min(r[1] for r in rows)
    chosen += sorted((r for r in rows if r[1] <= 1.05 * floor), key=lambda r: -r[0])[: args.ceiling]

    m, n, k = gemm_shape(chosen[0][2].workload.mod)
    rng = np.random.default_rng(0)
    a = rng.random((m, k + max(pads)), dtype=np.float32)
    b = rng.random((k, n + max(pads)), dtype=np.float32)
    expected = a[:, :k] @ b[:, :n]
    evaluators = []
    for seconds, est, rec in chosen:
        per_pad = []
        for pad in pads:
            sch = compiled_schedule(padded_gemm(m, n, k, pad), rec.trace)
            lib = tvm.compile(sch.mod, target=rec.target)
            args_ = [tvm.runtime.tensor(np.ascontiguousarray(a[:, :k + pad])),
                     tvm.runtime.tensor(np.ascontiguousarray(b[:, :n + pad])),
                     tvm.runtime.tensor(np.zeros((m, n + pad), dtype=np.float32))]
            lib(*args_)
            np.testing.assert_allclose(args_[2].numpy()[:, :n], expected, rtol=1e-4)
            per_pad.append((lib.mod.time_evaluator("main", tvm.cpu(), number=3, repeat=1), args_))
        evaluators.append(per_pad)
    samples = [[[] for _ in pads] for _ in chosen]
    for _ in range(args.passes):
        for i, per_pad in enumerate(evaluators):
            for j, (ev, args_) in enumerate(per_pad):
                samples[i][j].append(ev(*args_).mean)
    print(f"{len(rows)} programs; the analyzer's top {args.top}, the measured best {args.best}, then the slowest "
          f"{args.ceiling} priced within 5 % of the analyzer's best; "
          f"median of {args.passes} interleaved passes (ms) with rows padded by {pads} floats "
          f"(gemm {m}x{n}x{k})")
    print("| recorded ms | analyzer ms | " + " | ".join(f"pad {p}" for p in pads) + " | decisions |")
    print("|---|---|" + "---|" * len(pads) + "---|")
    for (seconds, est, rec), per in zip(chosen, samples):
        print(f"| {seconds * 1e3:.2f} | {est * 1e3:.2f} | " + " | ".join(f"{statistics.median(s) * 1e3:.2f}" for s in per)
              + f" | `{decisions(rec)}` |")


if __name__ == "__main__":
    main()

"""Build success rate of sampled tensor-core candidates with CudaBuilder, with and without the workaround.

Samples N candidates from the ``cuda-tensorcore`` design space of an fp16 GEMM (te.create_prim_func,
fp16 inputs, fp32 or fp16 accumulation) for ``nvidia/nvidia-a100`` (host ``{"kind": "llvm",
"num-cores": 2}``), builds them with :class:`pruner_ms.integration.builders.CudaBuilder` (tvm.compile +
nvcc, fatbin embedded) and prints the success rate without the wmma workaround, with it, and the time
per build. With ``--pools processes,threads`` the same candidates are built by the builder's worker
processes and by its in-process threads (lowering under one lock), ``--batches`` times each (the
first batch of a process pool includes starting its workers), the pool kinds' order alternating
per batch. No GPU needed.

    .venv/bin/python scripts/cuda_build_check.py --n 32 --acc float32,float16
    .venv/bin/python scripts/cuda_build_check.py --n 16 --acc float32 --modes retry --pools processes,threads --batches 3
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def fp16_gemm(m: int, n: int, k: int, acc_dtype: str):
    from tvm import te

    a = te.placeholder((m, k), "float16", name="A")
    b = te.placeholder((k, n), "float16", name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r].astype(acc_dtype) * b[r, j].astype(acc_dtype), axis=r),
                   name="C")
    return te.create_prim_func([a, b, c])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=32, help="candidates per accumulation dtype")
    ap.add_argument("--size", type=int, default=1024, help="GEMM M = N = K")
    ap.add_argument("--acc", default="float32,float16", help="accumulation dtypes, comma-separated")
    ap.add_argument("--target", default="nvidia/nvidia-a100")
    ap.add_argument("--cores", type=int, default=2, help="host num-cores, also the builder's threads")
    ap.add_argument("--modes", default="retry,always",
                    help="CudaBuilder workaround modes to build the same candidates with (retry, always, off)")
    ap.add_argument("--pools", default="processes",
                    help="CudaBuilder pool kinds to build with, comma-separated (processes, threads)")
    ap.add_argument("--batches", type=int, default=1, help="batches per builder (the same candidates each time)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--population", type=int, default=64)
    ap.add_argument("--out", default=None, help="write the numbers as JSON here")
    args = ap.parse_args()

    import tvm
    from tvm.s_tir.meta_schedule.builder import BuilderInput

    from pruner_ms.integration.builders import CudaBuilder
    from pruner_ms.integration.tensor_core import sample_candidates

    target = tvm.target.Target(args.target, host={"kind": "llvm", "num-cores": args.cores})
    report = {"target": args.target, "size": args.size, "n": args.n, "results": []}
    for acc in args.acc.split(","):
        mod = tvm.IRModule({"main": fp16_gemm(args.size, args.size, args.size, acc)})
        t0 = time.perf_counter()
        cands = sample_candidates(mod, target, args.n, seed=args.seed,
                                  population_size=max(args.population, args.n))
        t_sample = time.perf_counter() - t0
        tc = sum("tvm_mma_sync" in c.sch.mod.script() for c in cands)
        print(f"\n== fp16 GEMM {args.size}^3, {acc} accumulation: {len(cands)} candidates sampled in "
              f"{t_sample:.1f} s ({tc} with tensor-core intrinsics)")
        for mode in args.modes.split(","):
            pools = args.pools.split(",")
            builders = {pool: CudaBuilder(max_workers=args.cores, workaround=mode, processes=pool == "processes",
                                          artifact_dir=tempfile.mkdtemp(prefix="cuda_build_check_"))
                        for pool in pools}
            for batch in range(args.batches):
                for pool in (pools if batch % 2 == 0 else pools[::-1]):
                    builder = builders[pool]
                    builder.reset_stats()
                    t0 = time.perf_counter()
                    results = builder.build([BuilderInput(c.sch.mod, target) for c in cands])
                    wall = time.perf_counter() - t0
                    st = builder.stats
                    d = st.as_dict()
                    print(f"-- workaround={mode}, {pool}, batch {batch}: {st.summary()}")
                    if mode == "retry" and batch == 0:
                        print(f"   success rate without the workaround: {st.ok_default}/{st.built} "
                              f"({st.success_rate_without_workaround:.0%}); with it: {st.ok}/{st.built} "
                              f"({st.success_rate:.0%})")
                    print(f"   batch wall {wall:.1f} s = {wall / max(len(cands), 1):.2f} s per candidate on "
                          f"{args.cores} {pool}")
                    report["results"].append({"acc": acc, "mode": mode, "pool": pool, "batch": batch,
                                              "sample_sec": t_sample, "wall_sec": wall,
                                              "n_candidates": len(cands), "n_tensorcore": tc,
                                              "ok_results": sum(r.error_msg is None for r in results), **d})
                    for r in results:
                        if r.artifact_path is not None:
                            shutil.rmtree(Path(str(r.artifact_path)).parent, ignore_errors=True)
            for builder in builders.values():
                builder.shutdown()
                shutil.rmtree(builder.artifact_dir, ignore_errors=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

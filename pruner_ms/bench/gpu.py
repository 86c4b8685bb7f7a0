"""Tensor-core benchmark on one NVIDIA GPU: PrunerSearch vs MetaSchedule's default vs cuBLAS.

``python -m pruner_ms.bench.gpu --size full --out results/gpu_bench.json`` (``scripts/bench_gpu.sh``
installs the wheels first). Both strategies tune the same fp16 GEMMs on the ``cuda-tensorcore``
space with the same trials, seed, builder (``CudaBuilder``, nvcc for the GPU's arch) and runner
(MetaSchedule's ``LocalRunner`` on the GPU); the JSON holds the per-run curves, the time-to-quality
speed-ups and each best latency against cuBLAS (``torch.matmul``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

# (name, M, N, K): an LLM/BERT-sized square GEMM and an LLM feed-forward projection for 32 tokens
SUITES = {
    "full": {"workloads": [("gemm-4096", 4096, 4096, 4096), ("ffn-32x11008x4096", 32, 11008, 4096)],
             "trials": 64, "trials_per_iter": 32},
    "small": {"workloads": [("gemm-1024", 1024, 1024, 1024), ("ffn-16x4096x4096", 16, 4096, 4096)],
              "trials": 32, "trials_per_iter": 16},
}

# substrings of torch.cuda.get_device_name() -> configs/gpu spec; longest match wins ("A100" before "A10")
_DEVICE_NAMES = {
    "H200": "h200", "H100": "h100-sxm", "A100-SXM4-80GB": "a100-80gb-sxm", "A100 80GB": "a100-80gb-sxm",
    "A100": "a100-40gb-sxm", "A30": "a30", "A10": "a10", "RTX 3090": "rtx-3090", "RTX A6000": "rtx-a6000",
}


def detect_gpu_spec():
    """The :class:`~pruner_ms.hardware.GPUSpec` of GPU 0 (via torch), or a clear error."""
    import torch

    from ..hardware import load_gpu_spec
    from ..integration.cuda import NoGPUError

    if not torch.cuda.is_available():
        raise NoGPUError("no CUDA GPU is visible (torch.cuda.is_available() is False); this benchmark measures on a GPU")
    name = torch.cuda.get_device_name(0)
    for key in sorted(_DEVICE_NAMES, key=len, reverse=True):
        if key in name:
            return load_gpu_spec(_DEVICE_NAMES[key])
    raise KeyError(f"GPU {name!r} has no spec in configs/gpu; add one (see configs/gpu/README.md)")


def cublas_seconds(m: int, n: int, k: int, *, repeats: int = 50) -> float:
    """Median time of ``torch.matmul`` on fp16 (cuBLAS), CUDA events, after warm-up."""
    import torch

    a = torch.randn(m, k, dtype=torch.float16, device="cuda")
    b = torch.randn(k, n, dtype=torch.float16, device="cuda")
    for _ in range(10):
        torch.matmul(a, b)
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(a, b)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return sorted(times)[len(times) // 2]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", choices=sorted(SUITES), default="full", help="full: ~5 min on a 16-core host; small: ~2 min")
    p.add_argument("--strategies", default="pruner,default")
    p.add_argument("--seeds", default="0")
    p.add_argument("--trials", type=int, default=None, help="override the suite's trial budget")
    p.add_argument("--out", default="results/gpu_bench.json")
    a = p.parse_args(argv)

    import tempfile

    import tvm
    import tvm.s_tir.tensor_intrin
    from tvm.s_tir import meta_schedule as ms

    from ..hardware import host_cpu_spec
    from .compare import format_report, run_one, summarize
    from .workloads import gemm_fp16

    t0 = time.time()
    spec = detect_gpu_spec()
    cores = host_cpu_spec().cores
    target = tvm.target.Target(spec.target(host={"kind": "llvm", "num-cores": cores}))
    suite = SUITES[a.size]
    trials = a.trials or suite["trials"]
    root = tempfile.mkdtemp(prefix="pruner_ms_gpu_")
    runs, cublas = [], {}
    for name, m, n, k in suite["workloads"]:
        wl = gemm_fp16(m, n, k)
        cublas[wl.name] = cublas_seconds(m, n, k)
        for seed in [int(s) for s in a.seeds.split(",")]:
            for strategy in a.strategies.split(","):
                space = ms.space_generator.PostOrderApply(sch_rules="cuda-tensorcore", postprocs="cuda-tensorcore",
                                                          mutator_probs="cuda-tensorcore")
                run = run_one(wl, strategy, trials=trials, seed=seed, trials_per_iter=suite["trials_per_iter"],
                              work_dir=os.path.join(root, name, strategy, str(seed)), target=target,
                              space=space, cores=cores)
                run["flops"] = wl.flops
                run["vs_cublas"] = run["best_seconds"] / cublas[wl.name]
                runs.append(run)
                print(f"{wl.name} {strategy} seed={seed}: best {run['best_seconds'] * 1e6:.1f} us "
                      f"({wl.flops / run['best_seconds'] / 1e12:.1f} TFLOP/s, {run['vs_cublas']:.2f}x cuBLAS), "
                      f"{run['wall_seconds']:.0f} s, numpy {'ok' if run['numpy_ok'] else 'FAIL'}", flush=True)
    summaries = {"measured": summarize(runs)}
    print(format_report(runs, summaries))
    print("cuBLAS (torch.matmul fp16) us:", {k: round(v * 1e6, 1) for k, v in cublas.items()})
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({"meta": {"argv": sys.argv, "host": platform.node(), "gpu": spec.name, "cores": cores,
                            "size": a.size, "trials": trials, "total_seconds": time.time() - t0},
                   "cublas_seconds": cublas, "summaries": summaries, "runs": runs}, f, indent=1, default=str)
    print(f"wrote {a.out}")
    return 0 if all(r["numpy_ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Tensor-core benchmark on one NVIDIA GPU: PrunerSearch vs MetaSchedule's default vs cuBLAS.

``python -m pruner_ms.bench.gpu --size full --out results/gpu_bench.json`` (``scripts/gpu_run.sh run``
on the offline GPU host unpacks TVM first; ``scripts/bench_gpu.sh`` installs it from wheels). Both
strategies tune the same fp16 GEMMs on the ``cuda-tensorcore`` space with the same trials, seed,
builder (``CudaBuilder``, nvcc for the GPU's arch: ``sm_90a`` on an H100/H200) and runner (one
MetaSchedule ``LocalRunner`` on the GPU, shared by all runs).

The JSON, rewritten after every run so that a killed benchmark still leaves data, holds per run the
tuning curve (``batches``: seconds, trials, best so far), best latency against cuBLAS
(``torch.matmul``), build statistics and the build-success and run-failure rates, every measured
program's latency next to the GPU analyzer's estimate (``programs``; Spearman per run, per workload
and over all in ``analyzer``), and the run's MetaSchedule database lines (``database``:
``--extract-dataset`` writes them out as a dataset that :func:`pruner_ms.bench.dataset.load_records`
reads); ``summaries`` has the time-to-quality speed-ups of PrunerSearch over the default.

``--synthetic SPEC`` rehearses all of it without a GPU (candidates built for SPEC's arch, latencies
SYNTHETIC from :class:`~pruner_ms.integration.runners.SyntheticLatencyRunner`, no cuBLAS, no numpy
check): for checking the benchmark's bookkeeping before a GPU session, never for numbers.

``--budget-s`` bounds the wall time from the start of the process: a workload starts only if the time
left covers the longest one so far, each run of a workload gets an equal share of the time left,
and a run out of its share stops asking for candidates (``stopped_early``); the JSON then says what
was skipped (``meta.skipped``).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import time
import traceback


def _process_start() -> float:
    """``time.perf_counter()`` reading of this process's start (``import pruner_ms`` and TVM precede this module)."""
    import psutil  # a MetaSchedule requirement (core detection), so always there

    return time.perf_counter() - max(0.0, time.time() - psutil.Process().create_time())


_T0 = _process_start()

# (name, M, N, K): an LLM/BERT-sized square GEMM and an LLM feed-forward projection for 32 tokens.
# 16 candidates per round gives each 64-trial run a 4-point tuning curve.
SUITES = {
    "full": {"workloads": [("gemm-4096", 4096, 4096, 4096), ("ffn-32x11008x4096", 32, 11008, 4096)],
             "trials": 64, "trials_per_iter": 16},
    "small": {"workloads": [("gemm-1024", 1024, 1024, 1024), ("ffn-16x4096x4096", 16, 4096, 4096)],
              "trials": 32, "trials_per_iter": 16},
    # for --synthetic rehearsals and tests: one small GEMM, one batch
    "tiny": {"workloads": [("gemm-256", 256, 256, 256)], "trials": 8, "trials_per_iter": 8},
}
#: Seconds kept at the end of a ``--budget-s`` for the summaries and the last write.
RESERVE_S = 15.0
#: Seconds a run needs after its last round (numpy check, analyzer estimates, database read).
POST_RUN_S = 15.0

# substrings of torch.cuda.get_device_name() -> configs/gpu spec; longest match wins ("A100" before "A10")
_DEVICE_NAMES = {
    "H200": "h200", "H100": "h100-sxm", "A100-SXM4-80GB": "a100-80gb-sxm", "A100 80GB": "a100-80gb-sxm",
    "A100": "a100-40gb-sxm", "A30": "a30", "A10": "a10", "RTX 3090": "rtx-3090", "RTX A6000": "rtx-a6000",
}


def spec_for_device_name(name: str):
    """The :class:`~pruner_ms.hardware.GPUSpec` whose :data:`_DEVICE_NAMES` key is the longest one in ``name``."""
    from ..hardware import load_gpu_spec

    for key in sorted(_DEVICE_NAMES, key=len, reverse=True):
        if key in name:
            return load_gpu_spec(_DEVICE_NAMES[key])
    raise KeyError(f"GPU {name!r} has no spec in configs/gpu; add one (see configs/gpu/README.md)")


def detect_gpu_spec():
    """The :class:`~pruner_ms.hardware.GPUSpec` of GPU 0 (via torch), or a clear error."""
    import torch

    from ..integration.runners import NoGPUError

    if not torch.cuda.is_available():
        raise NoGPUError("no CUDA GPU is visible (torch.cuda.is_available() is False); this benchmark measures on a GPU")
    return spec_for_device_name(torch.cuda.get_device_name(0))


def cublas_seconds(m: int, n: int, k: int, *, repeats: int = 50, out_dtype=None) -> float:
    """Median time of an fp16 ``torch.matmul`` (cuBLAS), CUDA events, after warm-up.

    ``out_dtype=torch.float32`` times ``torch.mm(a, b, out_dtype=...)`` instead (fp32 output, like
    the tuned workload's); it raises ``TypeError`` on a torch without that argument.
    """
    import torch

    a = torch.randn(m, k, dtype=torch.float16, device="cuda")
    b = torch.randn(k, n, dtype=torch.float16, device="cuda")

    def op():
        return torch.matmul(a, b) if out_dtype is None else torch.mm(a, b, out_dtype=out_dtype)

    for _ in range(10):
        op()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        op()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return sorted(times)[len(times) // 2]


# -- environment ----------------------------------------------------------------------------------
def _command_line(cmd: list[str]) -> str | None:
    """First line of a command's output (the release line of ``nvcc --version``), or ``None`` when it is absent."""
    if shutil.which(cmd[0]) is None:
        return None
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = [ln.strip() for ln in (out.stdout or out.stderr).splitlines() if ln.strip()]
    if cmd[0] == "nvcc":  # "Cuda compilation tools, release 13.0, V13.0.88"
        lines = [ln for ln in lines if "release" in ln] or lines
    return lines[0] if lines else None


def cuda_runtime_problem() -> str | None:
    """Why TVM's CUDA runtime (``libtvm_runtime_cuda.so``) does not load, or ``None`` when it does.

    ``import tvm`` swallows that error and ``tvm.cuda(0).exist`` is then simply false; loading the
    library again here shows the loader's message (typically a missing ``libcudart.so.13``).
    """
    import ctypes

    import tvm

    lib = os.path.join(os.path.dirname(tvm.__file__), "lib", "libtvm_runtime_cuda.so")
    if not os.path.exists(lib):
        return f"{lib} does not exist: this TVM has no CUDA runtime"
    try:
        ctypes.CDLL(lib, mode=ctypes.RTLD_LOCAL)
    except OSError as err:
        return f"{lib} does not load: {err}"
    return None


def environment() -> dict:
    """Versions and devices, for the JSON's ``env`` and for ``--check-env``."""
    import numpy
    import tvm
    import tvm_ffi
    import xgboost

    env = {"python": sys.version.split()[0], "tvm": tvm.__version__, "tvm_ffi": tvm_ffi.__version__,
           "xgboost": xgboost.__version__, "numpy": numpy.__version__, "host": platform.node(),
           "cpu_count": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
           "nvcc": _command_line(["nvcc", "--version"]),
           "driver": _command_line(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]),
           "tvm_cuda_exist": bool(tvm.cuda(0).exist), "tvm_cuda_problem": None}
    if not env["tvm_cuda_exist"]:
        env["tvm_cuda_problem"] = cuda_runtime_problem() or "TVM's CUDA runtime loads but sees no device"
    else:
        dev = tvm.cuda(0)
        env["tvm_device"] = {"name": dev.device_name, "compute_version": dev.compute_version,
                             "multi_processor_count": dev.multi_processor_count}
    try:
        import torch
    except ImportError as err:
        env["torch"] = f"not importable: {err}"
    else:
        env["torch"] = torch.__version__
        env["torch_cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            env["gpu"] = torch.cuda.get_device_name(0)
            env["gpu_capability"] = ".".join(map(str, torch.cuda.get_device_capability(0)))
    return env


def check_env() -> int:
    """Print :func:`environment`; 1 (with the reason and the fix) when TVM cannot use GPU 0."""
    env = environment()
    print(json.dumps(env, indent=1))
    if not env["tvm_cuda_exist"]:
        print(f"pruner_ms.bench.gpu: TVM cannot use GPU 0: {env['tvm_cuda_problem']}. If a CUDA library is "
              "missing, put the folder that holds it (a CUDA 13 toolkit's lib64, or torch's nvidia/*/lib) on "
              "LD_LIBRARY_PATH; scripts/gpu_run.sh searches the usual places.", file=sys.stderr)
        return 1
    if "gpu" in env:
        try:
            spec = spec_for_device_name(env["gpu"])
        except KeyError as err:
            print(f"pruner_ms.bench.gpu: {err.args[0]}", file=sys.stderr)
            return 1
        print(f"pruner_ms.bench.gpu: GPU 0 is {env['gpu']} (capability {env.get('gpu_capability')}) -> spec "
              f"{spec.name}, candidates built for {spec.target_arch}")
    return 0


# -- programs, analyzer, database -----------------------------------------------------------------
def analyze_programs(programs: list[dict], spec) -> list[dict]:
    """Put the GPU analyzer's estimate next to each measured program; return JSON-ready entries.

    Each entry keeps ``batch``, ``latency_s``, ``build_error`` and ``run_error`` from
    :class:`~pruner_ms.integration.measure_callbacks.ProgramLog` and gains ``estimate_s`` (``None`` with
    ``estimate_error`` when the analyzer fails on the program). The modules are dropped.
    """
    from ..analysis import SymbolicAnalyzer

    analyzer = SymbolicAnalyzer(spec)
    out = []
    for i, p in enumerate(programs):
        entry = {"index": i, **{k: v for k, v in p.items() if k != "mod"}, "estimate_s": None}
        try:
            entry["estimate_s"] = float(analyzer.analyze(p["mod"]).seconds)
        except Exception as err:  # noqa: BLE001  (recorded per program, never hidden)
            last = str(err).strip().splitlines()[-1][:200] if str(err).strip() else ""
            entry["estimate_error"] = f"{type(err).__name__}: {last}"
        out.append(entry)
    return out


def analyzer_correlation(programs: list[dict]) -> dict:
    """Spearman of the analyzer's estimates against measured latencies, over the valid programs."""
    from ..strategy.trust import spearman

    pairs = [(p["estimate_s"], p["latency_s"]) for p in programs
             if p.get("latency_s") is not None and p.get("estimate_s") is not None
             and math.isfinite(p["estimate_s"]) and math.isfinite(p["latency_s"])]
    if len(pairs) < 3:
        return {"n": len(pairs), "spearman": None}
    est, lat = zip(*pairs)
    return {"n": len(pairs), "spearman": spearman(list(est), list(lat))}


def correlation_report(runs: list[dict]) -> dict:
    """:func:`analyzer_correlation` per run, per workload (all its runs' programs) and over all runs."""
    report = {"per_run": {}, "per_workload": {},
              "all": analyzer_correlation([p for r in runs for p in r.get("programs", [])])}
    for r in runs:
        key = f"{r['workload']} {r['strategy']} seed={r['seed']}"
        report["per_run"][key] = analyzer_correlation(r.get("programs", []))
    for wl in sorted({r["workload"] for r in runs}):
        report["per_workload"][wl] = analyzer_correlation([p for r in runs if r["workload"] == wl
                                                           for p in r.get("programs", [])])
    return report


def read_database(work_dir: str) -> dict:
    """The lines of a MetaSchedule JSON database in ``work_dir`` (``workload`` and ``records`` lists of str)."""
    from .dataset import RECORD_FILE, WORKLOAD_FILE

    out = {}
    for key, name in (("workload", WORKLOAD_FILE), ("records", RECORD_FILE)):
        path = os.path.join(work_dir, name)
        with open(path, encoding="utf-8") as f:
            out[key] = [ln.rstrip("\n") for ln in f if ln.strip()]
    return out


def failure_rates(run: dict) -> dict:
    """Build-success and run-failure rates of a run from its batches (a run failure: built, not measured)."""
    built_ok = run_err = total = 0
    for b in run["batches"]:
        total += len(b["latencies"])
        built_ok += len(b["latencies"]) - b["build_errors"]
        run_err += b["run_errors"]
    return {"measured": total, "build_ok": built_ok, "run_errors": run_err,
            "build_success_rate": built_ok / total if total else None,
            "run_failure_rate": run_err / built_ok if built_ok else None}


def extract_dataset(result_path: str, out_dir: str) -> dict:
    """Write the database lines of a benchmark JSON as a dataset: one folder per workload, all its runs.

    ``out_dir/<workload>/database_workload.json`` and ``database_tuning_record.json`` (records of every
    strategy and seed, in run order) and ``out_dir/manifest.json``, the layout
    :func:`pruner_ms.bench.dataset.load_records` reads. Returns the manifest.
    """
    from .dataset import MANIFEST_FILE, RECORD_FILE, WORKLOAD_FILE

    with open(result_path, encoding="utf-8") as f:
        result = json.load(f)
    runs = [r for r in result.get("runs", []) if r.get("database")]
    if not runs:
        raise ValueError(f"{result_path} holds no run with database records (written by an older "
                         "pruner_ms.bench.gpu?); rerun the benchmark")
    workloads = []
    for wl in sorted({r["workload"] for r in runs}):
        wl_runs = [r for r in runs if r["workload"] == wl]
        lines = {tuple(r["database"]["workload"]) for r in wl_runs}
        if len(lines) != 1:
            raise ValueError(f"{result_path}: the runs of {wl} hold different workload entries; they cannot share "
                             "one database")
        (wl_lines,) = lines
        records = [ln for r in wl_runs for ln in r["database"]["records"]]
        os.makedirs(os.path.join(out_dir, wl), exist_ok=True)
        with open(os.path.join(out_dir, wl, WORKLOAD_FILE), "w", encoding="utf-8") as f:
            f.write("".join(ln + "\n" for ln in wl_lines))
        with open(os.path.join(out_dir, wl, RECORD_FILE), "w", encoding="utf-8") as f:
            f.write("".join(ln + "\n" for ln in records))
        lat = [p["latency_s"] for r in wl_runs for p in r.get("programs", []) if p.get("latency_s") is not None]
        workloads.append({"name": wl, "flops": wl_runs[0].get("flops"), "records": len(records),
                          "valid": len(lat), "failed": len(records) - len(lat),
                          "best_seconds": min(lat) if lat else None,
                          "runs": [{"strategy": r["strategy"], "seed": r["seed"],
                                    "records": len(r["database"]["records"])} for r in wl_runs]})
    manifest = {"source": os.path.abspath(result_path), "target": result.get("meta", {}).get("target"),
                "gpu": result.get("meta", {}).get("gpu"), "workloads": workloads}
    with open(os.path.join(out_dir, MANIFEST_FILE), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
    return manifest


# -- the benchmark ------------------------------------------------------------------------------------
class Budget:
    """Wall-clock budget from the process start: which workloads start, when a run stops.

    Parameters
    ----------
    seconds : float or None
        The budget; ``None`` is unbounded.
    clock : callable
        Seconds, monotonic (default ``time.perf_counter``); the budget counts from ``start``.
    start : float, optional
        Clock reading the budget counts from; default the start of this process.
    """

    def __init__(self, seconds: float | None, *, clock=time.perf_counter, start: float | None = None) -> None:
        self.seconds = seconds
        self.clock = clock
        self.start = _T0 if start is None else start
        self.workload_seconds: list[float] = []

    def left(self) -> float:
        if self.seconds is None:
            return math.inf
        return self.seconds - RESERVE_S - (self.clock() - self.start)

    def can_start_workload(self) -> bool:
        """The first workload always starts; a later one if the time left covers the longest so far."""
        if self.seconds is None or not self.workload_seconds:
            return True
        return self.left() >= max(self.workload_seconds)

    def run_stop(self, runs_left: int, batch_times: list[float]):
        """A ``stop`` callable for a run that may use ``1/runs_left`` of the time left now.

        ``batch_times`` is the run's list of clock readings at the end of each measured batch (filled
        while it tunes, :attr:`ProgramLog.batch_times`). The run stops before a round that would not
        end, with :data:`POST_RUN_S` to spare, inside its share; a round is expected to take as long
        as the longest one so far. ``None`` when the budget is unbounded.
        """
        if self.seconds is None:
            return None
        run_start = self.clock()
        share = self.left() / max(runs_left, 1)

        def stop() -> bool:
            times = [run_start] + list(batch_times)
            round_s = max((b - a for a, b in zip(times, times[1:])), default=0.0)
            return (self.clock() - run_start) + round_s + POST_RUN_S > share

        return stop


def plain(obj):
    """TVM FFI containers (a target's ``export()``: ``Map``, ``Array``) as plain dicts and lists, for JSON."""
    if hasattr(obj, "items"):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) or type(obj).__name__ == "Array":
        return [plain(v) for v in obj]
    if isinstance(obj, (bool, int, float, str)) or obj is None:
        return obj
    return str(obj)


def write_json(path: str, doc: dict) -> None:
    """Write ``doc`` to ``path`` atomically (a killed process leaves the previous version)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, default=str)
    os.replace(tmp, path)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", choices=sorted(SUITES), default="full",
                   help="full: 4096^3 and 32x11008x4096, 64 trials; small: 1024^3 and 16x4096x4096, 32 trials")
    p.add_argument("--strategies", default="pruner,default")
    p.add_argument("--seeds", default="0")
    p.add_argument("--trials", type=int, default=None, help="override the suite's trial budget")
    p.add_argument("--workloads", default=None,
                   help="comma-separated names of the suite's workloads to run (default: all of them)")
    p.add_argument("--budget-s", type=float, default=None,
                   help="wall-clock seconds from the start of the process (see the description); default: none")
    p.add_argument("--out", default="results/gpu_bench.json")
    p.add_argument("--check-env", action="store_true", help="print versions and devices; fail if TVM cannot use GPU 0")
    p.add_argument("--synthetic", metavar="SPEC", default=None,
                   help="rehearsal without a GPU for the configs/gpu spec SPEC (e.g. h200): synthetic latencies")
    p.add_argument("--extract-dataset", nargs=2, metavar=("RESULT_JSON", "DIR"),
                   help="write the database records of a benchmark JSON as a dataset folder, and exit")
    a = p.parse_args(argv)
    if a.check_env:
        return check_env()
    if a.extract_dataset:
        manifest = extract_dataset(*a.extract_dataset)
        print(f"wrote {a.extract_dataset[1]}: " + ", ".join(f"{w['name']} ({w['records']} records)"
                                                           for w in manifest["workloads"]))
        return 0
    if a.budget_s is not None and a.budget_s <= RESERVE_S:
        p.error(f"--budget-s must exceed {RESERVE_S:.0f} s")

    import tempfile

    import tvm

    from ..integration.workarounds import import_all_tensor_intrinsics

    import_all_tensor_intrinsics()  # registers the wmma intrinsics the space needs
    from tvm.s_tir import meta_schedule as ms

    from ..hardware import host_cpu_spec, load_gpu_spec
    from ..integration.builders import CudaBuilder
    from ..integration.runners import SyntheticLatencyRunner
    from .compare import check_strategies, format_report, run_one, run_order, summarize
    from ..integration.measure_callbacks import ProgramLog
    from .workloads import gemm_fp16

    budget = Budget(a.budget_s)
    strategies = a.strategies.split(",")
    check_strategies(strategies)
    seeds = [int(s) for s in a.seeds.split(",")]
    synthetic = a.synthetic is not None
    spec = load_gpu_spec(a.synthetic) if synthetic else detect_gpu_spec()
    cores = host_cpu_spec().cores
    target = tvm.target.Target(spec.target(host={"kind": "llvm", "num-cores": cores}))
    suite = dict(SUITES[a.size])
    if a.workloads:
        names = a.workloads.split(",")
        known = [w[0] for w in suite["workloads"]]
        unknown = [n for n in names if n not in known]
        if unknown:
            p.error(f"--workloads: {', '.join(unknown)} not in the {a.size} suite; choose from {', '.join(known)}")
        suite["workloads"] = [w for w in suite["workloads"] if w[0] in names]
    trials = a.trials or suite["trials"]
    root = tempfile.mkdtemp(prefix="pruner_ms_gpu_")
    # one runner (MetaSchedule's defaults) for every run: same worker, same settings
    shared_runner = None if synthetic else ms.runner.LocalRunner()
    doc = {"meta": {"argv": sys.argv, "gpu": spec.name, "target": plain(target.export()), "cores": cores,
                    "size": a.size, "workloads": [w[0] for w in suite["workloads"]], "trials": trials, "trials_per_iter": suite["trials_per_iter"],
                    "strategies": strategies, "seeds": seeds, "budget_s": a.budget_s, "complete": False, "skipped": [],
                    "synthetic": synthetic and "SYNTHETIC latencies (--synthetic): a rehearsal, not measurements",
                    "cublas": "torch.matmul fp16 x fp16 -> fp16 (fp32 accumulation in cuBLAS); "
                              "cublas_fp32_out_seconds: torch.mm(out_dtype=float32), the tuned workload's output type"},
           "env": environment(), "cublas_seconds": {}, "cublas_fp32_out_seconds": {}, "summaries": {},
           "analyzer": {}, "runs": [], "failed_runs": []}
    doc["meta"]["setup_seconds"] = time.perf_counter() - _T0
    runs = doc["runs"]

    def save() -> None:
        doc["summaries"] = {"measured": summarize(runs)} if runs else {}
        doc["analyzer"] = correlation_report(runs)
        doc["meta"]["total_seconds"] = time.perf_counter() - _T0
        write_json(a.out, doc)

    def _one_run(wl, strategy: str, seed: int, *, plan_left: int) -> dict:
        """Tune ``wl`` with one strategy and seed; the run's dict with everything the JSON keeps."""
        space = ms.space_generator.PostOrderApply(sch_rules="cuda-tensorcore", postprocs="cuda-tensorcore",
                                                  mutator_probs="cuda-tensorcore")
        builder = CudaBuilder(max_workers=cores, artifact_dir=tempfile.mkdtemp(prefix="artifacts_", dir=root))
        runner = SyntheticLatencyRunner(builder) if synthetic else shared_runner
        log = ProgramLog()
        work_dir = os.path.join(root, wl.name, strategy, str(seed))
        run = run_one(wl, strategy, trials=trials, seed=seed, trials_per_iter=suite["trials_per_iter"],
                      work_dir=work_dir, target=target, space=space, cores=cores, builder=builder,
                      runner=runner, progress=False, extra_callbacks=[log],
                      stop=budget.run_stop(plan_left, log.batch_times), check=not synthetic)
        t_post = time.perf_counter()
        run["flops"] = wl.flops
        run["cublas_seconds"] = doc["cublas_seconds"][wl.name]
        run["vs_cublas"] = run["best_seconds"] / run["cublas_seconds"] if run["cublas_seconds"] else None
        run["tflops"] = wl.flops / run["best_seconds"] / 1e12 if math.isfinite(run["best_seconds"]) else None
        run["build"] = builder.stats.as_dict()
        run.update(failure_rates(run))
        run["programs"] = analyze_programs(log.programs, spec)
        run["database"] = read_database(work_dir)
        run["database_matches_programs"] = len(run["database"]["records"]) == len(run["programs"])
        run["post_seconds"] = time.perf_counter() - t_post
        return run

    save()
    for wi, (name, m, n, k) in enumerate(suite["workloads"]):
        if not budget.can_start_workload():
            left = [w[0] for w in suite["workloads"][wi:]]
            doc["meta"]["skipped"] = left
            print(f"budget: {budget.left():.0f} s left, less than the longest workload so far "
                  f"({max(budget.workload_seconds):.0f} s); skipped {', '.join(left)}", flush=True)
            break
        t_wl = time.perf_counter()
        wl = gemm_fp16(m, n, k)
        if synthetic:
            doc["cublas_seconds"][wl.name] = doc["cublas_fp32_out_seconds"][wl.name] = None
        else:
            doc["cublas_seconds"][wl.name] = cublas_seconds(m, n, k)
            try:
                import torch

                doc["cublas_fp32_out_seconds"][wl.name] = cublas_seconds(m, n, k, out_dtype=torch.float32)
            except TypeError as err:  # torch.mm without out_dtype
                doc["cublas_fp32_out_seconds"][wl.name] = None
                doc["meta"]["cublas_fp32_out_error"] = str(err)
        plan = [(seed, strategy) for si, seed in enumerate(seeds) for strategy in run_order(strategies, si)]
        for ri, (seed, strategy) in enumerate(plan):
            try:
                run = _one_run(wl, strategy, seed, plan_left=len(plan) - ri)
            except Exception:  # noqa: BLE001  (recorded in the JSON and printed; the other runs go on)
                tb = traceback.format_exc()
                doc["failed_runs"].append({"workload": wl.name, "strategy": strategy, "seed": seed,
                                           "traceback": tb.splitlines()[-40:]})
                print(f"{wl.name} {strategy} seed={seed}: FAILED, the other runs go on:\n{tb}", flush=True)
                save()
                continue
            runs.append(run)
            corr = analyzer_correlation(run["programs"])
            vs = "no cuBLAS" if run["vs_cublas"] is None else f"{run['vs_cublas']:.2f}x cuBLAS"
            print(f"{wl.name} {strategy} seed={seed}: best {run['best_seconds'] * 1e6:.1f} us "
                  f"({run['tflops'] or 0:.1f} TFLOP/s, {vs}), {run['trials']} trials in "
                  f"{run['wall_seconds']:.0f} s{' (stopped by the budget)' if run['stopped_early'] else ''}, "
                  f"built {run['build_success_rate'] or 0:.0%}, run failures {run['run_failure_rate'] or 0:.0%}, "
                  f"analyzer Spearman {corr['spearman'] if corr['spearman'] is None else round(corr['spearman'], 2)} "
                  f"(n={corr['n']}), numpy {'ok' if run['numpy_ok'] else 'FAIL'}", flush=True)
            save()
        budget.workload_seconds.append(time.perf_counter() - t_wl)
    doc["meta"]["complete"] = (not doc["meta"]["skipped"] and not doc["failed_runs"]
                               and not any(r["stopped_early"] for r in runs))
    save()
    print(format_report(runs, doc["summaries"]) if runs else "no run finished")
    print("cuBLAS (torch.matmul fp16) us:", {k: v and round(v * 1e6, 1) for k, v in doc["cublas_seconds"].items()})
    if synthetic:
        print("SYNTHETIC latencies (--synthetic): the numbers above are not measurements")
    print("analyzer Spearman over all measured programs:", doc["analyzer"]["all"])
    print(f"wrote {a.out}")
    if doc["failed_runs"]:
        print(f"{len(doc['failed_runs'])} run(s) FAILED: see failed_runs in {a.out}")
    return 0 if runs and not doc["failed_runs"] and all(r["numpy_ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())

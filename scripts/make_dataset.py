"""Generate the CPU cost-model dataset in tests/data/cpu_dataset (issue #4, item 5).

For each workload, two ``ms.tune_tir`` runs share one work_dir (MetaSchedule appends to its JSON
database): first ``--random-trials`` random programs (``ReplayTrace``), then ``--search-trials``
searched ones (``EvolutionarySearch`` + ``XGBModel``). The two database files of each work_dir are
copied to ``<out>/<workload>/``; ``manifest.json`` and ``README.md`` are rewritten after every
workload, so an interrupted run leaves a usable (smaller) dataset and ``--resume`` continues it.

    .venv/bin/python scripts/make_dataset.py                        # all workloads, 150 + 150 trials
    .venv/bin/python scripts/make_dataset.py --workloads gemm-128x128x128 --random-trials 64 --search-trials 64

Read it back with :func:`pruner_ms.bench.dataset.load_records`.
"""
from __future__ import annotations

import argparse
import datetime
import json
import platform
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pruner_ms.integration.measured_latency import mean_run_seconds
from pruner_ms.bench.dataset import (
    DATASET_WORKLOADS,
    MANIFEST_FILE,
    RECORD_FILE,
    WORKLOAD_FILE,
    dataset_workload,
)

#: the dataset of this source checkout (a wheel ships none)
DATASET_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "cpu_dataset"

#: Runner settings (MetaSchedule's default is number=3, repeat=1, min_repeat_ms=100): two repeats give
#: every valid record two samples, at the same measuring time per candidate.
EVALUATOR = {"number": 3, "repeat": 2, "min_repeat_ms": 50, "enable_cpu_cache_flush": False}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workloads", default=",".join(DATASET_WORKLOADS),
                   help="comma-separated names (default: all of %(default)s)")
    p.add_argument("--random-trials", type=int, default=150, help="ReplayTrace trials per workload")
    p.add_argument("--search-trials", type=int, default=150, help="EvolutionarySearch + XGBModel trials per workload")
    p.add_argument("--random-per-iter", type=int, default=64, help="trials per ReplayTrace batch")
    p.add_argument("--search-per-iter", type=int, default=32, help="trials per search batch (XGB retrains after each)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=DATASET_DIR, help="dataset directory (default: %(default)s)")
    p.add_argument("--resume", action="store_true", help="keep workloads already in the manifest, tune the rest")
    p.add_argument("--readme-only", action="store_true", help="only rewrite README.md from manifest.json")
    args = p.parse_args(argv)
    args.workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = [w for w in args.workloads if w not in DATASET_WORKLOADS]
    if unknown:
        p.error(f"unknown workloads {unknown}; choose from {', '.join(DATASET_WORKLOADS)}")
    return args


def _records(path: Path) -> list[list]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def tune_workload(name: str, *, work_dir: Path, target, builder, runner, random_trials: int, search_trials: int,
                  random_per_iter: int, search_per_iter: int, seed: int, cores: int) -> dict:
    """Run the random and the searched phase into ``work_dir``; return this workload's manifest entry."""
    from tvm.s_tir import meta_schedule as ms

    from pruner_ms.integration.workarounds import meta_schedule_logging

    wl = dataset_workload(name)
    record_file = work_dir / RECORD_FILE
    phases = {}
    t0 = time.perf_counter()
    if random_trials > 0:
        with meta_schedule_logging():
            ms.tune_tir(wl.func, target, str(work_dir), max_trials_global=random_trials,
                        num_trials_per_iter=min(random_per_iter, random_trials), builder=builder, runner=runner,
                        strategy=ms.search_strategy.ReplayTrace(), cost_model="random", seed=seed,
                        num_tuning_cores=cores)
    n_random = len(_records(record_file)) if record_file.exists() else 0
    phases["random_seconds"] = round(time.perf_counter() - t0, 1)
    t1 = time.perf_counter()
    if search_trials > 0:
        with meta_schedule_logging():
            ms.tune_tir(wl.func, target, str(work_dir), max_trials_global=search_trials,
                        num_trials_per_iter=min(search_per_iter, search_trials), builder=builder, runner=runner,
                        strategy=ms.search_strategy.EvolutionarySearch(),
                        cost_model=ms.cost_model.XGBModel(num_tuning_cores=cores, num_warmup_samples=0),
                        seed=seed + 1, num_tuning_cores=cores)
    phases["search_seconds"] = round(time.perf_counter() - t1, 1)
    rows = _records(record_file)
    lat = np.array([mean_run_seconds(rec[1]) for _, rec in rows])
    valid = lat[np.isfinite(lat)]
    return {
        "name": name, "flops": wl.flops, "random_trials": random_trials, "search_trials": search_trials,
        "records": len(rows), "random_records": n_random,
        "search_records": len(rows) - n_random, "valid": int(valid.size), "failed": int(len(rows) - valid.size),
        "best_seconds": float(valid.min()) if valid.size else None,
        "median_seconds": float(np.median(valid)) if valid.size else None,
        **phases,
    }


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def cpu_model_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def write_manifest_and_readme(out: Path, manifest: dict) -> None:
    (out / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1) + "\n")
    rows = "\n".join(
        f"| `{w['name']}` | {w['flops'] / 1e6:.1f} | {w['random_records']} | {w['search_records']} | {w['valid']} | "
        f"{w['failed']} | {_us(w['best_seconds'])} | {_us(w['median_seconds'])} | "
        f"{_size(out / w['name']) / 1e3:.0f} |"
        for w in manifest["workloads"])
    g = manifest["generation"]
    tuning = sum(w["random_seconds"] + w["search_seconds"] for w in manifest["workloads"])
    budgets = sorted({(w["random_trials"], w["search_trials"]) for w in manifest["workloads"]})
    budgets = "; ".join(f"{r} random trials ({g['random_per_iter']} per batch, seed {g['seed']}), then {s} searched "
                        f"trials ({g['search_per_iter']} per batch, seed {g['seed'] + 1})" for r, s in budgets)
    text = f"""# CPU cost-model dataset

Measured fp32 tensor programs for training and evaluating learned cost models: per workload, a
MetaSchedule work_dir (`database_workload.json`, `database_tuning_record.json`, exactly as
`ms.tune_tir` writes them) holding random programs (`ReplayTrace`) followed by searched ones
(`EvolutionarySearch` + `XGBModel(num_warmup_samples=0)`), appended by two `tune_tir` runs on the same
work_dir. Failed builds/runs are kept (run_secs 1e10; `load_records` gives them latency `inf`).
`manifest.json` has the same figures as the table, machine-readable.

Load it with

```python
from pruner_ms.bench.dataset import load_records, split_by_workload
data = load_records("tests/data/cpu_dataset")  # {{name: WorkloadRecords(name, mod, candidates, latencies, target, ...)}}
train, test = split_by_workload(list(data), "dense-1x1024x1024")
```

## How it was produced

- Command: `{g['command']}` ({tuning / 60:.1f} min of tuning in all; per
  workload, in min: {', '.join(f"{w['name']} {(w['random_seconds'] + w['search_seconds']) / 60:.1f}" for w in manifest['workloads'])})
- Date: {g['date']}
- Host: {g['cpu']}, {g['cores']} cores; target `{json.dumps(manifest['target'])}`
  (`pruner_ms.host_cpu_spec().target()`)
- TVM {g['tvm']}, builder `WarmPoolBuilder(max_workers={g['cores']})`, runner `LocalRunner` with
  `EvaluatorConfig({', '.join(f'{k}={v}' for k, v in manifest['evaluator'].items())})`
- Budgets per workload: {budgets}
- Size on disk: {_size(out) / 1e6:.2f} MB

Records are in the order they were measured: the first `random_records` of a workload (manifest) come
from `ReplayTrace`, the rest from the search (`WorkloadRecords.sources` says which). Latencies are the
mean of a record's `run_secs` (one per repeat). They were measured on a 2-core machine that other jobs
shared at the time, so expect some percent of noise, more for the shortest programs.

Regenerate with `.venv/bin/python scripts/make_dataset.py` (it overwrites the workloads it tunes;
defaults: all workloads, 150 random + 150 searched trials) or with the command above for these
budgets; `--readme-only` rewrites this file from `manifest.json`.

| workload | MFLOP | random | searched | valid | failed | best (us) | median valid (us) | KB |
|---|---|---|---|---|---|---|---|---|
{rows}
"""
    (out / "README.md").write_text(text)


def _us(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.1f}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import tvm
    from tvm.s_tir import meta_schedule as ms

    import pruner_ms

    spec = pruner_ms.host_cpu_spec()
    target_dict = spec.target()
    target = tvm.target.Target(target_dict)
    out: Path = args.out
    if args.readme_only:
        write_manifest_and_readme(out, json.loads((out / MANIFEST_FILE).read_text()))
        return 0
    out.mkdir(parents=True, exist_ok=True)
    old = {}
    if args.resume and (out / MANIFEST_FILE).exists():
        old = {w["name"]: w for w in json.loads((out / MANIFEST_FILE).read_text()).get("workloads", [])}
    builder = pruner_ms.WarmPoolBuilder(max_workers=spec.cores)
    runner = ms.runner.LocalRunner(evaluator_config=ms.runner.EvaluatorConfig(**EVALUATOR))
    command = "python scripts/make_dataset.py" + ("" if argv is None and len(sys.argv) == 1 else
                                                  " " + shlex.join(argv if argv is not None else sys.argv[1:]))
    manifest = {
        "target": target_dict, "evaluator": EVALUATOR,
        "generation": {
            "command": command, "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "cpu": cpu_model_name(), "cores": spec.cores, "tvm": tvm.__version__,
            "random_trials": args.random_trials, "search_trials": args.search_trials,
            "random_per_iter": args.random_per_iter, "search_per_iter": args.search_per_iter, "seed": args.seed,
            "wall_seconds": 0.0,
        },
        "workloads": [],
    }
    start = time.perf_counter()
    for name in args.workloads:
        if name in old and (out / name / RECORD_FILE).exists():
            print(f"[make_dataset] {name}: kept from the previous run ({old[name]['records']} records)", flush=True)
            manifest["workloads"].append(old[name])
            continue
        print(f"[make_dataset] {name}: tuning {args.random_trials} random + {args.search_trials} searched", flush=True)
        with tempfile.TemporaryDirectory(prefix=f"dataset-{name}-") as tmp:
            entry = tune_workload(name, work_dir=Path(tmp), target=target, builder=builder, runner=runner,
                                  random_trials=args.random_trials, search_trials=args.search_trials,
                                  random_per_iter=args.random_per_iter, search_per_iter=args.search_per_iter,
                                  seed=args.seed, cores=spec.cores)
            dest = out / name
            if dest.exists():
                shutil.rmtree(dest)
            dest.mkdir(parents=True)
            for fname in (WORKLOAD_FILE, RECORD_FILE):
                shutil.copy(Path(tmp) / fname, dest / fname)
        manifest["workloads"].append(entry)
        manifest["generation"]["wall_seconds"] = round(time.perf_counter() - start, 1)
        write_manifest_and_readme(out, manifest)
        print(f"[make_dataset] {name}: {entry['records']} records ({entry['valid']} valid, {entry['failed']} failed), "
              f"best {_us(entry['best_seconds'])} us, median {_us(entry['median_seconds'])} us, "
              f"{entry['random_seconds'] + entry['search_seconds']:.0f} s; dataset {_size(out) / 1e6:.2f} MB",
              flush=True)
    manifest["generation"]["wall_seconds"] = round(time.perf_counter() - start, 1)
    write_manifest_and_readme(out, manifest)
    print(f"[make_dataset] done in {manifest['generation']['wall_seconds'] / 60:.1f} min: {out} "
          f"({_size(out) / 1e6:.2f} MB)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

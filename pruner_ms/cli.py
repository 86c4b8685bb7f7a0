"""``pruner-ms``: tune kernels, compile models, run suites, compare runs, train PaCM, inspect work_dirs.

Every command prints a tqdm bar over trials while tuning and exits non-zero with a one-line
reason on bad input (2) or a failed check (1).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import textwrap

EPILOG = textwrap.dedent("""\
    examples:
      pruner-ms tune --workload gemm-512 --trials 64 --work-dir runs/gemm    # re-run to resume
      pruner-ms tune --tvmscript my_kernel.py --trials 128 --work-dir runs/mine
      pruner-ms compile --model small-cnn --trials 192 --work-dir runs/cnn
      pruner-ms bench --suite cpu --strategies pruner,default --seeds 0,1 --out runs/suite-cpu
      pruner-ms compare runs/a runs/b        # two work_dirs, or two JSON results of bench/compare
      pruner-ms show runs/gemm
      pruner-ms train runs/* --out pacm.pt

    targets: "host" (this CPU, default), a tag such as nvidia/nvidia-a100, or a JSON dict such as
    '{"kind": "llvm", "mcpu": "znver4", "num-cores": 2}'. Runners: local, or rpc://HOST:PORT/KEY
    for an RPC tracker (python -m tvm.exec.rpc_tracker / rpc_server).
    """)


class CLIError(Exception):
    """Bad input: printed as one line, exit status 2."""


# -- argument helpers -------------------------------------------------------------------------------
def parse_target(text: str):
    from .hardware import host_cpu_spec
    from .integration.workarounds import normalize_target

    if text == "host":
        return normalize_target(host_cpu_spec().target())
    if text.lstrip().startswith("{"):
        try:
            return normalize_target(json.loads(text))
        except ValueError as err:
            raise CLIError(f"--target is not valid JSON: {err}") from None
    target = normalize_target(text)
    if target.kind.name != "llvm" and target.host is None:  # a GPU tag: this machine compiles the host side
        import tvm

        target = tvm.target.Target(target, host=host_cpu_spec().target())
    return target


def parse_seeds(text: str) -> list[int]:
    try:
        return [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise CLIError(f"--seeds must be a comma list of integers, got {text!r}") from None


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def resolve_workload(name: str):
    """A named workload: the built-in list, then every suite entry's name."""
    from .bench.suite import load_suite
    from .bench.workloads import WORKLOADS, get_workload, workload_from_spec
    from .hardware.paths import config_files

    if name in WORKLOADS:
        return get_workload(name)
    known = list(WORKLOADS)
    for path in config_files("suites"):
        for spec in load_suite(str(path)).get("workloads", []):
            wl = workload_from_spec(spec)
            known.append(wl.name)
            if wl.name == name:
                return wl
    raise CLIError(f"unknown workload {name!r}; known: {', '.join(known)} (or pass --tvmscript FILE)")


def load_tvmscript(path: str):
    """The IRModule or PrimFunc a TVMScript file defines (a Python file with an ``@I.ir_module`` class
    or a ``@T.prim_func``; if it defines several, the one named ``Module`` or ``main``)."""
    import runpy

    import tvm

    if not os.path.exists(path):
        raise CLIError(f"--tvmscript {path}: no such file")
    try:
        namespace = runpy.run_path(path, run_name="__pruner_ms_tvmscript__")
    except Exception as err:  # noqa: BLE001  (parser errors are long; keep the first lines)
        first = "\n".join(str(err).strip().splitlines()[:6])
        raise CLIError(f"--tvmscript {path} does not parse as TVMScript ({type(err).__name__}):\n{first}") from None
    found = {k: v for k, v in namespace.items() if isinstance(v, (tvm.IRModule, tvm.tirx.PrimFunc))}
    for name in ("Module", "main"):
        if len(found) > 1 and name in found:
            return found[name]
    if len(found) != 1:
        raise CLIError(f"--tvmscript {path} defines {len(found)} IRModules/PrimFuncs ({', '.join(found) or 'none'}); "
                       "it must define one (or name the one to tune Module or main)")
    return next(iter(found.values()))


# -- commands -------------------------------------------------------------------------------------------
def cmd_tune(a) -> int:
    from .bench.compare import check_against_numpy, make_strategy
    from .integration.resume import measured_count, open_database
    from .integration.reuse import check_reuse_sources
    from .integration.runners import check_runner, make_runner
    from .integration.timeline import Timeline, TimelineCallback
    from .integration.tune import check_workload, task_modules, tune_tir

    if bool(a.workload) == bool(a.tvmscript):
        raise CLIError("give exactly one of --workload NAME and --tvmscript FILE")
    target = parse_target(a.target)
    workload = resolve_workload(a.workload) if a.workload else None
    mod = check_workload(workload.func if workload else load_tvmscript(a.tvmscript))
    runner = make_runner(a.runner)  # a bad runner or a GPU target without its GPU fails before any file exists
    check_runner(target, runner)
    check_reuse_sources(a.reuse or [])
    work_dir = a.work_dir or os.path.join("pruner_ms_runs", workload.name if workload else
                                          os.path.splitext(os.path.basename(a.tvmscript))[0])
    if not a.work_dir:
        print(f"pruner-ms tune: records go to {os.path.abspath(work_dir)} (--work-dir DIR to choose)", file=sys.stderr)
    cores = int((target.host or target).attrs.get("num-cores", 0) or os.cpu_count() or 1)
    strategy, cost_model = make_strategy(a.strategy, cores)
    done = sum(measured_count(open_database(work_dir), m) for m in task_modules(mod)) if os.path.isdir(work_dir) else 0
    timeline = Timeline(a.trials, progress=not a.no_progress, desc=f"{a.strategy} {a.workload or a.tvmscript}")
    if done and timeline.bar is not None:  # resumed: the bar starts at what the database already holds
        timeline.bar.update(min(done, a.trials))
    db = tune_tir(mod, target, work_dir, a.trials, strategy=strategy, cost_model=cost_model, reuse=a.reuse,
                  num_trials_per_iter=a.trials_per_iter, runner=runner, space=a.space, seed=a.seed,
                  measure_callbacks=_default_callbacks() + [TimelineCallback(timeline)])
    timeline.close()
    print(_describe_database(work_dir, top=3))
    if workload is not None and target.kind.name == "llvm" and not a.no_check:
        result = check_against_numpy(db, workload, target)
        print(f"numpy check: {'ok' if result['numpy_ok'] else 'FAILED'} (max abs error {result['max_abs_error']})")
        return 0 if result["numpy_ok"] else 1
    return 0


def _default_callbacks():
    from tvm.s_tir import meta_schedule as ms

    return list(ms.measure_callback.MeasureCallback.create("default"))


def cmd_compile(a) -> int:
    from .bench.compare import make_strategy
    from .bench.models import load_model
    from .integration.relax import compile_model
    from .integration.timeline import Timeline, TimelineCallback

    target = parse_target(a.target)
    try:
        model, inputs = load_model(a.model)
    except KeyError as err:
        raise CLIError(str(err.args[0])) from None
    cores = int((target.host or target).attrs.get("num-cores", 0) or os.cpu_count() or 1)
    strategy, cost_model = make_strategy(a.strategy, cores)
    timeline = Timeline(a.trials, progress=not a.no_progress, desc=f"{a.model} {a.strategy}")
    work_dir = a.work_dir or os.path.join("pruner_ms_runs", f"model-{a.model.replace(':', '-')}")
    if not a.work_dir:
        print(f"pruner-ms compile: records go to {os.path.abspath(work_dir)} (--work-dir DIR to choose)",
              file=sys.stderr)
    report = compile_model(model, inputs, target, work_dir, max_trials_global=a.trials,
                           max_trials_per_task=a.trials_per_task, num_trials_per_iter=a.trials_per_iter,
                           strategy=strategy, cost_model=cost_model, runner=a.runner, seed=a.seed,
                           callbacks=[TimelineCallback(timeline)], reuse=a.reuse, zero_measure=a.zero_measure,
                           task_scheduler=a.task_scheduler)
    timeline.close()
    print(report.format())
    if a.export:
        report.executable.export_library(a.export)
        print(f"wrote {a.export}")
    if report.max_abs_error is not None and report.max_abs_error > a.atol:
        print(f"FAILED: max abs error {report.max_abs_error:.3g} > --atol {a.atol}")
        return 1
    return 0


def cmd_bench(a) -> int:
    from .bench.compare import ProtocolError, check_strategies
    from .bench.suite import format_suite, load_suite, run_suite
    from .task_scheduler import TASK_SCHEDULERS

    suite = load_suite(a.suite)
    strategies = [s for s in a.strategies.split(",") if s]
    try:
        check_strategies(strategies)
    except ValueError as err:
        raise CLIError(str(err)) from None
    if a.remeasure_passes < 0:
        raise CLIError("--remeasure-passes must be 0 (tuning-time latencies only) or more")
    if a.remeasure_processes < 1:
        raise CLIError("--remeasure-processes must be 1 or more")
    schedulers = [s for s in (a.task_schedulers or "").split(",") if s] or None
    unknown = sorted(set(schedulers or ()) - set(TASK_SCHEDULERS))
    if unknown:
        raise CLIError(f"unknown task schedulers {unknown}; choose from {', '.join(TASK_SCHEDULERS)}")
    out = a.out or os.path.join("pruner_ms_runs", f"suite-{suite['name']}")
    try:
        result = run_suite(suite, strategies=strategies, seeds=parse_seeds(a.seeds), out_dir=out, trials=a.trials,
                           trials_per_iter=a.trials_per_iter, runner=a.runner, progress=not a.no_progress,
                           remeasure_passes=a.remeasure_passes,
                           remeasure_processes=a.remeasure_processes, include_models=not a.no_models,
                           only=[s for s in (a.only or "").split(",") if s] or None,
                           workloads=[s for s in (a.workloads or "").split(",") if s] or None,
                           task_schedulers=schedulers, zero_measure=a.zero_measure)
    except ProtocolError as err:
        raise CLIError(str(err)) from None
    print(format_suite(result))
    print(f"\nwrote {out}/suite.json, {out}/suite.md" + (f" and {len(result['plots'])} PNGs in {out}/curves"
                                                        if result.get("plots") else ""))
    failed = [r for r in result["runs"] if not r.get("numpy_ok", True)]
    return 1 if failed else 0


def cmd_compare(a) -> int:
    left, right = (_load_side(p) for p in (a.first, a.second))
    if left[0] == "json" and right[0] == "json":
        from .bench.compare import format_report

        for path, (_, data) in zip((a.first, a.second), (left, right)):
            print(f"## {path}\n")
            print(format_report(data.get("runs", []), data.get("summaries", {})))
        return 0
    if left[0] != right[0]:
        raise CLIError("compare two work_dirs or two JSON results, not one of each")
    print(compare_databases(left[1], right[1], a.first, a.second))
    return 0


def _load_side(path: str):
    from .integration.resume import RECORD_FILE

    if os.path.isdir(path):
        if not os.path.exists(os.path.join(path, RECORD_FILE)):
            raise CLIError(f"{path} holds no {RECORD_FILE}: not a MetaSchedule work_dir")
        from .integration.database import records_by_workload
        from .integration.resume import open_database

        return "db", records_by_workload(open_database(path, repair_tail=False))
    if not os.path.exists(path):
        raise CLIError(f"{path}: no such file or directory")
    try:
        with open(path, encoding="utf-8") as f:
            return "json", json.load(f)
    except ValueError as err:
        raise CLIError(f"{path} is neither a work_dir nor a JSON result ({err})") from None


def compare_databases(a: dict, b: dict, name_a: str, name_b: str) -> str:
    rows = [(f"| workload | best in {name_a} (ms) | best in {name_b} (ms) | ratio b/a | trials | "
             "trials for b to reach a's best | trials for a to reach b's best |"), "|---|---|---|---|---|---|---|"]
    for key in sorted(set(a) | set(b), key=lambda k: (a.get(k) or b.get(k))["name"]):
        la = a.get(key, {}).get("latencies", [])
        lb = b.get(key, {}).get("latencies", [])
        ba, bb = min(la, default=math.inf), min(lb, default=math.inf)
        name = (a.get(key) or b.get(key))["name"]
        rows.append(f"| {name} | {_ms_cell(ba)} | {_ms_cell(bb)} | "
                    f"{bb / ba if math.isfinite(ba) and math.isfinite(bb) else float('nan'):.3f} | {len(la)} / {len(lb)} | "
                    f"{_first_reach(lb, ba)} | {_first_reach(la, bb)} |")
    return "\n".join(rows)


def _ms_cell(seconds: float) -> str:
    return f"{seconds * 1e3:.4f}" if math.isfinite(seconds) else "none valid"


def _first_reach(latencies: list[float], target: float) -> str:
    for i, lat in enumerate(latencies):
        if lat <= target:
            return str(i + 1)
    return "not reached"


def cmd_show(a) -> int:
    print(_describe_database(_work_dir_or_error(a.work_dir), top=a.top, trace=a.trace))
    return 0


def _describe_database(work_dir: str, *, top: int = 5, trace: bool = False) -> str:
    from .integration.database import records_by_workload
    from .integration.resume import open_database

    lines = [f"work_dir {work_dir}"]
    by_wl = records_by_workload(open_database(work_dir, repair_tail=False))
    for entry in by_wl.values():
        lat = entry["latencies"]
        valid = sorted(x for x in lat if math.isfinite(x))
        lines.append(f"  {entry['name']}: {len(lat)} measured, {len(valid)} valid, {len(lat) - len(valid)} failed; "
                     f"best {_ms_cell(valid[0]) if valid else 'none'} ms")
        if valid:
            lines.append("    top: " + ", ".join(f"{x * 1e3:.4f}" for x in valid[:top]) + " ms")
        if trace and valid:
            lines.append(f"    best trace ({_ms_cell(valid[0])} ms):")
            lines.append(textwrap.indent("\n".join(entry["best"].trace.as_python(remove_postproc=True)), "      "))
    logs = os.path.join(work_dir, "logs")
    if os.path.isdir(logs):
        lines.append(f"  logs: {logs} ({len(os.listdir(logs))} files; build and run errors are there)")
    return "\n".join(lines)


def _work_dir_or_error(path: str) -> str:
    from .integration.resume import RECORD_FILE

    if not os.path.isdir(path) or not os.path.exists(os.path.join(path, RECORD_FILE)):
        raise CLIError(f"{path} is not a MetaSchedule work_dir (no {RECORD_FILE})")
    return path


def cmd_db(a) -> int:
    from .integration import database

    if a.action == "stats":
        print("| work_dir | workload | target | measured | valid | failed | best (ms) |")
        print("|---|---|---|---|---|---|---|")
        for wd in a.work_dirs:
            for s in database.database_stats(_work_dir_or_error(wd)):
                print(f"| {wd} | {s.name} | {s.target} | {s.measured} | {s.valid} | {s.failed} | "
                      f"{_ms_cell(s.best_seconds) if math.isfinite(s.best_seconds) else 'none'} |")
    elif a.action == "merge":
        if a.out is None:
            raise CLIError("db merge: say where the merged database goes with --out DIR")
        sources = [_work_dir_or_error(wd) for wd in a.work_dirs]
        if os.path.abspath(a.out) in {os.path.abspath(wd) for wd in sources}:
            raise CLIError("db merge: --out must not be one of the work_dirs merged")
        report = database.merge_databases(a.out, sources)
        print(f"merged {len(sources)} work_dir(s) into {a.out}: {report.added} records added, "
              f"{report.duplicates} already there (same workload, target and trace) skipped")
    else:  # export
        if a.out is None or len(a.work_dirs) != 1:
            raise CLIError("db export: one work_dir and --out FILE.jsonl")
        n = database.export_best(_work_dir_or_error(a.work_dirs[0]), a.out)
        print(f"wrote the best record of {n} workload(s) to {a.out}")
    return 0


def cmd_train(a) -> int:
    from .cost_model.train import main as train_main

    return train_main(a.args, prog="pruner-ms train")


# -- parser ---------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    from .bench.compare import STRATEGIES
    from .task_scheduler import TASK_SCHEDULERS

    p = argparse.ArgumentParser(prog="pruner-ms", description=__doc__.split("\n")[0], epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def common(sp, *, trials: int, per_iter: int = 32):
        sp.add_argument("--target", default="host", help="host (default), a tag, or a JSON dict")
        sp.add_argument("--trials", type=positive, default=trials, help=f"trial budget (default {trials})")
        sp.add_argument("--trials-per-iter", type=positive, default=per_iter, help="programs measured per round")
        sp.add_argument("--runner", default="local", help="local (default) or rpc://HOST:PORT/KEY")
        sp.add_argument("--no-progress", action="store_true", help="no tqdm bar")

    t = sub.add_parser("tune", help="tune one TIR workload (a named one or a TVMScript file)",
                       description="Tune one TIR workload; re-running with the same --work-dir resumes.")
    t.add_argument("--workload", help="a built-in or suite workload name, e.g. gemm-512, llama7b-up-32")
    t.add_argument("--tvmscript", help="a file holding an @I.ir_module class or a @T.prim_func")
    t.add_argument("--work-dir", help="database and logs (default pruner_ms_runs/<workload>)")
    t.add_argument("--strategy", default="pruner", choices=STRATEGIES)
    t.add_argument("--space", default="post-order-apply", help="post-order-apply (default) or cuda-tensorcore")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--no-check", action="store_true", help="skip the numpy check of named workloads")
    t.add_argument("--reuse", nargs="+", metavar="DIR", help="work_dirs (or a pruner-ms db merge database) whose "
                   "records for this target stand in for tuning: a workload found there is measured once here, "
                   "not tuned")
    common(t, trials=128)
    t.set_defaults(func=cmd_tune)

    c = sub.add_parser("compile", help="tune and compile a torch model into a Relax VM",
                       description="Tune every task of a torch model, compile it, check it against torch and "
                                   "time tuned vs untuned vs torch eager.")
    c.add_argument("--model", required=True, help="small-cnn, tiny-cnn, resnet18, resnet50, mobilenetv2, bert-layer "
                   "(random weights), or module:function returning (model, inputs)")
    c.add_argument("--work-dir", help="database and logs (default pruner_ms_runs/model-<name>)")
    c.add_argument("--trials-per-task", type=positive, help="cap per task (default: an even share)")
    c.add_argument("--strategy", default="pruner", choices=STRATEGIES)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--export", help="also write the tuned executable here (.so)")
    c.add_argument("--atol", type=float, default=1e-3, help="max abs error vs torch before exiting 1")
    c.add_argument("--zero-measure", action="store_true", help="measure nothing: compile the program the analyzer "
                   "ranks first for each task (seconds, not minutes); a later measured run in the same --work-dir "
                   "measures those drafts first and tunes on from there")
    c.add_argument("--task-scheduler", default="gradient", choices=TASK_SCHEDULERS,
                   help="how the trials are split between tasks: MetaSchedule's gradient or round-robin, or "
                   "headroom (the task with the largest weight x (best - roofline) x rate gets the next round)")
    c.add_argument("--reuse", nargs="+", metavar="DIR", help="work_dirs (or a pruner-ms db merge database) whose "
                   "records for this target stand in for tuning: a workload found there is measured once here, "
                   "not tuned")
    common(c, trials=128)
    c.set_defaults(func=cmd_compile)

    b = sub.add_parser("bench", help="run a benchmark suite (configs/suites) for several strategies and seeds",
                       description="Run a suite in one process; write JSON, a Markdown table and tuning curves. "
                                   "Strategies alternate their order with the seed; every run starts from an empty "
                                   "work dir. An --out holding an earlier suite.json (same suite, target, trials, "
                                   "trials per iter) is merged into: runs it holds are not repeated, the tables "
                                   "cover the union. Re-measurement is per invocation: run all strategies and seeds "
                                   "of a workload in one invocation for comparable re-measured numbers.")
    b.add_argument("--suite", required=True, help="cpu, tensorcore, or a suite JSON file")
    b.add_argument("--strategies", default="pruner,default", help=f"comma list of {', '.join(STRATEGIES)}")
    b.add_argument("--seeds", default="0,1", help="comma list (default 0,1)")
    b.add_argument("--trials", type=positive, help="per workload (default: the suite's)")
    b.add_argument("--trials-per-iter", type=positive, help="default: the suite's")
    b.add_argument("--out", help="output folder (default pruner_ms_runs/suite-<name>)")
    b.add_argument("--workloads", help="comma list of exact names (suite workloads or models, or short names such "
                                       "as dwconv-s2): run only these")
    b.add_argument("--only", help="comma list of names or substrings: run only matching workloads/models (an exact "
                                  "name matches only itself)")
    b.add_argument("--no-models", action="store_true", help="skip the suite's end-to-end models")
    b.add_argument("--task-schedulers", help=f"models: comma list of {', '.join(TASK_SCHEDULERS)}, each run with "
                   "every strategy (default: the model entry's, else gradient)")
    b.add_argument("--zero-measure", action="store_true", default=None,
                   help="models: also compile each with zero measurements (the analyzer's drafts), once per seed")
    b.add_argument("--remeasure-passes", type=int, default=2,
                   help="after tuning each workload, re-measure its runs' decisive programs this many round-robin "
                        "passes in each of --remeasure-processes fresh processes; the tables then use those "
                        "latencies (default 2; 0: tuning-time latencies, CPU only)")
    b.add_argument("--remeasure-processes", type=int, default=5,
                   help="fresh processes the re-measurement runs in, one after the other (a program's latency is "
                        "the mean over them: some programs' latency depends on the process's address layout; "
                        "default 5)")
    b.add_argument("--runner", default="local", help="local (default) or rpc://HOST:PORT/KEY")
    b.add_argument("--no-progress", action="store_true")
    b.set_defaults(func=cmd_bench)

    m = sub.add_parser("compare", help="compare two work_dirs or two JSON results",
                       description="Two work_dirs: best latency per workload and trials to reach each other's best. "
                                   "Two JSON results (bench/compare): their tables.")
    m.add_argument("first")
    m.add_argument("second")
    m.set_defaults(func=cmd_compare)

    s = sub.add_parser("show", help="what a work_dir holds", description="Workloads, measured/valid/failed counts, "
                                                                         "best latencies, optionally the best trace.")
    s.add_argument("work_dir")
    s.add_argument("--top", type=int, default=5)
    s.add_argument("--trace", action="store_true", help="print each workload's best trace")
    s.set_defaults(func=cmd_show)

    d = sub.add_parser("db", help="tuning databases: stats, merge, export",
                       description="stats WORK_DIR...: records per workload and target. merge WORK_DIR... --out DIR: "
                                   "copy every record into DIR's database, each once (same workload, target and "
                                   "trace). export WORK_DIR --out FILE.jsonl: the best record per workload.")
    d.add_argument("action", choices=("stats", "merge", "export"))
    d.add_argument("work_dirs", nargs="+", metavar="WORK_DIR")
    d.add_argument("--out", help="merge: the destination work_dir; export: the JSON-lines file")
    d.set_defaults(func=cmd_db)

    tr = sub.add_parser("train", help="train PaCM offline on work_dirs (python -m pruner_ms.cost_model.train)",
                        description="Everything after 'train' goes to python -m pruner_ms.cost_model.train "
                                    "(WORK_DIR... --out ckpt.pt [--epochs N] ...).", add_help=False)
    tr.add_argument("args", nargs=argparse.REMAINDER)
    tr.set_defaults(func=cmd_train)
    return p


def _needs_torch(a) -> bool:
    """Whether the command may hand TVM a torch object (models, PaCM); the others import TVM
    without torch, seconds sooner (:mod:`.integration.workarounds.torch_import`)."""
    strategies = [getattr(a, "strategy", None) or ""] + (getattr(a, "strategies", None) or "").split(",")
    return (a.command in ("compile", "train") or (a.command == "bench" and not a.no_models)
            or any(s.startswith(("pruner-pacm", "pruner-moa")) for s in strategies))


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv[:1] == ["train"]:  # the trainer's own command line, its -h/--help included (a REMAINDER
        # positional does not take arguments that start with '-', so argparse would reject them)
        a = argparse.Namespace(command="train", args=argv[1:], func=cmd_train)
    else:
        a = parser.parse_args(argv)
    if not _needs_torch(a):
        from .integration.workarounds.torch_import import import_tvm_without_torch

        import_tvm_without_torch()
    from .bench.suite import SuiteError
    from .integration.runners import NoGPUError
    from .integration.tensor_core import NotTensorizableError
    from .integration.relax import ModelImportError
    from .integration.resume import DatabaseError
    from .integration.reuse import ReuseError
    from .integration.runners import RunnerSpecError
    from .integration.tune import WorkloadError
    from .integration.workarounds import TargetError

    known = (CLIError, TargetError, WorkloadError, DatabaseError, SuiteError, RunnerSpecError, NoGPUError,
             NotTensorizableError, ModelImportError, ReuseError)
    try:
        return a.func(a)
    except known as err:
        print(f"pruner-ms {a.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"pruner-ms {a.command}: interrupted; what was measured is in the work_dir's database and a re-run "
              "with the same --work-dir resumes", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

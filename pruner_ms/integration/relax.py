"""Whole models: a ``torch.nn.Module`` to a tuned, runnable Relax VM, with PrunerSearch per task.

The path is TVM's own: ``torch.export`` -> ``from_exported_program`` -> inference decompositions ->
``ms.relax_integration.extract_tasks`` (legalize + fuse, the preparation ``compile_relax`` repeats so
the database keys match) -> ``ms.tune_tasks`` -> ``ms.relax_integration.compile_relax``.

What MetaSchedule does not do and this module does:

* A task without a valid measured record is compiled untuned, silently (on CPU as a plain
  single-threaded loop nest). :func:`tune_model` reports every such task by name and warns loudly.
* Re-running with the same work_dir resumes (see :mod:`.resume`): each task's records count
  against its budget.
* For a GPU target on a machine without that GPU, tuning needs a remote runner;
  :func:`compile_model` then tunes and builds only and says so.
"""
from __future__ import annotations

import dataclasses
import logging
import math
import time

import numpy as np
from tvm.s_tir import meta_schedule as ms

logger = logging.getLogger("pruner_ms")


class ModelImportError(ValueError):
    """The model could not be exported by ``torch.export`` or imported into Relax."""


@dataclasses.dataclass
class TaskReport:
    """One tuning task of a model."""

    name: str
    weight: float
    flops: float
    trials: int
    best_seconds: float | None  # None: no valid record, compiled untuned
    estimated: bool = False  # best_seconds is the analyzer's estimate (zero-measurement compile)

    @property
    def tuned(self) -> bool:
        return self.best_seconds is not None


@dataclasses.dataclass
class ModelReport:
    """What :func:`compile_model` did, with latencies in seconds (``None`` where not measured)."""

    tasks: list[TaskReport]
    tuned_seconds: float | None = None
    untuned_seconds: float | None = None
    torch_seconds: float | None = None
    max_abs_error: float | None = None
    tuning_seconds: float = 0.0
    executable: object = None  # relax.VMExecutable (tuned)

    @property
    def untuned_tasks(self) -> list[str]:
        return [t.name for t in self.tasks if not t.tuned]

    def format(self) -> str:
        drafted = any(t.estimated for t in self.tasks)
        rows = [f"| task | weight | trials | {'estimated' if drafted else 'best'} (us) | GFLOP/s |", "|---|---|---|---|---|"]
        for t in self.tasks:
            if t.tuned:
                gflops = t.flops / t.best_seconds / 1e9 if t.flops and t.best_seconds > 0 else math.nan
                rows.append(f"| {t.name} | {t.weight:g} | {t.trials} | {t.best_seconds * 1e6:.1f} | {gflops:.1f} |")
            else:
                rows.append(f"| {t.name} | {t.weight:g} | {t.trials} | **no valid record: UNTUNED** | |")
        lines = ["\n".join(rows)]
        tuned_label = "drafted, zero measurements (pruner_ms)" if drafted else "tuned (pruner_ms)"
        timing = [(label, v) for label, v in ((tuned_label, self.tuned_seconds),
                                              ("untuned (TVM default lowering)", self.untuned_seconds),
                                              ("torch eager", self.torch_seconds)) if v is not None]
        if timing:
            lines.append("\n".join(f"{label}: {v * 1e3:.3f} ms" for label, v in timing))
        if self.max_abs_error is not None:
            lines.append(f"max abs error vs torch: {self.max_abs_error:.3g}")
        if self.untuned_tasks:
            lines.append(f"WARNING: {len(self.untuned_tasks)} task(s) have no valid tuning record and run untuned: "
                         + ", ".join(self.untuned_tasks))
        return "\n\n".join(lines)


def import_torch_model(model, example_inputs: tuple):
    """``(IRModule, params)`` of a torch module via ``torch.export``; the weights are embedded as
    constants, so ``params`` is ``None``."""
    import torch
    from tvm import relax
    from tvm.relax.frontend.torch import from_exported_program

    model = model.eval()
    try:
        with torch.no_grad():
            exported = torch.export.export(model, tuple(example_inputs))
        mod = from_exported_program(exported)  # weights become constants: nothing to bind later
    except Exception as err:  # noqa: BLE001  (name the stage that failed)
        raise ModelImportError(
            f"could not import the model into Relax ({type(err).__name__}: {err}). It must be exportable "
            "with torch.export.export(model, example_inputs) and use operators TVM's torch frontend supports."
        ) from None
    params = None
    mod = relax.transform.DecomposeOpsForInference()(mod)
    mod = relax.transform.CanonicalizeBindings()(mod)
    return mod, params


def fuse_for_tuning(mod, target):
    """The legalize + fuse passes ``ms.relax_integration.compile_relax`` runs before it applies the
    database (TVM 0.27, relax_integration.py), so the tasks tuned here are the functions it looks up."""
    import tvm
    from tvm import relax
    from tvm.relax import pipeline as relax_pipeline

    try:
        dispatch = relax_pipeline.library_dispatch_passes(target)
    except (ValueError, AttributeError):
        dispatch = []
    with target:
        return tvm.transform.Sequential([
            *dispatch,
            relax.transform.LegalizeOps(),
            relax.transform.AnnotateTIROpPattern(),
            relax.transform.FoldConstant(),
            relax.transform.FuseOps(),
            relax.transform.FuseTIR(),
        ])(mod)


def extract_tasks(mod, target, params):
    """MetaSchedule's tasks of a Relax module (the fused TIR functions worth tuning)."""
    from tvm.relax.transform import BindParams

    if params:
        mod = BindParams("main", params)(mod)
    tasks = ms.relax_integration.extract_tasks(fuse_for_tuning(mod, target), target)
    return [t for t in tasks if not t.dispatched[0].attrs or not t.dispatched[0].attrs.get("tirx.is_scheduled", False)]


def tune_model(mod, params, target, work_dir: str, *, max_trials_global: int, max_trials_per_task: int | None = None,
               num_trials_per_iter: int = 32, strategy=None, cost_model="xgb", builder=None, runner="local",
               seed: int | None = None, callbacks=None, reuse: list[str] | None = None, task_scheduler="gradient"):
    """Tune every task of a Relax module with :class:`~pruner_ms.PrunerSearch`; return the database
    and one :class:`TaskReport` per task. Records already in ``work_dir`` count against the budgets.
    ``task_scheduler``: how the budget is split between tasks, a name of
    :data:`~pruner_ms.task_scheduler.TASK_SCHEDULERS` (``"headroom"``: the analyzer-guided
    :class:`~pruner_ms.task_scheduler.HeadroomScheduler`) or a MetaSchedule ``TaskScheduler``.
    ``reuse``: work_dirs (or a merged database) whose records for the same target stand in for tuning:
    a task found there has its best program measured once here and is not tuned
    (:func:`~pruner_ms.integration.reuse.reuse_records`)."""
    from ..strategy import PrunerSearch
    from .runners import check_runner
    from .measured_latency import record_seconds
    from .resume import measured_count, open_database, open_drafts
    from .runners import make_runner, start_runner
    from .tune import default_builder, verify_cost_model
    from .workarounds import keep_keyboard_interrupt, meta_schedule_logging, normalize_target, tensor_intrinsics_for

    from ..task_scheduler import make_task_scheduler
    from .resume import workload_key
    from .reuse import check_reuse_sources, reuse_records

    if max_trials_global <= 0:
        raise ValueError(f"max_trials_global must be a positive number of trials, got {max_trials_global}")
    task_scheduler = make_task_scheduler(task_scheduler)
    reuse = check_reuse_sources(reuse or [])
    target = normalize_target(target)
    runner = make_runner(runner)
    check_runner(target, runner)  # a GPU target measured here without the GPU: NoGPUError with the RPC recipe
    tasks = extract_tasks(mod, target, params)
    if not tasks:
        raise ValueError("the model has no operator MetaSchedule can tune (no fused TIR function was extracted)")
    per_task = max_trials_per_task or max(num_trials_per_iter, max_trials_global // len(tasks))
    database = open_database(work_dir)
    builder = builder if builder is not None else default_builder(target)
    reused = set()
    if reuse:
        with tensor_intrinsics_for(target):
            found = reuse_records(database, reuse, [t.dispatched[0] for t in tasks], target, builder=builder,
                                  runner=runner)
        reused = {t.task_name for t in tasks if found.get(workload_key(t.dispatched[0])) is not None
                  and found[workload_key(t.dispatched[0])].holds}
    done = {t.task_name: measured_count(database, t.dispatched[0]) for t in tasks}
    remaining = max_trials_global - sum(min(d, per_task) for d in done.values())
    strategy = strategy if strategy is not None else PrunerSearch()
    drafts = open_drafts(work_dir)
    if drafts is not None and isinstance(strategy, PrunerSearch) and strategy.seed_database is None:
        # a zero-measurement compile drafted here: each task's first batch measures its draft
        strategy = PrunerSearch(**{**strategy._params, "seed_database": drafts})
    cost_model = verify_cost_model(cost_model, strategy)
    with tensor_intrinsics_for(target):  # the TuneContexts made here import them
        contexts, weights = ms.relax_integration.extracted_tasks_to_tune_contexts(
            [t for t in tasks if done[t.task_name] < per_task and t.task_name not in reused], work_dir,
            strategy=strategy, seed=seed)
        if remaining > 0 and contexts:
            measure_callbacks = list(ms.measure_callback.MeasureCallback.create("default")) + list(callbacks or [])
            keep_keyboard_interrupt()  # a Ctrl-C during tuning stops it (and the CLI says how to resume)
            with meta_schedule_logging():
                ms.tune_tasks(
                    tasks=contexts, task_weights=weights, work_dir=work_dir, max_trials_global=remaining,
                    max_trials_per_task=per_task, num_trials_per_iter=num_trials_per_iter,
                    builder=builder,
                    runner=start_runner(runner), database=database, cost_model=cost_model,
                    measure_callbacks=measure_callbacks, task_scheduler=task_scheduler,
                )
    reports = []
    for t in tasks:
        top = database.get_top_k(database.commit_workload(t.dispatched[0]), 1) if database.has_workload(
            t.dispatched[0]) else []
        best = record_seconds(top[0]) if top else math.inf
        best = best if math.isfinite(best) else None
        reports.append(TaskReport(t.task_name, float(t.weight), _task_flops(t.dispatched[0]),
                                  measured_count(database, t.dispatched[0]), best))
    untuned = [r.name for r in reports if not r.tuned]
    if untuned:
        logger.warning("%d task(s) have NO valid tuning record and will be compiled untuned: %s. "
                       "Raise the trial budget or check the build/run errors in %s/logs.",
                       len(untuned), ", ".join(untuned), work_dir)
    return database, reports


def draft_model(mod, params, target, *, seed: int | None = None, population_size: int | None = None,
                num_threads: int | None = None, work_dir: str | None = None):
    """A compile with zero measurements: every task gets the program the symbolic analyzer ranks first
    among ``population_size`` programs sampled from its design space (PrunerSearch's cold-start draft,
    :meth:`~pruner_ms.PrunerSearch.best_drafts`); no builder, no runner. Returns a ``MemoryDatabase``
    for ``compile_relax`` (the work_dir's measured records are not touched) and one :class:`TaskReport`
    per task, whose ``best_seconds`` is the analyzer's estimate. A smaller ``population_size`` (default:
    PrunerSearch's, 1,536) drafts faster and more roughly. With ``work_dir`` the drafts are also saved
    there, apart from the measured records (:func:`~pruner_ms.integration.resume.open_drafts`): a
    measured :func:`tune_model` in that work_dir then measures each task's draft in its first batch,
    so tuning continues from the zero-measurement compile instead of from scratch."""
    import os

    from tvm.s_tir.meta_schedule.utils import fork_seed

    from ..strategy import PrunerSearch
    from .resume import open_drafts
    from .workarounds import normalize_target, tensor_intrinsics_for

    target = normalize_target(target)
    tasks = extract_tasks(mod, target, params)
    if not tasks:
        raise ValueError("the model has no operator MetaSchedule can tune (no fused TIR function was extracted)")
    threads = num_threads or int(target.attrs.get("num-cores", 0) or 0) or os.cpu_count() or 1
    database = ms.database.MemoryDatabase()
    saved = open_drafts(work_dir, create=True) if work_dir is not None else None
    reports = []
    with tensor_intrinsics_for(target):
        for task, rand_state in zip(tasks, fork_seed(seed, n=len(tasks))):
            strategy = PrunerSearch(population_size=population_size, population_per_trial=None)  # nothing measured: the whole population
            ctx = ms.TuneContext(mod=task.dispatched[0], target=task.target, space_generator="post-order-apply",
                                 search_strategy=strategy, task_name=task.task_name, rand_state=rand_state,
                                 num_threads=threads)
            ctx.pre_tuning(max_trials=1, num_trials_per_iter=1, design_spaces=ctx.generate_design_space(),
                           database=ms.database.MemoryDatabase(), cost_model=None)
            drafts = strategy.best_drafts(1)
            ctx.post_tuning()
            seconds = None
            if drafts and math.isfinite(drafts[0][0]):
                seconds, sch = drafts[0]
                for db in (database, saved) if saved is not None else (database,):
                    db.commit_tuning_record(ms.database.TuningRecord(
                        sch.trace, db.commit_workload(task.dispatched[0]), [seconds], task.target,
                        ms.arg_info.ArgInfo.from_entry_func(sch.mod, remove_preproc=True)))
            reports.append(TaskReport(task.task_name, float(task.weight), _task_flops(task.dispatched[0]), 0, seconds,
                                      estimated=True))
    untuned = [r.name for r in reports if not r.tuned]
    if untuned:
        logger.warning("%d task(s) have no program the analyzer could draft and are compiled untuned: %s",
                       len(untuned), ", ".join(untuned))
    return database, reports


def _task_flops(mod) -> float:
    try:
        from tvm.s_tir.analysis import estimate_tir_flops

        return float(estimate_tir_flops(mod))
    except Exception:  # noqa: BLE001  (FLOPs are for display only)
        return 0.0


def build_untuned(mod, target, params):
    """The model compiled with TVM's default lowering, no tuning (the baseline a user would get)."""
    db = ms.database.MemoryDatabase()
    return ms.relax_integration.compile_relax(db, mod, target, params)


def time_vm(executable, device, inputs: list[np.ndarray], *, repeat: int = 20) -> tuple[float, list[np.ndarray]]:
    """Median seconds of one forward pass of a Relax VM, and its outputs."""
    import tvm
    from tvm import relax

    vm = relax.VirtualMachine(executable, device)
    args = [tvm.runtime.tensor(x, device) for x in inputs]
    out = vm["main"](*args)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        vm["main"](*args)
        device.sync()
        times.append(time.perf_counter() - t)
    outs = [out] if not _is_tuple(out) else list(out)
    return float(np.median(times)), [o.numpy() for o in outs]


def _is_tuple(obj) -> bool:
    return not hasattr(obj, "numpy")


def time_torch(model, example_inputs: tuple, *, repeat: int = 20) -> tuple[float, list[np.ndarray]]:
    import torch

    with torch.no_grad():
        out = model(*example_inputs)
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            model(*example_inputs)
            times.append(time.perf_counter() - t)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return float(np.median(times)), [o.detach().numpy() for o in outs]


def compile_model(model, example_inputs: tuple, target, work_dir: str, *, max_trials_global: int,
                  max_trials_per_task: int | None = None, num_trials_per_iter: int = 32, strategy=None,
                  cost_model="xgb", builder=None, runner="local", seed: int | None = None,
                  compare: bool = True, repeat: int = 20, callbacks=None, reuse: list[str] | None = None,
                  zero_measure: bool = False, task_scheduler="gradient") -> ModelReport:
    """Tune and compile a torch model; on a local target also run it, check it against torch and time
    tuned vs untuned vs torch eager.

    Parameters
    ----------
    model : torch.nn.Module
        The model (put in eval mode).
    example_inputs : tuple of torch.Tensor
        Inputs for ``torch.export`` and for the correctness check.
    target : dict, str tag or Target
        Compilation target (``pruner_ms.host_cpu_spec().target()`` for this CPU).
    work_dir : str
        Where the database and logs go; re-running with it resumes.
    max_trials_global, max_trials_per_task, num_trials_per_iter :
        Budgets, as in ``ms.tune_relax``; ``max_trials_per_task`` defaults to an even share.
    compare : bool
        Run and time the tuned, untuned and torch versions (only where the target's device exists).
    reuse : list of str, optional
        Work_dirs (or a merged database) whose records stand in for tuning the tasks they hold (see
        :func:`tune_model`).
    task_scheduler : str or TaskScheduler
        How the budget is split between tasks (see :func:`tune_model`).
    zero_measure : bool
        Measure nothing: compile each task's analyzer-drafted program (:func:`draft_model`, which
        saves the drafts in ``work_dir``, so a later measured run there starts from them); the
        budgets, builder, runner and ``reuse`` are unused.

    Returns
    -------
    ModelReport
        Per-task table, latencies, max abs error vs torch and the tuned executable.
    """
    import tvm

    from .runners import gpu_available
    from .workarounds import normalize_target

    target = normalize_target(target)
    mod, params = import_torch_model(model, example_inputs)
    start = time.perf_counter()
    if zero_measure:
        database, tasks = draft_model(mod, params, target, seed=seed, work_dir=work_dir)
    else:
        database, tasks = tune_model(mod, params, target, work_dir, max_trials_global=max_trials_global,
                                     max_trials_per_task=max_trials_per_task, num_trials_per_iter=num_trials_per_iter,
                                     strategy=strategy, cost_model=cost_model, builder=builder, runner=runner,
                                     seed=seed, callbacks=callbacks, reuse=reuse, task_scheduler=task_scheduler)
    report = ModelReport(tasks, tuning_seconds=time.perf_counter() - start)
    report.executable = ms.relax_integration.compile_relax(database, mod, target, params)
    kind = str(target.kind.name)
    if not compare:
        return report
    if kind != "llvm" and not gpu_available(target):
        logger.warning("no %s device on this machine: the model was tuned and built but not run or checked",
                       kind.upper())
        return report
    device = tvm.cpu(0) if kind == "llvm" else tvm.device(kind, 0)
    inputs = [x.detach().numpy() for x in example_inputs]
    report.tuned_seconds, outs = time_vm(report.executable, device, inputs, repeat=repeat)
    report.untuned_seconds, _ = time_vm(build_untuned(mod, target, params), device, inputs, repeat=repeat)
    report.torch_seconds, ref = time_torch(model, example_inputs, repeat=repeat)
    report.max_abs_error = max(float(np.max(np.abs(o.astype(np.float64) - r))) for o, r in zip(outs, ref))
    return report

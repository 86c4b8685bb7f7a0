"""``tune_tir`` with pruner_ms's defaults and input checks in front of MetaSchedule's."""
from __future__ import annotations

import logging

from tvm import IRModule, tirx
from tvm.s_tir import meta_schedule as ms

from .builders import CudaBuilder, WarmPoolBuilder
from .resume import measured_count, open_database
from .runners import check_runner, make_runner, start_runner
from .tensor_core import TENSOR_CORE_SPACE, check_tensorizable, tensor_core_space
from .workarounds import (
    keep_keyboard_interrupt,
    meta_schedule_logging,
    normalize_target,
    tensor_intrinsics_for,
)

logger = logging.getLogger("pruner_ms")


class WorkloadError(ValueError):
    """The module given to tuning has nothing MetaSchedule could schedule."""


def _has_block(func: tirx.PrimFunc) -> bool:
    from ..analysis.loop_nest import extract_nests

    return bool(extract_nests(func))


def check_workload(mod) -> IRModule:
    """Return ``mod`` as an IRModule, or raise :class:`WorkloadError` if there is nothing to tune."""
    if isinstance(mod, tirx.PrimFunc):
        mod = IRModule({"main": mod})
    if not isinstance(mod, IRModule):
        raise WorkloadError(f"expected a tirx.PrimFunc or an IRModule, got {type(mod).__name__}")
    funcs = [f for _, f in mod.functions.items() if isinstance(f, tirx.PrimFunc)]
    if not funcs:
        raise WorkloadError(
            "the IRModule holds no PrimFunc, so there is nothing to tune. For a Relax model use "
            "ms.relax_integration.tune_relax (tasks are extracted from it), for TE use te.create_prim_func."
        )
    if not any(_has_block(f) for f in funcs):
        raise WorkloadError(
            "the workload has nothing to tune: its PrimFuncs contain no computation blocks. "
            "Compile it directly with tvm.compile."
        )
    return mod


def default_builder(target, *, max_workers: int | None = None):
    """The builder :func:`tune_tir` uses when none is given: :class:`~pruner_ms.integration.builders.CudaBuilder`
    (tvm.compile + nvcc) for CUDA targets, :class:`~pruner_ms.WarmPoolBuilder` otherwise."""
    if target.kind.name == "cuda":
        host = target.host if target.host is not None else target
        return CudaBuilder(max_workers=max_workers or int(host.attrs.get("num-cores", 0) or 0) or None)
    return WarmPoolBuilder(max_workers=max_workers or int(target.attrs.get("num-cores", 0) or 0) or None)


def verify_cost_model(cost_model, strategy, *, num_tuning_cores=None):
    """The cost model to tune with. ``"xgb"`` with :class:`~pruner_ms.PrunerSearch` becomes
    MetaSchedule's XGBoost model without its 100-sample random warm-up, so that the verify stage ranks
    drafts from the first measured batch; the model is made here, nothing the caller passed is changed.
    Any other model or strategy is passed on as given."""
    from ..strategy import EvolutionaryDraftSearch, PrunerSearch

    if isinstance(cost_model, str) and cost_model == "xgb" and isinstance(strategy, (PrunerSearch,
                                                                                     EvolutionaryDraftSearch)):
        cores = num_tuning_cores if isinstance(num_tuning_cores, int) else None
        return ms.cost_model.XGBModel(num_warmup_samples=0, num_tuning_cores=cores)
    return cost_model


def task_modules(mod) -> list[IRModule]:
    """The per-task modules ``ms.tune_tir`` commits to its database for ``mod`` (one per PrimFunc)."""
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    mod = _normalize_mod(mod) if isinstance(mod, tirx.PrimFunc) else mod
    return [_normalize_mod(f) for _, f in sorted(
        ((gv.name_hint, f) for gv, f in mod.functions_items() if isinstance(f, tirx.PrimFunc)), key=lambda x: x[0])]


def tune_tir(mod, target, work_dir: str, max_trials_global: int, *, strategy=None, cost_model="xgb",
             builder=None, runner="local", num_trials_per_iter: int = 64, resume: bool = True,
             reuse: list[str] | None = None, **kwargs):
    """Tune a TIR workload with :class:`~pruner_ms.PrunerSearch` (default) through ``ms.tune_tir``.

    Differences from calling ``ms.tune_tir`` directly: the target is checked (legacy strings get an
    error that shows the dict form), the workload must have something to tune, the budget must be
    positive, and the builder defaults to :class:`~pruner_ms.WarmPoolBuilder` (LLVM) or
    :class:`~pruner_ms.integration.builders.CudaBuilder` (CUDA). For a GPU target measured by the local
    runner (``runner`` not given, ``"local"`` or a ``LocalRunner``) on a machine without that GPU,
    :class:`~pruner_ms.integration.runners.NoGPUError` is raised before anything else.
    ``space="cuda-tensorcore"`` selects MetaSchedule's tensor-core rules, postprocs and mutators, and
    a workload none of whose sketches tensorizes raises
    :class:`~pruner_ms.integration.tensor_core.NotTensorizableError`. ``runner`` also takes
    ``"rpc://HOST:PORT/KEY"`` (TVM's RPC tracker, see :func:`~pruner_ms.integration.runners.make_runner`).

    With ``resume=True`` (default) the work_dir's database is checked first
    (:func:`~pruner_ms.integration.resume.open_database`) and the programs it already holds for this
    workload count against ``max_trials_global``: a re-run continues where the last one stopped and a
    finished run measures nothing more. ``reuse`` (work_dirs of earlier runs, or a database merged
    with ``pruner-ms db merge``): a workload that this work_dir holds nothing of but one of those does,
    for the same target, has its best program there measured once here and committed to this
    work_dir (:func:`~pruner_ms.integration.reuse.reuse_records`); when every workload of ``mod`` is
    found so, nothing is tuned. Other keywords pass through unchanged.
    """
    from ..strategy import PrunerSearch

    if max_trials_global <= 0:
        raise ValueError(f"max_trials_global must be a positive number of trials, got {max_trials_global}")
    if reuse:
        from .reuse import check_reuse_sources

        reuse = check_reuse_sources(reuse)  # before any file is written
    if num_trials_per_iter <= 0:
        raise ValueError(f"num_trials_per_iter must be positive, got {num_trials_per_iter}")
    target = normalize_target(target)
    runner = make_runner(runner)
    check_runner(target, runner)  # no local measurement without the GPU
    mod = check_workload(mod)
    if kwargs.get("space") == TENSOR_CORE_SPACE:
        check_tensorizable(mod, target)
        kwargs["space"] = tensor_core_space()
    if builder is None:
        builder = default_builder(target)
    strategy = strategy if strategy is not None else PrunerSearch(resume=resume)
    cost_model = verify_cost_model(cost_model, strategy, num_tuning_cores=kwargs.get("num_tuning_cores"))
    own_database = "database" not in kwargs  # the work_dir's, opened (and checked) here
    if reuse:
        from .resume import workload_key
        from .reuse import reuse_records

        database = kwargs["database"] = kwargs.get("database") or open_database(work_dir)
        modules = task_modules(mod)
        with tensor_intrinsics_for(target):
            found = reuse_records(database, reuse, modules, target, builder=builder, runner=runner)
        if all(workload_key(m) in found and found[workload_key(m)].holds for m in modules):
            return database
    if resume and own_database:
        database = kwargs["database"] = kwargs.get("database") or open_database(work_dir)
        done = sum(measured_count(database, m) for m in task_modules(mod))
        if done:
            logger.warning("resuming %s: %d of %d trials already measured, %d to go", work_dir, done,
                           max_trials_global, max(0, max_trials_global - done))
        if done >= max_trials_global:
            return database
        # PrunerSearch subtracts its task's records from the per-task cap itself; other strategies
        # get the remaining budget as their cap
        per_task = kwargs.get("max_trials_per_task") or max_trials_global
        if not getattr(strategy, "resumes_from_database", False):
            per_task = min(per_task, max_trials_global - done)
        kwargs["max_trials_per_task"] = per_task
        max_trials_global -= done
    keep_keyboard_interrupt()  # a Ctrl-C during tuning stops it (and the CLI says how to resume)
    with meta_schedule_logging(), tensor_intrinsics_for(target):
        return ms.tune_tir(
            mod, target, work_dir, max_trials_global, num_trials_per_iter=num_trials_per_iter,
            strategy=strategy, cost_model=cost_model,
            builder=builder, runner=start_runner(runner), **kwargs,
        )

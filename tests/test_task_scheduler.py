"""HeadroomScheduler: the roofline floor, the ranking rule, and real tuning of a toy two-task network."""
from __future__ import annotations

import math

import pytest
import tvm
from tvm import te
from tvm.s_tir import meta_schedule as ms

from pruner_ms import PrunerSearch
from pruner_ms.analysis import analyzer_for_target
from pruner_ms.analysis.roofline import roofline
from pruner_ms.bench.workloads import gemm
from pruner_ms.integration.database import records_by_workload
from pruner_ms.integration.resume import workload_key
from pruner_ms.task_scheduler import HeadroomRule, HeadroomScheduler, TaskProgress, make_task_scheduler


def _add_one(n: int) -> tvm.IRModule:
    a = te.placeholder((n,), name="A")
    b = te.compute((n,), lambda i: a[i] + 1.0, name="B")
    return tvm.IRModule({"main": te.create_prim_func([a, b])})


def _gemm_mod(n: int) -> tvm.IRModule:
    return tvm.IRModule({"main": gemm(n, n, n).func})


# ---- roofline -------------------------------------------------------------------------------------

def test_roofline_of_a_gemm_is_its_fma_peak_and_of_an_add_its_bandwidth(target):
    spec = analyzer_for_target(target).spec
    g = roofline(_gemm_mod(256), spec)
    assert g.flops == 2 * 256 ** 3 and g.bytes == 3 * 256 * 256 * 4
    peak = spec.cores * spec.frequency_ghz * 1e9 * spec.flops_per_cycle(spec.lanes(4), 4)
    assert g.seconds == pytest.approx(g.flops / peak) and not g.memory_bound
    a = roofline(_add_one(1 << 20), spec)
    assert a.bytes == 2 * (1 << 20) * 4 and a.memory_bound
    assert a.seconds == pytest.approx(a.memory_seconds) and a.memory_seconds > a.compute_seconds


def test_roofline_refuses_a_module_with_several_functions(target):
    spec = analyzer_for_target(target).spec
    mod = tvm.IRModule({"a": _gemm_mod(16)["main"], "b": _add_one(16)["main"]})
    with pytest.raises(ValueError, match="one PrimFunc"):
        roofline(mod, spec)


# ---- the ranking rule ---------------------------------------------------------------------------------

def _task(name, best_curve, *, floor=0.0, weight=1.0):
    return TaskProgress(name, weight, floor, list(best_curve), trials=8 * len(best_curve))


def test_the_round_goes_to_the_largest_weighted_headroom():
    rule = HeadroomRule()
    near_floor = _task("add", [1.0e-3], floor=0.9e-3)  # 0.1 ms to gain
    far = _task("gemm", [1.0e-3], floor=0.1e-3)  # 0.9 ms to gain
    assert rule.choose([near_floor, far], [0, 1]) == 1
    # the weight counts: a near-floor task that runs ten times in the network
    heavy = _task("add", [1.0e-3], floor=0.9e-3, weight=10.0)
    assert rule.choose([heavy, far], [0, 1]) == 0
    # a terminated task is never chosen
    assert rule.choose([near_floor, far], [0]) == 0


def test_the_curve_refines_the_rate():
    rule = HeadroomRule(prior_rate=0.3)
    stuck = _task("stuck", [2.0e-3, 2.0e-3, 1.999e-3], floor=0.1e-3)  # large headroom, nothing closes it
    moving = _task("moving", [2.0e-3, 1.5e-3, 1.2e-3], floor=0.5e-3)
    assert rule.rate(moving) > rule.rate(stuck) >= rule.min_rate
    assert rule.choose([stuck, moving], [0, 1]) == 1


def test_a_flattened_task_waits_while_another_improves_and_a_failing_task_goes_first_then_last():
    rule = HeadroomRule(patience=2, tolerance=0.01)
    flat = _task("flat", [5.0e-3, 4.99e-3, 4.99e-3], floor=0.0)  # the largest gain, but flat
    small = _task("small", [1.0e-3], floor=0.5e-3)
    assert rule.has_flattened(flat) and not rule.has_flattened(small)
    assert rule.choose([flat, small], [0, 1]) == 1
    assert rule.choose([flat, small], [0]) == 0  # when it is the only one left it still gets rounds
    failing = _task("failing", [math.inf], floor=0.0)
    assert rule.choose([flat, small, failing], [0, 1, 2]) == 2
    failed = _task("failed", [math.inf, math.inf], floor=0.0)
    assert rule.choose([failed, small], [0, 1]) == 1


@pytest.mark.parametrize("kwargs, match", [({"window": 0}, "at least 1"), ({"prior_rate": 0.0}, "prior_rate"),
                                           ({"min_rate": 2.0}, "min_rate"), ({"tolerance": -1}, "tolerance")])
def test_bad_rule_parameters_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        HeadroomRule(**kwargs)


def test_make_task_scheduler_names():
    assert isinstance(make_task_scheduler("gradient"), ms.task_scheduler.GradientBased)
    assert isinstance(make_task_scheduler("round-robin"), ms.task_scheduler.RoundRobin)
    assert isinstance(make_task_scheduler("headroom"), ms.task_scheduler.TaskScheduler)
    with pytest.raises(ValueError, match="unknown task scheduler 'fifo'.*headroom"):
        make_task_scheduler("fifo")


# ---- real tuning ------------------------------------------------------------------------------------

def _context(mod, target, name, *, space="post-order-apply", seed=0):
    return ms.TuneContext(mod=mod, target=target, space_generator=space,
                          search_strategy=PrunerSearch(population_size=64, draft_size=32),
                          task_name=name, rand_state=seed, num_threads=2)


def test_a_toy_network_spends_its_rounds_on_the_task_with_the_larger_gap(target, builder, tmp_path):
    # a 128^3 GEMM (far from its FMA peak untuned) and an add of 4,096 floats (microseconds, near its
    # bandwidth bound from the first batch): after the warm-up round each, the GEMM gets the rounds
    tasks = [_context(_add_one(4096), target, "add"), _context(_gemm_mod(128), target, "gemm")]
    scheduler = HeadroomScheduler()
    ms.tune_tasks(tasks=tasks, task_weights=[1.0, 1.0], work_dir=str(tmp_path), max_trials_global=40,
                  max_trials_per_task=40, num_trials_per_iter=8, builder=builder,
                  runner=ms.runner.LocalRunner(), database=ms.database.MemoryDatabase(), cost_model="random",
                  task_scheduler=scheduler)
    add, gemm_task = scheduler.progress
    assert scheduler.picks[:2] == [0, 1]  # the warm-up: one round each, in order
    assert scheduler.picks[2] == 1
    assert gemm_task.trials > add.trials
    assert gemm_task.floor_seconds > 0 and add.floor_seconds > 0
    assert gemm_task.best_seconds - gemm_task.floor_seconds > add.best_seconds - add.floor_seconds


def test_a_task_with_a_single_program_gets_one_trial(target, builder, tmp_path):
    single = ms.space_generator.ScheduleFn(sch_fn=lambda sch: sch, sch_rules=[], postprocs=[], mutator_probs={})
    tasks = [_context(_add_one(4096), target, "as-is", space=single), _context(_gemm_mod(64), target, "gemm")]
    scheduler = HeadroomScheduler()
    database = ms.database.MemoryDatabase()
    ms.tune_tasks(tasks=tasks, task_weights=[1.0, 1.0], work_dir=str(tmp_path), max_trials_global=24,
                  max_trials_per_task=24, num_trials_per_iter=8, builder=builder,
                  runner=ms.runner.LocalRunner(), database=database, cost_model="random",
                  task_scheduler=scheduler)
    assert scheduler.progress[0].trials == 1 and scheduler.picks.count(0) == 1
    measured = records_by_workload(database)
    assert len(measured[workload_key(tasks[0].mod)]["latencies"]) == 1
    assert len(measured[workload_key(tasks[1].mod)]["latencies"]) == 24  # its whole per-task budget

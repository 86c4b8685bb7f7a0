"""MetaSchedule's search-strategy contract, checked the way TVM tests its own strategies.

A ``TuneContext`` with a ``ScheduleFn`` space, TVM's ``DummyMutator`` (it resamples every decision),
MetaSchedule's ``RandomModel`` and a ``MemoryDatabase``; most tests play the task scheduler (hand out
a batch, report its results, commit its records, in MetaSchedule's order), one runs MetaSchedule's
own (``ms.tune_tasks``) with TVM's ``DummyBuilder`` and ``DummyRunner``, so no program is built or run.
"""
from __future__ import annotations

import logging

import pytest
import tvm
import tvm_ffi
from tvm.ir.utils import derived_object
from tvm.s_tir import Schedule
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule.postproc import PyPostproc
from tvm.s_tir.meta_schedule.runner import RunnerResult
from tvm.s_tir.meta_schedule.testing.dummy_object import DummyBuilder, DummyMutator, DummyRunner
from tvm.s_tir.schedule import Trace

from pruner_ms import EvolutionaryDraftSearch, PrunerSearch
from pruner_ms.bench.workloads import gemm
from pruner_ms.integration.database import compiled_schedule
from pruner_ms.integration.measured_latency import METASCHEDULE_FAILED_SECONDS

from .conftest import pruner_ms_log

SMALL = {"population_size": 32, "draft_size": 16}


def _tile_gemm(sch):
    c = sch.get_sblock("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, sch.sample_perfect_tile(i, n=2))
    j0, j1 = sch.split(j, sch.sample_perfect_tile(j, n=2))
    k0, k1 = sch.split(k, sch.sample_perfect_tile(k, n=2))
    sch.reorder(i0, j0, k0, i1, k1, j1)


def _leave_as_is(sch):
    return sch


def _context(target, sch_fn, *, n: int = 64, seed: int = 0, strategy=None, postprocs=(), **strategy_kwargs):
    mod = tvm.IRModule({"main": gemm(n, n, n).func})
    return ms.TuneContext(
        mod=mod, target=target,
        space_generator=ms.space_generator.ScheduleFn(sch_fn=sch_fn, sch_rules=[], postprocs=list(postprocs),
                                                      mutator_probs={DummyMutator(): 1.0}),
        search_strategy=strategy or PrunerSearch(**{**SMALL, **strategy_kwargs}), task_name="contract", rand_state=seed,
        num_threads=2,
    )


def _key(sch) -> int:
    return int(tvm_ffi.structural_hash(sch.mod))


def _play(context, database, *, max_trials: int, per_iter: int, latency=lambda i: 1e-3 * (1 + i % 7),
          on_round=None):
    """Run the strategy as MetaSchedule's task scheduler would; return the batches handed out
    (``on_round()`` is called after each batch is handed out)."""
    strategy = context.search_strategy
    spaces = context.space_generator.generate_design_space(context.mod)
    strategy.pre_tuning(max_trials, per_iter, spaces, database, ms.cost_model.RandomModel(seed=0))
    workload = database.commit_workload(context.mod)
    batches, count = [], 0
    while (cands := strategy.generate_measure_candidates()) is not None:
        if on_round is not None:
            on_round()
        results = []
        for cand in cands:
            results.append(RunnerResult([latency(count)], None))
            count += 1
        # MetaSchedule's order (TaskSchedulerNode::JoinRunningTask): the strategy hears the results
        # first, then the measure callbacks commit them to the database
        strategy.notify_runner_results(cands, results)
        for cand, result in zip(cands, results):
            database.commit_tuning_record(ms.database.TuningRecord(cand.sch.trace, workload, result.run_secs,
                                                                   context.target, cand.args_info))
        batches.append(cands)
        assert len(batches) < 100, "the strategy never stopped"
    strategy.post_tuning()
    return batches


def test_every_budget_and_batch_size_is_honoured_without_repeats(target):
    context = _context(target, _tile_gemm)
    batches = _play(context, ms.database.MemoryDatabase(), max_trials=20, per_iter=7)
    assert [len(b) for b in batches] == [7, 7, 6]
    keys = [_key(c.sch) for b in batches for c in b]
    assert len(set(keys)) == len(keys) == 20


@pytest.mark.parametrize("strategy", ["pruner", "evolutionary-draft"])
def test_metaschedules_task_scheduler_spends_the_budget_on_new_programs(target, tmp_path, strategy):
    """Through ``ms.tune_tasks`` (MetaSchedule's task scheduler and measure callbacks) with TVM's dummy
    builder and runner: each run spends its budget exactly, on distinct programs, and a second run
    over the same database measures none that the first did (``resume=False``: MetaSchedule's
    meaning of the budget, this run's trials; ``resume=True`` counts the first run's against it)."""
    database = ms.database.MemoryDatabase()
    for run in range(2):
        search = (PrunerSearch(**SMALL, resume=False) if strategy == "pruner" else
                  EvolutionaryDraftSearch(population_size=32, drafts_per_pick=2))
        context = _context(target, _tile_gemm, seed=run, strategy=search)
        ms.tune_tasks(tasks=[context], task_weights=[1.0], work_dir=str(tmp_path / f"run{run}"),
                      max_trials_global=20, num_trials_per_iter=8, builder=DummyBuilder(), runner=DummyRunner(),
                      database=database, cost_model=ms.cost_model.RandomModel(seed=0),
                      measure_callbacks=[ms.measure_callback.AddToDatabase()])
        records = database.get_all_tuning_records()
        keys = [_key(compiled_schedule(context.mod, r.trace)) for r in records]
        assert len(records) == 20 * (run + 1) and len(set(keys)) == len(keys)


def test_no_program_the_database_holds_is_handed_out_valid_or_failed(target):
    database = ms.database.MemoryDatabase()
    # a first run: half of its programs failed (MetaSchedule records them at 1e10 s)
    first = _play(_context(target, _tile_gemm, seed=1), database, max_trials=16, per_iter=8,
                  latency=lambda i: METASCHEDULE_FAILED_SECONDS if i % 2 else 1e-3)
    held = {_key(c.sch) for b in first for c in b}
    assert len(held) == 16
    second = _play(_context(target, _tile_gemm, seed=2, resume=False), database, max_trials=16, per_iter=8)
    handed = [_key(c.sch) for b in second for c in b]
    assert handed and not held & set(handed)
    assert len(set(handed)) == len(handed)


def test_each_record_replays_to_the_program_handed_out(target):
    """``compiled_schedule`` of a committed record is the program the strategy handed out, with the
    postprocessors' work in it: here MetaSchedule's own LLVM space, whose postprocessors parallelize,
    vectorize and unroll (replayed without them, the programs differ)."""
    mod = tvm.IRModule({"main": gemm(64, 64, 64).func})
    context = ms.TuneContext(mod=mod, target=target, space_generator=ms.space_generator.PostOrderApply(),
                             search_strategy=PrunerSearch(**SMALL), task_name="records", rand_state=0,
                             num_threads=2)
    database = ms.database.MemoryDatabase()
    batches = _play(context, database, max_trials=12, per_iter=6)
    handed = sorted(_key(c.sch) for b in batches for c in b)
    records = database.get_all_tuning_records()
    assert len(set(handed)) == len(records) == 12
    assert sorted(_key(compiled_schedule(mod, rec.trace)) for rec in records) == handed
    without_postprocs = []
    for rec in records:
        sch = Schedule(mod)
        rec.trace.apply_to_schedule(sch, remove_postproc=True)
        without_postprocs.append(_key(sch))
    assert not set(without_postprocs) & set(handed)


def test_the_batch_just_measured_is_the_next_rounds_measured_best(target):
    """Each batch is faster than the last, so the best measured programs at round k are batch k-1's.
    MetaSchedule reports a batch's results before its callbacks commit it to the database: a
    strategy that reads its measured best from the database there lags a batch behind (round 1
    without any measured parent for its local search)."""
    strategy = PrunerSearch(**SMALL)  # held: its Python side is read
    context = _context(target, _tile_gemm, seed=4, strategy=strategy)
    tops, profiles = [], []

    def on_round():
        tops.append({c.key for c in strategy._inst.measured_top})
        profiles.append(dict(strategy._inst.last_round_profile))

    batches = _play(context, ms.database.MemoryDatabase(), max_trials=32, per_iter=8, on_round=on_round,
                    latency=lambda i: 1e-3 / (1 + i))
    assert len(batches) == 4
    for k in range(1, 4):
        assert tops[k] and tops[k] <= {_key(c.sch) for c in batches[k - 1]}, k
    assert all(p["picks_local"] > 0 for p in profiles[1:]), [p["picks_local"] for p in profiles]


def test_a_space_without_decisions_is_measured_once(target):
    batches = _play(_context(target, _leave_as_is), ms.database.MemoryDatabase(), max_trials=16, per_iter=8)
    assert [len(b) for b in batches] == [1]


def _stale_trace() -> Trace:
    """A trace of another workload (a 48^3 GEMM whose block is named "D"): committed under the 48^3
    GEMM, it does not apply (TVM resamples a tile decision that no longer divides its loop, so a
    trace of another shape would still replay)."""
    from tvm import te

    a, b = te.placeholder((48, 48), name="A"), te.placeholder((48, 48), name="B")
    k = te.reduce_axis((0, 48), name="k")
    d = te.compute((48, 48), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="D")
    sch = Schedule(te.create_prim_func([a, b, d]))
    i, _, _ = sch.get_loops(sch.get_sblock("D"))
    sch.split(i, sch.sample_perfect_tile(i, n=2))
    return sch.trace


def test_a_record_whose_trace_no_longer_applies_is_skipped(target):
    database = ms.database.MemoryDatabase()
    new = _context(target, _tile_gemm, n=48)
    database.commit_tuning_record(ms.database.TuningRecord(_stale_trace(), database.commit_workload(new.mod),
                                                           [1e-3], target, None))
    batches = _play(new, database, max_trials=8, per_iter=8)
    assert sum(len(b) for b in batches) == 7  # the stale record counts against the budget (resume) but is not fatal


def test_evolutionary_draft_keeps_the_contract(target):
    """``EvolutionaryDraftSearch``: budgets and batch sizes exactly, no repeat, none of an earlier run's
    programs (failed ones included) measured again, a space without decisions measured once, a record
    whose trace no longer applies skipped."""
    def evolutionary_draft():
        return EvolutionaryDraftSearch(population_size=32, drafts_per_pick=2)

    database = ms.database.MemoryDatabase()
    first = _play(_context(target, _tile_gemm, seed=1, strategy=evolutionary_draft()), database, max_trials=20,
                  per_iter=7, latency=lambda i: METASCHEDULE_FAILED_SECONDS if i % 2 else 1e-3)
    assert [len(b) for b in first] == [7, 7, 6]
    held = {_key(c.sch) for b in first for c in b}
    assert len(held) == 20
    second = _play(_context(target, _tile_gemm, seed=2, strategy=evolutionary_draft()), database, max_trials=16,
                   per_iter=8)
    handed = [_key(c.sch) for b in second for c in b]
    assert len(handed) == len(set(handed)) == 16 and not held & set(handed)
    batches = _play(_context(target, _leave_as_is, strategy=evolutionary_draft()), ms.database.MemoryDatabase(),
                    max_trials=16, per_iter=8)
    assert [len(b) for b in batches] == [1]
    stale_db = ms.database.MemoryDatabase()
    new = _context(target, _tile_gemm, n=48, strategy=evolutionary_draft())
    stale_db.commit_tuning_record(ms.database.TuningRecord(_stale_trace(), stale_db.commit_workload(new.mod),
                                                           [1e-3], target, None))
    with pruner_ms_log(logging.WARNING) as seen:
        assert sum(len(b) for b in _play(new, stale_db, max_trials=8, per_iter=8)) == 8
    assert any("1 of 1 records of contract in the database no longer replay" in m for m in seen), seen


@pytest.mark.parametrize("per_iter", [1, 5])
def test_small_batches(target, per_iter):
    batches = _play(_context(target, _tile_gemm), ms.database.MemoryDatabase(), max_trials=5, per_iter=per_iter)
    assert sum(len(b) for b in batches) == 5 and all(len(b) <= per_iter for b in batches)


def test_a_draft_made_in_the_background_hands_out_no_program_twice_and_reproduces(target):
    """``overlap_draft``: the next round's draft runs while the batch is measured (here: while the test
    commits it); every batch is still new, each background draft is collected, its scores are the
    analyzer's own estimates, and a seed reproduces the run."""
    def run():
        strategy = PrunerSearch(**SMALL, draft_every=1, overlap_draft=True)  # held: its Python side is read
        profiles: list[dict] = []
        batches = _play(_context(target, _tile_gemm, seed=3, strategy=strategy), ms.database.MemoryDatabase(),
                        max_trials=24, per_iter=6, on_round=lambda: profiles.append(dict(strategy._inst.last_round_profile)))
        return strategy._inst, batches, profiles

    strategy, batches, profiles = run()
    keys = [_key(c.sch) for b in batches for c in b]
    assert len(batches) == 4 and len(set(keys)) == len(keys) == 24
    # rounds 1-3 took the draft that ran in the background after the round before them
    assert [p.get("background_drafted", 0) for p in profiles] == [0, 1, 1, 1]
    assert all(p["background_total_s"] > 0 and "draft_wait_s" in p for p in profiles[1:])
    assert strategy._pending_draft is None and strategy._draft_executor is None  # post_tuning collected it
    _, again, _ = run()
    assert [_key(c.sch) for b in again for c in b] == keys


def test_background_draft_scores_are_the_analyzers_estimates(target):
    wrapper = PrunerSearch(**SMALL, draft_every=1, overlap_draft=True)
    context = _context(target, _tile_gemm, seed=4, strategy=wrapper)
    strategy = wrapper._inst
    spaces = context.space_generator.generate_design_space(context.mod)
    strategy.pre_tuning(12, 6, spaces, ms.database.MemoryDatabase(), ms.cost_model.RandomModel(seed=0))
    assert strategy.generate_measure_candidates() is not None
    assert strategy._pending_draft is not None  # started when the batch was handed out
    strategy._take_background_draft()
    assert strategy.drafts
    for score, cand in strategy.drafts:
        assert score == pytest.approx(1.0 / strategy.analyzer.estimate_seconds(cand.sch.mod), rel=1e-12)
    strategy.post_tuning()


@derived_object
class EveryOtherPostprocRaises(PyPostproc):
    """A postproc that raises on every second program (a fault, not a rejection: that returns False)."""

    def __init__(self) -> None:
        self.calls = 0

    def _initialize_with_tune_context(self, context) -> None:
        pass

    def apply(self, sch) -> bool:
        self.calls += 1
        if self.calls % 2 == 0:
            raise RuntimeError("postproc fault")
        return True

    def clone(self):
        return EveryOtherPostprocRaises()


class RaisingAnalyzer:
    def estimate_seconds(self, mod) -> float:
        raise ValueError("cannot read this program")


def _warnings_while(fn) -> list[str]:
    with pruner_ms_log(logging.WARNING) as seen:
        fn()
    return seen


def test_replays_that_raise_are_counted_and_warned_about_and_the_search_goes_on(target):
    """A replay or mutation that raises drops that candidate, never the search; a round where it
    happens often says so, with the first error (a postproc that rejects a program is no error)."""
    strategy = PrunerSearch(**SMALL, native_sampling=False)  # held: its Python side is read
    context = _context(target, _tile_gemm, postprocs=[EveryOtherPostprocRaises()], strategy=strategy)
    batches, profiles = [], []
    seen = _warnings_while(lambda: batches.extend(_play(
        context, ms.database.MemoryDatabase(), max_trials=16, per_iter=8,
        on_round=lambda: profiles.append(dict(strategy._inst.last_round_profile)))))
    assert [len(b) for b in batches] == [8, 8]
    assert all(p["replay_errors"] > 0.1 * p["replays"] for p in profiles), profiles
    replay = [m for m in seen if "traces raised an error" in m]
    assert replay and all(m.endswith("first error: RuntimeError: postproc fault") for m in replay), seen


def test_an_analyzer_that_raises_is_warned_about_and_the_search_goes_on(target):
    context = _context(target, _tile_gemm, analyzer=RaisingAnalyzer())
    batches = []
    seen = _warnings_while(lambda: batches.extend(
        _play(context, ms.database.MemoryDatabase(), max_trials=16, per_iter=8)))
    assert [len(b) for b in batches] == [8, 8]
    failed = [m for m in seen if "the analyzer failed on" in m]
    assert failed and all(m.endswith("first error: ValueError: cannot read this program") for m in failed), seen


def test_a_healthy_search_warns_of_no_failure(target):
    seen = _warnings_while(lambda: _play(_context(target, _tile_gemm), ms.database.MemoryDatabase(),
                                         max_trials=16, per_iter=8))
    assert not [m for m in seen if "raised an error" in m or "failed on" in m], seen

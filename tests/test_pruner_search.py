"""PrunerSearch through real MetaSchedule tuning on the local CPU (small budgets)."""
from __future__ import annotations

import logging

import pytest
import tvm
import tvm_ffi
from tvm.s_tir import meta_schedule as ms

from pruner_ms import PrunerSearch, tune_tir
from pruner_ms.bench.workloads import gemm

from .conftest import failing_builder, program_key, pruner_ms_log, run_and_check

SMALL = dict(population_size=64, draft_size=32)


def _records(work_dir: str, workload) -> list:
    db = ms.database.JSONDatabase(work_dir=work_dir)
    return [r for r in db.get_all_tuning_records()]


def _program_keys(records, func) -> list[int]:
    return [program_key(func, rec.trace) for rec in records]


@pytest.mark.slow
def test_tune_tir_matches_numpy_and_never_repeats(tmp_path, target, builder, gemm64):
    wd = str(tmp_path / "wd")
    db = ms.tune_tir(gemm64.func, target, wd, max_trials_global=24, num_trials_per_iter=8,
                     strategy=PrunerSearch(**SMALL), builder=builder, num_tuning_cores=2, seed=7)
    sch = ms.tir_integration.compile_tir(db, gemm64.func, target)
    assert sch is not None
    assert run_and_check(sch.mod, gemm64, target) < 1e-3
    records = _records(wd, gemm64)
    assert len(records) == 24
    keys = _program_keys(records, gemm64.func)
    assert len(set(keys)) == len(keys), "a program was measured twice"

    # the same work_dir, 16 trials more (resume=False: the database seeds but does not count) -> only
    # new programs are measured
    ms.tune_tir(gemm64.func, target, wd, max_trials_global=16, num_trials_per_iter=8,
                strategy=PrunerSearch(**SMALL, resume=False), builder=builder, num_tuning_cores=2, seed=8)
    keys2 = _program_keys(_records(wd, gemm64), gemm64.func)
    assert len(keys2) == 40 and len(set(keys2)) == 40


@pytest.mark.slow
def test_a_draft_overlapping_measurement_tunes_through_tune_tir(tmp_path, target, builder, gemm64):
    """``overlap_draft`` under MetaSchedule's own task scheduler, builder and runner: the next draft
    runs while the batch is built and measured, nothing is measured twice, the result is right."""
    from pruner_ms.integration.timeline import TimedStrategy, Timeline

    wd = str(tmp_path / "wd")
    timeline = Timeline(16, progress=False)
    strat = TimedStrategy(PrunerSearch(**SMALL, draft_every=1, overlap_draft=True), timeline)
    db = ms.tune_tir(gemm64.func, target, wd, max_trials_global=16, num_trials_per_iter=8, strategy=strat,
                     builder=builder, num_tuning_cores=2, seed=9)
    # round 1 took the draft made while round 0's batch was measured
    assert [p.get("background_drafted", 0) for p in timeline.round_profiles] == [0, 1]
    # each round's profile says what its batch measured, per source, and which source set a new best
    first = timeline.round_profiles[0]
    assert first["improved_by"] in ("draft", "random")  # anything valid beats nothing measured
    assert first[f"measured_best_ms_{first['improved_by']}"] == min(
        v for k, v in first.items() if k.startswith("measured_best_ms_"))
    keys = _program_keys(_records(wd, gemm64), gemm64.func)
    assert len(keys) == 16 and len(set(keys)) == 16
    sch = ms.tir_integration.compile_tir(db, gemm64.func, target)
    assert sch is not None and run_and_check(sch.mod, gemm64, target) < 1e-3


@pytest.mark.slow
def test_cold_start_measures_analyzer_drafts(tmp_path, target, builder):
    """With an untrained model the first batch is the analyzer's best drafts: far better than random."""
    wl = gemm(256, 256, 256)
    strat = PrunerSearch(**SMALL)
    ctx = ms.TuneContext(tvm.IRModule({"main": wl.func}), target=target,
                         space_generator=ms.space_generator.PostOrderApply(), search_strategy=strat,
                         num_threads=2, rand_state=5)
    ctx.pre_tuning(8, 8, ctx.generate_design_space(), ms.database.MemoryDatabase(), ms.cost_model.XGBModel())
    drafts = ctx.generate_measure_candidates()
    assert len(drafts) == 8
    rand = ms.TuneContext(tvm.IRModule({"main": wl.func}), target=target,
                          space_generator=ms.space_generator.PostOrderApply(),
                          search_strategy=ms.search_strategy.ReplayTrace(), num_threads=2, rand_state=5)
    rand.pre_tuning(64, 64, rand.generate_design_space(), ms.database.MemoryDatabase(), ms.cost_model.RandomModel())
    randoms = rand.generate_measure_candidates()

    def run(c):
        ex = tvm.compile(c.sch.mod, target=target)
        import numpy as np

        args = [tvm.runtime.tensor(np.ones((256, 256), "float32")) for _ in range(3)]
        return ex.mod.time_evaluator("main", tvm.cpu(), number=2, repeat=1)(*args).mean

    best_draft = min(run(c) for c in drafts)
    median_random = sorted(run(c) for c in randoms[:16])[8]
    assert best_draft < median_random / 2


@pytest.mark.slow
def test_xgb_warmup_is_shortened_only_when_asked(target):
    """A user's XGBModel is left as it is unless ``xgb_warmup_samples`` asks; pruner_ms's entry points
    make their own XGBoost model without the warm-up."""
    from pruner_ms.integration.tune import verify_cost_model

    wl = gemm(64, 64, 64)
    for options, warmup in (({}, 100), ({"xgb_warmup_samples": 0}, 0)):
        cm = ms.cost_model.XGBModel()  # 100 random-prediction samples by default
        ctx = ms.TuneContext(tvm.IRModule({"main": wl.func}), target=target,
                             space_generator=ms.space_generator.PostOrderApply(),
                             search_strategy=PrunerSearch(**SMALL, **options), num_threads=2, rand_state=1)
        ctx.pre_tuning(8, 8, ctx.generate_design_space(), ms.database.MemoryDatabase(), cm)
        assert cm.num_warmup_samples == warmup
    assert verify_cost_model("xgb", PrunerSearch()).num_warmup_samples == 0
    assert verify_cost_model("xgb", ms.search_strategy.EvolutionarySearch()) == "xgb"


@pytest.mark.slow
def test_failed_builds_are_recorded_and_search_continues(tmp_path, target, builder, gemm64):
    wd = str(tmp_path / "wd")
    db = ms.tune_tir(gemm64.func, target, wd, max_trials_global=16, num_trials_per_iter=8,
                     strategy=PrunerSearch(**SMALL), builder=failing_builder(builder, 3), num_tuning_cores=2, seed=3)
    records = _records(wd, gemm64)
    assert len(records) == 16
    failed = [r for r in records if r.run_secs is None or any(float(x) >= 1e9 for x in r.run_secs)]
    assert len(failed) == 16 // 3
    assert ms.tir_integration.compile_tir(db, gemm64.func, target) is not None


def test_bad_inputs_raise_clear_errors(tmp_path, target, gemm64):
    from pruner_ms import TargetError, WorkloadError

    with pytest.raises(TargetError, match=r"'kind': 'llvm'"):
        tune_tir(gemm64.func, "llvm -mcpu=znver4 -num-cores=2", str(tmp_path), 8)
    with pytest.raises(TargetError, match="generic x86-64"):
        tune_tir(gemm64.func, "llvm", str(tmp_path), 8)
    with pytest.raises(ValueError, match="positive"):
        tune_tir(gemm64.func, target, str(tmp_path), 0)
    with pytest.raises(ValueError, match="positive"):
        tune_tir(gemm64.func, target, str(tmp_path), -5)

    empty = tvm.IRModule({"main": _empty_func()})
    with pytest.raises(WorkloadError, match="nothing to tune"):
        tune_tir(empty, target, str(tmp_path), 8)
    with pytest.raises(WorkloadError, match="no PrimFunc"):
        tune_tir(tvm.IRModule({}), target, str(tmp_path), 8)
    with pytest.raises(ValueError, match="draft_size"):
        PrunerSearch(draft_size=0)


def test_strategy_rejects_bad_budget_directly(target, gemm64):
    strat = PrunerSearch(**SMALL)
    ctx = ms.TuneContext(tvm.IRModule({"main": gemm64.func}), target=target,
                         space_generator=ms.space_generator.PostOrderApply(), search_strategy=strat,
                         num_threads=2, rand_state=1)
    with pytest.raises(Exception, match="max_trials must be positive"):
        ctx.pre_tuning(0, 8, ctx.generate_design_space(), ms.database.MemoryDatabase(), ms.cost_model.RandomModel())


def _empty_func():
    from tvm.script import tirx as T

    @T.prim_func(s_tir=True)
    def nothing(A: T.Buffer((4,), "float32")):
        T.evaluate(0)

    return nothing


@pytest.mark.slow
def test_symbolic_cost_model_in_stock_evolutionary_search(tmp_path, target, builder, gemm64):
    """The analyzer alone is a MetaSchedule CostModel: the stock search runs with it."""
    from pruner_ms import SymbolicCostModel

    db = ms.tune_tir(gemm64.func, target, str(tmp_path / "wd"), max_trials_global=8, num_trials_per_iter=8,
                     strategy=ms.search_strategy.EvolutionarySearch(population_size=32, genetic_num_iters=1),
                     cost_model=SymbolicCostModel(), builder=builder, num_tuning_cores=2, seed=2)
    sch = ms.tir_integration.compile_tir(db, gemm64.func, target)
    assert sch is not None and run_and_check(sch.mod, gemm64, target) < 1e-3


def test_symbolic_cost_model_scores_each_program_once(target, gemm64):
    """Its cache gives the analyzer's scores without asking the analyzer again for a program it has
    scored (structurally equal schedules are one program); the least recently used go first."""
    import numpy as np
    from tvm.s_tir import Schedule
    from tvm.s_tir.meta_schedule.arg_info import ArgInfo
    from tvm.s_tir.meta_schedule.search_strategy import MeasureCandidate

    from pruner_ms import SymbolicCostModel
    from pruner_ms.analysis import analyzer_for_target

    class Counting:
        def __init__(self):
            self.inner, self.calls = analyzer_for_target(target), 0

        def estimate_seconds(self, mod) -> float:
            self.calls += 1
            return self.inner.estimate_seconds(mod)

    cands = []
    for factor in (4, 8, 16):
        sch = Schedule(gemm64.func)
        i, _, _ = sch.get_loops(sch.get_sblock("C"))
        sch.split(i, [None, factor])
        cands.append(MeasureCandidate(sch, ArgInfo.from_entry_func(sch.mod, remove_preproc=True)))
    context = ms.TuneContext(tvm.IRModule({"main": gemm64.func}), target=target)
    cached, uncached, small = Counting(), Counting(), Counting()
    scores = SymbolicCostModel(cached).predict(context, cands + cands)
    np.testing.assert_array_equal(scores, SymbolicCostModel(uncached, cache_size=0).predict(context, cands + cands))
    assert (cached.calls, uncached.calls) == (3, 6)
    model = SymbolicCostModel(small, cache_size=1)
    model.predict(context, cands)
    model.predict(context, cands[2:] + cands[:1])  # the last one is kept, the first was dropped
    assert small.calls == 4
    with pytest.raises(ValueError, match="cache_size must be >= 0"):
        SymbolicCostModel(cache_size=-1)
    assert model.failures == 0 and model.evaluations == 4

    class Failing(Counting):  # reads the first program it is asked about, fails on the others
        def estimate_seconds(self, mod) -> float:
            if self.calls >= 1:
                raise ValueError("cannot read this one")
            return super().estimate_seconds(mod)

    failing = SymbolicCostModel(Failing())
    with pruner_ms_log(logging.WARNING) as seen:
        scores = failing.predict(context, cands)
    assert (failing.failures, failing.evaluations) == (2, 3) and sum(scores == 0) == 2 and scores.max() > 0
    assert seen == ["SymbolicCostModel: the analyzer failed on 2 of 3 programs (they score 0 and rank last, so "
                    "the search degrades towards random); first error: ValueError: cannot read this one"]


def test_cold_random_share_hedges_the_first_batch(target):
    """With ``cold_random_share`` the first batch mixes drafts and random samples (the trust's first
    fair evidence)."""
    wl = gemm(128, 128, 128)
    strat = PrunerSearch(**SMALL, cold_random_share=0.5)
    ctx = ms.TuneContext(tvm.IRModule({"main": wl.func}), target=target,
                         space_generator=ms.space_generator.PostOrderApply(), search_strategy=strat,
                         num_threads=2, rand_state=2)
    ctx.pre_tuning(16, 8, ctx.generate_design_space(), ms.database.MemoryDatabase(), ms.cost_model.XGBModel())
    assert len(ctx.generate_measure_candidates()) == 8
    prof = strat._inst.last_round_profile
    assert prof["picks_random"] == 4 and prof["picks_draft"] == 4
    with pytest.raises(ValueError, match="cold_random_share"):
        PrunerSearch(cold_random_share=1.5)


def test_best_drafts_are_what_the_first_batch_measures_first(target):
    """``best_drafts`` (the zero-measurement compile's choice) drafts the round that the first
    ``generate_measure_candidates`` then picks from: the analyzer's first program is measured first,
    and no second draft is made."""
    wl = gemm(128, 128, 128)
    strat = PrunerSearch(**SMALL)
    ctx = ms.TuneContext(tvm.IRModule({"main": wl.func}), target=target,
                         space_generator=ms.space_generator.PostOrderApply(), search_strategy=strat,
                         num_threads=2, rand_state=5)
    ctx.pre_tuning(16, 8, ctx.generate_design_space(), ms.database.MemoryDatabase(), None)
    drafts = strat.best_drafts(3)
    assert len(drafts) == 3 and drafts[0][0] <= drafts[1][0] <= drafts[2][0] and drafts[0][0] > 0
    batch = ctx.generate_measure_candidates()
    assert strat._inst.last_round_profile.get("drafted", 0) == 0  # picked from the draft best_drafts made
    assert int(tvm_ffi.structural_hash(batch[0].sch.mod)) == int(tvm_ffi.structural_hash(drafts[0][1].mod))


def test_scores_made_in_replay_workers_equal_one_at_a_time_estimates(target, host_spec):
    """Drafts scored by the replay workers (overlapping TVM's replays) carry exactly the estimate the
    analyzer gives each program alone, and so do the programs handed out."""
    from pruner_ms.analysis import SymbolicAnalyzer

    wl = gemm(128, 128, 128)
    strat = PrunerSearch(population_size=64, draft_size=16, num_threads=2)
    ctx = ms.TuneContext(tvm.IRModule({"main": wl.func}), target=target,
                         space_generator=ms.space_generator.PostOrderApply(), search_strategy=strat,
                         num_threads=2, rand_state=3)
    ctx.pre_tuning(8, 8, ctx.generate_design_space(), ms.database.MemoryDatabase(), ms.cost_model.XGBModel())
    picks = ctx.generate_measure_candidates()
    inner = strat._inst  # the Python object behind the FFI wrapper
    alone = SymbolicAnalyzer(inner.analyzer.spec)  # the host's spec with its measured memory figures
    assert inner.last_round_profile["analyze_cpu_s"] > 0  # the workers did score
    assert len(inner.drafts) == 16
    for score, cand in inner.drafts:
        assert score == 1.0 / max(alone.estimate_seconds(cand.sch.mod), 1e-12)
    for mc in picks:
        key = int(tvm_ffi.structural_hash(mc.sch.mod))
        assert inner._analyzer_cache[key] == 1.0 / max(alone.estimate_seconds(mc.sch.mod), 1e-12)


@pytest.mark.parametrize("max_trials, per_trial, analyzed", [(8, 16, 256), (40, 16, 512), (8, None, 512)])
def test_a_small_budget_drafts_a_smaller_population(target, max_trials, per_trial, analyzed):
    """``population_per_trial``: 8 trials do not analyze the whole population (at least 256 programs)."""
    strategy = PrunerSearch(population_size=512, draft_size=32, population_per_trial=per_trial)
    context = ms.TuneContext(mod=tvm.IRModule({"main": gemm(64, 64, 64).func}), target=target,
                             space_generator="post-order-apply", search_strategy=strategy, task_name="budget",
                             rand_state=0, num_threads=2)
    context.pre_tuning(max_trials=max_trials, num_trials_per_iter=8, design_spaces=context.generate_design_space(),
                       database=ms.database.MemoryDatabase(), cost_model=ms.cost_model.RandomModel())
    assert len(context.generate_measure_candidates()) == 8
    profile = strategy._inst.last_round_profile
    assert analyzed - 8 <= profile["analyzer_evaluations"] <= analyzed, profile  # a few samples may fail

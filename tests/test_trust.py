"""Analyzer trust: the evidence it is built from, and PrunerSearch's behaviour when the analyzer is wrong."""
from __future__ import annotations

import math

import numpy as np
import pytest
import tvm
from tvm.s_tir import meta_schedule as ms

from pruner_ms import BackgroundStartLocalRunner, PrunerSearch, SymbolicAnalyzer
from pruner_ms.integration.database import compiled_schedule
from pruner_ms.integration.measured_latency import record_seconds
from pruner_ms.strategy.trust import AnalyzerTrust, spearman

from .conftest import failing_builder, program_key


def test_spearman_matches_pearson_of_ranks_with_ties():
    x = np.array([1.0, 2.0, 2.0, 3.0, 5.0])
    y = np.array([10.0, 30.0, 20.0, 40.0, 50.0])
    rx = np.array([0, 1.5, 1.5, 3, 4])
    ry = np.array([0, 2, 1, 3, 4.0])
    assert spearman(x, y) == pytest.approx(np.corrcoef(rx, ry)[0, 1])
    assert spearman(x, -y) == pytest.approx(-spearman(x, y))
    assert spearman(np.ones(4), np.arange(4.0)) == 0.0


def test_trust_follows_whether_drafts_beat_random_programs():
    good = AnalyzerTrust()
    assert good.level == 1.0 and good.auc is None  # cold start: the paper trusts its drafts
    good.add([5, 4, 3, 2, 1, 1], [1e-3, 1.1e-3, 1.2e-3, 1.3e-3, 5e-3, 6e-3],
             ["draft", "draft", "draft", "draft", "random", "random"])
    assert good.auc == 1.0 and good.level == 1.0

    backwards = AnalyzerTrust()
    backwards.add([5, 4, 3, 2, 1, 1], [9e-3, 8e-3, 7e-3, 6e-3, 1e-3, 2e-3],
                  ["draft", "draft", "draft", "draft", "random", "random"])
    assert backwards.auc == 0.0 and backwards.level == 0.0

    chance = AnalyzerTrust()
    chance.add([1] * 8, [1e-3, 3e-3, 1e-3, 3e-3, 2e-3, 2e-3, 2e-3, 2e-3],
               ["draft"] * 4 + ["random"] * 4)
    assert chance.auc == pytest.approx(0.5) and chance.level == 0.0

    failed = AnalyzerTrust()  # failed builds/runs are no evidence
    failed.add([1, 1, 1, 1, 1, 1], [math.inf] * 4 + [1e-3, 1e-3], ["draft"] * 4 + ["random"] * 2)
    assert failed.auc is None and failed.level == 1.0
    with pytest.raises(ValueError, match="full_trust_auc"):
        AnalyzerTrust(full_trust_auc=0.5)


class BackwardAnalyzer(SymbolicAnalyzer):
    """Ranks programs backwards: its estimate is the reciprocal of the real analyzer's."""

    def estimate_seconds(self, mod) -> float:
        return 1.0 / max(super().estimate_seconds(mod), 1e-12)


def _remeasure_best(dbs: dict, wl, target, passes: int = 5, top: int = 4) -> dict:
    """Each database's best program after re-measurement: its ``top`` fastest records by tuning-time
    latency, compiled and re-measured round-robin (median of ``passes``), best of them. The comparison
    is then not decided by the luckiest of many noisy tuning-time measurements."""
    from pruner_ms.bench.remeasure import fresh_arguments

    args = fresh_arguments(wl)
    evaluators = {}
    for name, db in dbs.items():
        mod = tvm.IRModule({"main": wl.func})
        for i, rec in enumerate(db.get_top_k(db.commit_workload(mod), top)):
            ex = tvm.compile(compiled_schedule(mod, rec.trace).mod, target=target)
            evaluators[(name, i)] = ex.mod.time_evaluator("main", tvm.cpu(), number=20, repeat=1, min_repeat_ms=50)
    samples = {key: [] for key in evaluators}
    for _ in range(passes):
        for key, ev in evaluators.items():
            samples[key].append(ev(*args).mean)
    return {name: min(float(np.median(v)) for (n, _), v in samples.items() if n == name) for name in dbs}


@pytest.mark.slow
def test_backward_analyzer_loses_trust_and_search_still_matches_default(tmp_path, target, builder, host_spec):
    """A task where the analyzer ranks backwards tunes about as well as MetaSchedule's default."""
    from pruner_ms.bench.workloads import gemm

    wl = gemm(128, 128, 128)
    dbs = {}
    # three seeds each, order alternating: one 64-trial run's outcome varies by 30 % or more between
    # identical invocations (the learned model trains on noisy latencies), so one pair decides nothing
    # (with two seeds a fresh-clone CI on Zen 3 once saw 1.16x: 1.19 and 0.89 per seed)
    seeds = (0, 1, 2)
    # both strategies alike: the runner's worker starts in the background, and each measurement runs
    # for 50 ms instead of MetaSchedule's 100 (the comparison is decided by re-measurement below)
    evaluator = ms.runner.EvaluatorConfig(number=3, repeat=1, min_repeat_ms=50)
    for seed in seeds:
        names = ("default", "pruner-backward") if seed % 2 == 0 else ("pruner-backward", "default")
        for name in names:
            if name == "default":
                strategy = ms.search_strategy.EvolutionarySearch()
            else:
                strategy = PrunerSearch(analyzer=BackwardAnalyzer(host_spec))
            dbs[(name, seed)] = ms.tune_tir(
                wl.func, target, str(tmp_path / f"{name}-{seed}"), max_trials_global=64, num_trials_per_iter=16,
                # MetaSchedule's default warms XGBoost up for 100 samples; PrunerSearch's entry points drop that
                strategy=strategy, builder=builder, runner=BackgroundStartLocalRunner(evaluator_config=evaluator),
                cost_model=ms.cost_model.XGBModel(num_tuning_cores=2, num_warmup_samples=100 if name == "default" else 0),
                num_tuning_cores=2, seed=seed)
    best = _remeasure_best(dbs, wl, target)
    mean = {name: float(np.mean([best[(name, s)] for s in seeds])) for name in ("default", "pruner-backward")}
    assert mean["pruner-backward"] <= 1.10 * mean["default"], best


def test_space_without_decisions_is_measured_once(tmp_path, target, builder, gemm64):
    """A design space with no decisions is one program: measured once, then the strategy stops."""
    space = ms.space_generator.ScheduleFn(lambda sch: None, sch_rules=[], postprocs=[], mutator_probs={})
    db = ms.tune_tir(gemm64.func, target, str(tmp_path / "wd"), max_trials_global=8, num_trials_per_iter=4,
                     space=space, strategy=PrunerSearch(population_size=16, draft_size=8), builder=builder,
                     num_tuning_cores=2, seed=0)
    records = db.get_all_tuning_records()
    assert len(records) == 1 and math.isfinite(record_seconds(records[0]))


@pytest.mark.slow
def test_failed_programs_in_the_database_are_never_measured_again(tmp_path, target, builder, gemm64):
    """MetaSchedule's get_top_k skips failed records; the strategy must not hand them out again."""
    wd = str(tmp_path / "wd")
    small = dict(population_size=32, draft_size=16)
    ms.tune_tir(gemm64.func, target, wd, max_trials_global=16, num_trials_per_iter=8,
                strategy=PrunerSearch(**small), builder=failing_builder(builder, 2), num_tuning_cores=2, seed=4)
    db = ms.database.JSONDatabase(work_dir=wd)
    first = db.get_all_tuning_records()
    failed = {program_key(gemm64.func, r.trace) for r in first if not math.isfinite(record_seconds(r))}
    assert len(failed) == 8
    # a second run over the same database (resume=False: a full budget more) measures none of them
    ms.tune_tir(gemm64.func, target, wd, max_trials_global=16, num_trials_per_iter=8,
                strategy=PrunerSearch(**small, resume=False), builder=builder, num_tuning_cores=2, seed=5)
    records = ms.database.JSONDatabase(work_dir=wd).get_all_tuning_records()
    assert len(records) == 32
    keys = [program_key(gemm64.func, r.trace) for r in records]
    assert len(set(keys)) == 32, "a program was measured twice"


@pytest.mark.slow
def test_round_profile_says_where_search_time_goes(tmp_path, target, builder, gemm64):
    from pruner_ms.integration.timeline import TimedStrategy, Timeline

    timeline = Timeline(16, progress=False)
    ms.tune_tir(gemm64.func, target, str(tmp_path / "wd"), max_trials_global=16, num_trials_per_iter=8,
                # trust fixed at 1: the analyzer's 4 drafts against 4 random programs earned trust 1 on
                # Intel and Zen 4 but 0 on Zen 3 (tenth session), and the genetic draft of round 2 needs it
                strategy=TimedStrategy(PrunerSearch(population_size=32, draft_size=16, cold_ranked=True,
                                                    adaptive_trust=False), timeline), builder=builder,
                num_tuning_cores=2, seed=6)
    profiles = [p for p in timeline.round_profiles if p is not None]
    assert len(profiles) == 2
    for p in profiles:
        assert p["total_s"] > 0 and p["trust"] == 1.0
        parts = sum(p.get(k, 0.0) for k in ("sample_s", "mutate_s", "analyze_s", "predict_s", "other_s"))
        assert parts == pytest.approx(p["total_s"], rel=1e-6)
        assert sum(p[f"picks_{s}"] for s in ("draft", "model", "local", "random")) == 8
    assert profiles[0]["drafted"] == 1 and profiles[0]["sample_s"] > 0 and profiles[0]["analyze_s"] > 0
    # cold start: the sampled population ranked by the analyzer (scored in the replay workers), no
    # genetic search; the next round runs the genetic search on that population
    assert profiles[0]["draft_ga_iterations"] == 0 and profiles[0]["analyze_cpu_s"] > 0
    assert profiles[1]["drafted"] == 1 and profiles[1]["draft_ga_iterations"] == 1 and "sample_s" not in profiles[1]

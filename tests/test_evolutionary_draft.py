"""EvolutionaryDraftSearch through real MetaSchedule tuning on the local CPU (small budgets)."""
from __future__ import annotations

import pytest
import tvm_ffi
from tvm.s_tir import meta_schedule as ms

from pruner_ms.strategy import EvolutionaryDraftSearch

from .conftest import program_key, run_and_check


@pytest.mark.slow
def test_tune_tir_matches_numpy_and_never_repeats(tmp_path, target, builder, gemm64):
    wd = str(tmp_path / "wd")
    strategy = EvolutionaryDraftSearch(population_size=64)
    db = ms.tune_tir(gemm64.func, target, wd, max_trials_global=24, num_trials_per_iter=8, strategy=strategy,
                     cost_model=ms.cost_model.XGBModel(num_tuning_cores=2, num_warmup_samples=0),
                     builder=builder, num_tuning_cores=2, seed=7)
    sch = ms.tir_integration.compile_tir(db, gemm64.func, target)
    assert run_and_check(sch.mod, gemm64, target) < 1e-3
    records = ms.database.JSONDatabase(work_dir=wd).get_all_tuning_records()
    keys = [program_key(gemm64.func, rec.trace) for rec in records]
    assert len(keys) == len(set(keys)) == 24, "a program was measured twice, or the budget was not honoured"


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="drafts_per_pick must be >= 1"):
        EvolutionaryDraftSearch(drafts_per_pick=0)


def test_budgets_are_exact_nothing_repeats_and_the_model_verifies_after_the_first_batch(target):
    from .test_strategy_contract import _context, _play, _tile_gemm

    strategy = EvolutionaryDraftSearch(population_size=64)  # held: its Python side is read
    profiles = []
    batches = _play(_context(target, _tile_gemm, strategy=strategy), ms.database.MemoryDatabase(), max_trials=20,
                    per_iter=7, on_round=lambda: profiles.append(dict(strategy._inst.last_round_profile)))
    assert [len(b) for b in batches] == [7, 7, 6]
    keys = [int(tvm_ffi.structural_hash(c.sch.mod)) for b in batches for c in b]
    assert len(set(keys)) == 20
    assert [p["model_weight"] for p in profiles][0] == 0.0  # the first batch: the analyzer's drafts
    assert all(0.0 < p["model_weight"] < 1.0 for p in profiles[1:])
    assert all(p["drafts"] >= 7 for p in profiles)

"""PaCM (pattern-aware learned cost model) and MoA on a real, small MetaSchedule database.

The module fixture tunes a 64x64x64 GEMM on this CPU (ReplayTrace, 40 trials) into a work_dir;
everything else trains and predicts on those real measurements.
"""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
import tvm
from tvm.s_tir import Schedule
from tvm.s_tir import meta_schedule as ms

from pruner_ms.bench.workloads import gemm
from pruner_ms.integration.database import compiled_schedule
from pruner_ms.cost_model.pacm import CheckpointError, PaCM, throughput_labels
from pruner_ms.cost_model.patterns import (
    PAD,
    VOCAB_SIZE,
    describe,
    pattern_features,
    pattern_tokens,
    token_id,
    token_name,
)
from pruner_ms.cost_model.train import (
    featurize_records,
    load_work_dir,
    pairwise_accuracy,
    peak_score_at_k,
    ranking_metrics,
    near_best_at_k,
    ndcg_at_k,
    recall_at_k,
    train_offline,
)

from .conftest import pruner_ms_log

TRIALS = 32


@pytest.fixture(scope="module")
def gemm_db(tmp_path_factory, target, builder):
    """A real tuning database: a 64^3 GEMM measured on this CPU."""
    from pruner_ms.integration.workarounds import meta_schedule_logging

    wd = str(tmp_path_factory.mktemp("pacm") / "gemm-64")
    with meta_schedule_logging():
        ms.tune_tir(gemm(64, 64, 64).func, target, wd, max_trials_global=TRIALS, num_trials_per_iter=16,
                    strategy=ms.search_strategy.ReplayTrace(), cost_model="random", builder=builder,
                    num_tuning_cores=2, seed=3)
    (wl,) = load_work_dir(wd)
    assert len(wl.candidates) == len(wl.latencies) == TRIALS and wl.skipped == 0
    return wd, wl


@pytest.fixture(scope="module")
def trained(gemm_db):
    wd, _ = gemm_db
    return train_offline([wd], epochs=30, patience=None, progress=False, seed=0)


def _data(model, wl):
    samples, lats = featurize_records(model, wl)
    labels = throughput_labels(lats)
    return samples, labels, np.zeros(len(samples), dtype=np.int64)


# ------------------------------------------------------------------------------------------ patterns
def test_token_ids_round_trip():
    names = {token_name(t) for t in range(1, VOCAB_SIZE)}
    assert len(names) == VOCAB_SIZE - 1
    assert token_name(PAD) == "<pad>"
    assert token_name(token_id("mma", "fragment", "accumulator")) == "mma:fragment->accumulator"
    with pytest.raises(ValueError):
        token_name(VOCAB_SIZE)


def test_pattern_tokens_of_cpu_programs_are_nonempty_and_deterministic(gemm_db):
    _, wl = gemm_db
    for rec in wl.records[:8]:
        mod = rec.as_measure_candidate().sch.mod
        ids, values = pattern_features(mod)
        assert ids.shape == (23,) and values.shape[0] == 23
        assert (ids != PAD).sum() >= 2 and np.isfinite(values).all()
        again = compiled_schedule(wl.mod["main"], rec.trace)
        assert np.array_equal(pattern_tokens(again.mod), ids)
        assert np.array_equal(pattern_features(again.mod)[1], values)
        steps = describe(mod)
        assert steps[0].startswith("init:none->")  # C_init first, then the update reading A and B
        assert any(s.startswith("reduce:global->") for s in steps), steps


def test_pattern_tokens_of_a_cuda_program():
    """A shared-memory tiled GEMM on CUDA cores, with fragment-scope operand copies (no GPU needed)."""
    sch = Schedule(gemm(64, 64, 64).func)
    c = sch.get_sblock("C")
    cw = sch.cache_write(c, 0, "local")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16])
    k0, k1 = sch.split(k, [None, 16])
    sch.reorder(i0, j0, k0, i1, j1, k1)
    sch.bind(sch.fuse(i0, j0), "blockIdx.x")
    sch.reverse_compute_at(cw, sch.get_loops(c)[0])
    a_sh = sch.cache_read(c, 0, "shared")
    sch.compute_at(a_sh, k0)
    sch.cache_read(c, 0, "wmma.matrix_a")  # placed under k0, after the shared copy
    steps = describe(sch.mod)
    assert steps == ["copy:global->shared", "copy:shared->fragment", "reduce:global->local",
                     "copy:local->global"], steps
    # reading the fragment: the update's slowest input is still global B
    _, values = pattern_features(sch.mod)
    assert values[0, 7] > 0  # blockIdx extent counted as parallelism


# ------------------------------------------------------------------------------------------ metrics
def test_ranking_metrics_on_hand_examples():
    y = np.array([1.0, 0.5, 0.25, 0.0])
    assert pairwise_accuracy([4, 3, 2, 1], y) == 1.0
    assert pairwise_accuracy([1, 2, 3, 4], y) == 0.0
    assert pairwise_accuracy([1, 1, 1, 1], y) == 0.5
    assert math.isnan(pairwise_accuracy([1, 2], [0.5, 0.5]))
    assert recall_at_k([0, 3, 2, 1], y, 1) == 0.0 and recall_at_k([0, 3, 2, 1], y, 4) == 1.0
    assert recall_at_k([0, 3, 2, 1], y, 2) == 0.5  # predicted {1, 2}, true {0, 1}
    assert ndcg_at_k([4, 3, 2, 1], y, 3) == pytest.approx(1.0)
    assert 0.0 < ndcg_at_k([1, 2, 3, 4], y, 3) < ndcg_at_k([0, 3, 2, 1], y, 3) < 1.0
    assert near_best_at_k([4, 3, 2, 1], [1.0, 0.96, 0.5, 0.1], 2) == 1.0  # 0.96: within 5 % of the best latency
    assert near_best_at_k([4, 3, 2, 1], [1.0, 0.9, 0.5, 0.1], 2) == 0.5
    # a model that scores every program alike is not rewarded for the dataset's order
    ties = [np.mean([recall_at_k([1] * 20, np.arange(20, 0, -1), 5, seed=s) for s in range(50)])]
    assert ties[0] < 0.5
    assert peak_score_at_k([0, 3, 2, 1], y, 1) == 0.5 and peak_score_at_k([0, 3, 2, 1], y, 2) == 0.5
    m = ranking_metrics([([4, 3, 2, 1], y), ([1, 2, 3, 4], y)], ks=(1,))
    assert m["pairwise_accuracy"] == 0.5 and m["recall@1"] == 0.5 and m["n_groups"] == 2
    assert np.allclose(throughput_labels([1e-3, 2e-3, None, 1e10]), [1.0, 0.5, 0.0, 0.0])


# ------------------------------------------------------------------------------------------ training
def test_training_lowers_the_loss_and_ranks_better_than_random(gemm_db, trained):
    _, wl = gemm_db
    model, report = trained
    fresh = PaCM(seed=0)
    samples, labels, groups = _data(fresh, wl)
    before = fresh.loss(samples, labels, groups)
    after = model.loss(samples, labels, groups)
    assert after < before
    assert report.train_loss[-1] < report.train_loss[0]
    acc = pairwise_accuracy(model.score_samples(samples), labels)
    assert acc > 0.6, acc  # a random ranking scores 0.5
    assert report.train_metrics["pairwise_accuracy"] == pytest.approx(acc)
    assert report.train_workloads == ["gemm-64"] and report.val_workloads == []
    assert report.n_train_records == TRIALS and not model.data  # training data cleared


def test_training_is_reproducible_with_a_seed(gemm_db, trained):
    wd, _ = gemm_db
    again, _ = train_offline([wd], epochs=30, patience=None, progress=False, seed=0)
    first = trained[0].net.state_dict()
    for k, v in again.net.state_dict().items():
        assert torch.equal(v, first[k]), k


def test_holdout_of_an_unknown_workload_is_refused(gemm_db):
    wd, _ = gemm_db
    with pytest.raises(ValueError, match="gemm-64"):
        train_offline([wd], holdout=["resnet"], epochs=1, progress=False)
    with pytest.raises(ValueError, match="nothing is left to train"):
        train_offline([wd], holdout=["gemm-64"], epochs=1, progress=False)


# ------------------------------------------------------------------------------------------ checkpoints
def test_save_load_round_trips_bit_for_bit(gemm_db, trained, tmp_path):
    _, wl = gemm_db
    model, _ = trained
    path = str(tmp_path / "pacm.pt")
    model.save(path)
    loaded = PaCM(seed=123, stmt_hidden=32)  # the architecture comes from the checkpoint
    loaded.load(path)
    a, b = model.net.state_dict(), loaded.net.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert np.array_equal(model._inst.stmt_scale, loaded._inst.stmt_scale)
    samples, _, _ = _data(model, wl)
    assert np.array_equal(model.score_samples(samples), loaded.score_samples(samples))
    assert loaded.hyperparameters() == {**model.hyperparameters(), "seed": 123}


def test_missing_corrupt_and_foreign_checkpoints_raise_checkpoint_error(tmp_path):
    missing = str(tmp_path / "nope.pt")
    with pytest.raises(CheckpointError, match=r"nope\.pt.*does not exist.*pruner_ms\.cost_model\.train"):
        PaCM().load(missing)
    with pytest.raises(CheckpointError, match="does not exist"):
        PaCM(pretrained=missing)
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(CheckpointError, match=r"garbage\.pt.*corrupt.*PaCM\.save"):
        PaCM().load(str(garbage))
    foreign = str(tmp_path / "foreign.pt")
    torch.save({"weights": torch.zeros(3)}, foreign)
    with pytest.raises(CheckpointError, match="not a PaCM checkpoint"):
        PaCM().load(foreign)
    assert issubclass(CheckpointError, ValueError)


# ------------------------------------------------------------------------------------------ MoA
def _update_args(wl, n: int = 16):
    ctx = ms.TuneContext(wl.mod, target=wl.target, num_threads=2)
    recs = wl.records[:n]
    cands = [r.as_measure_candidate() for r in recs]
    results = [ms.runner.RunnerResult([float(x.value) for x in r.run_secs] if r.run_secs else None, None) for r in recs]
    return ctx, cands, results


def test_moa_follows_the_momentum_rule(gemm_db, trained, tmp_path):
    """Design note section 4: retrain every 4th update from the anchor; anchor <- m*anchor + (1-m)*student."""
    _, wl = gemm_db
    path = str(tmp_path / "pretrained.pt")
    trained[0].save(path)
    moa = PaCM(pretrained=path, moa_epochs=3, seed=1)
    assert moa.moa and moa.momentum == 0.99 and moa.moa_period == 4
    pre = copy.deepcopy(moa.net.state_dict())
    assert all(torch.equal(moa.anchor[k], pre[k]) for k in pre)  # the pretrained model is both
    ctx, cands, results = _update_args(wl)
    p0 = moa.predict(ctx, cands)
    for _ in range(3):  # rounds 1-3: data is collected, nothing is retrained
        moa.update(ctx, cands, results)
    assert np.array_equal(moa.predict(ctx, cands), p0)
    assert all(torch.equal(moa.anchor[k], pre[k]) for k in pre)

    moa.update(ctx, cands, results)  # round 4: student from the anchor, trained; anchor moves by momentum
    student = moa.net.state_dict()
    params = {name for name, _ in moa.net.named_parameters()}
    m = 0.99
    for k in pre:
        if k in params:
            assert torch.equal(moa.anchor[k], m * pre[k] + (1.0 - m) * student[k]), k
        else:  # BatchNorm running statistics: not averaged
            assert torch.equal(moa.anchor[k], pre[k]), k
    assert any(not torch.equal(student[k], pre[k]) for k in params)
    assert not np.array_equal(moa.predict(ctx, cands), p0)  # predictions come from the student

    # the next retrain restarts from the anchor, not from the student: with no epochs the student
    # becomes an exact copy of the anchor
    anchor = copy.deepcopy(moa.anchor)
    moa._inst.moa_epochs = 0
    for _ in range(4):
        moa.update(ctx, cands, results)
    assert all(torch.equal(moa.net.state_dict()[k], anchor[k]) for k in anchor)

    # an adaptation saved mid-way resumes with its anchor and round counter
    moa.save(path)
    resumed = PaCM(moa=True)
    resumed.load(path)
    assert resumed.n_updates == 8
    assert all(torch.equal(resumed.anchor[k], moa.anchor[k]) for k in moa.anchor)


def test_moa_without_a_pretrained_model_is_refused(gemm_db):
    _, wl = gemm_db
    model = PaCM(moa=True, moa_period=1)
    ctx, cands, results = _update_args(wl, 4)
    with pytest.raises(RuntimeError, match="pretrained"):
        model.update(ctx, cands, results)


# ------------------------------------------------------------------------------------------ tuning
def test_pacm_as_the_cost_model_of_a_tuning_run(tmp_path, target, builder):
    import pruner_ms
    from pruner_ms.integration.workarounds import meta_schedule_logging

    wl = gemm(64, 64, 64)
    model = PaCM(update_epochs=3, seed=0)
    with meta_schedule_logging():
        db = ms.tune_tir(wl.func, target, str(tmp_path / "wd"), max_trials_global=16, num_trials_per_iter=8,
                         strategy=pruner_ms.PrunerSearch(population_size=64, draft_size=32), cost_model=model,
                         builder=builder, num_tuning_cores=2, seed=5)
    records = db.get_all_tuning_records()
    assert len(records) == 16
    assert model.n_updates == 2 and sum(len(g["samples"]) for g in model.data.values()) == 16
    ctx = ms.TuneContext(tvm.IRModule({"main": wl.func}), target=target, num_threads=2)
    scores = model.predict(ctx, [r.as_measure_candidate() for r in records])
    assert scores.shape == (16,) and np.isfinite(scores).all() and (scores > 0).all() and (scores < 1).all()


def test_programs_without_pattern_tokens_are_warned_about(gemm_db, monkeypatch):
    """PaCM ranks a program whose pattern tokens cannot be read on its statement features alone; when
    that happens to many programs of a batch, it says so (with the first error), once per batch."""
    import logging

    from pruner_ms.cost_model import pacm as pacm_module

    _, wl = gemm_db

    def unreadable(mod, *, max_tokens):
        raise ValueError("no tokens for this one")

    monkeypatch.setattr(pacm_module, "pattern_features", unreadable)
    with pruner_ms_log(logging.WARNING) as seen:
        samples, _ = featurize_records(PaCM(seed=0), wl)
    assert len(samples) == TRIALS and all(not s.ids.any() for s in samples)
    assert [m for m in seen if "pattern tokens of" in m] == [
        f"PaCM: the pattern tokens of {TRIALS} of {TRIALS} programs could not be extracted (they are ranked on their "
        "statement features alone); first error: ValueError: no tokens for this one"]

"""Whole-network benchmarks: the weighted-latency curve, the time-to-quality table, and a real run."""
from __future__ import annotations

import json
import math

import pytest

from pruner_ms.bench.network import format_models, summarize_models, weighted_latency_curve

from .conftest import run_cli


def _batch(seconds, trials, task, latencies):
    return {"seconds": seconds, "trials": trials, "task": task, "latencies": latencies}


def test_the_weighted_curve_starts_once_every_task_has_a_program():
    batches = [_batch(1.0, 4, 0, [3e-3, 2e-3]), _batch(2.0, 8, 1, [math.inf, 1e-3]),
               _batch(3.0, 12, 0, [1e-3]), _batch(4.0, 16, 1, [5e-3])]
    curve = weighted_latency_curve(batches, [1.0, 2.0])
    assert curve == [(2.0, 8, pytest.approx(2e-3 + 2 * 1e-3)), (3.0, 12, pytest.approx(1e-3 + 2e-3)),
                     (4.0, 16, pytest.approx(3e-3))]
    with pytest.raises(ValueError, match="task 2, not one of the 2 tasks"):
        weighted_latency_curve([_batch(1.0, 1, 2, [1e-3])], [1.0, 1.0])


def _row(label, seed, curve, tuned_ms, tuning_seconds=None):
    strategy, _, scheduler = label.partition("/")
    return {"model": "net", "strategy": strategy, "task_scheduler": scheduler or None, "label": label, "seed": seed,
            "curve": curve, "tuned_ms": tuned_ms, "weighted_ms": curve[-1][2] if curve else None,
            "tuning_seconds": tuning_seconds or (curve[-1][0] if curve else 0.0), "untuned_ms": 9.0, "torch_ms": 3.0,
            "max_abs_error": 1e-6, "untuned_tasks": [], "trials": 64}


def test_speed_up_is_the_baselines_time_over_the_time_to_reach_its_final_weighted_latency():
    rows = [_row("default/gradient", 0, [[10, 32, 5.0], [100, 64, 4.0]], 4.1),
            _row("pruner/headroom", 0, [[20, 32, 4.5], [25, 40, 3.9], [90, 64, 3.0]], 3.2),
            _row("pruner/gradient", 0, [[20, 32, 6.0], [90, 64, 4.5]], 4.6),
            _row("zero-measure", 0, [], 4.0, tuning_seconds=5.0)]
    summary = summarize_models(rows)
    assert summary["net: pruner/headroom vs default/gradient"]["median_speedup"] == pytest.approx(100 / 25)
    assert summary["net: pruner/headroom vs default/gradient"]["median_e2e_ratio"] == pytest.approx(3.2 / 4.1)
    assert summary["net: pruner/gradient vs default/gradient"]["median_speedup"] == 0.0  # never reached
    # nothing measured: its compiled model is as fast as the baseline's, after 5 s of drafting
    assert summary["net: zero-measure vs default/gradient"]["median_speedup"] == pytest.approx(100 / 5)
    table = format_models(rows)
    assert "| net | pruner/headroom | 0 | 3.200 |" in table and "**4.00x** (4.00)" in table


@pytest.mark.slow
def test_a_suite_model_runs_with_each_task_scheduler_and_zero_measurements(tmp_path, capsys):
    suite = tmp_path / "models.json"
    suite.write_text(json.dumps({"name": "models", "target": "host", "workloads": [],
                                 "models": [{"model": "tiny-cnn", "trials": 24, "trials_per_iter": 4,
                                             "trials_per_task": 12}]}))
    out = tmp_path / "out"
    code, text, _ = run_cli(capsys, "bench", "--suite", str(suite), "--strategies", "default", "--seeds", "0",
                            "--task-schedulers", "gradient,headroom", "--zero-measure", "--out", str(out),
                            "--no-progress")
    assert code == 0, text
    rows = json.loads((out / "suite.json").read_text())["models"]
    assert sorted(r["label"] for r in rows) == ["default/gradient", "default/headroom", "zero-measure"]
    for r in rows:
        assert r["max_abs_error"] < 1e-4, r
        if r["label"] != "zero-measure":
            assert r["curve"] and r["trials"] <= 24 + 4 and r["weighted_ms"] == pytest.approx(r["curve"][-1][2])
    assert "default/headroom vs default/gradient" in (out / "suite.md").read_text()
    assert (out / "curves" / "model-tiny-cnn.png").read_bytes()[:4] == b"\x89PNG"


def test_model_runs_come_from_the_entry_or_the_cross_product():
    from pruner_ms.bench.network import model_runs

    spec = {"model": "m", "runs": ["default/gradient", "pruner/headroom", "pruner/round-robin"], "zero_measure": True}
    assert model_runs(spec, ["pruner", "default"]) == [("default", "gradient"), ("pruner", "headroom"),
                                                       ("pruner", "round-robin"), ("zero-measure", None)]
    assert model_runs(spec, ["pruner"], zero_measure=False) == [("pruner", "headroom"), ("pruner", "round-robin")]
    # schedulers given by the caller: every strategy with each of them
    assert model_runs(spec, ["pruner", "default"], task_schedulers=["gradient"]) == [
        ("pruner", "gradient"), ("default", "gradient"), ("zero-measure", None)]
    assert model_runs({"model": "m"}, ["default"]) == [("default", "gradient")]

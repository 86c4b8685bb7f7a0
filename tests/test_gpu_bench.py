"""pruner_ms.bench.gpu's bookkeeping without a GPU: the wall-clock budget, failure rates, the analyzer's
rank correlation, the dataset written from a result, a run stopped early, and a --synthetic rehearsal."""
from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path

import pytest

from .conftest import DATASET_DIR


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_budget_shares_time_and_skips_workloads():
    from pruner_ms.bench.gpu import POST_RUN_S, RESERVE_S, Budget

    clock = FakeClock()
    assert Budget(None, clock=clock, start=0.0).run_stop(2, []) is None
    b = Budget(300.0, clock=clock, start=0.0)
    clock.t = 25.0  # set-up
    assert b.can_start_workload()
    batch_times: list[float] = []
    stop = b.run_stop(2, batch_times)  # share: (300 - 15 - 25) / 2 = 130 s
    share = (300.0 - RESERVE_S - 25.0) / 2
    assert not stop()
    for t in (55.0, 85.0):  # rounds of 30 s
        clock.t = t
        batch_times.append(t)
    assert not stop()  # 60 s used + 30 s round + POST_RUN_S <= share
    clock.t = 25.0 + share - 30.0 - POST_RUN_S + 1.0
    assert stop()
    b.workload_seconds.append(200.0)
    clock.t = 225.0
    assert not b.can_start_workload()  # 60 s left < 200 s


def test_failure_rates_and_analyzer_correlation():
    from pruner_ms.bench.gpu import analyzer_correlation, correlation_report, failure_rates

    run = {"batches": [{"latencies": [1.0, math.inf, math.inf], "build_errors": 1, "run_errors": 1},
                       {"latencies": [2.0], "build_errors": 0, "run_errors": 0}]}
    assert failure_rates(run) == {"measured": 4, "build_ok": 3, "run_errors": 1, "build_success_rate": 0.75,
                                  "run_failure_rate": 1 / 3}
    progs = [{"latency_s": lat, "estimate_s": est} for lat, est in [(1e-3, 2e-3), (2e-3, 3e-3), (3e-3, 9e-3),
                                                                   (None, 1e-3), (4e-3, None)]]
    assert analyzer_correlation(progs) == {"n": 3, "spearman": pytest.approx(1.0)}
    assert analyzer_correlation(progs[:2]) == {"n": 2, "spearman": None}
    rep = correlation_report([{"workload": "w", "strategy": "pruner", "seed": 0, "programs": progs}])
    assert rep["per_run"]["w pruner seed=0"]["n"] == 3 and rep["per_workload"]["w"]["n"] == 3


def test_extract_dataset_reads_back(tmp_path):
    from pruner_ms.bench.dataset import RECORD_FILE, WORKLOAD_FILE, load_records
    from pruner_ms.bench.gpu import extract_dataset

    src = DATASET_DIR / "gemm-128x128x128"
    wl_lines = src.joinpath(WORKLOAD_FILE).read_text().splitlines()
    recs = src.joinpath(RECORD_FILE).read_text().splitlines()
    runs = [{"workload": "gemm-128x128x128", "strategy": s, "seed": 0, "flops": 2 * 128 ** 3,
             "database": {"workload": wl_lines, "records": recs[i * 3:(i + 1) * 3]},
             "programs": [{"latency_s": 1e-4}] * 3} for i, s in enumerate(["pruner", "default"])]
    result = tmp_path / "gpu_bench.json"
    result.write_text(json.dumps({"meta": {"gpu": "h200"}, "runs": runs}))
    manifest = extract_dataset(str(result), str(tmp_path / "ds"))
    assert manifest["workloads"][0]["records"] == 6
    data = load_records(tmp_path / "ds")
    assert len(data["gemm-128x128x128"].candidates) == 6
    with pytest.raises(ValueError, match="no run with database records"):
        result.write_text(json.dumps({"runs": [{"workload": "w"}]}))
        extract_dataset(str(result), str(tmp_path / "ds2"))


H200_RESULT = Path(__file__).resolve().parents[1] / "docs" / "results" / "gpu" / "gpu_bench.json"


@pytest.mark.slow
def test_h200_measurements_replay_and_the_gpu_analyzer_ranks_them(tmp_path):
    """The first real tensor-core measurements (one H200, fp16 GEMM 4096^3, 96 programs, committed
    under docs/results/gpu/) replay from the dataset written from them, in a process that has not
    registered CUDA's tensor intrinsics, and the GPU analyzer still ranks them as it did there
    (Spearman 0.92; its top 8 hold the best program)."""
    from pruner_ms.analysis import SymbolicAnalyzer
    from pruner_ms.bench.dataset import load_records
    from pruner_ms.bench.gpu import extract_dataset
    from pruner_ms.hardware import load_gpu_spec
    from pruner_ms.strategy.trust import spearman

    extract_dataset(str(H200_RESULT), str(tmp_path / "ds"))
    data = load_records(tmp_path / "ds")["gemm-fp16-4096x4096x4096"]
    lat = list(data.latencies)
    assert len(lat) == 96 and all(math.isfinite(x) and x > 0 for x in lat)
    analyzer = SymbolicAnalyzer(load_gpu_spec("h200"))
    est = [analyzer.analyze(c.sch.mod).seconds for c in data.candidates]
    assert spearman(est, lat) >= 0.85
    top8 = sorted(range(len(est)), key=est.__getitem__)[:8]
    assert min(lat[i] for i in top8) <= 1.05 * min(lat)


@pytest.mark.slow
def test_stop_when_ends_a_run_and_program_log_matches_the_database(tmp_path, gemm64):
    """A real (CPU) tune stopped after its first batch: the run says so, and every measured program
    is in the log, in the database's order, with the database's latency."""
    from pruner_ms.bench.compare import run_one
    from pruner_ms.bench.gpu import read_database
    from pruner_ms.integration.measure_callbacks import ProgramLog

    log = ProgramLog()
    run = run_one(gemm64, "pruner", trials=16, seed=0, trials_per_iter=8, work_dir=str(tmp_path / "wd"),
                  progress=False, pruner_kwargs={"population_size": 128, "draft_size": 32},
                  extra_callbacks=[log], stop=lambda: log.batches >= 1)
    assert run["stopped_early"] and run["trials"] == 8 and len(run["batches"]) == 1
    assert len(log.programs) == 8 and len(log.batch_times) == 1
    db = read_database(str(tmp_path / "wd"))
    assert len(db["records"]) == 8
    for line, prog in zip(db["records"], log.programs):
        secs = [float(s) for s in json.loads(line)[1][1]]
        assert prog["latency_s"] == pytest.approx(sum(secs) / len(secs))
    # a correctness check that raises (here the workload's reference) is recorded; the tuning data stays
    def broken_reference(*_):
        raise ValueError("reference unavailable")

    full = run_one(dataclasses.replace(gemm64, reference=broken_reference), "pruner", trials=8, seed=0,
                   trials_per_iter=8, work_dir=str(tmp_path / "wd2"), progress=False,
                   pruner_kwargs={"population_size": 128, "draft_size": 32}, stop=lambda: False)
    assert not full["stopped_early"] and full["trials"] == 8 and len(full["batches"]) == 1
    assert full["numpy_ok"] is False and full["error"] == "ValueError: reference unavailable"
    assert math.isfinite(full["best_seconds"])


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_synthetic_rehearsal_writes_the_whole_json(tmp_path):
    """The benchmark end to end without a GPU (--synthetic): every field the GPU run must fill."""
    from pruner_ms.bench.dataset import load_records
    from pruner_ms.bench.gpu import extract_dataset, main

    out = tmp_path / "gpu_bench.json"
    # no --budget-s: it counts from the start of the process, here pytest's
    assert main(["--synthetic", "h200", "--size", "tiny", "--strategies", "pruner", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["meta"]["complete"] and doc["meta"]["synthetic"] and doc["meta"]["target"]["arch"] == "sm_90a"
    (run,) = doc["runs"]
    assert run["trials"] == 8 and not run["stopped_early"] and run["batches"][0]["trials"] == 8
    assert run["build"]["built"] == 8 and run["build_success_rate"] == 1.0 and run["run_failure_rate"] == 0.0
    assert len(run["programs"]) == 8 and all(p["estimate_s"] > 0 and p["latency_s"] > 0 for p in run["programs"])
    assert run["database_matches_programs"] and len(run["database"]["records"]) == 8
    assert doc["analyzer"]["all"]["n"] == 8 and doc["analyzer"]["all"]["spearman"] is not None
    assert "tvm_cuda_exist" in doc["env"] and doc["cublas_seconds"] == {"gemm-fp16-256x256x256": None}
    extract_dataset(str(out), str(tmp_path / "ds"))
    assert len(load_records(tmp_path / "ds")["gemm-fp16-256x256x256"].candidates) == 8


@pytest.mark.slow
def test_a_failing_run_is_recorded_and_the_others_go_on(tmp_path, monkeypatch):
    from pruner_ms.bench import compare
    from pruner_ms.bench.gpu import main

    calls = []

    def failing_run_one(workload, strategy, **kwargs):
        calls.append(strategy)
        raise RuntimeError(f"boom in {strategy}")

    monkeypatch.setattr(compare, "run_one", failing_run_one)
    out = tmp_path / "gpu_bench.json"
    assert main(["--synthetic", "h200", "--size", "tiny", "--out", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert calls == ["pruner", "default"] and doc["runs"] == [] and not doc["meta"]["complete"]
    assert [f["strategy"] for f in doc["failed_runs"]] == ["pruner", "default"]
    assert "RuntimeError: boom in pruner" in doc["failed_runs"][0]["traceback"][-1]

"""True resume and database checks: an interrupted run re-run with the same work_dir ends with exactly
the budget of distinct programs; damaged databases give a clear error and are left untouched."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from tvm.s_tir import meta_schedule as ms

import pruner_ms
from pruner_ms.integration.resume import (
    RECORD_FILE,
    WORKLOAD_FILE,
    DatabaseError,
    open_database,
)

from .conftest import interruptible_child, program_key

SMALL = {"population_size": 64, "draft_size": 32}
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _distinct_programs(work_dir: str, func) -> tuple[int, int]:
    records = ms.database.JSONDatabase(work_dir=work_dir).get_all_tuning_records()
    keys = {program_key(func, rec.trace) for rec in records}
    return len(records), len(keys)


TUNE_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    import pruner_ms
    from pruner_ms.bench.workloads import gemm
    from pruner_ms.hardware import host_cpu_spec
    pruner_ms.tune_tir(gemm(64, 64, 64).func, host_cpu_spec().target(), {wd!r}, {budget},
                       num_trials_per_iter=8, strategy=pruner_ms.PrunerSearch(population_size=64, draft_size=32),
                       seed=3, num_tuning_cores=2)
""")


def _lines(path: str) -> int:
    if not os.path.exists(path):
        return 0
    with open(path, "rb") as f:
        return f.read().count(b"\n")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_interrupted_run_resumes_to_exact_budget(tmp_path, target, builder, gemm64, sig):
    wd = str(tmp_path / "wd")
    budget = 24
    proc = subprocess.Popen([sys.executable, "-c", TUNE_SCRIPT.format(repo=REPO, wd=wd, budget=budget)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=interruptible_child)
    records = os.path.join(wd, RECORD_FILE)
    deadline = time.time() + 240
    while _lines(records) < 8 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    # one signal, as a user presses Ctrl-C once: a SIGINT that lands in a Python callback MetaSchedule's
    # C++ calls must stop the run as a KeyboardInterrupt (it used to come back as a bare RuntimeError,
    # and in a candidate's replay it was taken for that candidate's failure and lost: twice in the
    # twenty-seventh session the run went on to its whole budget); Python ends on an uncaught
    # KeyboardInterrupt with -SIGINT, on a RuntimeError with 1
    proc.send_signal(sig)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"the run went on for 60 s after {sig.name}")
    assert proc.returncode == -sig, f"the run ended with {proc.returncode} after {sig.name}, not by the signal"
    measured_before, _ = _distinct_programs(wd, gemm64.func)  # the database reads back
    assert 8 <= measured_before < budget

    pruner_ms.tune_tir(gemm64.func, target, wd, budget, num_trials_per_iter=8,
                       strategy=pruner_ms.PrunerSearch(**SMALL), builder=builder, seed=4, num_tuning_cores=2)
    assert _distinct_programs(wd, gemm64.func) == (budget, budget)

    # a finished run measures nothing more
    pruner_ms.tune_tir(gemm64.func, target, wd, budget, num_trials_per_iter=8,
                       strategy=pruner_ms.PrunerSearch(**SMALL), builder=builder, seed=5, num_tuning_cores=2)
    assert _distinct_programs(wd, gemm64.func) == (budget, budget)


@pytest.mark.slow
def test_resume_with_metaschedule_default_strategy(tmp_path, target, builder, gemm64):
    """The budget arithmetic also holds for a strategy that does not count the database itself."""
    wd = str(tmp_path / "wd")
    for _ in range(2):
        pruner_ms.tune_tir(gemm64.func, target, wd, 8, num_trials_per_iter=8, builder=builder, num_tuning_cores=2,
                           strategy=ms.search_strategy.ReplayTrace(), seed=1)
    assert _distinct_programs(wd, gemm64.func)[0] == 8
    pruner_ms.tune_tir(gemm64.func, target, wd, 16, num_trials_per_iter=8, builder=builder, num_tuning_cores=2,
                       strategy=ms.search_strategy.ReplayTrace(), seed=2)
    assert _distinct_programs(wd, gemm64.func)[0] == 16


def _write_db(wd, workloads: bytes, records: bytes) -> None:
    os.makedirs(wd, exist_ok=True)
    with open(os.path.join(wd, WORKLOAD_FILE), "wb") as f:
        f.write(workloads)
    with open(os.path.join(wd, RECORD_FILE), "wb") as f:
        f.write(records)


@pytest.fixture(scope="module")
def real_db(tmp_path_factory, target, builder):
    """A small real database to damage."""
    from pruner_ms.bench.workloads import gemm

    wd = str(tmp_path_factory.mktemp("realdb"))
    ms.tune_tir(gemm(32, 32, 32).func, target, wd, max_trials_global=4, num_trials_per_iter=4, builder=builder,
                strategy=ms.search_strategy.ReplayTrace(), num_tuning_cores=2, seed=1)
    with open(os.path.join(wd, WORKLOAD_FILE), "rb") as f:
        workloads = f.read()
    with open(os.path.join(wd, RECORD_FILE), "rb") as f:
        records = f.read()
    assert records.count(b"\n") == 4
    return workloads, records


def test_corrupt_record_line_is_a_clear_error_and_left_alone(tmp_path, real_db, target, gemm64):
    workloads, records = real_db
    lines = records.split(b"\n")
    damaged = b"\n".join(lines[:2] + [b'[0, [[["GetSBlock" garbage'] + lines[2:])
    wd = str(tmp_path / "wd")
    _write_db(wd, workloads, damaged)
    with pytest.raises(DatabaseError, match=r"database_tuning_record.json, line 3: not a valid MetaSchedule record"):
        open_database(wd)
    with pytest.raises(DatabaseError, match="line 3"):
        pruner_ms.tune_tir(gemm64.func, target, wd, 8)
    with open(os.path.join(wd, RECORD_FILE), "rb") as f:
        assert f.read() == damaged, "a damaged database must not be overwritten"


def test_records_pointing_to_missing_workloads(tmp_path, real_db):
    _, records = real_db
    wd = str(tmp_path / "wd")
    _write_db(wd, b"", records)
    with pytest.raises(DatabaseError, match="do not belong together"):
        open_database(wd)


def test_half_written_last_line_is_set_aside(tmp_path, real_db):
    """What a SIGKILL in the middle of an append leaves: the record is dropped, the rest loads."""
    workloads, records = real_db
    wd = str(tmp_path / "wd")
    _write_db(wd, workloads, records + records.split(b"\n")[0][:57])
    db = open_database(wd)
    assert len(db.get_all_tuning_records()) == 4
    backups = [f for f in os.listdir(wd) if f.startswith(RECORD_FILE + ".partial-")]
    assert len(backups) == 1

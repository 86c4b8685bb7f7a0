"""One definition of a measured latency, for records and runner results alike."""
from __future__ import annotations

import math

import pytest
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule.runner import RunnerResult

from pruner_ms.bench.workloads import gemm
from pruner_ms.integration.measured_latency import (
    METASCHEDULE_FAILED_SECONDS,
    mean_run_seconds,
    record_seconds,
    result_seconds,
)


@pytest.mark.parametrize("run_secs, expected", [
    ([1e-3, 3e-3], 2e-3),
    ([METASCHEDULE_FAILED_SECONDS], math.inf),  # what MetaSchedule writes for a failed build or run
    ([1e-3, METASCHEDULE_FAILED_SECONDS], math.inf),  # one failed repeat fails the measurement
    ([], math.inf),
    (None, math.inf),
    ([0.0], math.inf),
    ([math.nan], math.inf),
])
def test_mean_run_seconds(run_secs, expected):
    assert mean_run_seconds(run_secs) == pytest.approx(expected)


def test_records_and_runner_results_agree():
    import tvm
    from tvm.s_tir import Schedule

    mod = tvm.IRModule({"main": gemm(16, 16, 16).func})
    workload = ms.database.Workload(mod)
    trace = Schedule(mod).trace
    for secs in ([2e-3, 4e-3], [METASCHEDULE_FAILED_SECONDS]):
        record = ms.database.TuningRecord(trace, workload, run_secs=secs)
        assert record_seconds(record) == result_seconds(RunnerResult(secs, None)) == mean_run_seconds(secs)
    assert result_seconds(RunnerResult(None, "RuntimeError: timeout")) == math.inf

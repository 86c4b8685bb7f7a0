"""BackgroundStartLocalRunner: MetaSchedule's LocalRunner whose worker starts while the search drafts."""
from __future__ import annotations

import time

import numpy as np
import pytest
from tvm.s_tir import Schedule
from tvm.s_tir.meta_schedule.arg_info import ArgInfo
from tvm.s_tir.meta_schedule.builder import BuilderInput
from tvm.s_tir.meta_schedule.runner import RunnerInput

from pruner_ms import WarmPoolBuilder
from pruner_ms.integration.runners import BackgroundStartLocalRunner, check_runner, start_runner


def _runner_inputs(gemm64, target) -> list:
    built = WarmPoolBuilder(max_workers=1).build([BuilderInput(Schedule(gemm64.func).mod, target)])
    assert built[0].error_msg is None, built[0].error_msg
    return [RunnerInput(built[0].artifact_path, "cpu", ArgInfo.from_prim_func(gemm64.func))]


def test_the_worker_starts_in_the_background_and_measures(gemm64, target):
    start = time.perf_counter()
    runner = start_runner("local")
    assert time.perf_counter() - start < 1.0  # LocalRunner waits for its worker's `import tvm` (seconds)
    assert isinstance(runner, BackgroundStartLocalRunner)
    check_runner(target, runner)  # a local runner, as "local" is
    result = runner.run(_runner_inputs(gemm64, target))[0].result()
    assert result.error_msg is None and len(result.run_secs) >= 1, result.error_msg
    assert all(0 < float(s) < 1 for s in result.run_secs)
    assert np.isfinite([float(s) for s in result.run_secs]).all()


def test_a_runner_that_cannot_start_says_so_at_its_first_run(gemm64, target):
    runner = BackgroundStartLocalRunner(f_run_evaluator="pruner_ms.no_such_evaluator")
    with pytest.raises(Exception, match="no_such_evaluator"):
        runner.run(_runner_inputs(gemm64, target))


def test_a_runner_given_is_handed_on_as_it_is():
    runner = BackgroundStartLocalRunner()
    assert start_runner(runner) is runner

"""A Ctrl-C during tuning stops it as a KeyboardInterrupt, also where it lands in Python code that
MetaSchedule's C++ calls (pruner_ms.integration.workarounds.keyboard_interrupt)."""
from __future__ import annotations

import pytest
import tvm_ffi
from tvm.ir.utils import derived_object
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule.runner import PyRunner

import pruner_ms
from pruner_ms.integration.workarounds import keep_keyboard_interrupt

from .test_resume import SMALL, _distinct_programs


def _raise(exc: type[BaseException]):
    def callback():
        raise exc("from a callback")

    return tvm_ffi.convert(callback)  # an FFI function: calling it goes through C++ and back


def test_an_interrupt_in_a_callback_that_cxx_calls_comes_back_as_itself():
    keep_keyboard_interrupt()
    keep_keyboard_interrupt()  # idempotent
    with pytest.raises(KeyboardInterrupt):
        _raise(KeyboardInterrupt)()
    with pytest.raises(ValueError, match="from a callback"):  # other errors keep their types too
        _raise(ValueError)()


@derived_object
class _CtrlCOnSecondBatch(PyRunner):
    """MetaSchedule's LocalRunner, but the user presses Ctrl-C while the second batch is handed to it."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = ms.runner.LocalRunner()
        self.batches = 0

    def run(self, runner_inputs):
        self.batches += 1
        if self.batches == 2:
            raise KeyboardInterrupt
        return self.inner.run(runner_inputs)


@pytest.mark.slow
def test_tune_tir_stops_on_a_ctrl_c_in_the_runner_and_resumes(tmp_path, target, builder, gemm64):
    wd = str(tmp_path / "wd")
    with pytest.raises(KeyboardInterrupt):
        pruner_ms.tune_tir(gemm64.func, target, wd, 24, num_trials_per_iter=8, runner=_CtrlCOnSecondBatch(),
                           strategy=pruner_ms.PrunerSearch(**SMALL), builder=builder, seed=1, num_tuning_cores=2)
    assert _distinct_programs(wd, gemm64.func) == (8, 8)  # the first batch, committed before the Ctrl-C
    pruner_ms.tune_tir(gemm64.func, target, wd, 24, num_trials_per_iter=8,
                       strategy=pruner_ms.PrunerSearch(**SMALL), builder=builder, seed=2, num_tuning_cores=2)
    assert _distinct_programs(wd, gemm64.func) == (24, 24)

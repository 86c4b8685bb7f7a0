"""Builder and runner workers import TVM without torch (``import tvm`` imports torch: 2-3 s per worker)
and otherwise behave as TVM's ``PopenPoolExecutor`` workers."""
from __future__ import annotations

import pytest


def _probe():
    """(torch imported, tvm imported, pid) of the process it runs in; local functions travel by value."""
    def probe():
        import os
        import sys

        return "torch" in sys.modules, "tvm" in sys.modules, os.getpid()
    return probe


def test_pool_workers_have_tvm_without_torch_and_report_errors():
    from pruner_ms.integration.workarounds.torch_free_workers import TorchFreePopenPoolExecutor

    def fails():
        raise ValueError("a candidate's fault")

    pool = TorchFreePopenPoolExecutor(max_workers=2, timeout=120)
    try:
        results = [f.result() for f in [pool.submit(_probe()) for _ in range(2)]]
        assert all(r[:2] == (False, True) for r in results), results
        with pytest.raises(ValueError, match="a candidate's fault"):
            pool.submit(fails).result()
        assert pool.submit(_probe()).result()[:2] == (False, True)  # the pool goes on
    finally:
        pool.shutdown()


def test_the_builder_and_runner_workers_are_torch_free():
    from pruner_ms import BackgroundStartLocalRunner
    from pruner_ms.integration.builders import WarmPopenPool
    from pruner_ms.integration.workarounds.torch_free_workers import TorchFreePopenPoolExecutor

    pool = WarmPopenPool(max_workers=1, timeout_sec=120)
    try:
        assert [f.result()[:2] for f in pool.start(_probe())] == [(False, True)]
    finally:
        pool.shutdown()
    runner = BackgroundStartLocalRunner()
    assert isinstance(runner.pool, TorchFreePopenPoolExecutor)
    assert runner.pool.submit(_probe()).result()[:2] == (False, True)
    runner.pool.shutdown()


def test_a_pool_that_has_started_workers_is_not_replaced():
    from tvm.support.popen_pool import PopenPoolExecutor

    from pruner_ms.integration.workarounds.torch_free_workers import TorchFreePopenPoolExecutor

    pool = PopenPoolExecutor(max_workers=1, timeout=120)
    try:
        pool.submit(_probe()).result()
        with pytest.raises(ValueError, match="has started workers"):
            TorchFreePopenPoolExecutor.like(pool)
    finally:
        pool.shutdown()

"""WarmPoolBuilder: a LocalBuilder whose workers outlive a batch and start while the search drafts."""
from __future__ import annotations

import time

import pytest
from tvm.s_tir import Schedule
from tvm.s_tir.meta_schedule.builder import BuilderInput

from pruner_ms import WarmPoolBuilder


def _inputs(gemm64, target, n: int) -> list:
    return [BuilderInput(Schedule(gemm64.func).mod, target) for _ in range(n)]


def test_workers_start_in_the_background_and_serve_several_batches(gemm64, target):
    start = time.perf_counter()
    builder = WarmPoolBuilder(max_workers=1, recycle_every=2)
    assert time.perf_counter() - start < 1.0  # the worker's `import tvm` (seconds) is not waited for
    pools = []
    for _ in range(3):
        results = builder.build(_inputs(gemm64, target, 2))
        assert [r.error_msg for r in results] == [None, None] and all(r.artifact_path for r in results)
        pools.append(builder._workers._pool)
    assert pools[0] is pools[1] is not pools[2]  # recycled every 2 batches


def test_a_builder_that_cannot_start_says_so_at_its_first_build(gemm64, target):
    builder = WarmPoolBuilder(max_workers=1, f_build="pruner_ms.no_such_build_function")
    with pytest.raises(Exception, match="no_such_build_function"):
        builder.build(_inputs(gemm64, target, 1))


def test_every_worker_starts_ahead_of_the_first_batch():
    """A worker left to start at the first batch makes that batch wait for its ``import tvm``."""
    import os

    from pruner_ms.integration.builders import WarmPopenPool

    pool = WarmPopenPool(max_workers=2)
    try:
        pids = {f.result() for f in pool.start(os.getpid)}
    finally:
        pool.shutdown()
    assert len(pids) == 2 and os.getpid() not in pids, pids

"""Shared fixtures: the host target, a small GEMM, and a builder that works on 2 cores."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="session")
def host_spec():
    from pruner_ms.hardware import host_cpu_spec

    return host_cpu_spec()


@pytest.fixture(scope="session")
def target(host_spec):
    import tvm

    return tvm.target.Target(host_spec.target())


@pytest.fixture(scope="session")
def builder(host_spec):
    from pruner_ms import WarmPoolBuilder

    return WarmPoolBuilder(max_workers=host_spec.cores)


@pytest.fixture()
def gemm64():
    from pruner_ms.bench.workloads import gemm

    return gemm(64, 64, 64)


def run_and_check(sch_mod, workload, target) -> float:
    """Compile a scheduled module, run it on random inputs, return the max error vs numpy."""
    import tvm

    ex = tvm.compile(sch_mod, target=target)
    inputs = workload.make_inputs(np.random.default_rng(1))
    args = [tvm.runtime.tensor(x) for x in inputs] + [tvm.runtime.empty(workload.output_shape, workload.output_dtype)]
    ex["main"](*args)
    return float(np.max(np.abs(args[-1].numpy() - workload.reference(*inputs))))

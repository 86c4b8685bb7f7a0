"""PrunerSearch on MetaSchedule's tensor-core space for an A100, on a machine without a GPU.

The whole search runs for real (design spaces, mutators, postprocs, the GPU analyzer, XGBoost, nvcc
builds); only the measurement is a synthetic runner, as no GPU is here.
"""
from __future__ import annotations

import shutil

import pytest

from pruner_ms.bench.workloads import gemm, gemm_fp16

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")


@pytest.fixture(scope="module")
def a100():
    import tvm

    return tvm.target.Target("nvidia/nvidia-a100", host={"kind": "llvm", "num-cores": 2})


def test_pruner_search_tunes_tensor_cores_end_to_end(a100, tmp_path):
    import tvm_ffi
    from tvm.s_tir import meta_schedule as ms

    import pruner_ms
    from pruner_ms.integration.builders import CudaBuilder
    from pruner_ms.integration.runners import SyntheticLatencyRunner
    from pruner_ms.integration.database import compiled_schedule

    wl = gemm_fp16(256, 256, 256)
    builder = CudaBuilder(max_workers=2)
    runner = SyntheticLatencyRunner(builder)
    strategy = pruner_ms.PrunerSearch(population_size=32, draft_size=16)
    db = pruner_ms.tune_tir(wl.func, a100, str(tmp_path), 16, num_trials_per_iter=8, space="cuda-tensorcore",
                            builder=builder, runner=runner, strategy=strategy, num_tuning_cores=2, seed=1)
    records = db.get_all_tuning_records()
    assert len(records) == 16 and builder.stats.ok == 16
    keys = set()
    for rec in records:
        sch = compiled_schedule(wl.func, rec.trace)
        assert "tvm_mma_sync" in sch.mod.script()  # every measured program runs on tensor cores
        keys.add(int(tvm_ffi.structural_hash(sch.mod)))
    assert len(keys) == 16  # none measured twice
    best = ms.tir_integration.compile_tir(db, wl.func, a100)
    assert best is not None


def test_non_tensorizable_workload_is_refused(a100, tmp_path):
    from pruner_ms import tune_tir
    from pruner_ms.integration.builders import CudaBuilder
    from pruner_ms.integration.runners import SyntheticLatencyRunner
    from pruner_ms.integration.tensor_core import NotTensorizableError

    builder = CudaBuilder(max_workers=1)
    with pytest.raises(NotTensorizableError, match="cannot use tensor cores"):
        tune_tir(gemm(128, 128, 128).func, a100, str(tmp_path), 8, space="cuda-tensorcore",
                 builder=builder, runner=SyntheticLatencyRunner(builder))

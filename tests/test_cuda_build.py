"""CUDA tensor-core builds without a GPU: CudaBuilder (real tvm.compile + nvcc), NoGPUError, a synthetic tune.

Sampling tensor-core candidates (the module-scoped ``tc_candidates`` fixture, once) needs TVM's
tensor intrinsics, which conftest imports (4-9 s under the stack-inspection workaround).
"""
from __future__ import annotations

import os
import shutil
import struct
import tarfile
from pathlib import Path

import pytest

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")

FATBIN_MAGIC = struct.pack("<I", 0xBA55ED50)  # first word of a CUDA fatbin


def fp16_gemm(m: int, n: int, k: int, acc_dtype: str = "float32"):
    import tvm
    from tvm import te

    a = te.placeholder((m, k), "float16", name="A")
    b = te.placeholder((k, n), "float16", name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r].astype(acc_dtype) * b[r, j].astype(acc_dtype), axis=r),
                   name="C")
    return tvm.IRModule({"main": te.create_prim_func([a, b, c])})


@pytest.fixture(scope="module")
def a100():
    import tvm

    return tvm.target.Target("nvidia/nvidia-a100", host={"kind": "llvm", "num-cores": 2})


@pytest.fixture(scope="module")
def h200():
    """The H200 (sm_90a) target pruner_ms.bench.gpu tunes for on the GPU host (TVM 0.27 has no H200 tag)."""
    import tvm

    from pruner_ms.hardware import load_gpu_spec

    return tvm.target.Target(load_gpu_spec("h200").target(host={"kind": "llvm", "num-cores": 2}))


def fatbin_entries(data: bytes) -> list[tuple[str, int, bool]]:
    """(kind, compute capability x 10, arch-specific ``a``) of each entry of a CUDA fatbin.

    Layout: a 16-byte header (magic, version, header size, payload size), then entries, each a
    header (kind 1 = PTX, 2 = ELF/SASS at offset 0, its own size at 4, payload size at 8, arch at
    28, flags at 40; flag 0x100000 marks ``sm_XXa``) followed by its payload. Checked against
    nvcc 13.0 output for ``-arch=sm_80`` (ELF 80 + PTX 80) and ``code=sm_90a`` (ELF 90, flag set).
    """
    magic, _, header, size = struct.unpack_from("<IHHQ", data, 0)
    assert data[:4] == FATBIN_MAGIC and magic == 0xBA55ED50
    out, off = [], header
    while off < header + size:
        kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, off)
        (arch,) = struct.unpack_from("<I", data, off + 28)
        (flags,) = struct.unpack_from("<Q", data, off + 40)
        out.append(({1: "ptx", 2: "elf"}.get(kind, str(kind)), arch, bool(flags & 0x100000)))
        off += entry_header + payload
    return out


@pytest.fixture(scope="module")
def tc_candidates(a100):
    """Four tensor-core candidates of a 256^3 fp16 GEMM with fp32 accumulation (the case that needs the workaround)."""
    from pruner_ms.integration.tensor_core import sample_candidates

    cands = sample_candidates(fp16_gemm(256, 256, 256), a100, 4, seed=1, population_size=32)
    assert len(cands) == 4
    return cands


# -- no nvcc, no TVM build --------------------------------------------------------------------------
def test_replace_cuda_payload_round_trip():
    from pruner_ms.integration.workarounds import replace_cuda_payload

    def s(b: bytes) -> bytes:
        return struct.pack("<Q", len(b)) + b

    src, fmap = "extern \"C\" __global__ void k() {}", b"\x01\x02fmap-bytes"
    # import tree of [_lib, cuda] (CSR): indptr (0, 1, 1), child indices (1,)
    body = struct.pack("<Q3Q", 3, 0, 1, 1) + struct.pack("<QQ", 1, 1)
    body += s(b"_lib") + s(b"cuda") + s(s(b"cuda") + fmap + s(src.encode()))
    blob = struct.pack("<Q", len(body)) + body
    out = replace_cuda_payload(blob, {src: b"FATBIN!"})
    expected_body = body.replace(s(s(b"cuda") + fmap + s(src.encode())), s(s(b"fatbin") + fmap + s(b"FATBIN!")))
    assert out == struct.pack("<Q", len(expected_body)) + expected_body
    with pytest.raises(ValueError, match="not compiled"):
        replace_cuda_payload(blob, {"other source": b"x"})


def test_gpu_available_and_no_gpu_error(tmp_path):
    import pruner_ms
    from pruner_ms.integration.runners import NoGPUError, check_runner, gpu_available

    assert gpu_available({"kind": "llvm"})
    if gpu_available("nvidia/nvidia-a100"):
        pytest.skip("a CUDA GPU is visible: the local runner can measure")
    with pytest.raises(NoGPUError, match="RPCRunner") as info:
        pruner_ms.tune_tir(fp16_gemm(256, 256, 256), "nvidia/nvidia-a100", str(tmp_path), 16)
    assert isinstance(info.value, RuntimeError) and "no CUDA GPU" in str(info.value)
    assert not any(tmp_path.iterdir())  # raised before MetaSchedule wrote anything
    check_runner("nvidia/nvidia-a100", runner=object())  # any non-local runner is accepted


# -- real builds -----------------------------------------------------------------------------------
@needs_nvcc
def test_build_tensorcore_candidates(tc_candidates, a100, tmp_path):
    from tvm.s_tir.meta_schedule.builder import BuilderInput

    from pruner_ms.integration.builders import CudaBuilder

    builder = CudaBuilder(max_workers=2, artifact_dir=str(tmp_path))
    results = builder.build([BuilderInput(c.sch.mod, a100) for c in tc_candidates])
    assert [r.error_msg for r in results] == [None] * len(results)
    paths = [str(r.artifact_path) for r in results]
    assert len({os.path.dirname(p) for p in paths}) == len(paths)  # RemoveBuildArtifact rmtree()s dirname
    for cand, path in zip(tc_candidates, paths):
        rec = builder.record(path)
        assert rec is not None and rec.mod.same_as(cand.sch.mod) and rec.path in ("default", "workaround")
        source = Path(rec.source_path).read_text()
        assert "wmma::mma_sync" in source and "wmma::load_matrix_sync" in source
        fatbin = Path(rec.binary_path).read_bytes()
        assert fatbin.startswith(FATBIN_MAGIC) and rec.binary_bytes == len(fatbin)
        with tarfile.open(path) as tar:
            assert sorted(tar.getnames()) == ["devc.o", "lib0.o"]
            devc = tar.extractfile("devc.o").read()
        assert fatbin in devc and b"fatbin" in devc  # the module carries the binary, not the source
        assert b"wmma::mma_sync" not in devc
    st = builder.stats
    assert (st.built, st.ok, st.failed) == (4, 4, 0)
    assert st.as_dict()["sec_per_build"] > 0
    _check_gpu_host_sees_fatbin(paths[0], Path(builder.record(paths[0]).binary_path).read_bytes())


@needs_nvcc
def test_sampled_tensorcore_candidate_builds_for_sm90(h200, tmp_path):
    """What the GPU host (one H200) runs: tensor-core candidates sampled for the H200 spec build with
    nvcc for sm_90a, and the artifact carries SASS for compute capability 9.0 only."""
    from tvm.s_tir.meta_schedule.builder import BuilderInput

    from pruner_ms.integration.builders import CudaBuilder
    from pruner_ms.integration.tensor_core import sample_candidates

    assert h200.attrs["arch"] == "sm_90a"
    cands = sample_candidates(fp16_gemm(256, 256, 256), h200, 2, seed=3, population_size=32)
    assert len(cands) == 2 and all("tvm_mma_sync" in c.sch.mod.script() for c in cands)
    builder = CudaBuilder(max_workers=2, artifact_dir=str(tmp_path))
    results = builder.build([BuilderInput(c.sch.mod, h200) for c in cands])
    assert [r.error_msg for r in results] == [None, None]
    for r in results:
        rec = builder.record(str(r.artifact_path))
        assert "wmma::mma_sync" in Path(rec.source_path).read_text()
        assert fatbin_entries(Path(rec.binary_path).read_bytes()) == [("elf", 90, True)]


@needs_nvcc
def test_worker_processes_build_what_threads_build_and_survive_a_timeout(tc_candidates, a100, tmp_path):
    """The default builds (worker processes, lowering in parallel) give the artifacts the in-process
    threads give: same build path and CUDA source per candidate, each with its fatbin. A build that
    passes the time limit is an error result whose directory is gone, batch after batch."""
    from tvm.s_tir.meta_schedule.builder import BuilderInput

    from pruner_ms.integration.builders import CudaBuilder

    inputs = [BuilderInput(c.sch.mod, a100) for c in tc_candidates]
    procs = CudaBuilder(max_workers=2, artifact_dir=str(tmp_path))
    threads = CudaBuilder(max_workers=2, processes=False, artifact_dir=str(tmp_path))
    try:
        by_procs, by_threads = procs.build(inputs), threads.build(inputs)
        assert [r.error_msg for r in by_procs + by_threads] == [None] * (2 * len(inputs))
        for bi, rp, rt in zip(inputs, by_procs, by_threads):
            rec_p, rec_t = procs.record(str(rp.artifact_path)), threads.record(str(rt.artifact_path))
            assert rec_p.mod.same_as(bi.mod) and rec_p.path == rec_t.path
            assert Path(rec_p.source_path).read_text() == Path(rec_t.source_path).read_text()
            assert Path(rec_p.binary_path).read_bytes().startswith(FATBIN_MAGIC) and rec_p.binary_bytes > 0
            assert rec_p.compile_sec > 0 and rec_p.nvcc_sec > 0 and rec_p.total_sec >= rec_p.compile_sec
        assert (procs.stats.ok, procs.stats.failed) == (len(inputs), 0)

        hasty = CudaBuilder(max_workers=1, timeout_sec=0.05, artifact_dir=str(tmp_path))
        before = set(tmp_path.iterdir())
        for batch in (1, 2):  # the killed worker is restarted for the next batch
            (late,) = hasty.build(inputs[:1])
            assert late.artifact_path is None and "timeout after 0.05 s" in late.error_msg
            assert set(tmp_path.iterdir()) == before and hasty.stats.failed == batch
        hasty.shutdown()
    finally:
        procs.shutdown()
        threads.shutdown()


def _check_gpu_host_sees_fatbin(artifact: str, fatbin: bytes) -> None:
    """Load the artifact as a GPU host would (link with g++, ProcessLibraryBin) and check what its
    CUDA loader receives: ``fmt="fatbin"`` and the fatbin, so no NVRTC/nvcc is needed there. Without
    a CUDA runtime here, a stand-in loader is registered under the CUDA loader's name."""
    import tvm
    import tvm_ffi

    if tvm.get_global_func("ffi.Module.load_from_bytes.cuda", allow_missing=True) is not None:
        return  # a real CUDA runtime is loaded; do not shadow its loader
    if shutil.which("g++") is None:
        return
    got = []

    def loader(data):
        got.append(bytes(data))
        return tvm_ffi.system_lib()

    tvm_ffi.register_global_func("ffi.Module.load_from_bytes.cuda", loader)
    try:
        tvm.runtime.load_module(artifact)
    finally:
        tvm_ffi.remove_global_func("ffi.Module.load_from_bytes.cuda")
    (payload,) = got
    (fmt_len,) = struct.unpack_from("<Q", payload, 0)
    assert payload[8:8 + fmt_len] == b"fatbin"
    assert payload.endswith(struct.pack("<Q", len(fatbin)) + fatbin)


@needs_nvcc
def test_workaround_paths_and_errors(tc_candidates, a100, tmp_path):
    """Without the workaround fp32-accumulating wmma candidates fail with TVM 0.27's lowering error,
    as BuilderResult errors; with ``retry`` exactly those take the workaround path."""
    from tvm.s_tir.meta_schedule.builder import BuilderInput

    from pruner_ms.integration.builders import CudaBuilder

    inputs = [BuilderInput(c.sch.mod, a100) for c in tc_candidates]
    off = CudaBuilder(max_workers=2, workaround="off", nvcc=False, artifact_dir=str(tmp_path))
    retry = CudaBuilder(max_workers=2, workaround="retry", nvcc=False, artifact_dir=str(tmp_path))
    res_off, res_retry = off.build(inputs), retry.build(inputs)
    assert all(r.error_msg is None for r in res_retry)
    for r_off, r_retry in zip(res_off, res_retry):
        path = retry.record(str(r_retry.artifact_path)).path
        if r_off.error_msg is None:
            assert path == "default"
        else:
            assert "tvm_access_ptr element type must match" in r_off.error_msg and path == "workaround"
    assert off.stats.failed == retry.stats.ok_workaround
    if off.stats.failed:
        (reason,) = off.stats.failures
        assert "tvm_access_ptr element type must match" in reason

    # an nvcc failure is an error result too, not an exception
    bad_nvcc = CudaBuilder(max_workers=1, nvcc=True, nvcc_options=["--no-such-nvcc-option"],
                           artifact_dir=str(tmp_path))
    before = set(tmp_path.iterdir())
    (bad,) = bad_nvcc.build(inputs[:1])
    assert bad.artifact_path is None and "CudaBuilder: RuntimeError" in bad.error_msg
    assert bad_nvcc.stats.failed == 1 and set(tmp_path.iterdir()) == before  # its directory is gone


# -- a short tune --------------------------------------------------------------------------------
@needs_nvcc
def test_tune_with_synthetic_latencies(tc_candidates, a100, tmp_path):
    from tvm.s_tir import meta_schedule as ms

    from pruner_ms.integration.builders import CudaBuilder
    from pruner_ms.integration.runners import SyntheticLatencyRunner
    from pruner_ms.integration.workarounds import meta_schedule_logging

    mod = fp16_gemm(256, 256, 256)
    builder = CudaBuilder(max_workers=2, artifact_dir=str(tmp_path / "artifacts"))
    os.makedirs(tmp_path / "artifacts")
    runner = SyntheticLatencyRunner(builder)
    with meta_schedule_logging():
        db = ms.tune_tir(
            mod, a100, str(tmp_path / "work"), max_trials_global=16, num_trials_per_iter=8,
            builder=builder, runner=runner, cost_model="random", num_tuning_cores=2, seed=0,
            strategy=ms.search_strategy.EvolutionarySearch(population_size=32, init_min_unmeasured=16,
                                                           genetic_num_iters=1),
        )
    records = db.get_all_tuning_records()
    valid = [r for r in records if r.run_secs and float(r.run_secs[0]) < 1.0]
    assert len(valid) >= 8 and runner.calls >= 8
    assert builder.stats.ok >= 8
    assert not os.listdir(tmp_path / "artifacts")  # RemoveBuildArtifact removed every artifact dir
    sch = ms.tir_integration.compile_tir(db, mod, a100)
    assert sch is not None and "tvm_mma_sync" in sch.mod.script()

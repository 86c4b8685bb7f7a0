"""Hardware specs: host detection and the configs/ files."""
from __future__ import annotations

import json

import pytest

from pruner_ms.hardware import configs_dir, host_cpu_spec, load_cpu_spec


def test_every_cpu_config_cites_sources():
    files = sorted((configs_dir() / "cpu").glob("*.json"))
    assert files
    for path in files:
        data = json.loads(path.read_text())
        assert data["sources"], f"{path.name} has no sources"
        assert data["simd_bits"] in (128, 256, 512)


def test_user_configs_replace_and_add_files(tmp_path, monkeypatch):
    """$PRUNER_MS_CONFIGS: a file there replaces the shipped one of the same name, a new one adds to
    them, everything else still comes from the shipped configs; a wrong path is a clear error."""
    from pruner_ms.bench.suite import load_suite
    from pruner_ms.hardware import config_files

    shipped = {p.name for p in config_files("cpu")}
    mine = tmp_path / "mine"
    (mine / "cpu").mkdir(parents=True)
    (mine / "suites").mkdir()
    data = json.loads((configs_dir() / "cpu" / "znver4.json").read_text())
    data["fma_latency_cycles"] = 7
    (mine / "cpu" / "znver4.json").write_text(json.dumps(data))
    (mine / "suites" / "my-suite.json").write_text(json.dumps(
        {"workloads": [{"op": "gemm", "args": {"m": 64, "n": 64, "k": 64}}]}))
    assert load_cpu_spec("znver4").fma_latency_cycles != 7
    monkeypatch.setenv("PRUNER_MS_CONFIGS", str(mine))
    files = config_files("cpu")
    assert {p.name for p in files} == shipped and mine / "cpu" / "znver4.json" in files
    assert load_cpu_spec("znver4").fma_latency_cycles == 7
    assert load_cpu_spec("znver3").fma_latency_cycles == json.loads(
        (configs_dir() / "cpu" / "znver3.json").read_text())["fma_latency_cycles"]
    assert load_suite("my-suite")["workloads"][0]["op"] == "gemm" and load_suite("cpu")["workloads"]
    monkeypatch.setenv("PRUNER_MS_CONFIGS", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="PRUNER_MS_CONFIGS names .*nowhere.*not a folder"):
        config_files("cpu")


def test_host_spec_targets_the_real_isa():
    import tvm

    spec = host_cpu_spec()
    target = spec.target()
    assert target["mcpu"] == tvm.target.codegen.llvm_get_system_cpu()
    assert target["num-cores"] >= 1 and spec.l1d_bytes > 0 and spec.l3_bytes >= spec.l2_bytes
    tvm.target.Target(target)  # accepted by TVM


def test_unknown_cpu_names_the_fix():
    with pytest.raises(KeyError, match="configs/cpu/README.md"):
        load_cpu_spec("no-such-cpu")


def test_peak_flops_follow_the_fma_datapath():
    zen4 = load_cpu_spec("znver4", cores=1)
    spr = load_cpu_spec("sapphirerapids", cores=1)
    # both run 16-lane fp32 FMAs, but Zen 4 splits them over two 256-bit halves
    assert spr.flops_per_cycle(16, 4) == 2 * zen4.flops_per_cycle(16, 4)


def test_cpu_family_files_are_consistent():
    from pruner_ms.hardware.cpu import _FAMILY_FIELDS

    files = sorted((configs_dir() / "cpu").glob("*.json"))
    owner: dict[str, str] = {}
    fallbacks = []
    for path in files:
        data = json.loads(path.read_text())
        assert data["name"] == path.stem
        for key in (*_FAMILY_FIELDS, "l1d_kib", "l2_kib", "l3_kib_per_core", "dram_gb_per_s_per_core"):
            assert key in data, f"{path.name} lacks {key}"
        assert data["simd_bits_per_fma_unit"] <= data["simd_bits"]
        assert data["vector_registers"] in (16, 32)
        assert set(data.get("match", {})) <= {"arch", "vendor", "flags_all", "flags_none", "cpu_parts", "by_flags"}
        for mcpu in data["llvm_mcpu"]:
            assert mcpu not in owner, f"{mcpu} is listed by {owner.get(mcpu)} and {path.name}"
            owner[mcpu] = path.name
        if data.get("fallback"):
            fallbacks.append(path.name)
    assert len(fallbacks) == 1, fallbacks


def test_explicit_names_follow_llvm_features():
    # a name no file lists but LLVM knows: ISA from LLVM's features, family from them
    spec = load_cpu_spec("diamondrapids", cores=4)
    assert (spec.simd_bits, spec.vector_registers, spec.cores) == (512, 32, 4)
    assert "by intel x86_64 flags" in spec.sources["family"], spec.sources["family"]
    spec = load_cpu_spec("goldmont")  # SSE4.2 Atom: 128-bit, no FMA, conservative family
    assert spec.simd_bits == 128 and spec.fma_units == 1 and spec.name == "generic"
    assert "LLVM features" in spec.sources["simd_bits"]

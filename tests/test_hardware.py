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

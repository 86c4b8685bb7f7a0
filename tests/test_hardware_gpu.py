"""GPU hardware specs: the configs/gpu files, their figures and the TVM target <-> spec mapping."""
from __future__ import annotations

import json

import pytest
import tvm

from pruner_ms.hardware import (
    GPUSpec,
    UnknownGPUError,
    configs_dir,
    gpu_spec_for_target,
    load_gpu_spec,
)
from pruner_ms.hardware.gpu import all_gpu_specs

GPU_FILES = sorted((configs_dir() / "gpu").glob("*.json"))
SPECS = all_gpu_specs()

# what every file must state (units in the key names)
REQUIRED_KEYS = {
    "name", "description", "tvm_tags", "arch", "sm_count", "boost_clock_mhz",
    "tensor_fp16_fp32acc_tflops", "tensor_fp16_fp16acc_tflops", "fp32_tflops", "dram_gb_per_s", "l2_kib",
    "smem_per_sm_kib", "smem_per_block_kib", "smem_per_block_optin_kib", "registers_per_sm",
    "registers_per_block", "max_registers_per_thread", "max_threads_per_sm", "max_threads_per_block",
    "max_warps_per_sm", "max_blocks_per_sm", "warp_size", "sources",
}  # fmt: skip

EXPECTED = {"a100-40gb-sxm", "a100-80gb-sxm", "a10", "a30", "rtx-3090", "rtx-a6000", "h100-sxm", "h200"}

# Dense FP16 tensor FLOP per SM per clock and FP32 FLOP per SM per clock (whitepapers): GA100 has
# 4 x 256 FP16 FMA/clk and 64 FP32 lanes per SM, GA10x 4 x 128 and 128, GH100 4 x 512 and 128.
PER_SM_CLOCK = {"sm_80": (2048, 128), "sm_86": (1024, 256), "sm_90": (4096, 256)}


def _ids(specs):
    return [s.name for s in specs]


def test_every_expected_gpu_has_a_file():
    assert EXPECTED <= {p.stem for p in GPU_FILES}


@pytest.mark.parametrize("path", GPU_FILES, ids=[p.stem for p in GPU_FILES])
def test_every_gpu_config_cites_sources_and_has_all_fields(path):
    data = json.loads(path.read_text())
    assert REQUIRED_KEYS <= set(data), f"{path.name} lacks {sorted(REQUIRED_KEYS - set(data))}"
    assert data["name"] == path.stem
    assert isinstance(data["sources"], dict) and data["sources"], f"{path.name} has no sources"
    assert all(isinstance(v, str) and len(v) > 20 for v in data["sources"].values())
    for key in REQUIRED_KEYS - {"name", "description", "tvm_tags", "arch", "sources"}:
        assert isinstance(data[key], (int, float)) and data[key] > 0, f"{path.name}: {key}={data[key]!r}"
    spec = load_gpu_spec(path.stem)
    assert isinstance(spec, GPUSpec) and spec.l2_bytes == data["l2_kib"] * 1024


def test_tags_belong_to_one_spec_and_are_real_tvm_tags():
    registered = tvm.target.list_tags()
    seen: dict[str, str] = {}
    for spec in SPECS:
        for tag in spec.tvm_tags:
            assert tag in registered, f"{spec.name}: {tag} is not a TVM tag"
            assert tag not in seen, f"{tag} listed by {seen[tag]} and {spec.name}"
            seen[tag] = spec.name


@pytest.mark.parametrize("spec", SPECS, ids=_ids(SPECS))
def test_every_listed_tag_builds_a_target_that_maps_back(spec):
    for tag in spec.tvm_tags:
        tagged = tvm.target.Target({"tag": tag})  # keeps the tag name in TVM 0.27
        assert str(tagged.tag) == tag and tagged.kind.name == "cuda"
        assert str(tagged.attrs["arch"]) == spec.target_arch
        assert gpu_spec_for_target(tagged) is spec
        assert gpu_spec_for_target(tag) is spec
        assert load_gpu_spec(tag) is spec


@pytest.mark.parametrize("spec", SPECS, ids=_ids(SPECS))
def test_target_dict_is_accepted_by_tvm_and_maps_back(spec):
    target = tvm.target.Target(spec.target(host={"kind": "llvm"}))
    assert target.kind.name == "cuda" and target.host.kind.name == "llvm"
    assert str(target.attrs["arch"]) == spec.target_arch
    assert int(target.attrs["max_shared_memory_per_block"]) == spec.smem_per_block_bytes
    assert int(target.attrs["l2_cache_size_bytes"]) == spec.l2_bytes
    assert gpu_spec_for_target(target) is spec
    assert gpu_spec_for_target(spec.target()) is spec  # the plain dict too
    assert gpu_spec_for_target(spec.name) is spec


def test_target_dict_agrees_with_the_tvm_tag():
    a100 = load_gpu_spec("a100-40gb-sxm")
    tagged = tvm.target.Target("nvidia/nvidia-a100")
    ours = tvm.target.Target(a100.target())
    for key in tagged.attrs:
        assert str(ours.attrs[key]) == str(tagged.attrs[key]), key


def test_a100_tag_is_the_40gb_sxm():
    spec = gpu_spec_for_target("nvidia/nvidia-a100")
    assert spec.name == "a100-40gb-sxm" and spec.sm_count == 108 and spec.dram_gb_per_s == 1555
    # Target("<tag>") loses the tag name in TVM 0.27; its attributes still identify the A100 tag
    assert gpu_spec_for_target(tvm.target.Target("nvidia/nvidia-a100")) is spec
    assert gpu_spec_for_target(tvm.target.Target("nvidia/nvidia-h100")).name == "h100-sxm"


@pytest.mark.parametrize(
    "target",
    [
        "nvidia/geforce-rtx-4090",  # a real TVM tag no spec lists (sm_89)
        "nvidia/nvidia-a40",  # a real sm_86 tag no spec lists: not guessed from its arch
        "no-such-gpu",
        {"kind": "cuda", "arch": "sm_80"},  # three specs share sm_80
        {"kind": "cuda", "arch": "sm_75"},
    ],
)
def test_unknown_or_ambiguous_gpu_names_the_fix(target):
    with pytest.raises(UnknownGPUError, match="configs/gpu/README.md") as info:
        gpu_spec_for_target(target)
    assert isinstance(info.value, KeyError)
    assert "a100-40gb-sxm" in str(info.value)  # lists the known specs


def test_tagless_sm86_target_is_ambiguous():
    # every sm_86 tag expands to the same attributes, so Target("<tag>") cannot say which card it was
    with pytest.raises(UnknownGPUError, match="several specs"):
        gpu_spec_for_target(tvm.target.Target("nvidia/geforce-rtx-3090"))


def test_unknown_name_and_non_cuda_target():
    with pytest.raises(UnknownGPUError, match="configs/gpu/README.md"):
        load_gpu_spec("b200")
    with pytest.raises(UnknownGPUError, match="not 'cuda'"):
        gpu_spec_for_target({"kind": "llvm"})


@pytest.mark.parametrize("spec", SPECS, ids=_ids(SPECS))
def test_figures_are_consistent(spec):
    assert spec.max_warps_per_sm * spec.warp_size == spec.max_threads_per_sm
    assert spec.tensor_flops_per_s("float32") > spec.fp32_flops_per_s
    assert spec.tensor_flops_per_s("float16") >= spec.tensor_flops_per_s("float32")
    assert spec.smem_per_block_bytes <= spec.smem_per_block_optin_bytes < spec.smem_per_sm_bytes
    assert spec.registers_per_block <= spec.registers_per_sm
    assert spec.max_threads_per_block <= spec.max_threads_per_sm
    assert spec.compute_capability == (int(spec.arch[3]), int(spec.arch[4]))
    # peaks agree with the architecture's per-SM, per-clock rates (catches a misplaced or halved figure)
    tensor_per_clk, fp32_per_clk = PER_SM_CLOCK[spec.arch]
    per_sm_clk = spec.sm_count * spec.clock_hz
    assert spec.fp32_flops_per_s / per_sm_clk == pytest.approx(fp32_per_clk, rel=0.01)
    # Hopper's tensor peaks are quoted at 1830 MHz, below the 1980 MHz boost clock
    assert spec.tensor_flops_per_s("float16") / per_sm_clk == pytest.approx(tensor_per_clk, rel=0.08)


def test_bandwidth_order_and_geforce_half_rate():
    bw = {s.name: s.dram_bytes_per_s for s in SPECS}
    assert bw["h200"] > bw["h100-sxm"] > bw["a100-80gb-sxm"] > bw["a100-40gb-sxm"]
    rtx = load_gpu_spec("rtx-3090")
    assert rtx.tensor_flops_per_s("fp16") == pytest.approx(2 * rtx.tensor_flops_per_s("fp32"), rel=1e-3)
    a6000 = load_gpu_spec("rtx-a6000")  # same die, professional part: full-rate FP32 accumulate
    assert a6000.tensor_flops_per_s("fp16") == a6000.tensor_flops_per_s("fp32")
    with pytest.raises(ValueError):
        rtx.tensor_flops_per_s("int32")


def test_occupancy_follows_the_per_sm_limits():
    a100, rtx = load_gpu_spec("a100-40gb-sxm"), load_gpu_spec("rtx-3090")
    assert a100.blocks_per_sm(1024) == 2 and rtx.blocks_per_sm(1024) == 1
    assert a100.occupancy(128) == 1.0 and a100.blocks_per_sm(32) == 32  # block limit
    # 48 KiB + 1 KiB reserve per block: 3 fit in 164 KiB, 2 in 100 KiB
    assert a100.blocks_per_sm(128, 48 * 1024) == 3 and rtx.blocks_per_sm(128, 48 * 1024) == 2
    # 128 registers x 256 threads = 32K registers: 2 blocks in 64K
    assert a100.blocks_per_sm(256, 0, 128) == 2
    assert a100.blocks_per_sm(128, 200 * 1024) == 0 and a100.blocks_per_sm(2048) == 0

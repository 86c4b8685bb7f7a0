"""Host CPU detection: flags -> ISA, family choice, cache shares, and agreement with LLVM's codegen."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from pruner_ms.hardware import host_cpu_spec, isa_from_flags, load_cpu_spec, select_cpu_family
from pruner_ms.hardware.cpu import (
    L3_PLAUSIBLE_FACTOR,
    cache_shares,
    detect_host_features,
    parse_cache_size,
    parse_cpu_list,
    parse_cpuinfo,
    spec_from_host,
)

# cpuinfo flag lines of real parts, shortened to the relevant part
HASWELL = "fpu sse sse2 ssse3 fma cx16 sse4_1 sse4_2 movbe popcnt aes xsave avx f16c rdrand avx2 bmi1 bmi2"
SPR = (HASWELL + " avx512f avx512dq avx512ifma avx512cd avx512bw avx512vl avx512vbmi avx512_vbmi2 gfni vaes "
       "avx512_vnni avx512_bitalg avx512_vpopcntdq amx_bf16 avx512_fp16 amx_tile amx_int8")
ICX = HASWELL + " avx512f avx512dq avx512cd avx512bw avx512vl avx512vbmi avx512_vbmi2 vaes avx512_vnni"
SKX = HASWELL + " avx512f avx512dq avx512cd avx512bw avx512vl"
ZEN3 = HASWELL + " sse4a vaes vpclmulqdq"
ZEN4 = ZEN3 + " avx512f avx512dq avx512ifma avx512cd avx512bw avx512vl avx512_bf16 avx512vbmi avx512_vnni"
ZEN5 = ZEN4 + " avx512_vp2intersect avx_vnni"
N1_CPUINFO = """processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x3
CPU part\t: 0xd0c
CPU revision\t: 1

processor\t: 1
Features\t: fp
"""


@pytest.mark.parametrize(
    "flags, arch, bits, regs, fma",
    [
        (HASWELL, "x86_64", 256, 16, True),
        (SPR, "x86_64", 512, 32, True),
        (ZEN4, "x86_64", 512, 32, True),
        ("fpu sse sse2 ssse3 sse4_1 sse4_2", "x86_64", 128, 16, False),
        ("fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics", "aarch64", 128, 32, True),
        ("fp asimd sve sve2", "aarch64", 128, 32, True),
        # LLVM's spelling of the same features
        (["+avx512f", "+amx-tile", "+fma", "+avx2"], "x86_64", 512, 32, True),
    ],
)
def test_isa_from_flags(flags, arch, bits, regs, fma):
    isa = isa_from_flags(flags, arch=arch)
    assert (isa.simd_bits, isa.vector_registers, isa.fma) == (bits, regs, fma)


@pytest.mark.parametrize(
    "flags, vendor, mcpu, family",
    [
        (HASWELL, "intel", "haswell", "x86-64-avx2"),
        (HASWELL, "intel", "some-future-avx2-core", "x86-64-avx2"),
        (SPR, "intel", "sapphirerapids", "sapphirerapids"),
        # the issue: LLVM says rocketlake, the flags say AMX -> a Sapphire Rapids class core
        (SPR, "intel", "rocketlake", "sapphirerapids"),
        (ICX, "intel", "rocketlake", "icelake-client"),  # a real Rocket Lake: the name decides client
        (ICX, "intel", "unknown-intel-cpu", "icelake-server"),
        (SKX, "intel", "unknown-intel-cpu", "skylake-avx512"),
        (ZEN3, "amd", "unknown-amd-cpu", "znver3"),
        (ZEN4, "amd", "unknown-amd-cpu", "znver4"),
        (ZEN4, "amd", "znver4", "znver4"),
        (ZEN5, "amd", "unknown-amd-cpu", "znver5"),
        ("fpu sse sse2", "intel", "x86-64", "generic"),
    ],
)
def test_family_from_flags(flags, vendor, mcpu, family):
    data, why = select_cpu_family(llvm_mcpu=mcpu, arch="x86_64", vendor=vendor, flags=flags)
    assert data["name"] == family, why


def test_unknown_name_with_avx512_flags_never_gets_the_avx2_family():
    for flags, vendor in ((SPR, "intel"), (ICX, "intel"), (SKX, "intel"), (ZEN4, "amd"), (ZEN5, "amd")):
        data, why = select_cpu_family(llvm_mcpu="cpu-llvm-does-not-name", arch="x86_64", vendor=vendor, flags=flags)
        assert data["simd_bits"] == 512 and data["name"] not in ("x86-64-avx2", "generic"), why


def test_aarch64_cpuinfo_gives_neon_and_the_neoverse_family():
    info = parse_cpuinfo(N1_CPUINFO)
    assert info["vendor"] == "arm" and info["cpu_part"] == "0xd0c" and "neon" in info["flags"]
    isa = isa_from_flags(info["flags"], arch="aarch64")
    assert (isa.simd_bits, isa.vector_registers) == (128, 32)
    data, why = select_cpu_family(llvm_mcpu="", arch="aarch64", vendor=info["vendor"], flags=info["flags"],
                                  cpu_part=info["cpu_part"])
    assert data["name"] == "neoverse-n1", why
    data, why = select_cpu_family(llvm_mcpu="", arch="aarch64", vendor="0xc0", flags=info["flags"], cpu_part="0xac3")
    assert data.get("fallback"), why


def test_sysfs_parsers():
    assert parse_cache_size("48K") == 48 * 1024 and parse_cache_size("32M") == 32 << 20
    assert parse_cpu_list("0-2,8,10-11") == {0, 1, 2, 8, 10, 11}
    with pytest.raises(ValueError, match="cache size"):
        parse_cache_size("lots")


def test_l3_share_of_a_vm_is_bounded():
    entries = [
        {"level": 1, "type": "Data", "size": "48K", "shared_cpu_list": "0"},
        {"level": 1, "type": "Instruction", "size": "64K", "shared_cpu_list": "0"},
        {"level": 2, "type": "Unified", "size": "2048K", "shared_cpu_list": "0"},
        {"level": 3, "type": "Unified", "size": "491520K", "shared_cpu_list": "0-1"},  # 480 MiB, 2 vCPUs
    ]
    caches, src = cache_shares(entries, cpus={0, 1}, l3_kib_per_core=1875)
    assert caches[1] == 48 * 1024 and caches[2] == 2048 * 1024
    assert caches[3] == 2 * 1875 * 1024, src["l3_bytes"]
    assert "not believed" in src["l3_bytes"]
    # a plausible figure is kept, and shared proportionally: 32 MiB over 8 cores, this process on 2
    real = [{"level": 3, "type": "Unified", "size": "32M", "shared_cpu_list": "0-7"}]
    caches, _ = cache_shares(real, cpus={0, 1}, l3_kib_per_core=4096)
    assert caches[3] == 8 << 20
    # SMT siblings share a core: 4 logical CPUs on 2 cores get 2 cores' share
    caches, _ = cache_shares(real, cpus={0, 1, 2, 3}, core_of={0: 0, 1: 0, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 7: 3},
                             l3_kib_per_core=4096)
    assert caches[3] == 16 << 20
    # without a family figure nothing bounds it: the rule needs one
    caches, _ = cache_shares(entries, cpus={0, 1})
    assert caches[3] == 480 << 20
    assert L3_PLAUSIBLE_FACTOR >= 3  # leaves room for 3D V-Cache parts (3x plain Zen 4 per core)


def test_unreadable_flags_fall_back_to_llvm_features_with_a_warning(tmp_path: Path):
    host = detect_host_features(cpuinfo_path=tmp_path / "missing", sysfs_root=tmp_path)
    assert not host.flags and host.isa is None and not host.cache_entries
    from pruner_ms.hardware.cpu import _llvm_features

    spec, problems = spec_from_host(host, llvm_mcpu="sapphirerapids", codegen_flags=_llvm_features("sapphirerapids"))
    assert spec.simd_bits == 512 and spec.name == "sapphirerapids" and spec.l3_bytes >= spec.l2_bytes
    assert len(problems) == 1 and "configs/cpu" in problems[0]
    spec, problems = spec_from_host(host, llvm_mcpu="no-such-cpu", codegen_flags=None)
    assert spec.simd_bits == 128 and spec.name == "generic" and "configs/cpu" in problems[0]


def _host_has(flag: str) -> bool:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return flag in parse_cpuinfo(text)["flags"]


@pytest.mark.skipif(not _host_has("avx512f"), reason="this host's /proc/cpuinfo shows no avx512f")
def test_host_spec_models_avx512():
    spec = host_cpu_spec()
    assert spec.simd_bits == 512 and spec.vector_registers == 32, spec.describe()
    assert spec.name not in ("x86-64-avx2", "generic"), spec.describe()
    assert spec.simd_bits_per_fma_unit <= spec.simd_bits


def test_host_spec_says_where_figures_came_from():
    import tvm

    host = detect_host_features()
    mcpu = tvm.target.codegen.llvm_get_system_cpu()
    from pruner_ms.hardware.cpu import _llvm_features

    built, problems = spec_from_host(host, llvm_mcpu=mcpu, codegen_flags=_llvm_features(mcpu))
    if host.flags:
        assert not problems, problems  # a machine whose flags describe it gets no warning
    spec = host_cpu_spec()
    assert built == spec
    for field in ("simd_bits", "vector_registers", "cores", "l3_bytes", "fma_units", "frequency_ghz", "family"):
        assert spec.sources.get(field), (field, spec.describe())
    assert spec.l3_bytes <= spec.cores * 16 * 1024 * 1024, spec.describe()  # never a whole host's L3 per vCPU


def _vector_add_asm(mcpu: str) -> str:
    import tvm
    from tvm import te
    from tvm.s_tir import Schedule

    a = te.placeholder((1024,), "float32", name="A")
    b = te.placeholder((1024,), "float32", name="B")
    c = te.compute((1024,), lambda i: a[i] + b[i], name="C")
    sch = Schedule(te.create_prim_func([a, b, c]))
    (i,) = sch.get_loops(sch.get_sblock("C"))
    _, inner = sch.split(i, [None, 16])
    sch.vectorize(inner)
    ex = tvm.compile(sch.mod, target={"kind": "llvm", "mcpu": mcpu})
    try:
        return ex.mod.inspect_source("asm")
    except Exception as err:  # noqa: BLE001  (skip with the reason; not swallowed)
        pytest.skip(f"assembly of the compiled module is not inspectable: {err}")


@pytest.mark.parametrize("mcpu", ["host", "skylake-avx512", "sapphirerapids", "znver4", "haswell"])
def test_spec_width_matches_llvm_codegen(mcpu):
    import tvm

    if not tvm.target.codegen.llvm_get_system_triple().startswith(("x86_64", "amd64")):
        pytest.skip("zmm/ymm check is for x86-64 hosts")
    spec = host_cpu_spec() if mcpu == "host" else load_cpu_spec(mcpu)
    asm = _vector_add_asm(spec.llvm_mcpu)
    adds = [line for line in asm.splitlines() if re.search(r"\bvaddps\b", line)]
    assert adds, "no vector add in the assembly"
    widest = 512 if any("%zmm" in x for x in adds) else 256 if any("%ymm" in x for x in adds) else 128
    # TVM's explicit vectorize emits zmm even where LLVM's model has prefer-256-bit (skylake-avx512)
    assert widest == spec.simd_bits, (spec.llvm_mcpu, adds[:2])


def test_large_buffer_pages_follow_transparent_huge_pages(tmp_path):
    from pruner_ms.hardware.cpu import large_buffer_page_bytes

    path = tmp_path / "enabled"
    path.write_text("[always] madvise never\n")
    assert large_buffer_page_bytes(str(path))[0] == 2 * 1024 * 1024
    path.write_text("always [madvise] never\n")
    assert large_buffer_page_bytes(str(path))[0] == 4096
    page, source = large_buffer_page_bytes(str(tmp_path / "missing"))
    assert page == 4096 and "unreadable" in source

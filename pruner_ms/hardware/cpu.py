"""CPU core descriptions: SIMD width, FMA throughput, caches and bandwidths.

Where each figure comes from
----------------------------
A host's :class:`CPUSpec` (:func:`host_cpu_spec`) is built from the machine first:

* **ISA** (``simd_bits``, ``vector_registers``, FMA) -- from the CPU features of the code LLVM generates
  for the target's ``mcpu`` (``tvm.target.codegen.llvm_get_cpu_features``), cross-checked against the
  flags the kernel reports (``/proc/cpuinfo``). AVX-512F gives 512-bit vectors and 32 registers (TVM's
  explicit ``vectorize`` emits ``zmm`` code even for mcpus whose LLVM model has ``prefer-256-bit``, checked
  in ``tests/test_cpu_detect.py``), AVX gives 256 and 16, SSE2 128 and 16; AArch64 NEON 128 and 32 (SVE is
  not used by TVM's fixed-length vectors).
* **cores** -- the physical cores this process may run on (``sched_getaffinity`` mapped to cores through
  the sysfs topology, bounded by a cgroup CPU quota).
* **caches** -- sysfs ``cache/index*`` of this process's CPUs: L1D/L2 per core, L3 as this process's
  share (see :func:`cache_shares` for the bound applied to implausible, e.g. virtualised, figures).
* **frequency** -- sysfs ``cpufreq/base_frequency``, else ``/proc/cpuinfo`` ``cpu MHz`` when no cpufreq
  driver scales the clock (then it is the nominal clock, e.g. in virtual machines), else the family file.

What the machine cannot report (FMA units and latency, load ports, reorder buffer, cache/DRAM bandwidths) comes from
the **micro-architecture family** file in ``configs/cpu`` chosen by :func:`select_cpu_family`. Every
figure's origin is kept in :attr:`CPUSpec.sources`.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import logging
import math
import os
import platform
import warnings
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from .paths import config_files, config_search_path

logger = logging.getLogger("pruner_ms")

_KIB = 1024

#: A sysfs L3 share per core above this multiple of the family's ``l3_kib_per_core`` is not believed.
#: The largest real per-core L3 is AMD's 3D V-Cache (96 MiB over 8 cores, 3x plain Zen 4's 4 MiB), so
#: 4x leaves room for it while rejecting a hypervisor exposing the host's whole L3 to a few vCPUs.
L3_PLAUSIBLE_FACTOR = 4.0

# CPUSpec fields a family file provides (the others are detected or computed)
_FAMILY_FIELDS = (
    "simd_bits", "simd_bits_per_fma_unit", "fma_units", "fma_latency_cycles", "vector_registers", "load_ports",
    "frequency_ghz", "cache_line_bytes", "l1_bytes_per_cycle", "l2_bytes_per_cycle", "l3_bytes_per_cycle",
    "parallel_launch_us", "reorder_buffer_uops", "stlb_entries", "page_walk_cycles", "dtlb_entries", "stlb_hit_cycles",
    "prefetch_streams",
)


@dataclasses.dataclass(frozen=True)
class CPUSpec:
    """What the CPU analyzer needs to know about a host.

    Built by :func:`host_cpu_spec` (this machine) or :func:`load_cpu_spec` (an LLVM CPU name).
    ``sources`` maps each field name to where its value came from (the machine, LLVM, a family file
    or a fallback); it takes no part in comparison or hashing.
    """

    name: str
    llvm_mcpu: str
    cores: int
    simd_bits: int
    simd_bits_per_fma_unit: int
    fma_units: int
    fma_latency_cycles: int
    vector_registers: int
    load_ports: int
    frequency_ghz: float
    cache_line_bytes: int
    l1d_bytes: int
    l2_bytes: int
    l3_bytes: int  # the share of the last-level cache available to `cores`
    l1_bytes_per_cycle: float
    l2_bytes_per_cycle: float
    l3_bytes_per_cycle: float
    dram_gb_per_s: float  # whole socket share available to `cores`
    parallel_launch_us: float
    reorder_buffer_uops: int  # the out-of-order window: independent work the core overlaps
    stlb_entries: int  # second-level data TLB entries (pages whose translation stays cached)
    page_walk_cycles: float  # throughput cost of one second-level TLB miss
    dtlb_entries: int  # first-level data TLB entries (4 KiB pages)
    stlb_hit_cycles: float  # cost of a first-level DTLB miss that hits the second-level TLB
    prefetch_streams: int  # sequential streams one core's hardware prefetchers follow at once
    #: L3 bandwidth of all ``cores`` together when it is less than ``l3_bytes_per_cycle`` x cores
    #: (measured: :mod:`pruner_ms.hardware.calibration`); None: per-core figure x cores
    l3_gb_per_s: float | None = None
    #: DRAM bandwidth one core reaches (measured); None: ``dram_gb_per_s / cores``
    dram_gb_per_s_one_core: float | None = None
    #: the page size of large buffers: 4 KiB, or 2 MiB where transparent huge pages are always on
    page_bytes: int = 4096
    sources: dict[str, str] = dataclasses.field(default_factory=dict, compare=False, hash=False, repr=False)

    def l3_bandwidth(self, active_cores: float) -> float:
        """Bytes/s the L3 delivers to ``active_cores`` cores."""
        per_core = self.l3_bytes_per_cycle * self.frequency_ghz * 1e9 * active_cores
        return min(per_core, self.l3_gb_per_s * 1e9) if self.l3_gb_per_s else per_core

    def dram_bandwidth(self, active_cores: float) -> float:
        """Bytes/s DRAM delivers to ``active_cores`` cores (at most the whole share, ``dram_gb_per_s``)."""
        one = self.dram_gb_per_s_one_core or self.dram_gb_per_s / max(1, self.cores)
        return 1e9 * min(self.dram_gb_per_s, one * active_cores)

    def lanes(self, dtype_bytes: int) -> int:
        """SIMD lanes of one vector register for an element of ``dtype_bytes``."""
        return max(1, self.simd_bits // (8 * dtype_bytes))

    def flops_per_cycle(self, lanes: float, dtype_bytes: int) -> float:
        """Peak FLOP/cycle of one core for vectors of ``lanes`` elements (2 per FMA lane)."""
        unit_lanes = max(1, self.simd_bits_per_fma_unit // (8 * dtype_bytes))
        if lanes <= unit_lanes:
            return 2.0 * self.fma_units * lanes
        # wider vectors than one unit is wide are split over the units (e.g. AVX-512 on Zen 4)
        return 2.0 * self.fma_units * unit_lanes

    def target(self) -> dict:
        """The TVM target dict that tunes for this CPU."""
        return {"kind": "llvm", "mcpu": self.llvm_mcpu, "num-cores": self.cores}

    def describe(self) -> str:
        """One line per figure: ``field = value  (source)``."""
        lines = [f"CPUSpec {self.name} (llvm mcpu {self.llvm_mcpu})"]
        for f in dataclasses.fields(self):
            if f.name in ("name", "llvm_mcpu", "sources"):
                continue
            src = self.sources.get(f.name, "")
            lines.append(f"  {f.name} = {getattr(self, f.name)}" + (f"  ({src})" if src else ""))
        for key in sorted(set(self.sources) - {f.name for f in dataclasses.fields(self)}):
            lines.append(f"  [{key}] {self.sources[key]}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- flags -> ISA


def canonical_flag(name: str) -> str:
    """A feature name comparable across ``/proc/cpuinfo`` and LLVM spellings.

    Lower case with ``_``, ``-`` and ``.`` removed (``amx_tile`` and ``amx-tile`` -> ``amxtile``,
    ``sse4_1`` and ``sse4.1`` -> ``sse41``); the AArch64 ``asimd`` of cpuinfo is LLVM's ``neon``.
    """
    flag = name.strip().lower().lstrip("+")
    for ch in "_-.":
        flag = flag.replace(ch, "")
    return {"asimd": "neon"}.get(flag, flag)


def normalize_flags(flags: Iterable[str] | str) -> frozenset[str]:
    """Canonical feature names (:func:`canonical_flag`) of a whitespace-separated string or an iterable."""
    items = flags.split() if isinstance(flags, str) else flags
    return frozenset(canonical_flag(f) for f in items if f.strip())


def _canonical_arch(arch: str) -> str:
    arch = arch.lower()
    if arch in ("x86_64", "amd64", "x86-64", "x64"):
        return "x86_64"
    if arch in ("aarch64", "arm64"):
        return "aarch64"
    return arch


@dataclasses.dataclass(frozen=True)
class IsaFacts:
    """Vector ISA facts derived from a set of CPU feature flags (:func:`isa_from_flags`)."""

    arch: str
    simd_bits: int
    vector_registers: int
    fma: bool
    amx: bool
    reason: str


def isa_from_flags(flags: Iterable[str] | str, *, arch: str) -> IsaFacts:
    """SIMD width, vector registers and FMA that code using ``flags`` gets.

    Parameters
    ----------
    flags : str or iterable of str
        Feature names as ``/proc/cpuinfo`` (``flags`` / ``Features``) or LLVM spell them.
    arch : str
        ``"x86_64"``, ``"aarch64"``, ... (``platform.machine()`` spellings accepted).

    Returns
    -------
    IsaFacts
        x86-64: AVX-512F -> 512 bit, 32 registers; AVX -> 256, 16; otherwise SSE2 -> 128, 16.
        AArch64: 128 bit, 32 registers (NEON; TVM's fixed-length vectors do not use SVE widths).
        Other architectures: a conservative 128 bit, 16 registers (``reason`` says so).
    """
    f = normalize_flags(flags)
    arch = _canonical_arch(arch)
    if arch == "x86_64":
        fma = "fma" in f or "avx512f" in f
        amx = "amxtile" in f
        if "avx512f" in f:
            return IsaFacts(arch, 512, 32, fma, amx, "AVX-512F: 512-bit zmm vectors, 32 registers")
        if "avx" in f:
            return IsaFacts(arch, 256, 16, fma, amx, "AVX: 256-bit ymm vectors, 16 registers")
        return IsaFacts(arch, 128, 16, fma, amx, "SSE2 (x86-64 baseline): 128-bit xmm vectors, 16 registers")
    if arch == "aarch64":
        has_fp = "neon" in f or "sve" in f
        reason = "AArch64 NEON: 128-bit vectors, 32 registers"
        if "sve" in f:
            reason += " (SVE present; TVM's fixed-length vectors lower to NEON)"
        if not has_fp:
            reason = "AArch64 without a NEON flag: assumed 128-bit NEON (mandatory in ARMv8-A), 32 registers"
        return IsaFacts(arch, 128, 32, True, False, reason)
    return IsaFacts(arch, 128, 16, "fma" in f, False, f"architecture {arch!r} not modelled: conservative 128-bit, 16 registers")


# --------------------------------------------------------------------------- /proc/cpuinfo


def _vendor_name(raw: str) -> str:
    raw = raw.strip()
    table = {"genuineintel": "intel", "authenticamd": "amd", "hygongenuine": "amd", "0x41": "arm"}
    return table.get(raw.lower(), raw.lower())


def parse_cpuinfo(text: str) -> dict:
    """The facts of the first processor block of ``/proc/cpuinfo`` text.

    Returns
    -------
    dict
        ``vendor`` (``"intel"``, ``"amd"``, ``"arm"``, another implementer code, or ``""``), ``flags``
        (canonical, from x86 ``flags`` or AArch64 ``Features``; empty when absent), ``cpu_part``
        (AArch64 ``CPU part`` or ``""``), ``mhz`` (``cpu MHz`` or ``None``) and ``model_name``.
    """
    out: dict = {"vendor": "", "flags": frozenset(), "cpu_part": "", "mhz": None, "model_name": ""}
    for line in text.splitlines():
        if not line.strip():
            if out["flags"]:
                break  # end of the first processor block
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        if key in ("flags", "features") and not out["flags"]:
            out["flags"] = normalize_flags(value)
        elif key == "vendor_id" and not out["vendor"]:
            out["vendor"] = _vendor_name(value)
        elif key == "cpu implementer" and not out["vendor"]:
            out["vendor"] = _vendor_name(value)
        elif key == "cpu part" and not out["cpu_part"]:
            out["cpu_part"] = value.lower()
        elif key == "cpu mhz" and out["mhz"] is None:
            try:
                out["mhz"] = float(value)
            except ValueError:
                logger.debug("unparsable 'cpu MHz' value %r in cpuinfo", value)
        elif key == "model name" and not out["model_name"]:
            out["model_name"] = value
    return out


# --------------------------------------------------------------------------- caches and cores


@dataclasses.dataclass(frozen=True)
class CacheEntry:
    """One cache instance as sysfs describes it (``cpuN/cache/indexM``)."""

    level: int
    kind: str  # "Data", "Instruction" or "Unified"
    size_bytes: int
    shared_cpus: frozenset[int]


def parse_cache_size(text: str) -> int:
    """Bytes of a sysfs cache size such as ``"48K"``, ``"2048K"`` or ``"32M"``."""
    s = text.strip().upper().removesuffix("B")
    mult = {"K": _KIB, "M": _KIB * _KIB, "G": _KIB ** 3}.get(s[-1:], 1)
    digits = s.rstrip("KMG")
    if not digits.isdigit():
        raise ValueError(f"not a cache size: {text!r}")
    return int(digits) * mult


def parse_cpu_list(text: str) -> frozenset[int]:
    """CPU numbers of a sysfs list such as ``"0-3,8,10-11"``."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(cpus)


def cache_shares(
    entries: Iterable[CacheEntry | Mapping],
    *,
    cpus: Collection[int],
    core_of: Mapping[int, object] | None = None,
    l3_kib_per_core: float | None = None,
) -> tuple[dict[int, int], dict[str, str]]:
    """Cache bytes available to a set of CPUs, as :class:`CPUSpec` counts them.

    Parameters
    ----------
    entries : iterable of CacheEntry or mapping
        Cache instances; a mapping has ``level``, ``type``, ``size`` (bytes or a sysfs string such as
        ``"491520K"``) and ``shared_cpu_list`` (a sysfs list string or a collection of CPU numbers).
        The same instance seen from several CPUs is counted once.
    cpus : collection of int
        The logical CPUs this process may use.
    core_of : mapping, optional
        Logical CPU -> physical core key (SMT siblings share a key); default: each CPU is a core.
    l3_kib_per_core : float, optional
        The family file's L3 per core, used to bound an implausible sysfs figure.

    Returns
    -------
    (dict, dict)
        ``{1: L1D bytes per core, 2: L2 bytes per core, 3: last-level bytes for all of cpus' cores}``
        (levels missing from ``entries`` are absent) and a source line per level.

    Notes
    -----
    A cache shared by *n* physical cores gives each of them ``size / n``. L1D and L2 are reported per
    core (the smallest instance when they differ); the last level (L3 or higher) is the sum over its
    instances of ``size x (this process's cores in it) / (cores sharing it)``. That per-core share is
    not believed when it exceeds :data:`L3_PLAUSIBLE_FACTOR` times ``l3_kib_per_core`` -- e.g. a virtual
    machine whose two vCPUs report the host's whole 480 MiB L3 as shared by just them -- and
    ``l3_kib_per_core x cores`` is used instead.
    """
    core_of = core_of or {}
    ours = frozenset(cpus)
    key = lambda c: core_of.get(c, ("cpu", c))  # noqa: E731
    our_cores = {key(c) for c in ours}
    n_ours = max(1, len(our_cores))
    seen: dict[tuple[int, frozenset[int]], tuple[int, str]] = {}
    for e in entries:
        if isinstance(e, Mapping):
            size = e["size"]
            shared = e["shared_cpu_list"]
            e = CacheEntry(
                level=int(e["level"]),
                kind=str(e.get("type", "Unified")),
                size_bytes=parse_cache_size(size) if isinstance(size, str) else int(size),
                shared_cpus=parse_cpu_list(shared) if isinstance(shared, str) else frozenset(shared),
            )
        if e.kind == "Instruction" or not (e.shared_cpus & ours):
            continue
        seen[(e.level, e.shared_cpus)] = (e.size_bytes, e.kind)
    if not seen:
        return {}, {}
    last = max(level for level, _ in seen)
    out: dict[int, int] = {}
    src: dict[str, str] = {}
    for level in sorted({lv for lv, _ in seen}):
        insts = [(shared, size) for (lv, shared), (size, _) in seen.items() if lv == level]
        if level == last and level >= 3:
            share = sum(size * len({key(c) for c in shared} & our_cores) / max(1, len({key(c) for c in shared}))
                        for shared, size in insts)
            per_core = share / n_ours
            total = sum(size for _, size in insts)
            desc = (f"sysfs: {len(insts)} L{level} instance(s) of {total / _KIB / _KIB:g} MiB in all, "
                    f"{per_core / _KIB:.0f} KiB per core for this process's {n_ours} core(s)")
            if l3_kib_per_core and per_core > L3_PLAUSIBLE_FACTOR * l3_kib_per_core * _KIB:
                share = l3_kib_per_core * _KIB * n_ours
                desc += (f"; above {L3_PLAUSIBLE_FACTOR:g}x the family's {l3_kib_per_core:g} KiB/core, so not "
                         f"believed (a VM exposing the host's whole cache?): family figure x {n_ours} core(s)")
            out[3] = int(share)
            src["l3_bytes"] = desc
        elif level in (1, 2):
            per = min(size / max(1, len({key(c) for c in shared})) for shared, size in insts)
            out[level] = int(per)
            src["l1d_bytes" if level == 1 else "l2_bytes"] = f"sysfs: L{level} {per / _KIB:.0f} KiB per core"
    return out, src


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _process_cpus() -> tuple[frozenset[int], str]:
    if hasattr(os, "sched_getaffinity"):
        cpus = frozenset(os.sched_getaffinity(0))
        return cpus, f"sched_getaffinity: {len(cpus)} logical CPU(s)"
    n = os.cpu_count() or 1
    return frozenset(range(n)), f"os.cpu_count: {n} logical CPU(s) (no affinity API)"


def _cgroup_cpu_limit(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    text = _read_text(root / "cpu.max")  # cgroup v2: "<quota> <period>" or "max <period>"
    if text:
        quota, _, period = text.strip().partition(" ")
        if quota != "max" and quota.isdigit() and period.strip().isdigit() and int(period):
            return int(quota) / int(period)
    return None


@dataclasses.dataclass(frozen=True)
class HostFeatures:
    """What this machine reports about its CPU (:func:`detect_host_features`), with where it came from."""

    arch: str
    vendor: str
    flags: frozenset[str]
    cpu_part: str
    model_name: str
    isa: IsaFacts | None  # from the flags; None when no flags could be read
    cpus: frozenset[int]
    core_of: Mapping[int, object]
    cores: int
    cache_entries: tuple[CacheEntry, ...]
    frequency_ghz: float | None
    sources: dict[str, str]


def detect_host_features(
    *, cpuinfo_path: str | os.PathLike = "/proc/cpuinfo", sysfs_root: str | os.PathLike = "/sys/devices/system/cpu"
) -> HostFeatures:
    """Read this machine's CPU facts from the OS, recording where each one came from.

    Parameters
    ----------
    cpuinfo_path : path-like, optional
        ``/proc/cpuinfo`` or a copy of one.
    sysfs_root : path-like, optional
        ``/sys/devices/system/cpu`` or a copy of one.

    Returns
    -------
    HostFeatures
        Missing files leave the affected facts empty (``flags``, ``cache_entries``) or ``None``
        (``isa``, ``frequency_ghz``) with the reason in ``sources``; nothing raises.
    """
    sources: dict[str, str] = {}
    arch = _canonical_arch(platform.machine() or "unknown")
    text = _read_text(Path(cpuinfo_path))
    info = parse_cpuinfo(text) if text else parse_cpuinfo("")
    if text is None:
        sources["flags"] = f"{cpuinfo_path} unreadable"
    elif info["flags"]:
        sources["flags"] = f"{cpuinfo_path}: {len(info['flags'])} flags"
    else:
        sources["flags"] = f"{cpuinfo_path} has no 'flags'/'Features' line"
    isa = isa_from_flags(info["flags"], arch=arch) if info["flags"] else None

    root = Path(sysfs_root)
    cpus, cpus_src = _process_cpus()
    core_of: dict[int, object] = {}  # all CPUs, so that caches shared with CPUs outside ours count cores right
    for cpu_dir in root.glob("cpu[0-9]*"):
        pkg = _read_text(cpu_dir / "topology" / "physical_package_id")
        core = _read_text(cpu_dir / "topology" / "core_id")
        if pkg is not None and core is not None and cpu_dir.name[3:].isdigit():
            core_of[int(cpu_dir.name[3:])] = (int(pkg), int(core))
    cores = len({core_of.get(c, ("cpu", c)) for c in cpus}) or 1
    sources["cores"] = cpus_src + (f" on {cores} physical core(s) (sysfs topology)" if core_of else
                                   " (no sysfs topology: each counted as a core)")
    limit = _cgroup_cpu_limit()
    if limit is not None and math.ceil(limit) < cores:
        cores = max(1, math.ceil(limit))
        sources["cores"] += f"; cgroup cpu.max quota {limit:g} CPUs -> {cores}"

    entries: dict[tuple[int, frozenset[int]], CacheEntry] = {}
    for c in sorted(cpus):
        for index in sorted((root / f"cpu{c}" / "cache").glob("index*")):
            kind, level = _read_text(index / "type"), _read_text(index / "level")
            size, shared = _read_text(index / "size"), _read_text(index / "shared_cpu_list")
            if None in (kind, level, size, shared):
                continue
            try:
                entry = CacheEntry(int(level), kind.strip(), parse_cache_size(size), parse_cpu_list(shared))
            except ValueError as err:
                sources["caches"] = f"{index}: unparsable ({err}); that cache left to the family file"
                logger.debug("pruner_ms: %s", sources["caches"])
                continue
            entries.setdefault((entry.level, entry.shared_cpus), entry)
    if not entries:
        sources["caches"] = f"no cache description under {root}"

    freq, freq_src = None, ""
    first = min(cpus) if cpus else 0
    cpufreq = root / f"cpu{first}" / "cpufreq"
    base = _read_text(cpufreq / "base_frequency")
    if base and base.strip().isdigit():
        freq, freq_src = int(base) / 1e6, f"sysfs {cpufreq}/base_frequency"
    elif not cpufreq.exists() and info["mhz"]:
        freq, freq_src = info["mhz"] / 1e3, f"{cpuinfo_path} 'cpu MHz' (no cpufreq driver: the nominal clock)"
    else:
        freq_src = "not detected (a scaling cpufreq driver without base_frequency: 'cpu MHz' is momentary)"
    sources["frequency_ghz"] = freq_src
    return HostFeatures(
        arch=arch, vendor=info["vendor"], flags=info["flags"], cpu_part=info["cpu_part"],
        model_name=info["model_name"], isa=isa, cpus=cpus, core_of=core_of, cores=cores,
        cache_entries=tuple(entries.values()), frequency_ghz=freq, sources=sources,
    )


# --------------------------------------------------------------------------- family files


def _spec_files() -> list[Path]:
    return config_files("cpu")


@functools.cache
def _read(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _families() -> list[tuple[str, dict]]:
    return [(p.name, _read(str(p))) for p in _spec_files()]


def _compatible(data: dict, *, arch: str, vendor: str, flags: frozenset[str], cpu_part: str) -> tuple[bool, str]:
    match = data.get("match") or {}
    if match.get("arch") and match["arch"] != arch:
        return False, f"arch {arch} is not {match['arch']}"
    if match.get("vendor") and vendor and match["vendor"] != vendor:
        return False, f"vendor {vendor} is not {match['vendor']}"
    missing = normalize_flags(match.get("flags_all", ())) - flags
    if missing:
        return False, f"flags lack {', '.join(sorted(missing))}"
    extra = normalize_flags(match.get("flags_none", ())) & flags
    if extra:
        return False, f"flags show {', '.join(sorted(extra))}, which {data['name']} never has"
    parts = [p.lower() for p in match.get("cpu_parts", ())]
    if parts and cpu_part not in parts:
        return False, f"CPU part {cpu_part or '?'} is not {'/'.join(parts)}"
    return True, ""


def select_cpu_family(
    *, llvm_mcpu: str | None, arch: str, vendor: str, flags: Iterable[str] | str, cpu_part: str = ""
) -> tuple[dict, str]:
    """The ``configs/cpu`` family file that describes a CPU.

    Parameters
    ----------
    llvm_mcpu : str or None
        LLVM's name for the CPU.
    arch, vendor : str
        ``"x86_64"``/``"aarch64"``; ``"intel"``, ``"amd"``, ``"arm"`` or ``""`` (unknown: not checked).
    flags : str or iterable of str
        The CPU's feature flags (cpuinfo or LLVM spelling).
    cpu_part : str, optional
        AArch64 ``CPU part`` (``"0xd0c"``).

    Returns
    -------
    (dict, str)
        The file's data and why it was chosen.

    Notes
    -----
    1. The file listing ``llvm_mcpu`` wins if its ``match`` does not contradict the flags (a host that
       LLVM calls ``rocketlake`` but that reports AMX is not a Rocket Lake core).
    2. Else, among files with ``match.by_flags`` whose arch, vendor, ``flags_all``, ``flags_none`` and
       ``cpu_parts`` all fit, one whose ``simd_bits`` is the flags' vector width (so AVX-512 flags never
       get an AVX2 family while an AVX-512 one fits), then the most specific (number of ``flags_all``
       + 1 for a vendor + 2 for CPU parts); ties go to the first file by name.
    3. Else ``generic.json`` (``"fallback": true``): conservative figures; the ISA still comes from flags.
    """
    arch, flags = _canonical_arch(arch), normalize_flags(flags)
    families = _families()
    notes = []
    if llvm_mcpu:
        for fname, data in families:
            if llvm_mcpu in data.get("llvm_mcpu", ()):
                ok, why = _compatible(data, arch=arch, vendor=vendor, flags=flags, cpu_part=cpu_part)
                if ok:
                    return data, f"{fname} lists LLVM cpu {llvm_mcpu!r}"
                notes.append(f"LLVM calls the CPU {llvm_mcpu!r} ({fname}) but {why}")
    width = isa_from_flags(flags, arch=arch).simd_bits
    best, best_score = None, (False, -1)
    for fname, data in families:
        match = data.get("match") or {}
        if not match.get("by_flags"):
            continue
        ok, _ = _compatible(data, arch=arch, vendor=vendor, flags=flags, cpu_part=cpu_part)
        if not ok:
            continue
        specificity = len(match.get("flags_all", ())) + bool(match.get("vendor")) + 2 * bool(match.get("cpu_parts"))
        score = (data["simd_bits"] == width, specificity)
        if score > best_score:
            best, best_score = (fname, data), score
    if best is not None:
        fname, data = best
        return data, "; ".join([*notes, f"{fname} by {vendor or 'any-vendor'} {arch} flags"])
    for fname, data in families:
        if data.get("fallback"):
            return data, "; ".join([*notes, f"no family file fits {vendor or 'unknown-vendor'} {arch} "
                                    f"(LLVM cpu {llvm_mcpu!r}): conservative {fname}"])
    raise FileNotFoundError(f"no fallback CPU family file ('\"fallback\": true') in {config_search_path('cpu')}")


# --------------------------------------------------------------------------- LLVM


def _llvm_features(mcpu: str, *, mtriple: str | None = None) -> frozenset[str] | None:
    """Canonical LLVM features of code generated for ``mcpu``; None when LLVM does not know the name."""
    import tvm
    from tvm.target import codegen

    triple = mtriple or codegen.llvm_get_system_triple()
    if not codegen.llvm_is_valid_cpu(mcpu, triple):
        return None
    target = {"kind": "llvm", "mcpu": mcpu}
    if mtriple:
        target["mtriple"] = mtriple
    return normalize_flags(codegen.llvm_get_cpu_features(tvm.target.Target(target)))


def _triple_arch(triple: str) -> str:
    return _canonical_arch(triple.split("-", 1)[0])


def _build(family: dict, *, llvm_mcpu: str, isa: IsaFacts | None, cores: int, caches: Mapping[int, int],
           frequency_ghz: float | None, sources: dict[str, str], family_src: str) -> CPUSpec:
    fields = {k: family[k] for k in _FAMILY_FIELDS}
    src = {k: f"{family['name']}.json" for k in _FAMILY_FIELDS}
    if isa is not None:
        fields["simd_bits"], fields["vector_registers"] = isa.simd_bits, isa.vector_registers
        src["simd_bits"] = src["vector_registers"] = isa.reason
        if fields["simd_bits_per_fma_unit"] > isa.simd_bits:
            fields["simd_bits_per_fma_unit"] = isa.simd_bits
            src["simd_bits_per_fma_unit"] = f"{family['name']}.json bounded by simd_bits"
        if not isa.fma:
            fields["fma_units"] = 1
            src["fma_units"] = "no FMA: one mul + one add per cycle, counted as one FMA unit"
    if frequency_ghz:
        fields["frequency_ghz"] = round(float(frequency_ghz), 3)
    l1 = caches.get(1, family["l1d_kib"] * _KIB)
    l2 = caches.get(2, family["l2_kib"] * _KIB)
    l3 = caches.get(3, family["l3_kib_per_core"] * _KIB * cores)
    if l3 < l2:  # no (or a tiny) L3: the model treats L3 as at least the L2 it backs
        src["l3_bytes_note"] = f"L3 {l3} B raised to the L2 size {l2} B"
        l3 = l2
    for key, level in (("l1d_bytes", 1), ("l2_bytes", 2), ("l3_bytes", 3)):
        if level not in caches:
            src[key] = f"{family['name']}.json" + (" per core x cores" if level == 3 else "")
    src["dram_gb_per_s"] = f"{family['name']}.json per core x cores"
    src.update(sources)
    src["family"] = family_src
    return CPUSpec(
        name=family["name"], llvm_mcpu=llvm_mcpu, cores=cores, l1d_bytes=int(l1), l2_bytes=int(l2),
        l3_bytes=int(l3), dram_gb_per_s=family["dram_gb_per_s_per_core"] * cores, sources=src, **fields,
    )


def load_cpu_spec(
    mcpu: str, *, cores: int | None = None, cache_bytes: dict[int, int] | None = None, mtriple: str | None = None
) -> CPUSpec:
    """Build a :class:`CPUSpec` for an LLVM CPU name (not this machine: see :func:`host_cpu_spec`).

    Parameters
    ----------
    mcpu : str
        LLVM CPU name, e.g. ``"znver4"`` or ``"sapphirerapids"``, or a family file's ``name``.
    cores : int, optional
        Physical cores used for tuning; defaults to 1.
    cache_bytes : dict, optional
        ``{level: bytes}`` overriding the family's cache sizes (L1/L2 per core, L3 for all ``cores``).
    mtriple : str, optional
        LLVM triple for ``mcpu``; defaults to the system triple.

    Returns
    -------
    CPUSpec
        SIMD width and registers follow LLVM's features for ``mcpu`` when LLVM knows it; the other
        figures come from the family file listing ``mcpu``, else from the family its LLVM features
        select (:func:`select_cpu_family`; vendor inferred: ``sse4a`` is AMD-only).

    Raises
    ------
    KeyError
        When neither a family file nor LLVM knows ``mcpu``.
    """
    families = _families()
    chosen = next((d for _, d in families if mcpu in d.get("llvm_mcpu", ()) or mcpu == d["name"]), None)
    feats = _llvm_features(mcpu, mtriple=mtriple)
    from tvm.target import codegen

    arch = _triple_arch(mtriple or codegen.llvm_get_system_triple())
    isa = isa_from_flags(feats, arch=arch) if feats is not None else None
    if isa is not None:
        isa = dataclasses.replace(isa, reason=f"LLVM features of mcpu {mcpu!r}: {isa.reason}")
    if chosen is not None:
        family_src = f"{chosen['name']}.json lists {mcpu!r}"
    elif feats is not None:
        vendor = ("amd" if "sse4a" in feats else "intel") if arch == "x86_64" else ""
        chosen, family_src = select_cpu_family(llvm_mcpu=mcpu, arch=arch, vendor=vendor, flags=feats)
    else:
        known = sorted({m for _, d in families for m in d.get("llvm_mcpu", ())})
        raise KeyError(
            f"no CPU spec for LLVM cpu {mcpu!r}: LLVM does not know it and no file in {config_search_path('cpu')} "
            f"lists it (known: {', '.join(known)}). Add a JSON file to a folder $PRUNER_MS_CONFIGS names (see "
            "configs/cpu/README.md) or pass "
            "a CPUSpec explicitly."
        )
    if isa is None:  # a family name that is not an LLVM CPU: the file's own ISA
        isa = IsaFacts(arch, chosen["simd_bits"], chosen["vector_registers"], True, False, f"{chosen['name']}.json")
    cores_src = "argument" if cores else "default 1"
    cores = int(cores or 1)
    return _build(chosen, llvm_mcpu=mcpu, isa=isa, cores=cores, caches=dict(cache_bytes or {}),
                  frequency_ghz=None, sources={"cores": cores_src}, family_src=family_src)


def spec_from_host(host: HostFeatures, *, llvm_mcpu: str, codegen_flags: frozenset[str] | None) -> tuple[CPUSpec, list[str]]:
    """Combine detected host facts, LLVM's codegen features and a family file into a :class:`CPUSpec`.

    Parameters
    ----------
    host : HostFeatures
        From :func:`detect_host_features`.
    llvm_mcpu : str
        The mcpu code is compiled for.
    codegen_flags : frozenset of str or None
        LLVM's features for ``llvm_mcpu`` (None when LLVM does not know it).

    Returns
    -------
    (CPUSpec, list of str)
        The spec and warnings for the caller to issue (empty when the machine describes itself).

    Notes
    -----
    The ISA follows ``codegen_flags`` (what the compiled code uses); without them, the host's flags;
    without either, a conservative 128-bit ISA. The family is chosen from the host's flags (LLVM's
    features stand in when the host's are unreadable).
    """
    problems: list[str] = []
    sources = dict(host.sources)
    flags = host.flags
    if not flags:
        flags = codegen_flags or frozenset()
        problems.append(
            f"could not read the CPU's flags ({host.sources.get('flags', '?')}); "
            + (f"using LLVM's features of mcpu {llvm_mcpu!r}" if codegen_flags else
               f"LLVM does not know mcpu {llvm_mcpu!r} either: a conservative 128-bit spec")
            + ". Add a configs/cpu file for this CPU (configs/cpu/README.md) for better figures."
        )
    if codegen_flags is not None:
        isa = isa_from_flags(codegen_flags, arch=host.arch)
        isa = dataclasses.replace(isa, reason=f"LLVM features of mcpu {llvm_mcpu!r}: {isa.reason}")
        if host.isa is not None and host.isa.simd_bits != isa.simd_bits:
            sources["isa_check"] = (f"host flags give {host.isa.simd_bits}-bit vectors but code for mcpu "
                                    f"{llvm_mcpu!r} uses {isa.simd_bits}-bit; the spec follows the code")
            if host.isa.simd_bits < isa.simd_bits:
                problems.append(f"mcpu {llvm_mcpu!r} enables {isa.simd_bits}-bit vectors that this CPU's flags "
                                f"do not show ({host.isa.simd_bits}-bit); compiled code may not run")
        elif host.isa is not None:
            sources["isa_check"] = f"host flags agree: {host.isa.reason}"
    elif host.isa is not None:
        isa = host.isa
    else:
        isa = isa_from_flags((), arch=host.arch if host.arch == "aarch64" else "unknown")
    family, family_src = select_cpu_family(llvm_mcpu=llvm_mcpu, arch=host.arch, vendor=host.vendor, flags=flags,
                                           cpu_part=host.cpu_part)
    caches, cache_src = cache_shares(host.cache_entries, cpus=host.cpus, core_of=host.core_of,
                                     l3_kib_per_core=family["l3_kib_per_core"])
    affinity_cores = len({host.core_of.get(c, ("cpu", c)) for c in host.cpus}) or 1
    if 3 in caches and host.cores < affinity_cores:  # a cgroup quota: the share of the cores actually usable
        caches[3] = caches[3] * host.cores // affinity_cores
        cache_src["l3_bytes"] += f"; scaled to the {host.cores} core(s) the cgroup quota allows"
    sources.update(cache_src)
    sources.pop("flags", None)
    sources["host_flags"] = host.sources.get("flags", "")
    if family.get("fallback") and host.flags:
        logger.info("pruner_ms: %s", family_src)
    spec = _build(family, llvm_mcpu=llvm_mcpu, isa=isa, cores=host.cores, caches=caches,
                  frequency_ghz=host.frequency_ghz, sources=sources, family_src=family_src)
    if not host.frequency_ghz:
        spec.sources["frequency_ghz"] = f"{family['name']}.json ({host.sources.get('frequency_ghz', '')})"
    else:
        spec.sources["frequency_ghz"] = host.sources["frequency_ghz"]
    return spec, problems


THP_ENABLED_PATH = "/sys/kernel/mm/transparent_hugepage/enabled"


def large_buffer_page_bytes(path: str = THP_ENABLED_PATH) -> tuple[int, str]:
    """The page size of this machine's large buffers, and where it came from: 2 MiB when transparent
    huge pages are ``[always]`` on, else 4 KiB (``madvise`` or ``never``: TVM's allocations do not
    ask for huge pages)."""
    try:
        with open(path) as f:
            mode = f.read().strip()
    except OSError as err:
        return 4096, f"{path} unreadable ({err.strerror}): 4 KiB pages"
    if "[always]" in mode:
        return 2 * 1024 * 1024, f"{path}: {mode!r}: 2 MiB pages"
    return 4096, f"{path}: {mode!r}: 4 KiB pages"


@functools.cache
def host_cpu_spec() -> CPUSpec:
    """The spec of this machine, from the machine first (see the module docstring).

    LLVM's name for the CPU (``tvm.target.codegen.llvm_get_system_cpu()``) is the spec's ``llvm_mcpu``;
    SIMD width and registers follow LLVM's features for it, cores/caches/frequency come from the OS and
    the remaining figures from the family file the CPU's flags select. Warns (once: the result is cached)
    only when the flags cannot be read or contradict the mcpu. ``sources`` says where each figure came from.
    """
    import tvm  # noqa: F401  (loads the LLVM codegen)
    from tvm.target import codegen

    mcpu = codegen.llvm_get_system_cpu()
    spec, problems = spec_from_host(detect_host_features(), llvm_mcpu=mcpu, codegen_flags=_llvm_features(mcpu))
    page, page_src = large_buffer_page_bytes()
    spec = dataclasses.replace(spec, page_bytes=page)
    spec.sources["page_bytes"] = page_src
    for msg in problems:
        warnings.warn(f"pruner_ms host CPU: {msg}", stacklevel=2)
    return spec

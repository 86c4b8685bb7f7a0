"""CPU core descriptions: SIMD width, FMA throughput, caches and bandwidths."""
from __future__ import annotations

import dataclasses
import functools
import json
import os
from pathlib import Path

from .paths import configs_dir

_KIB = 1024


@dataclasses.dataclass(frozen=True)
class CPUSpec:
    """What the CPU analyzer needs to know about a host.

    Per-core figures come from ``configs/cpu/*.json``; ``cores`` and the cache sizes are the host's own
    when the spec is built by :func:`host_cpu_spec`.
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
    l3_bytes: int  # whole last-level cache shared by `cores`
    l1_bytes_per_cycle: float
    l2_bytes_per_cycle: float
    l3_bytes_per_cycle: float
    dram_gb_per_s: float  # whole socket share available to `cores`
    parallel_launch_us: float

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


def _spec_files() -> list[Path]:
    return sorted((configs_dir() / "cpu").glob("*.json"))


@functools.cache
def _read(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_cpu_spec(mcpu: str, *, cores: int | None = None, cache_bytes: dict[int, int] | None = None) -> CPUSpec:
    """Build a :class:`CPUSpec` for an LLVM CPU name from ``configs/cpu``.

    Parameters
    ----------
    mcpu : str
        LLVM CPU name, e.g. ``"znver4"`` or ``"sapphirerapids"``.
    cores : int, optional
        Physical cores used for tuning; defaults to 1.
    cache_bytes : dict, optional
        ``{level: bytes}`` overriding the file's cache sizes (L3 as the whole shared cache).
    """
    files = _spec_files()
    chosen = None
    for path in files:
        data = _read(str(path))
        if mcpu in data["llvm_mcpu"] or mcpu == data["name"]:
            chosen = data
            break
    if chosen is None:
        known = sorted({m for p in files for m in _read(str(p))["llvm_mcpu"]})
        raise KeyError(
            f"no CPU spec for LLVM cpu {mcpu!r} in {configs_dir() / 'cpu'} (known: {', '.join(known)}). "
            "Add a JSON file there (see configs/cpu/README.md) or pass a CPUSpec explicitly."
        )
    cores = int(cores or 1)
    caches = {1: chosen["l1d_kib"] * _KIB, 2: chosen["l2_kib"] * _KIB, 3: chosen["l3_kib_per_core"] * _KIB * cores}
    caches.update(cache_bytes or {})
    return CPUSpec(
        name=chosen["name"],
        llvm_mcpu=mcpu,
        cores=cores,
        simd_bits=chosen["simd_bits"],
        simd_bits_per_fma_unit=chosen["simd_bits_per_fma_unit"],
        fma_units=chosen["fma_units"],
        fma_latency_cycles=chosen["fma_latency_cycles"],
        vector_registers=chosen["vector_registers"],
        load_ports=chosen["load_ports"],
        frequency_ghz=chosen["frequency_ghz"],
        cache_line_bytes=chosen["cache_line_bytes"],
        l1d_bytes=caches[1],
        l2_bytes=caches[2],
        l3_bytes=caches[3],
        l1_bytes_per_cycle=chosen["l1_bytes_per_cycle"],
        l2_bytes_per_cycle=chosen["l2_bytes_per_cycle"],
        l3_bytes_per_cycle=chosen["l3_bytes_per_cycle"],
        dram_gb_per_s=chosen["dram_gb_per_s_per_core"] * cores,
        parallel_launch_us=chosen["parallel_launch_us"],
    )


def _physical_cores() -> int:
    try:
        import psutil  # declared dependency; tolerate its absence in minimal environments

        n = psutil.cpu_count(logical=False)
        if n:
            return int(n)
    except ImportError:
        pass
    return os.cpu_count() or 1


def _sysfs_cache_bytes() -> dict[int, int]:
    """Data/unified cache sizes of cpu0 from sysfs; the shared L3 counted once."""
    out: dict[int, int] = {}
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(root.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            if kind == "Instruction":
                continue
            level = int((index / "level").read_text())
            size = (index / "size").read_text().strip().upper()
        except OSError:
            continue
        mult = {"K": _KIB, "M": _KIB * _KIB}.get(size[-1], 1)
        out[level] = int(size.rstrip("KM")) * mult
    return out


@functools.cache
def host_cpu_spec() -> CPUSpec:
    """The spec of this machine: LLVM's name for the CPU, its physical cores and cache sizes.

    Unknown CPUs fall back to the generic AVX2 file with a warning, never to generic x86-64 codegen.
    """
    import tvm  # noqa: F401  (loads the LLVM codegen)
    from tvm.target import codegen

    mcpu = codegen.llvm_get_system_cpu()
    cores, caches = _physical_cores(), _sysfs_cache_bytes()
    try:
        return load_cpu_spec(mcpu, cores=cores, cache_bytes=caches)
    except KeyError:
        import warnings

        warnings.warn(f"CPU {mcpu!r} has no spec in configs/cpu; using the generic AVX2 figures", stacklevel=2)
        spec = load_cpu_spec("core-avx2", cores=cores, cache_bytes=caches)
        return dataclasses.replace(spec, llvm_mcpu=mcpu)

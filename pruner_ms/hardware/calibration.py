"""Measured memory figures of this machine: warm read bandwidth beyond the L2, by working-set size.

What a tuner measures is a kernel run again and again on the same buffers, so a working set that fits
in the last-level cache is read from it, not from DRAM. How much of the last-level cache this process
really gets, and how fast it streams, cannot be read from the OS: on a virtual machine sysfs may show
the host's whole L3 (480 MiB seen) while a few vCPUs keep a fraction of it, and bandwidths are not
reported at all. So they are measured, once per machine, by a TVM-compiled probe: a vectorized
reduction over a float32 array of growing size, on one core and on all cores, timed with
the fastest of repeated runs (warm: each size is read again and again). From the curve:

* ``l3_bytes`` -- the effective last-level capacity: the largest size still read at the last-level
  bandwidth (above the middle between it and DRAM's, on a log scale);
* ``l3_bytes_per_cycle`` (one core) and ``l3_gb_per_s`` (all cores together) -- the last-level plateau;
* ``dram_gb_per_s`` (all cores) and ``dram_gb_per_s_one_core`` -- the largest sizes.

The result is cached as JSON under ``$PRUNER_MS_CACHE_DIR`` (default ``~/.cache/pruner_ms``), keyed by
the CPU's model name, flags, core count and cache sizes, so the probe runs at the first use on a
machine only (about 2 seconds; delete the file to measure again, e.g. after it was measured on a busy
machine). ``PRUNER_MS_CALIBRATE=0`` turns it off (the family file's figures are used). Measured on this project's 2-vCPU VMs (``rocketlake``): one core reads ~180 GB/s from its L2,
~29 GB/s from the L3 up to 64 MiB on one core and on two (the share is per VM, not per core), ~15 GB/s
beyond; the family file says 83 GB/s of L3 for two cores, a 3.8 MiB L3 share and 10 GB/s of DRAM.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import os
from pathlib import Path

from .cpu import CPUSpec, parse_cpuinfo

logger = logging.getLogger("pruner_ms")

__all__ = ["MemoryCurve", "apply_memory_curve", "calibrated_spec", "calibration_cache_dir", "measure_memory_curve"]

#: Bump when the probe or the derivation changes: cached curves of another version are measured again.
PROBE_VERSION = 1
#: Float32 elements one probe iteration reads: 8 independent 16-lane accumulators (8 x 64 B).
_ROW = 8 * 16
_F32 = 4


@dataclasses.dataclass(frozen=True)
class MemoryCurve:
    """Warm read bandwidth (GB/s) per working-set size, on one core and on ``cores`` cores."""

    sizes_bytes: tuple[int, ...]
    one_core_gb_per_s: tuple[float, ...]
    all_cores_gb_per_s: tuple[float, ...]
    cores: int

    def figures(self) -> dict[str, float | None]:
        """The spec figures the curve gives (see the module docstring)."""
        one, alln = self.one_core_gb_per_s, self.all_cores_gb_per_s
        dram_all, dram_one = alln[-1], one[-1]
        llc_all, llc_one = max(alln), max(one)
        mid = math.sqrt(llc_all * dram_all)
        fits = [s for s, bw in zip(self.sizes_bytes, alln) if bw >= mid]
        if llc_all < 1.25 * dram_all or not fits:  # no plateau above DRAM's within the sizes probed:
            # the L3 is smaller than the first size, so its capacity stays the detected one
            return {"l3_bytes": None, "l3_gb_per_s": None, "l3_gb_per_s_one_core": None,
                    "dram_gb_per_s": dram_all, "dram_gb_per_s_one_core": dram_one}
        return {"l3_bytes": float(max(fits)), "l3_gb_per_s": llc_all, "l3_gb_per_s_one_core": llc_one,
                "dram_gb_per_s": dram_all, "dram_gb_per_s_one_core": dram_one}


def _probe(cores: int, target):
    """A compiled ``B[p, a, j] = sum_k A[p, k, a, j]`` with ``p`` over ``cores`` threads, ``j``
    vectorized (16 lanes), ``a`` unrolled (8 independent accumulators), ``k`` symbolic."""
    import tvm
    from tvm import s_tir, te

    k_extent = te.var("K")
    a = te.placeholder((cores, k_extent, 8, 16), "float32", name="A")
    k = te.reduce_axis((0, k_extent), "k")
    b = te.compute((cores, 8, 16), lambda p, i, j: te.sum(a[p, k, i, j], axis=k), name="B")
    sch = s_tir.Schedule(te.create_prim_func([a, b]))
    p, i, j, kk = sch.get_loops(sch.get_sblock("B"))
    sch.reorder(p, kk, i, j)
    if cores > 1:
        sch.parallel(p)
    sch.unroll(i)
    sch.vectorize(j)
    return tvm.compile(sch.mod, target=target)


def measure_memory_curve(spec: CPUSpec, *, sizes_bytes: tuple[int, ...] | None = None,
                         min_seconds: float = 0.05) -> MemoryCurve:
    """Run the probe on this machine (see the module docstring); a few seconds.

    Parameters
    ----------
    spec : CPUSpec
        This machine's detected spec (its ``l2_bytes`` and ``cores`` place the sizes).
    sizes_bytes : tuple of int, optional
        Working-set sizes; default: 4x the cores' L2 total, doubling up to 512 MiB (256 MiB when less
        than 8 GiB of memory is available).
    """
    import numpy as np
    import tvm

    if sizes_bytes is None:
        top = 512 << 20 if _available_memory_bytes() >= 8 << 30 else 256 << 20
        size, sizes = 4 * spec.l2_bytes * spec.cores, []
        while size <= top:
            sizes.append(size)
            size *= 2
        sizes_bytes = tuple(sizes) or (top,)
    target = tvm.target.Target(spec.target())
    # one buffer of ones (written, so every page is real), read through views of growing size
    flat = tvm.runtime.tensor(np.ones(max(sizes_bytes) // _F32, "float32"))
    curves = {}
    for threads in (1, spec.cores) if spec.cores > 1 else (1,):
        probe = _probe(threads, target)
        out = tvm.runtime.empty((threads, 8, 16), "float32")
        gbps = []
        for size in sizes_bytes:
            k = max(1, size // (_F32 * _ROW * threads))
            view = flat._create_view((threads, k, 8, 16))  # noqa: SLF001  (a prefix of the buffer, no copy)
            gbps.append(threads * k * _ROW * _F32 / _fastest_run(probe, view, out, min_seconds=min_seconds) / 1e9)
        curves[threads] = tuple(round(g, 2) for g in gbps)
    del flat
    return MemoryCurve(tuple(int(s) for s in sizes_bytes), curves[1], curves.get(spec.cores, curves[1]), spec.cores)


def _fastest_run(probe, *args, min_seconds: float) -> float:
    """The fastest of at least 3 timed runs after one warm-up (the least disturbed), for ``min_seconds``."""
    import time

    probe(*args)
    best, spent, runs = math.inf, 0.0, 0
    while runs < 3 or spent < min_seconds:
        t = time.perf_counter()
        probe(*args)
        dt = time.perf_counter() - t
        best, spent, runs = min(best, dt), spent + dt, runs + 1
    return best


def _available_memory_bytes() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError as err:
        logger.debug("pruner_ms: /proc/meminfo unreadable (%s); assuming little memory", err)
    return 0


def calibration_cache_dir() -> Path:
    """``$PRUNER_MS_CACHE_DIR``, else ``$XDG_CACHE_HOME/pruner_ms``, else ``~/.cache/pruner_ms``."""
    env = os.environ.get("PRUNER_MS_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pruner_ms"


def _machine_key(spec: CPUSpec) -> str:
    model = ""
    try:
        model = parse_cpuinfo(Path("/proc/cpuinfo").read_text())["model_name"]
    except OSError as err:
        logger.debug("pruner_ms: /proc/cpuinfo unreadable (%s)", err)
    ident = json.dumps([PROBE_VERSION, model, spec.llvm_mcpu, spec.cores, spec.l1d_bytes, spec.l2_bytes,
                        spec.sources.get("host_flags", ""), spec.sources.get("l3_bytes", "")])
    return hashlib.sha1(ident.encode()).hexdigest()[:16]


def calibrated_spec(spec: CPUSpec, *, cache_dir: Path | None = None, measure: bool | None = None) -> CPUSpec:
    """``spec`` with the memory figures beyond the L2 measured on this machine (cached).

    Parameters
    ----------
    spec : CPUSpec
        This machine's detected spec (:func:`~pruner_ms.hardware.host_cpu_spec`). A spec of another CPU
        must not be calibrated here.
    cache_dir : Path, optional
        Where the curve is kept; default :func:`calibration_cache_dir`.
    measure : bool, optional
        Run the probe when no cached curve exists; default: unless ``PRUNER_MS_CALIBRATE=0``.
        Without a curve the spec is returned unchanged.
    """
    if measure is None:
        measure = os.environ.get("PRUNER_MS_CALIBRATE", "1") not in ("0", "false", "no")
    if not measure:
        return spec
    path = (cache_dir or calibration_cache_dir()) / f"memory-{_machine_key(spec)}.json"
    curve = None
    if path.exists():
        try:
            curve = MemoryCurve(**{k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(path.read_text()).items()})
        except (ValueError, TypeError) as err:
            logger.warning("pruner_ms: ignoring an unreadable memory calibration %s (%s); measuring again", path, err)
    if curve is None:
        logger.info("pruner_ms: measuring this machine's memory bandwidth once (cached in %s)", path)
        curve = measure_memory_curve(spec)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps(dataclasses.asdict(curve)))
            tmp.replace(path)
        except OSError as err:
            logger.warning("pruner_ms: could not cache the memory calibration in %s (%s); it will be measured "
                           "again next time (set PRUNER_MS_CACHE_DIR to a writable folder)", path, err)
    return apply_memory_curve(spec, curve, source=f"measured by the warm-read probe ({path.name})")


def apply_memory_curve(spec: CPUSpec, curve: MemoryCurve, *, source: str = "memory curve") -> CPUSpec:
    """``spec`` with the figures of ``curve`` (:meth:`MemoryCurve.figures`); ``sources`` name ``source``."""
    fig = curve.figures()
    changes = {"dram_gb_per_s": fig["dram_gb_per_s"], "dram_gb_per_s_one_core": fig["dram_gb_per_s_one_core"]}
    if fig["l3_bytes"] is not None:
        changes.update(l3_bytes=int(max(fig["l3_bytes"], spec.l2_bytes)), l3_gb_per_s=fig["l3_gb_per_s"],
                       l3_bytes_per_cycle=fig["l3_gb_per_s_one_core"] / spec.frequency_ghz)
    sources = {**spec.sources, **{k: source + (", one core" if k.endswith("one_core") or k == "l3_bytes_per_cycle"
                                               else "") for k in changes},
               "memory_curve": f"sizes {list(curve.sizes_bytes)} B: one core {list(curve.one_core_gb_per_s)}, "
                               f"{curve.cores} cores {list(curve.all_cores_gb_per_s)} GB/s"}
    return dataclasses.replace(spec, **changes, sources=sources)

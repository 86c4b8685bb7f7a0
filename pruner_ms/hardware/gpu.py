"""NVIDIA GPU descriptions: SM counts, peak rates, memory bandwidth and per-SM resource limits.

Figures live in ``configs/gpu/*.json`` (one file per GPU model, each citing its sources); see
``configs/gpu/README.md`` for the fields and for how to add a GPU.

Matching a TVM target to a spec (:func:`gpu_spec_for_target`) goes by the target's tag first. In TVM 0.27
``Target("nvidia/nvidia-a100")`` expands the tag into its attributes but keeps ``tag == ""``; only the dict
form ``Target({"tag": "nvidia/nvidia-a100"})`` (or a dict with both ``kind`` and ``tag``) keeps the tag's
name. Tagless targets are therefore matched by comparing their attributes with those of the registered TVM
tags, and last by ``arch`` when exactly one spec has it.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
from pathlib import Path
from typing import Any

from .paths import config_files, config_search_path

_KIB = 1024

#: Prefix of the tag label :meth:`GPUSpec.target` writes for a spec without a TVM tag of its own.
SPEC_TAG_PREFIX = "pruner_ms/"

#: Keys every ``configs/gpu/*.json`` file must have (``target_arch`` is optional and defaults to ``arch``).
JSON_FIELDS = (
    "name",
    "description",
    "tvm_tags",
    "arch",
    "sm_count",
    "boost_clock_mhz",
    "tensor_fp16_fp32acc_tflops",
    "tensor_fp16_fp16acc_tflops",
    "fp32_tflops",
    "dram_gb_per_s",
    "l2_kib",
    "smem_per_sm_kib",
    "smem_per_block_kib",
    "smem_per_block_optin_kib",
    "registers_per_sm",
    "registers_per_block",
    "max_registers_per_thread",
    "max_threads_per_sm",
    "max_threads_per_block",
    "max_warps_per_sm",
    "max_blocks_per_sm",
    "warp_size",
    "sources",
)
_OPTIONAL_JSON_FIELDS = ("target_arch",)

# Register-file allocation unit (registers per warp) of compute capability 7.x-9.0, from the CUDA
# Occupancy Calculator; shared memory is allocated in 128-byte units.
_REG_ALLOC_UNIT = 256
_SMEM_ALLOC_UNIT = 128

_ARCH_RE = re.compile(r"^sm_(\d+)([a-z]?)$")

_ACC_ALIASES = {
    "float32": "fp32",
    "fp32": "fp32",
    "f32": "fp32",
    "float16": "fp16",
    "fp16": "fp16",
    "f16": "fp16",
}


class UnknownGPUError(KeyError):
    """No ``configs/gpu`` spec matches a GPU name, tag or target.

    The message names what could not be matched, lists the known specs and says how to add one.
    """

    def __str__(self) -> str:  # KeyError would print the message repr-quoted
        return str(self.args[0]) if self.args else ""


@dataclasses.dataclass(frozen=True)
class GPUSpec:
    """What the GPU analyzer needs to know about an NVIDIA GPU.

    Sizes are in bytes, bandwidth in GB/s (10^9 bytes/s), peaks in TFLOP/s (dense, no sparsity) and
    clocks in MHz. Per-SM limits are those of the compute capability (CUDA C++ Programming Guide).
    """

    name: str
    description: str
    tvm_tags: tuple[str, ...]  # TVM target tags that mean this GPU
    arch: str  # compute capability as an nvcc arch, e.g. "sm_80"
    target_arch: str  # the arch TVM compiles for, e.g. "sm_90a" on Hopper
    sm_count: int
    boost_clock_mhz: float
    tensor_fp16_fp32acc_tflops: float  # dense FP16 tensor-core peak, FP32 accumulate
    tensor_fp16_fp16acc_tflops: float  # dense FP16 tensor-core peak, FP16 accumulate
    fp32_tflops: float  # FP32 CUDA-core (non-tensor) peak
    dram_gb_per_s: float
    l2_bytes: int
    smem_per_sm_bytes: int  # largest shared-memory carveout of one SM
    smem_per_block_bytes: int  # static shared memory per block (no opt-in), what TVM targets carry
    smem_per_block_optin_bytes: int  # dynamic shared memory per block with cudaFuncSetAttribute opt-in
    registers_per_sm: int  # 32-bit registers
    registers_per_block: int
    max_registers_per_thread: int
    max_threads_per_sm: int
    max_threads_per_block: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    warp_size: int

    # ---- derived figures -------------------------------------------------------------------------

    @property
    def compute_capability(self) -> tuple[int, int]:
        """``(major, minor)`` from :attr:`arch`, e.g. ``(8, 6)`` for ``"sm_86"``."""
        return _compute_capability(self.arch)

    @property
    def clock_hz(self) -> float:
        """Boost clock in Hz."""
        return self.boost_clock_mhz * 1e6

    @property
    def fp32_flops_per_s(self) -> float:
        """Peak FP32 FLOP/s of the CUDA cores (an FMA counts 2)."""
        return self.fp32_tflops * 1e12

    @property
    def dram_bytes_per_s(self) -> float:
        """Peak DRAM bandwidth in bytes/s."""
        return self.dram_gb_per_s * 1e9

    @property
    def smem_reserved_per_block_bytes(self) -> int:
        """Shared memory the CUDA runtime keeps per resident block (1 KiB from compute capability 8.0 on)."""
        return max(0, self.smem_per_sm_bytes - self.smem_per_block_optin_bytes)

    @property
    def target_tag(self) -> str:
        """The tag :meth:`target` writes: the first TVM tag, or ``"pruner_ms/<name>"`` if there is none."""
        return self.tvm_tags[0] if self.tvm_tags else SPEC_TAG_PREFIX + self.name

    def tensor_flops_per_s(self, acc_dtype: str = "float32") -> float:
        """Dense FP16 tensor-core peak in FLOP/s for an accumulator type.

        Parameters
        ----------
        acc_dtype : str
            ``"float32"``/``"fp32"`` or ``"float16"``/``"fp16"``. BF16 inputs accumulate in FP32.

        Returns
        -------
        float
            FLOP/s; GeForce cards run FP32 accumulation at half the FP16-accumulate rate.
        """
        acc = _ACC_ALIASES.get(str(acc_dtype).lower())
        if acc is None:
            raise ValueError(f"unsupported tensor-core accumulator dtype {acc_dtype!r}; use float32 or float16")
        tflops = self.tensor_fp16_fp32acc_tflops if acc == "fp32" else self.tensor_fp16_fp16acc_tflops
        return tflops * 1e12

    def blocks_per_sm(
        self, threads_per_block: int, smem_bytes_per_block: int = 0, registers_per_thread: int = 0
    ) -> int:
        """Resident blocks per SM for a launch configuration (0 if the block cannot launch at all).

        Follows the CUDA Occupancy Calculator for compute capability 8.x/9.0: registers are allocated per
        warp in units of 256, shared memory in 128-byte units plus the runtime's per-block reserve, and
        the largest shared-memory carveout is assumed (an upper bound: the driver may pick a smaller one).

        Parameters
        ----------
        threads_per_block : int
            Threads of one block.
        smem_bytes_per_block : int, optional
            Static plus dynamic shared memory of one block.
        registers_per_thread : int, optional
            Registers per thread as compiled (0: not limiting).
        """
        if threads_per_block <= 0 or threads_per_block > self.max_threads_per_block:
            return 0
        if smem_bytes_per_block > self.smem_per_block_optin_bytes:
            return 0
        if registers_per_thread > self.max_registers_per_thread:
            return 0
        warps = math.ceil(threads_per_block / self.warp_size)
        limits = [self.max_blocks_per_sm, self.max_warps_per_sm // warps]
        smem = _round_up(smem_bytes_per_block + self.smem_reserved_per_block_bytes, _SMEM_ALLOC_UNIT)
        limits.append(self.smem_per_sm_bytes // smem)
        if registers_per_thread > 0:
            regs_per_warp = _round_up(registers_per_thread * self.warp_size, _REG_ALLOC_UNIT)
            if regs_per_warp * warps > self.registers_per_block:
                return 0
            limits.append((self.registers_per_sm // regs_per_warp) // warps)
        return max(0, min(limits))

    def occupancy(
        self, threads_per_block: int, smem_bytes_per_block: int = 0, registers_per_thread: int = 0
    ) -> float:
        """Resident warps over :attr:`max_warps_per_sm` for a launch configuration (see :meth:`blocks_per_sm`)."""
        blocks = self.blocks_per_sm(threads_per_block, smem_bytes_per_block, registers_per_thread)
        return blocks * math.ceil(threads_per_block / self.warp_size) / self.max_warps_per_sm

    def target(self, host: dict | None = None) -> dict:
        """The TVM target dict that tunes for this GPU.

        Carries the attributes of TVM's CUDA tags (``arch``, thread and register limits, static
        shared memory per block, L2 size) filled from this spec, and ``tag`` set to :attr:`target_tag` so
        that :func:`gpu_spec_for_target` maps the target back here (TVM keeps ``tag`` when ``kind`` is given).

        Parameters
        ----------
        host : dict, optional
            Host target dict, e.g. ``{"kind": "llvm"}``.
        """
        out: dict[str, Any] = {
            "kind": "cuda",
            "tag": self.target_tag,
            "arch": self.target_arch,
            "max_num_threads": self.max_threads_per_block,
            "max_threads_per_block": self.max_threads_per_block,
            "thread_warp_size": self.warp_size,
            "registers_per_block": self.registers_per_block,
            "max_shared_memory_per_block": self.smem_per_block_bytes,
            "l2_cache_size_bytes": self.l2_bytes,
        }
        if host is not None:
            out["host"] = host
        return out


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _compute_capability(arch: str) -> tuple[int, int]:
    m = _ARCH_RE.match(str(arch))
    if not m or len(m.group(1)) < 2:
        raise ValueError(f"not a CUDA arch: {arch!r} (expected e.g. 'sm_80' or 'sm_90a')")
    digits = m.group(1)
    return int(digits[:-1]), int(digits[-1])


def _base_arch(arch: str) -> str:
    """``"sm_90a"`` -> ``"sm_90"``: the compute capability without the arch-specific feature suffix."""
    m = _ARCH_RE.match(str(arch))
    return f"sm_{m.group(1)}" if m else str(arch)


# ---- configs/gpu ---------------------------------------------------------------------------------


def _spec_files() -> list[Path]:
    return config_files("gpu")


@functools.cache
def _read(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@functools.cache
def _spec_from_file(path: str) -> GPUSpec:
    data = _read(path)
    missing = [k for k in JSON_FIELDS if k not in data]
    unknown = sorted(set(data) - set(JSON_FIELDS) - set(_OPTIONAL_JSON_FIELDS))
    if missing or unknown:
        raise ValueError(
            f"{path}: missing fields {missing}, unknown fields {unknown} (see configs/gpu/README.md)"
        )
    if Path(path).stem != data["name"]:
        raise ValueError(f"{path}: 'name' is {data['name']!r} but the file is named {Path(path).name!r}")
    _compute_capability(data["arch"])  # validates the format
    return GPUSpec(
        name=data["name"],
        description=data["description"],
        tvm_tags=tuple(data["tvm_tags"]),
        arch=data["arch"],
        target_arch=data.get("target_arch", data["arch"]),
        sm_count=int(data["sm_count"]),
        boost_clock_mhz=float(data["boost_clock_mhz"]),
        tensor_fp16_fp32acc_tflops=float(data["tensor_fp16_fp32acc_tflops"]),
        tensor_fp16_fp16acc_tflops=float(data["tensor_fp16_fp16acc_tflops"]),
        fp32_tflops=float(data["fp32_tflops"]),
        dram_gb_per_s=float(data["dram_gb_per_s"]),
        l2_bytes=int(data["l2_kib"] * _KIB),
        smem_per_sm_bytes=int(data["smem_per_sm_kib"] * _KIB),
        smem_per_block_bytes=int(data["smem_per_block_kib"] * _KIB),
        smem_per_block_optin_bytes=int(data["smem_per_block_optin_kib"] * _KIB),
        registers_per_sm=int(data["registers_per_sm"]),
        registers_per_block=int(data["registers_per_block"]),
        max_registers_per_thread=int(data["max_registers_per_thread"]),
        max_threads_per_sm=int(data["max_threads_per_sm"]),
        max_threads_per_block=int(data["max_threads_per_block"]),
        max_warps_per_sm=int(data["max_warps_per_sm"]),
        max_blocks_per_sm=int(data["max_blocks_per_sm"]),
        warp_size=int(data["warp_size"]),
    )


def all_gpu_specs() -> list[GPUSpec]:
    """Every spec in ``configs/gpu``, sorted by name."""
    return [_spec_from_file(str(p)) for p in _spec_files()]


def _index() -> dict[str, GPUSpec]:
    """Name, ``pruner_ms/<name>`` label and every listed TVM tag -> spec; a key claimed twice is an error."""
    index: dict[str, GPUSpec] = {}
    for spec in all_gpu_specs():
        for key in (spec.name, SPEC_TAG_PREFIX + spec.name, *spec.tvm_tags):
            other = index.setdefault(key, spec)
            if other is not spec:
                raise ValueError(
                    f"{key!r} is claimed by both {other.name}.json and {spec.name}.json in {config_search_path('gpu')}; "
                    "a TVM tag may map to one GPU spec only"
                )
    return index


def _known() -> str:
    parts = []
    for spec in all_gpu_specs():
        tags = ", ".join(spec.tvm_tags) if spec.tvm_tags else "no TVM tag"
        parts.append(f"{spec.name} ({spec.arch}; {tags})")
    return "; ".join(parts)


def _unknown(what: str) -> UnknownGPUError:
    return UnknownGPUError(
        f"no GPU spec for {what}. Known specs: {_known()}. To add a GPU, copy a file of {config_search_path('gpu')} "
        "into a folder $PRUNER_MS_CONFIGS names, fill in "
        "its figures with their sources and list its TVM tag(s): see configs/gpu/README.md."
    )


def load_gpu_spec(name: str) -> GPUSpec:
    """The :class:`GPUSpec` of ``configs/gpu/<name>.json``, or of the file that lists ``name`` as a TVM tag.

    Parameters
    ----------
    name : str
        A spec name (``"a100-80gb-sxm"``), a TVM tag listed in a file (``"nvidia/nvidia-a100"``, which
        means the A100 40GB SXM) or the ``"pruner_ms/<name>"`` label of :meth:`GPUSpec.target`.

    Raises
    ------
    UnknownGPUError
        If no file matches.
    """
    spec = _index().get(str(name))
    if spec is None:
        raise _unknown(f"{name!r}")
    return spec


def _target_attrs(target: Any) -> dict[str, str]:
    """A Target's attributes as comparable strings, without the tag, keys and host."""
    return {str(k): str(v) for k, v in target.attrs.items() if str(k) not in ("tag", "keys", "host")}


def gpu_spec_for_target(target: Any) -> GPUSpec:
    """The :class:`GPUSpec` a TVM CUDA target describes.

    Matching, first hit wins:

    1. a tag string, spec name or ``pruner_ms/<name>`` label given directly;
    2. the target's ``tag`` (kept by TVM 0.27 only for dict targets: ``Target({"tag": ...})``, or a dict
       with both ``kind`` and ``tag`` such as :meth:`GPUSpec.target`); a registered TVM tag that no spec
       lists is an error rather than a guess by arch;
    3. the target's ``model`` attribute, if it names a spec;
    4. the registered TVM tags whose attributes equal the target's (``Target("nvidia/nvidia-a100")``
       keeps no tag name but its attributes are the tag's), if they all belong to one spec;
    5. ``arch`` (``sm_90a`` counts as ``sm_90``), if exactly one spec has it. Several specs share each
       of ``sm_80``, ``sm_86`` and ``sm_90``, so a bare ``{"kind": "cuda", "arch": "sm_80"}`` raises.

    ``nvidia/nvidia-a100`` means the A100 40GB SXM and ``nvidia/nvidia-h100`` the H100 SXM: TVM has one tag
    for each and no more specific one.

    Parameters
    ----------
    target : tvm.target.Target, dict or str
        A target, a target dict, or a tag / spec name.

    Raises
    ------
    UnknownGPUError
        For a non-CUDA target, an unlisted tag, an unknown or ambiguous arch.
    """
    if isinstance(target, str):
        spec = _index().get(target)
        if spec is not None:
            return spec
    import tvm  # registers the target kinds and tags
    from tvm.target import Target

    registered = {str(k): v for k, v in (tvm.target.list_tags() or {}).items()}
    if isinstance(target, Target):
        tgt = target
    else:
        if isinstance(target, str) and target in registered:
            target = {"tag": target}  # Target("<tag>") would drop the tag's name
        try:
            tgt = Target(target)
        except (ValueError, TypeError) as err:
            raise _unknown(f"target {target!r}, which TVM cannot build ({err})") from err
    desc = f"target {tgt.export()}"
    kind = str(tgt.kind.name)
    if kind != "cuda":
        raise UnknownGPUError(
            f"{desc} has kind {kind!r}, not 'cuda': GPU specs describe NVIDIA CUDA targets only "
            "(see configs/gpu/README.md)."
        )
    index = _index()

    tag = str(tgt.tag)
    if tag:
        if tag in index:
            return index[tag]
        if tag in registered:
            raise _unknown(f"TVM tag {tag!r} ({desc}); no spec lists it, and its arch alone would be a guess")
    model = str(tgt.attrs.get("model", ""))
    if model in index:
        return index[model]

    attrs = _target_attrs(tgt)
    same = [name for name, t in registered.items() if str(t.kind.name) == "cuda" and _target_attrs(t) == attrs]
    owners = {index[name].name for name in same if name in index}
    if same and len(owners) == 1 and all(name in index for name in same):
        return index[same[0]]

    arch = _base_arch(str(tgt.attrs.get("arch", "")))
    by_arch = [s for s in all_gpu_specs() if _base_arch(s.arch) == arch]
    if len(by_arch) == 1:
        return by_arch[0]
    if by_arch:
        shown = ", ".join(same[:4]) + (f" and {len(same) - 4} more" if len(same) > 4 else "")
        hint = f" (its attributes equal the TVM tags {shown})" if same else ""
        raise _unknown(
            f"{desc}: arch {arch} fits several specs ({', '.join(s.name for s in by_arch)}){hint}. TVM 0.27 drops "
            "the tag name of Target('<tag>'); pass the tag string, Target({'tag': '<tag>'}), a spec name or "
            "GPUSpec.target()"
        )
    raise _unknown(desc)

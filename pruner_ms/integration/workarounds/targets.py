"""CLI target strings (``"llvm -mcpu=x"``) were removed from TVM (0.24): :func:`normalize_target` turns
them into a :class:`TargetError` that shows the dict to use, and plain ``"llvm"`` (generic x86-64, no
AVX) into one that shows this machine's target."""
from __future__ import annotations

import shlex

from tvm.target import Target


class TargetError(ValueError):
    """A target TVM 0.27 cannot use, with the form it needs."""


def legacy_target_to_dict(text: str) -> dict:
    """``"llvm -mcpu=znver4 -num-cores=2"`` -> ``{"kind": "llvm", "mcpu": "znver4", "num-cores": 2}``."""
    parts = shlex.split(text)
    out: dict = {"kind": parts[0]}
    for tok in parts[1:]:
        key, _, value = tok.lstrip("-").partition("=")
        out[key] = int(value) if value.isdigit() else (value if value else True)
    return out


def normalize_target(target) -> Target:
    """Accept a ``Target``, a dict, or a tag; reject legacy CLI strings with the dict to use."""
    if isinstance(target, Target):
        return target
    if isinstance(target, dict):
        return Target(target)
    if isinstance(target, str):
        if " " in target.strip() or target.strip() in ("llvm", "cuda"):
            if target.strip() == "llvm":
                from ...hardware.cpu import host_cpu_spec

                suggestion = host_cpu_spec().target()
                why = "plain 'llvm' compiles for generic x86-64 (no AVX)"
            else:
                suggestion = legacy_target_to_dict(target)
                why = "CLI target strings were removed in TVM 0.24"
            raise TargetError(
                f"target {target!r} is not usable: {why}. Pass a dict instead, e.g. {suggestion!r} "
                "(pruner_ms.hardware.host_cpu_spec().target() describes this machine), or a tag such as "
                "'nvidia/nvidia-a100'."
            )
        return Target(target)
    raise TargetError(f"target must be a tvm.target.Target, a dict or a tag string, not {type(target).__name__}")

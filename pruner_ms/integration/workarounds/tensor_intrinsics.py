"""The first ``TuneContext`` of a process imports ``tvm.s_tir.tensor_intrin``, which parses every
tensor intrinsic TVM has (CUDA's wmma/mma/ldmatrix families, ROCm, Hexagon, ARM, x86, RISC-V) from
TVMScript: 30-50 s on 2 cores, nearly all of it CUDA's, before a CPU run has tuned anything.
:func:`tensor_intrinsics_for` registers only what a target's schedule rules can name: for an
``llvm`` target the CPU intrinsics (x86 VNNI/AVX-512 dot products, ARM NEON/dot-product, RISC-V
vector), which MetaSchedule's ``vnni``, ``avx512``, ``neon``, ``dotprod`` and ``rvv`` rule kinds
use (those of the target's architecture); for any other target all of them, as TVM does. Either
import runs under :func:`~.stack_inspection.quick_stack_inspection` (the full one 33-50 s -> 4-9 s)."""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import platform
import sys
import types

from .stack_inspection import quick_stack_inspection

logger = logging.getLogger("pruner_ms")

PACKAGE = "tvm.s_tir.tensor_intrin"
#: the modules ``tvm.s_tir.tensor_intrin``'s ``__init__`` imports, in its order (0.27)
ALL_MODULES = ("cuda", "arm_cpu", "x86", "rocm", "hexagon", "riscv_cpu")
#: those an ``llvm`` target's rule kinds can name, by the architecture's name in its triple; ``x86``
#: (0.3 s) always, ``arm_cpu`` (1.6 s on 2 cores) only for ARM
CPU_MODULES = {"aarch64": ("x86", "arm_cpu"), "arm": ("x86", "arm_cpu"), "riscv": ("x86", "riscv_cpu")}
_BARE_MARK = "_pruner_ms_bare_package"


def cpu_modules(target) -> tuple[str, ...]:
    """The tensor-intrinsic modules an ``llvm`` ``target``'s rules can name: from the architecture in
    its ``mtriple``, or the host's where it has none."""
    arch = str(target.attrs.get("mtriple", "") or platform.machine()).lower()
    return next((mods for prefix, mods in CPU_MODULES.items() if arch.startswith(prefix)), ("x86",))


def import_all_tensor_intrinsics() -> None:
    """``import tvm.s_tir.tensor_intrin`` (every intrinsic TVM has, as ``TuneContext`` imports them for
    a non-``llvm`` target), under :func:`~.stack_inspection.quick_stack_inspection`: 4-9 s instead
    of 33-50 s on 2 cores. Nothing happens if the package is already imported in full."""
    current = sys.modules.get(PACKAGE)
    if current is not None and getattr(current, _BARE_MARK, False):
        _import_submodules(ALL_MODULES)  # inside an llvm block: what the real __init__ would add
        return
    with quick_stack_inspection():
        import tvm.s_tir.tensor_intrin  # noqa: F401


def _import_submodules(names) -> None:
    with quick_stack_inspection():
        for name in names:
            importlib.import_module(f"{PACKAGE}.{name}")


@contextlib.contextmanager
def tensor_intrinsics_for(target):
    """A block in which the tensor intrinsics ``target``'s schedule rules can name are registered.

    For an ``llvm`` target, unless ``tvm.s_tir.tensor_intrin`` is already imported, the package is
    stood in for by an empty one (its ``__init__`` not run) while the CPU modules are imported and
    for the rest of the block, so that ``TuneContext``'s own ``import tvm.s_tir.tensor_intrin`` costs
    nothing. When the block ends the stand-in is removed: a later ``import tvm.s_tir.tensor_intrin``
    runs the real ``__init__``, which finds the CPU modules already imported and registers the rest.
    The intrinsics registered stay registered (TVM's registry is global and append-only), as with
    TVM's own import. For any other target the whole package is imported, as ``TuneContext`` does.
    """
    current = sys.modules.get(PACKAGE)
    if str(target.kind.name) != "llvm":
        import_all_tensor_intrinsics()
        yield
        return
    if current is not None:  # already imported (fully, or by an enclosing block)
        yield
        return
    import tvm.s_tir as parent

    spec = importlib.util.find_spec(PACKAGE)
    bare = types.ModuleType(PACKAGE, "Stand-in for tvm.s_tir.tensor_intrin: only the CPU intrinsics (pruner_ms)")
    bare.__path__ = list(spec.submodule_search_locations)
    bare.__package__ = PACKAGE
    bare.__spec__ = spec
    setattr(bare, _BARE_MARK, True)
    sys.modules[PACKAGE] = bare
    modules = cpu_modules(target)
    logger.debug("registering only the CPU tensor intrinsics (%s) for %s", ", ".join(modules), target)
    try:
        _import_submodules(modules)
        yield
    finally:
        if sys.modules.get(PACKAGE) is bare:
            del sys.modules[PACKAGE]
        if getattr(parent, "tensor_intrin", None) is bare:
            delattr(parent, "tensor_intrin")

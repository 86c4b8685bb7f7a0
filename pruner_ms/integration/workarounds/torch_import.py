"""``import tvm`` imports torch: apache-tvm-ffi 0.1.x does it whenever torch is installed
(``tvm_ffi/__init__.py``: "HACK: try importing torch first, to avoid a potential symbol conflict",
seen on Windows with Python 3.12 and torch 2.9), which is most of the start-up time of a
``pruner-ms`` command that never touches torch (``tune``, ``show``, ``db``, ``compare``).

:func:`import_tvm_without_torch` imports TVM with ``import torch`` failing for the duration, so
``tvm_ffi`` keeps its ``torch = None`` fallback. torch imports normally afterwards (PaCM, the torch
frontend), but in that process tvm_ffi does not convert torch tensors by itself (DLPack) nor follow
torch's CUDA streams, so the CLI does it only for commands that hand TVM no torch object.
"""
from __future__ import annotations

import sys


def import_tvm_without_torch() -> bool:
    """Import TVM with torch hidden; returns False (and does nothing) if torch or tvm_ffi is already
    imported in this process."""
    if "torch" in sys.modules or "tvm_ffi" in sys.modules:
        return False
    sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` raises ImportError
    try:
        import tvm  # noqa: F401
    finally:
        if "torch" in sys.modules and sys.modules["torch"] is None:
            del sys.modules["torch"]
    return True


if __name__ == "__main__":
    # a worker of a TorchFreePopenPoolExecutor (.torch_free_workers): TVM's worker loop, TVM imported
    # without torch first
    import_tvm_without_torch()
    from tvm.exec.popen_worker import main

    main()

"""Every workaround for a TVM 0.27 rough edge, one module per rough edge, each with the reason:

* :mod:`.targets`: :func:`normalize_target`, :class:`TargetError` (target strings removed from TVM);
* :mod:`.meta_schedule_logging`: :func:`meta_schedule_logging` (unnamed log handlers crash ``tune_tir``);
* :mod:`.cost_model_access`: :func:`python_object_of`, :func:`shorten_xgb_warmup` (XGBoost's random warm-up);
* :mod:`.cuda_binary`: the wmma ``shared.dyn`` lowering bug and embedding nvcc's binary in an artifact;
* :mod:`.tensor_intrinsics`: :func:`tensor_intrinsics_for` (a CPU run need not parse CUDA's intrinsics),
  :func:`import_all_tensor_intrinsics`;
* :mod:`.stack_inspection`: :func:`quick_stack_inspection` (TVMScript's ``inspect.stack()`` scans every module);
* :mod:`.torch_import`: :func:`import_tvm_without_torch` (``import tvm`` imports torch);
* :mod:`.keyboard_interrupt`: :func:`keep_keyboard_interrupt` (Ctrl-C in a callback C++ calls becomes a ``RuntimeError``).

Names are imported from their module on first use, so importing one of these modules does not
import the others (nor TVM, for :mod:`.torch_import`).
"""
from __future__ import annotations

from ...lazy_exports import lazy_exports

_EXPORTS = {
    "python_object_of": ".cost_model_access", "shorten_xgb_warmup": ".cost_model_access",
    "WMMA_SMEM_WORKAROUND_CONFIG": ".cuda_binary", "is_wmma_smem_lowering_bug": ".cuda_binary",
    "compile_with_wmma_workaround": ".cuda_binary",
    "pack_imports_with_device_binary": ".cuda_binary", "replace_cuda_payload": ".cuda_binary",
    "meta_schedule_logging": ".meta_schedule_logging",
    "TargetError": ".targets", "legacy_target_to_dict": ".targets", "normalize_target": ".targets",
    "tensor_intrinsics_for": ".tensor_intrinsics", "import_all_tensor_intrinsics": ".tensor_intrinsics", "import_tvm_without_torch": ".torch_import",
    "keep_keyboard_interrupt": ".keyboard_interrupt", "quick_stack_inspection": ".stack_inspection",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

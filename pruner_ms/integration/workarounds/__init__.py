"""Every workaround for a TVM 0.27 rough edge, one module per rough edge, each with the reason:

* :mod:`.builder`: :class:`WarmPoolBuilder`, :func:`fast_build` (a builder pool that survives batches);
* :mod:`.targets`: :func:`normalize_target`, :class:`TargetError` (target strings removed from TVM);
* :mod:`.meta_schedule_logging`: :func:`meta_schedule_logging` (unnamed log handlers crash ``tune_tir``);
* :mod:`.cost_model_access`: :func:`python_object_of`, :func:`shorten_xgb_warmup` (XGBoost's random warm-up);
* :mod:`.cuda_binary`: the wmma ``shared.dyn`` lowering bug and embedding nvcc's binary in an artifact;
* :mod:`.tensor_intrinsics`: :func:`tensor_intrinsics_for` (a CPU run need not parse CUDA's intrinsics).
"""
from .builder import WarmPoolBuilder, fast_build
from .cost_model_access import python_object_of, shorten_xgb_warmup
from .cuda_binary import (
    WMMA_SMEM_WORKAROUND_CONFIG,
    is_wmma_smem_lowering_bug,
    pack_imports_with_device_binary,
    replace_cuda_payload,
)
from .meta_schedule_logging import meta_schedule_logging
from .targets import TargetError, legacy_target_to_dict, normalize_target
from .tensor_intrinsics import tensor_intrinsics_for

__all__ = [
    "WMMA_SMEM_WORKAROUND_CONFIG", "TargetError", "WarmPoolBuilder", "fast_build", "is_wmma_smem_lowering_bug",
    "legacy_target_to_dict", "meta_schedule_logging", "normalize_target", "pack_imports_with_device_binary",
    "python_object_of", "replace_cuda_payload", "shorten_xgb_warmup", "tensor_intrinsics_for",
]

"""``XGBModel`` predicts uniformly at random until 100 samples, i.e. for every run shorter than two
default batches: :func:`shorten_xgb_warmup` caps that warm-up. A cost model reaches a search strategy
only as an FFI handle, so :func:`python_object_of` finds the Python object behind it."""
from __future__ import annotations

import gc
import logging

logger = logging.getLogger("pruner_ms")


def python_object_of(ffi_obj):
    """The Python object (``@derived_object`` instance) behind an FFI handle, or ``ffi_obj`` itself."""
    if hasattr(ffi_obj, "_inst"):
        return ffi_obj._inst
    for obj in gc.get_objects():
        if getattr(type(obj), "_type", None) == "TVMDerivedObject" and obj.same_as(ffi_obj):
            return obj._inst
    return ffi_obj


def shorten_xgb_warmup(model, samples: int) -> bool:
    """Cap an ``XGBModel``'s random warm-up to ``samples``; return whether it was one."""
    from tvm.s_tir.meta_schedule.cost_model import XGBModel

    if isinstance(model, XGBModel._cls) and model.num_warmup_samples > samples:
        logger.info("XGBModel warm-up shortened from %d to %d samples", model.num_warmup_samples, samples)
        model.num_warmup_samples = samples
        return True
    return False

"""``XGBModel`` predicts uniformly at random until 100 samples, i.e. for every run shorter than two
default batches: :func:`shorten_xgb_warmup` caps that warm-up. A cost model reaches a search strategy
only as an FFI handle, so :func:`python_object_of` finds the Python object behind it: among the local
variables of the Python frames that called into TVM (``ms.tune_tir``'s ``tune_tasks``, a test calling
``TuneContext.pre_tuning``), never by scanning the heap."""
from __future__ import annotations

import logging
import sys

logger = logging.getLogger("pruner_ms")


CALLER_FRAMES_SEARCHED = 64  # how far up the Python call stack python_object_of looks


def python_object_of(ffi_obj):
    """The Python object (``@derived_object`` instance) behind an FFI handle, or ``ffi_obj`` itself
    when no calling frame holds it (up to :data:`CALLER_FRAMES_SEARCHED` frames up)."""
    if hasattr(ffi_obj, "_inst"):
        return ffi_obj._inst
    frame = sys._getframe(1)
    for _ in range(CALLER_FRAMES_SEARCHED):
        if frame is None:
            break
        for value in list(frame.f_locals.values()):
            if getattr(type(value), "_type", None) == "TVMDerivedObject" and value.same_as(ffi_obj):
                return value._inst
        frame = frame.f_back
    return ffi_obj


def shorten_xgb_warmup(model, samples: int) -> bool:
    """Cap an ``XGBModel``'s random warm-up to ``samples``; return whether it was one."""
    from tvm.s_tir.meta_schedule.cost_model import XGBModel

    if isinstance(model, XGBModel._cls) and model.num_warmup_samples > samples:
        logger.info("XGBModel warm-up shortened from %d to %d samples", model.num_warmup_samples, samples)
        model.num_warmup_samples = samples
        return True
    return False

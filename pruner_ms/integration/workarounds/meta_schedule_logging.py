"""``tune_tir`` rebuilds its logging config from the names of the handlers already on the
``tvm.s_tir.meta_schedule`` logger and crashes (``'NoneType' object has no attribute 'format'``) if one
has no name, as pytest's capture handlers do (naming them is not enough: ``dictConfig`` then looks
the name up in its own table). :func:`meta_schedule_logging` detaches them for the tuning call and
restores them, and the logger's level, after."""
from __future__ import annotations

import contextlib
import logging

logger = logging.getLogger("pruner_ms")


@contextlib.contextmanager
def meta_schedule_logging(level: int | None = None):
    """A block in which MetaSchedule's logger has no unnamed handlers (they crash ``tune_tir``'s
    logging set-up, which looks handlers up by name) and, if ``level`` is given, that level; the
    handlers and the level are restored when the block ends."""
    ms_logger = logging.getLogger("tvm.s_tir.meta_schedule")
    detached = [h for h in ms_logger.handlers if h.get_name() is None]
    previous_level = ms_logger.level
    for handler in detached:
        logger.debug("detaching unnamed log handler %r from %s while tuning", handler, ms_logger.name)
        ms_logger.removeHandler(handler)
    if level is not None:
        ms_logger.setLevel(level)
    try:
        yield ms_logger
    finally:
        ms_logger.setLevel(previous_level)
        for handler in detached:
            if handler not in ms_logger.handlers:
                ms_logger.addHandler(handler)

"""Logging fixes are scoped to the tuning call: the process's handlers and levels come back."""
from __future__ import annotations

import logging

from pruner_ms.integration.workarounds import meta_schedule_logging


def test_meta_schedule_logging_restores_handlers_and_level():
    ms_logger = logging.getLogger("tvm.s_tir.meta_schedule")
    unnamed, named = logging.NullHandler(), logging.NullHandler()
    named.set_name("kept")
    ms_logger.addHandler(unnamed)
    ms_logger.addHandler(named)
    before = ms_logger.level
    try:
        with meta_schedule_logging(logging.ERROR):
            assert unnamed not in ms_logger.handlers and named in ms_logger.handlers
            assert ms_logger.level == logging.ERROR
        assert unnamed in ms_logger.handlers and named in ms_logger.handlers
        assert ms_logger.level == before
    finally:
        ms_logger.removeHandler(unnamed)
        ms_logger.removeHandler(named)

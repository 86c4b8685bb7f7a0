"""The measured latency of a tuning record or a runner result: one definition for the whole package.

MetaSchedule keeps a failed build or run as a record whose ``run_secs`` are all
:data:`METASCHEDULE_FAILED_SECONDS` (``AddToDatabase`` in ``task_scheduler.cc``). Here a measurement
is failed when it has no repeats or any repeat is non-finite, non-positive or at least
:data:`FAILED_THRESHOLD_SECONDS`; otherwise its latency is the mean of its repeats. A failed
measurement has latency ``inf``, so it sorts last and never counts as reaching a target.
"""
from __future__ import annotations

import math

#: the latency MetaSchedule writes for a failed build or run
METASCHEDULE_FAILED_SECONDS = 1e10
#: a repeat this slow or slower is a failure marker, not a measurement (no program runs for 31 years)
FAILED_THRESHOLD_SECONDS = 1e9


def mean_run_seconds(run_secs) -> float:
    """Mean of the repeats ``run_secs`` (FFI floats or numbers); ``inf`` when the measurement failed."""
    secs = [float(getattr(x, "value", x)) for x in run_secs] if run_secs is not None else []
    if not secs or any(not math.isfinite(s) or s <= 0 or s >= FAILED_THRESHOLD_SECONDS for s in secs):
        return math.inf
    return sum(secs) / len(secs)


def record_seconds(record) -> float:
    """Measured latency of a MetaSchedule ``TuningRecord``; ``inf`` for a failed build or run."""
    return mean_run_seconds(record.run_secs)


def result_seconds(result) -> float:
    """Measured latency of a MetaSchedule ``RunnerResult``; ``inf`` when it reports an error or failed."""
    if getattr(result, "error_msg", None):
        return math.inf
    return mean_run_seconds(result.run_secs)

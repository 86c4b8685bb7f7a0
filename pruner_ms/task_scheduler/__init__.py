"""MetaSchedule task schedulers: how a network's trial budget is split between its tasks.

:data:`TASK_SCHEDULERS` needs no TVM import (the command line lists it before TVM is loaded); the
scheduler classes are imported on first use.
"""
from __future__ import annotations

from ..lazy_exports import lazy_exports

#: The task schedulers a name selects (``tune_model``, ``pruner-ms compile --task-scheduler``).
TASK_SCHEDULERS = ("headroom", "gradient", "round-robin")

_EXPORTS = {"HeadroomRule": ".headroom", "HeadroomScheduler": ".headroom", "TaskProgress": ".headroom"}
__all__ = ["TASK_SCHEDULERS", "make_task_scheduler", *sorted(_EXPORTS)]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)


def make_task_scheduler(kind="gradient"):
    """A MetaSchedule task scheduler from a name in :data:`TASK_SCHEDULERS` (a ``TaskScheduler``
    object is returned as it is)."""
    from tvm.s_tir.meta_schedule.task_scheduler import TaskScheduler

    from .headroom import HeadroomScheduler

    if isinstance(kind, TaskScheduler):
        return kind
    if kind == "headroom":
        return HeadroomScheduler()
    if kind in ("gradient", "round-robin"):
        return TaskScheduler.create(kind)
    raise ValueError(f"unknown task scheduler {kind!r}: use one of {', '.join(TASK_SCHEDULERS)} or pass a "
                     "tvm.s_tir.meta_schedule TaskScheduler")

"""MetaSchedule task schedulers: how a network's trial budget is split between its tasks."""
from .headroom import HeadroomRule, HeadroomScheduler, TaskProgress

__all__ = ["TASK_SCHEDULERS", "HeadroomRule", "HeadroomScheduler", "TaskProgress", "make_task_scheduler"]

#: The task schedulers a name selects (``tune_model``, ``pruner-ms compile --task-scheduler``).
TASK_SCHEDULERS = ("headroom", "gradient", "round-robin")


def make_task_scheduler(kind="gradient"):
    """A MetaSchedule task scheduler from a name in :data:`TASK_SCHEDULERS` (a ``TaskScheduler``
    object is returned as it is)."""
    from tvm.s_tir.meta_schedule.task_scheduler import TaskScheduler

    if isinstance(kind, TaskScheduler):
        return kind
    if kind == "headroom":
        return HeadroomScheduler()
    if kind in ("gradient", "round-robin"):
        return TaskScheduler.create(kind)
    raise ValueError(f"unknown task scheduler {kind!r}: use one of {', '.join(TASK_SCHEDULERS)} or pass a "
                     "tvm.s_tir.meta_schedule TaskScheduler")

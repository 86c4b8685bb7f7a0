"""A task scheduler that spends each round where the network's latency can still drop most.

MetaSchedule's ``gradient`` scheduler (TVM 0.27, ``gradient_based.cc``) ranks tasks by how fast their
best latency fell recently and by ``best / rounds``; it does not know how far a task is from what the
hardware allows, so it keeps spending on a memory-bound element-wise task that is already at the
bandwidth limit. :class:`HeadroomScheduler` ranks by the expected gain of one more round,

    gain = weight x (best - floor) x rate,

``floor`` being the roofline bound of the task on the analyzer's description of the machine
(:func:`~pruner_ms.analysis.roofline.roofline`), ``best`` the task's best measured latency and ``rate``
the share of the remaining headroom a round closes, learnt from the task's own curve (a prior for a
task with one round). A task whose curve has flattened (no gain of ``tolerance`` over ``patience``
rounds) gets no rounds while another task still improves, and a task with a single program (a design
space without decisions) is measured once and stopped.

Lifecycle (MetaSchedule's, ``task_scheduler.cc``): ``tune`` calls :meth:`HeadroomScheduler.next_task_id`
until it returns -1 or the budget is spent; the first call of each task is a warm-up round in task
order, without waiting for the runner; afterwards every call first joins the task still being
measured (its results become the curve), then picks.
"""
from __future__ import annotations

import dataclasses
import logging
import math

from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.task_scheduler import PyTaskScheduler

from ..integration.measured_latency import result_seconds

logger = logging.getLogger("pruner_ms")


@dataclasses.dataclass
class TaskProgress:
    """What the scheduler knows of one task."""

    name: str
    weight: float
    floor_seconds: float  # the roofline bound; 0 where it could not be computed
    round_bests: list[float] = dataclasses.field(default_factory=list)  # best so far after each round
    trials: int = 0

    @property
    def rounds(self) -> int:
        return len(self.round_bests)

    @property
    def best_seconds(self) -> float:
        return self.round_bests[-1] if self.round_bests else math.inf


@dataclasses.dataclass(frozen=True)
class HeadroomRule:
    """The ranking of :class:`HeadroomScheduler` (see there for the parameters)."""

    window: int = 2
    prior_rate: float = 0.3
    min_rate: float = 0.02
    patience: int = 2
    tolerance: float = 0.01
    failed_rounds: int = 2

    def __post_init__(self):
        if self.window < 1 or self.patience < 1 or self.failed_rounds < 1:
            raise ValueError("window, patience and failed_rounds must be at least 1 round")
        for name in ("prior_rate", "min_rate"):
            if not 0.0 < getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be a share of the headroom in (0, 1], got {getattr(self, name)}")
        if self.tolerance < 0.0:
            raise ValueError(f"tolerance must be a relative gain >= 0, got {self.tolerance}")

    def rate(self, progress: TaskProgress) -> float:
        """The share of the remaining headroom one round closes: the curve's last ``window`` rounds,
        with the prior counting as one round."""
        bests, floor = progress.round_bests, progress.floor_seconds
        if len(bests) < 2 or not math.isfinite(bests[-1]):
            return self.prior_rate
        w = min(self.window, len(bests) - 1)
        before = bests[-1 - w]
        if not math.isfinite(before):
            return self.prior_rate
        observed = (before - bests[-1]) / (w * max(before - floor, 1e-30))
        return max(self.min_rate, (self.prior_rate + min(1.0, observed) * w) / (1 + w))

    def expected_gain(self, progress: TaskProgress) -> float:
        """Weighted seconds one more round is expected to take off the network's latency; ``inf`` for
        a task without a valid program yet (it runs untuned otherwise) until it has failed
        ``failed_rounds`` rounds, then ``-inf``."""
        best = progress.best_seconds
        if not math.isfinite(best):
            return math.inf if progress.rounds < self.failed_rounds else -math.inf
        return progress.weight * max(0.0, best - progress.floor_seconds) * self.rate(progress)

    def has_flattened(self, progress: TaskProgress) -> bool:
        """No relative gain above ``tolerance`` over the last ``patience`` rounds."""
        bests = progress.round_bests
        if len(bests) <= self.patience or not math.isfinite(bests[-1]):
            return False
        before = bests[-1 - self.patience]
        return math.isfinite(before) and before - bests[-1] <= self.tolerance * before

    def choose(self, progress: list[TaskProgress], alive: list[int]) -> int:
        """The task among ``alive`` to give the next round: the largest expected gain among the
        tasks still improving, or among all alive tasks once every one has flattened; ties go to the
        lower task id."""
        if not alive:
            raise ValueError("no task is alive")
        improving = [i for i in alive if not self.has_flattened(progress[i])]
        pool = improving or alive
        return max(pool, key=lambda i: (self.expected_gain(progress[i]), -i))


@derived_object
class HeadroomScheduler(PyTaskScheduler):
    """MetaSchedule task scheduler that gives each round to the task with the largest expected gain
    in end-to-end latency (module docstring). Use it as ``ms.tune_tasks(..., task_scheduler=...)``,
    ``ms.tune_relax(..., task_scheduler=...)`` or :func:`pruner_ms.integration.relax.tune_model`.

    Parameters
    ----------
    analyzer : SymbolicAnalyzer, optional
        Whose hardware figures give each task's roofline floor; by default the analyzer of each
        task's target (:func:`~pruner_ms.analysis.analyzer_for_target`).
    window : int
        Rounds of a task's curve that estimate its rate.
    prior_rate : float
        The share of the headroom a round is assumed to close before the curve says otherwise.
    min_rate : float
        The least rate a task keeps, so a large headroom is never ignored outright.
    patience, tolerance :
        A task has flattened when ``patience`` rounds took less than ``tolerance`` (relative) off
        its best.
    failed_rounds : int
        Rounds a task without any valid program keeps priority before it goes last.

    Attributes
    ----------
    progress : list of TaskProgress
        Per task: its floor, its curve (best after each round) and its trials, for the last run, as
        far as the scheduler saw it: the batch still being measured when the budget runs out is
        joined by MetaSchedule after the scheduler's last pick and is in the database only.
    picks : list of int
        The task ids in the order they were given rounds.
    """

    def __init__(self, *, analyzer=None, window: int = 2, prior_rate: float = 0.3, min_rate: float = 0.02,
                 patience: int = 2, tolerance: float = 0.01, failed_rounds: int = 2) -> None:
        super().__init__()
        self.analyzer = analyzer
        self.rule = HeadroomRule(window=window, prior_rate=prior_rate, min_rate=min_rate, patience=patience,
                                 tolerance=tolerance, failed_rounds=failed_rounds)
        self.progress: list[TaskProgress] = []
        self.picks: list[int] = []
        self._contexts: list = []
        self._warmed = 0

    # ---- MetaSchedule hook ----------------------------------------------------------------------

    def next_task_id(self) -> int:
        scheduler = self._outer()
        records = list(scheduler.tasks_)
        if not self._same_run(records):
            self._start(records)
        while self._warmed < len(records):  # warm-up: one round each, in order, runner not awaited
            task_id = self._warmed
            self._warmed += 1
            if not records[task_id].is_terminated:
                self.picks.append(task_id)
                return task_id
        for task_id, record in enumerate(records):
            if record.runner_futures is not None:
                self._join(scheduler, records, task_id)
        alive = [i for i, record in enumerate(records) if not record.is_terminated]
        if not alive:
            return -1
        task_id = self.rule.choose(self.progress, alive)
        logger.debug("HeadroomScheduler: round to task #%d %s (expected gain %.3g s; %s)", task_id,
                     self.progress[task_id].name, self.rule.expected_gain(self.progress[task_id]),
                     ", ".join(f"#{i} {self.rule.expected_gain(self.progress[i]):.3g}" for i in alive))
        self.picks.append(task_id)
        return task_id

    # ---- bookkeeping ----------------------------------------------------------------------------

    def _same_run(self, records) -> bool:
        return len(records) == len(self._contexts) and all(
            r.ctx.same_as(c) for r, c in zip(records, self._contexts))

    def _start(self, records) -> None:
        from ..analysis import analyzer_for_target
        from ..analysis.roofline import roofline

        analyzers = {}
        self.progress, self.picks, self._warmed = [], [], 0
        self._contexts = [r.ctx for r in records]
        for record in records:
            ctx = record.ctx
            analyzer = self.analyzer
            if analyzer is None:
                key = str(ctx.target)
                if key not in analyzers:
                    analyzers[key] = analyzer_for_target(ctx.target)
                analyzer = analyzers[key]
            try:
                floor = roofline(ctx.mod, analyzer.spec, flops=record.flop).seconds
            except (ValueError, TypeError) as err:
                logger.warning("HeadroomScheduler: no roofline for task %s (%s); its floor is 0 s, so its "
                               "headroom is its whole latency", ctx.task_name, err)
                floor = 0.0
            self.progress.append(TaskProgress(str(ctx.task_name), float(record.task_weight), floor))

    def _join(self, scheduler, records, task_id: int) -> None:
        """Wait for the task's batch, add it to the task's curve, and stop a single-program task after
        its first round."""
        candidates = records[task_id].measure_candidates
        results = scheduler.join_running_task(task_id)  # MetaSchedule's own join (database, callbacks)
        progress = self.progress[task_id]
        seconds = [result_seconds(r) for r in results]
        progress.trials += len(seconds)
        progress.round_bests.append(min([progress.best_seconds, *seconds]))
        if progress.rounds == 1 and candidates and _single_program(records[task_id].ctx):
            scheduler.terminate_task(task_id)  # its one program is measured: nothing left to tune


def _single_program(ctx) -> bool:
    """Whether every design space of the task is one program (a trace without sampling decisions)."""
    return all(len(sch.trace.decisions) == 0 for sch in ctx.generate_design_space())

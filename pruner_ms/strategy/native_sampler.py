"""TVM's own random sampling of design spaces, driven from Python threads so that it overlaps the analyzer.

A Python replay of a random sample (``TraceReplayer.replay``) re-enters Python about ten times (schedule,
trace, each postproc, hash) and waits for the GIL each time while the analyzer, pure Python, holds it:
measured on 2 cores, analysis and replay in two threads took as long as in sequence
(``docs/results/draft_cost_s21``). MetaSchedule's ``EvolutionarySearch`` samples its initial population
in C++ (``SampleInitPopulation``: a design space at random, its trace replayed without decisions, the
postprocs applied), one FFI call for a whole chunk, which releases the GIL for all of it. A
:class:`NativeSampler` holds one such ``EvolutionarySearch`` on a private tuning context with one
thread, so its draws depend only on its seed: samplers running chunks in several Python threads
reproduce a run, while the thread that consumes their chunks analyzes the previous one.
"""
from __future__ import annotations

import logging

import tvm_ffi
from tvm.s_tir import Schedule
from tvm.s_tir import meta_schedule as ms

from ..cost_model.symbolic import SymbolicCostModel

logger = logging.getLogger(__name__)

_SAMPLE = "s_tir.meta_schedule.SearchStrategyEvolutionarySearchSampleInitPopulation"


def _quiet_logger() -> logging.Logger:
    """A logger for the private context: ``SampleInitPopulation`` logs a failure summary at INFO on
    every call, which would flood a tuning log; warnings and errors still reach ``pruner_ms``. Made
    outside the logging registry, so no global logger changes."""
    quiet = logging.Logger(f"{__name__}.tvm", level=logging.WARNING)
    quiet.parent = logger
    return quiet


class NativeSampler:
    """Random valid programs of a task's design spaces, sampled by TVM in C++ on one thread.

    Parameters
    ----------
    context : TuneContext
        The task's context: its module, target and space generator (cloned, so the task's own
        generator is left as it is).
    design_spaces : list of Schedule
        The spaces to sample (their traces' decisions are ignored).
    seed : int
        This sampler's random seed (a positive int).
    """

    def __init__(self, context, design_spaces: list[Schedule], *, seed: int) -> None:
        self._strategy = ms.search_strategy.EvolutionarySearch(init_min_unmeasured=1, max_fail_count=1)
        # the context keeps the strategy initialized; TuneContext initializes both on construction
        self._context = ms.TuneContext(
            context.mod, target=context.target, space_generator=context.space_generator.clone(),
            search_strategy=self._strategy, num_threads=1, rand_state=int(seed), logger=_quiet_logger())
        # sampling reads neither a database nor a cost model, but EvolutionarySearch requires both (and
        # MetaSchedule's RandomModel would reseed numpy's global generator)
        self._strategy.pre_tuning(2**30, 1, list(design_spaces), ms.database.MemoryDatabase(), SymbolicCostModel())
        self._sample = tvm_ffi.get_global_func(_SAMPLE)

    def sample(self, count: int) -> list[Schedule]:
        """``count`` attempts; the valid programs, postprocessed (fewer than ``count`` if some failed,
        none if all did). Releases the GIL while it runs."""
        if count <= 0:
            return []
        return list(self._sample(self._strategy, int(count)))

    def close(self) -> None:
        self._strategy.post_tuning()

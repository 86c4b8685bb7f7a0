"""EvolutionaryDraftSearch: Draft-then-Verify with MetaSchedule's own evolutionary search as the drafter.

MetaSchedule's ``EvolutionarySearch`` with the symbolic analyzer as its cost model (the
``evolutionary-analyzer`` ablation of the benchmarks) reached the default's final latency sooner than
:class:`~pruner_ms.PrunerSearch` on most CPU suite workloads measured in the twenty-eighth to thirtieth
sessions, at the default's wall time per trial: its C++ genetic search refines the analyzer's best
programs every round, where PrunerSearch's Python drafts are redrafted once in a few rounds. This
strategy keeps that drafter and adds the verify stage: each round the evolutionary search, scored by
the analyzer, proposes ``drafts_per_pick`` times as many programs as the batch takes, and the learned
cost model MetaSchedule passes in picks the batch among them (blended with the analyzer while it has
seen few measurements).
"""
from __future__ import annotations

import logging

import numpy as np
import tvm_ffi
from tvm.ir.utils import derived_object
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule.search_strategy import PySearchStrategy

from ..analysis import SymbolicAnalyzer
from ..cost_model.symbolic import SymbolicCostModel
from ..integration.workarounds import keep_keyboard_interrupt

logger = logging.getLogger("pruner_ms")


@derived_object
class EvolutionaryDraftSearch(PySearchStrategy):
    """Draft with MetaSchedule's evolutionary search scored by the analyzer; verify with the learned model.

    Each round: (1) MetaSchedule's ``EvolutionarySearch`` (its population from the best measured
    programs and random samples, its genetic search and mutators, its ``eps_greedy`` random picks),
    with :class:`~pruner_ms.cost_model.SymbolicCostModel` as its cost model, proposes
    ``drafts_per_pick * n`` unmeasured programs for a batch of ``n``; (2) they are ranked by
    ``w * model + (1 - w) * analyzer`` (both as throughput relative to the round's best), where
    ``w = m / (m + analyzer_prior_samples)`` after ``m`` measured programs, and the top ``n`` are
    measured. Until a batch has been measured, the analyzer alone ranks (the drafts' own order).

    Parameters
    ----------
    drafts_per_pick : int
        Drafts proposed per program measured (default 4).
    population_size, init_measured_ratio, genetic_num_iters, genetic_mutate_prob, eps_greedy : optional
        The drafting ``EvolutionarySearch``'s (MetaSchedule's defaults: 512, 0.2, 4, 0.85, 0.05).
    analyzer : SymbolicAnalyzer, optional
        The draft model; by default the one for the context's target.
    analyzer_prior_samples : int
        How many measured programs the analyzer's opinion is worth in the verify blend (0: the learned
        model alone ranks the drafts once a batch is measured).
    """

    def __init__(self, *, drafts_per_pick: int = 4, population_size: int = 512, init_measured_ratio: float = 0.2,
                 genetic_num_iters: int = 4, genetic_mutate_prob: float = 0.85, eps_greedy: float = 0.05,
                 analyzer: SymbolicAnalyzer | None = None, analyzer_prior_samples: int = 64) -> None:
        self._params = {k: v for k, v in locals().items() if k != "self"}  # for clone()
        if drafts_per_pick < 1:
            raise ValueError(f"EvolutionaryDraftSearch: drafts_per_pick must be >= 1, got {drafts_per_pick}")
        if analyzer_prior_samples < 0:
            raise ValueError("EvolutionaryDraftSearch: analyzer_prior_samples must be >= 0, got "
                             f"{analyzer_prior_samples}")
        for name, value in self._params.items():
            setattr(self, name, value)
        self.context = None
        self.last_round_profile: dict | None = None

    def _initialize_with_tune_context(self, context) -> None:
        keep_keyboard_interrupt()
        self.context = context
        self.drafter = ms.search_strategy.EvolutionarySearch(
            population_size=self.population_size, init_measured_ratio=self.init_measured_ratio,
            genetic_num_iters=self.genetic_num_iters, genetic_mutate_prob=self.genetic_mutate_prob,
            eps_greedy=self.eps_greedy)
        # the drafter's own context: same module, target, space (its mutators and postprocs) and seed
        self._drafter_context = ms.TuneContext(
            mod=context.mod, target=context.target, space_generator=context.space_generator,
            search_strategy=self.drafter, task_name=f"{context.task_name}-drafts", rand_state=int(context.rand_state),
            num_threads=int(context.num_threads))
        self.analyzer_model = SymbolicCostModel(self.analyzer)

    def pre_tuning(self, max_trials, num_trials_per_iter, design_spaces, database=None, cost_model=None) -> None:
        if max_trials <= 0 or num_trials_per_iter <= 0:
            raise ValueError("EvolutionaryDraftSearch: max_trials and num_trials_per_iter must be positive, got "
                             f"{max_trials} and {num_trials_per_iter}")
        if database is None:
            raise ValueError("EvolutionaryDraftSearch needs a database (its drafter reads the measured programs "
                             "there); tune with ms.tune_tir or pass one")
        self.max_trials, self.per_iter = int(max_trials), int(num_trials_per_iter)
        self.cost_model = cost_model
        self.trials_sent = 0
        self.measured_valid = 0
        self.round = 0
        # never hand out a program the database holds (an earlier run's, failed ones included): the
        # drafter is never told what was measured, and MetaSchedule's own check misses failed records
        self.handed_out: set[int] = self._programs_in(database)
        # the drafter is never told of results, so its own budget never runs out: it stops when we do
        self.drafter.pre_tuning(2**30, self.drafts_per_pick * self.per_iter, design_spaces, database,
                                self.analyzer_model)

    def post_tuning(self) -> None:
        self.drafter.post_tuning()

    def generate_measure_candidates(self):
        if self.trials_sent >= self.max_trials:
            return None
        n = min(self.per_iter, self.max_trials - self.trials_sent)
        drafts = self.drafter.generate_measure_candidates() or []
        drafts = [c for c in drafts if int(tvm_ffi.structural_hash(c.sch.mod)) not in self.handed_out]
        if not drafts:
            logger.warning("EvolutionaryDraftSearch: the drafter proposed no new program; stopping early")
            return None
        weight = self._model_weight()
        analyzer = np.asarray(self.analyzer_model.predict(self._drafter_context, drafts), dtype=np.float64)
        score = _relative(analyzer)
        if weight > 0.0:
            model = np.asarray(self.cost_model.predict(self.context, drafts), dtype=np.float64)
            score = weight * _relative(model) + (1.0 - weight) * score
        order = np.argsort(-score, kind="stable")  # ties keep the drafter's order
        picks = [drafts[i] for i in order[:n]]
        self.handed_out.update(int(tvm_ffi.structural_hash(c.sch.mod)) for c in picks)
        self.trials_sent += len(picks)
        self.last_round_profile = {"round": self.round, "drafts": len(drafts), "model_weight": weight}
        self.round += 1
        return picks

    def notify_runner_results(self, measure_candidates, results) -> None:
        self.measured_valid += sum(1 for r in results if r.error_msg is None and r.run_secs)

    def clone(self):
        return EvolutionaryDraftSearch(**self._params)

    def _programs_in(self, database) -> set[int]:
        """Structural hashes of this workload's programs in ``database`` as they were handed out (each
        record's trace replayed with its postprocessors' instructions); a record whose trace no
        longer applies is skipped."""
        from ..integration.database import compiled_schedule
        from ..integration.resume import workload_records

        keys, stale = set(), 0
        for rec in workload_records(database, self.context.mod):
            try:
                keys.add(int(tvm_ffi.structural_hash(compiled_schedule(self.context.mod, rec.trace).mod)))
            except Exception:  # noqa: BLE001  (TVMError: a record of another version or shape)
                stale += 1
        if stale:
            logger.warning("EvolutionaryDraftSearch: %d of %d records of %s in the database no longer replay; "
                           "skipped", stale, stale + len(keys), self.context.task_name)
        return keys

    def _model_weight(self) -> float:
        """The learned model's weight in the verify blend: 0 until a batch is measured."""
        if self.cost_model is None or self.measured_valid == 0:
            return 0.0
        prior = self.analyzer_prior_samples
        return self.measured_valid / (self.measured_valid + prior)


def _relative(scores: np.ndarray) -> np.ndarray:
    """Scores as a share of the best (throughput-like; 0 where the best is not positive)."""
    best = float(np.max(scores)) if len(scores) else 0.0
    return scores / best if best > 0 else np.zeros_like(scores)

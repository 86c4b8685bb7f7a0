"""PrunerSearch: Draft-then-Verify exploration as a MetaSchedule search strategy."""
from __future__ import annotations

import contextlib
import functools
import logging
import math
import time
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import tvm_ffi
from tvm.ir.utils import derived_object
from tvm.s_tir import Schedule
from tvm.s_tir.meta_schedule.arg_info import ArgInfo
from tvm.s_tir.meta_schedule.search_strategy import MeasureCandidate, PySearchStrategy

from ..analysis import SymbolicAnalyzer, analyzer_for_target
from ..integration.measured_latency import result_seconds
from ..integration.workarounds import keep_keyboard_interrupt, python_object_of, shorten_xgb_warmup
from .genetic import evolve
from .trace_replay import Candidate, TraceReplayer
from .profile import RoundProfile
from .trust import AnalyzerTrust

logger = logging.getLogger("pruner_ms")


# The paper's constants (population, drafts, draft GA iterations, random share of the population).
PAPER_DEFAULTS = {"population_size": 1536, "draft_size": 512, "draft_iters": 2, "random_share": 1.0}
# CPU (and other non-CUDA) targets: the paper's population and drafts, one genetic iteration per redraft
# (the paper: 2). A redraft's second iteration is ~1,300 more replays and analyzer evaluations, a third
# of a 128-trial run's search time on a GEMM, for no better final latency (docs/results/draft_iters_s7).
CPU_DEFAULTS = {**PAPER_DEFAULTS, "draft_iters": 1}
# CUDA spaces: replays cost ~10x more and ~90 % of random tensor-core samples are invalid, so a draft
# grows a smaller population mostly by mutation (measured in scripts/tc_host_time.py).
CUDA_DEFAULTS = {"population_size": 256, "draft_size": 64, "draft_iters": 1, "random_share": 0.25}
# Smallest draft population when a small budget scales it down (``population_per_trial``).
SMALLEST_DRAFT_POPULATION = 256
# The paper's verify stage, for the ``pruner-paper`` ablation: the learned model alone ranks drafts,
# measured programs and one generation of their mutations; no local search, no analyzer blend, no
# draft bar, no trust adaptation; its cold start (the genetic search drafts the first batch) and its
# redraft period.
PAPER_VERIFY = {"local_parents": 0, "analyzer_prior_samples": 0, "draft_bar": False, "adaptive_trust": False,
                "cold_ranked": False,  # the paper drafts the first batch with the genetic search
                "draft_every": 2,  # the paper's redraft period (ours: 4)
                "draft_iters": 2,  # the paper's genetic iterations per draft (ours on CPUs: 1)
                "population_per_trial": None}  # the paper drafts its whole population whatever the budget


# Below this trust the analyzer no longer drives a genetic search: its drafts are the sampled
# population ranked once (the mutations it would steer are wasted replays).
GA_MIN_TRUST = 0.25
# A round whose analyzer evaluations (or replays and mutations) raise more often than this is warned
# about: drafting would silently degrade into random search (or see less of the space).
FAILURE_WARN_SHARE = 0.1


@derived_object
class PrunerSearch(PySearchStrategy):
    """Draft with a symbolic analyzer, verify the drafts with the learned cost model, measure the best.

    Each round: (1) every ``draft_every`` rounds, build a ``population_size`` population (a
    ``random_share`` of it sampled from the design spaces, the rest mutations of the best known) and
    run a ``draft_iters``-iteration genetic search whose fitness is the analyzer, keeping the ``draft_size`` best as drafts; (2) score the drafts, the best measured programs and
    their mutations (``verify_iters`` genetic iterations) with the cost model MetaSchedule passes in,
    where a mutation is eligible only if the analyzer ranks it at least as high as the last draft;
    (3) measure the top ``(1 - eps_greedy)`` share plus ``eps_greedy`` random picks. Until the cost
    model has seen a measured batch (cold start), the analyzer's best drafts are measured. No program
    is measured twice, including programs already in the database from an earlier run (failed ones
    too).

    With ``adaptive_trust`` the analyzer is trusted only as far as its ranking agrees with what this
    task has measured (:class:`~pruner_ms.strategy.trust.AnalyzerTrust`): the draft bar, the
    analyzer's weight in the verify blend and the drafts' share of the verify population scale with
    that trust, the rest of the population being fresh random samples, and the ``eps_greedy``
    random picks always come from outside the drafts. An analyzer that ranks no better than chance
    thus leaves a search close to MetaSchedule's own (learned model + mutation of the measured best).

    With ``cold_ranked`` (on by default; not the paper) the first batch is drafted without the genetic
    search (the sampled population ranked by the analyzer), and the genetic search first runs in
    round 1 on that population, once a measured batch has said how far the analyzer is trusted.

    After each round, ``last_round_profile`` holds where its host time went (``sample_s``,
    ``mutate_s``, ``analyze_s``, ``predict_s``, ``other_s``, ``total_s``; ``analyze_cpu_s`` is
    analyzer time spent inside the replay workers, overlapping ``sample_s`` and ``mutate_s``), its
    counts (``analyzer_evaluations``, ``draft_ga_iterations``, failures, picks per source) and the
    trust level; once its batch is measured, the same dict also holds the best latency per source
    (``measured_best_ms_draft``, ``_model``, ``_local``, ``_random``) and ``improved_by``, the source
    that beat the best measured before (None if none did).

    Parameters
    ----------
    population_size : int, optional
        Programs per draft population, also the GA population (paper and CPU default: 1536; CUDA
        default: 256, see ``random_share``).
    population_per_trial : int or None
        A budget of ``max_trials`` trials drafts from at most ``population_per_trial * max_trials``
        programs per draft (at least 256), so a tiny budget does not analyze 1,536 programs to measure
        8 (``pruner-ms tune --trials 8`` spent 5-7 of its 16-20 s drafting, thirty-second session).
        Default 32: budgets of 48 trials and more draft the full ``population_size``. ``None``: always
        ``population_size`` (the paper).
    draft_size : int, optional
        Drafts kept after the analyzer-driven search (paper and CPU default: 512; CUDA default: 64).
    draft_every : int
        Redraft period in rounds. Default 4 (the paper: 2): on the CPU suite a redraft costs 3-4x a
        verify round, and redrafting every 4 rounds cut the search time of 128-trial runs by 31-39 %
        with the same final latency (0.96-1.01 of it, 4 workloads x 2 seeds, docs/results/ablation_s5).
    draft_iters : int, optional
        Genetic iterations scored by the analyzer per draft (paper: 2; CPU and CUDA default: 1). On the
        CPU suite the second iteration added ~3 s of search to each 128-trial GEMM run (its wall time per
        trial 1.09-1.16x the default's instead of 1.02-1.09x) and no better final latency (one iteration's
        was 0.93-1.02 of two iterations', 2 GEMMs x 2 seeds, docs/results/draft_iters_s7); the
        ``pruner-paper`` ablation keeps 2.
    random_share : float, optional
        Share of each draft population sampled at random from the design spaces; the rest are
        mutations of the best programs known (last drafts, measured best). Paper and CPU default: 1.0.
        CUDA default: 0.25, because on tensor-core spaces ~90 % of random samples fail
        ``VerifyGPUCode`` (a valid random program costs ~0.5 s of replay on 2 cores, a valid mutation ~0.1 s).
    verify_iters : int
        Genetic iterations scored by the learned model (paper: 1).
    mutate_prob : float
        Probability that a selected parent is mutated (paper: 0.85).
    init_measured_ratio : float
        Share of ``population_size`` taken from the best measured records into verification (paper: 0.1).
    eps_greedy : float
        Share of each batch picked at random from the drafts (paper: 0.1).
    analyzer : SymbolicAnalyzer, optional
        The draft model; by default the one for the context's target (host CPU for ``llvm``).
    xgb_warmup_samples : int or None
        If the cost model is MetaSchedule's ``XGBModel``, cap its random-prediction warm-up (100
        samples by default) to this many samples so it ranks from its first trained batch. This changes
        the model object passed to tuning (e.g. the one ``ms.tune_tir(cost_model="xgb")`` makes, which
        the caller never holds). ``None`` (default) leaves the model untouched; ``pruner_ms.tune_tir``,
        ``tune_model`` and the benchmarks give PrunerSearch an XGBoost model of their own without the
        warm-up (:func:`~pruner_ms.integration.tune.verify_cost_model`).
    analyzer_prior_samples : int
        How many measured samples the analyzer's opinion is worth while the learned model is young:
        verification ranks by ``w * model + (1 - w) * analyzer`` (both as normalized throughput) with
        ``w = n / (n + analyzer_prior_samples)`` after ``n`` measured programs. 0 ranks by the model
        alone, as the paper does with its pretrained-quality PaCM.
    draft_bar : bool
        Only candidates the analyzer scores at least as high as the last draft may be verified into a
        batch (mutations of measured programs included). False lets the learned model pick any mutation.
    local_parents : int
        Local search around the measured best (not in the paper): once the model is trained, the
        ``local_parents`` best measured programs are each mutated ``local_mutants`` times, for
        ``local_steps`` hill-climbing steps (the model's best children become the next parents),
        without the draft bar. Up to ``local_share`` of each verified batch may come from this
        neighbourhood, the rest from the drafts. 0 turns it off (the paper's verify stage).
    local_mutants : int
        Mutations per parent and step of the local search.
    local_steps : int
        Hill-climbing steps of the local search.
    local_share : float
        Largest share of a verified batch taken from the local search.
    adaptive_trust : bool
        Scale the analyzer's influence by its measured rank agreement on this task (see above).
        False trusts it fully, as the paper does.
    cold_ranked : bool
        The first batch (before anything is measured) is drafted by ranking the sampled population
        with the analyzer, without the genetic search; the genetic search runs in the next round on
        the same population, once one measured batch says how far the analyzer can be trusted, and
        redrafts follow every ``draft_every`` rounds from there. Default True (the paper: False, as in
        ``pruner-paper``): the first draft then costs the population's sampling and one analyzer pass
        (1,536 evaluations instead of ~3,800), and since PrunerSearch's first batch already beats
        MetaSchedule's final program in most CPU suite runs, when that batch arrives sets the speed-up
        (``docs/results/ablation_s6``: the first batch as early as the default's, as good or better).
        A genetic search on an untested analyzer also optimises its errors (before the guard fix its
        top-32 drafts lost to 32 random programs on 5 of 13 workloads, the ranked population on 1:
        ``docs/results/analyzer_report``). False drafts the first batch with the genetic search.
    cold_random_share : float
        With ``adaptive_trust``, the share of the first batch (before anything is measured) picked at
        random from the sampled population instead of from the drafts (at least ``eps_greedy``). It
        hedges against an analyzer that is wrong on this task (on the GEMV of the CPU suite the
        analyzer's top 32 were 1.55x the best of 32 random programs) and gives the trust a fair first
        sample: drafts against random programs measured in the same batch. Default 0.5: with the
        analyzer of commit abd43db ranked backwards, a 64-trial GEMM 128^3 ended 2x slower than
        MetaSchedule's default with drafts only in the first batch, within 10 % with half of it random
        (tests/test_trust.py, 2 seeds). Where the analyzer is right it costs nothing measurable: 0
        against 0.5 on 4 CPU suite workloads x 2 seeds, median speed-up 3.14x against 3.25x, first
        batches within 2 % (docs/results/cold_share_s29). 0 takes ``eps_greedy``.
    resume : bool
        Programs of this workload already in the database (an earlier run in the same work_dir)
        count against ``max_trials``, so a re-run only measures what is missing. False measures a
        full ``max_trials`` more (the database still seeds the search and is never re-measured).
        Under MetaSchedule's own ``tune_tir``/``tune_relax``/``tune_tasks`` the task scheduler's
        ``max_trials_global`` counts only the trials of the current call, while ``max_trials`` here is
        the task's ``max_trials_per_task``: a re-run measures what each task is missing of its
        per-task budget and ends when every task has it, which can be before ``max_trials_global``
        (``pruner_ms.tune_model`` counts the records against the global budget too).
    seed_database : Database, optional
        Programs to measure first: this workload's records there (best first by their ``run_secs``)
        head the first batch, before any draft; nothing in it counts as measured or against the
        budget. ``tune_model`` passes the drafts a zero-measurement compile saved in the work_dir
        (:func:`~pruner_ms.integration.resume.open_drafts`), so a measured run continues from them.
    num_threads : int, optional
        Threads replaying candidates (TVM releases the GIL); defaults to the context's ``num_threads``.
    overlap_draft : bool, optional
        When a batch is handed out and the next round redrafts, run that draft in a background thread
        while MetaSchedule builds and measures the batch, so drafting leaves the round's critical path.
        The draft then sees the trust and the measured best as they were before this batch's results
        (one batch older than a draft made at the start of its round), and draws from its own random
        generator (a seed still reproduces a run). It never hands out a program measured meanwhile:
        picks are checked against everything handed out. Default (None): on for targets measured off
        the host CPU (``cuda`` and other devices), off for ``llvm``, where the draft would compete for
        the cores with the program being timed and perturb its latency; pass True for an ``llvm`` target
        measured over RPC on another machine.
    native_sampling : bool
        Draw the random samples of a draft with TVM's own C++ sampler (EvolutionarySearch's
        ``SampleInitPopulation``, :class:`~pruner_ms.strategy.native_sampler.NativeSampler`) on the replay
        threads, while the analyzer scores the chunk sampled before: one FFI call per chunk holds no GIL,
        so analysis and replay overlap on two cores, which Python replays do not allow. Same distribution
        of programs (a design space at random, its decisions sampled anew, the postprocs); a seed still
        reproduces a run. False replays samples in Python; if TVM's sampler fails, the search warns and
        falls back to that.
    """

    def __init__(
        self,
        *,
        population_size: int | None = None,
        population_per_trial: int | None = 32,
        draft_size: int | None = None,
        draft_every: int = 4,
        draft_iters: int | None = None,
        random_share: float | None = None,
        verify_iters: int = 1,
        mutate_prob: float = 0.85,
        init_measured_ratio: float = 0.1,
        eps_greedy: float = 0.1,
        analyzer: SymbolicAnalyzer | None = None,
        xgb_warmup_samples: int | None = None,
        analyzer_prior_samples: int = 64,
        draft_bar: bool = True,
        local_parents: int = 8,
        local_mutants: int = 16,
        local_steps: int = 2,
        local_share: float = 0.5,
        adaptive_trust: bool = True,
        cold_ranked: bool = True,
        cold_random_share: float = 0.5,
        resume: bool = True,
        seed_database=None,
        num_threads: int | None = None,
        overlap_draft: bool | None = None,
        native_sampling: bool = True,
    ) -> None:
        self._params = {k: v for k, v in locals().items() if k != "self"}  # for clone()
        for name, value in (("population_size", population_size), ("draft_size", draft_size),
                            ("draft_every", draft_every), ("population_per_trial", population_per_trial)):
            if value is not None and value < 1:
                raise ValueError(f"PrunerSearch: {name} must be >= 1, got {value}")
        if not all(0.0 <= x <= 1.0 for x in (eps_greedy, mutate_prob, local_share, cold_random_share)):
            raise ValueError("PrunerSearch: eps_greedy, mutate_prob, local_share and cold_random_share must lie "
                             "in [0, 1]")
        for name, value in (("local_parents", local_parents), ("local_mutants", local_mutants),
                            ("local_steps", local_steps)):
            if value < 0:
                raise ValueError(f"PrunerSearch: {name} must be >= 0, got {value}")
        if random_share is not None and not 0.0 < random_share <= 1.0:
            raise ValueError(f"PrunerSearch: random_share must lie in (0, 1], got {random_share}")
        for name, value in self._params.items():  # one attribute per keyword, as passed
            setattr(self, name, value)
        self.context = None
        self.last_round_profile: dict | None = None

    # -- MetaSchedule interface ------------------------------------------------------------------
    def _initialize_with_tune_context(self, context) -> None:
        # a Ctrl-C in a C++ call made for one candidate must stop the search, not count as that
        # candidate's failure (also when MetaSchedule's own tune_tir drives this strategy)
        keep_keyboard_interrupt()
        self.context = context
        if self.analyzer is None:
            self.analyzer = analyzer_for_target(context.target)
        preset = CUDA_DEFAULTS if str(context.target.kind.name) == "cuda" else CPU_DEFAULTS
        for name, value in preset.items():  # keywords left at None take the target's defaults
            if getattr(self, name) is None:
                setattr(self, name, value)
        seed = int(context.rand_state) if int(context.rand_state) >= 0 else None
        self._rng = np.random.default_rng(seed)
        if self.num_threads is None:
            self.num_threads = max(1, int(context.num_threads))
        if self.overlap_draft is None:
            self.overlap_draft = str(context.target.kind.name) != "llvm"

    def pre_tuning(self, max_trials, num_trials_per_iter, design_spaces, database=None, cost_model=None) -> None:
        if max_trials <= 0:
            raise ValueError(f"PrunerSearch: max_trials must be positive, got {max_trials}")
        if num_trials_per_iter <= 0:
            raise ValueError(f"PrunerSearch: num_trials_per_iter must be positive, got {num_trials_per_iter}")
        if not design_spaces:
            raise ValueError("PrunerSearch: no design space was generated for this task (the space generator "
                             "returned none); check the context's space_generator")
        self.max_trials = int(max_trials)
        self.num_trials_per_iter = int(num_trials_per_iter)
        self.draft_population = self.population_size if self.population_per_trial is None else min(
            self.population_size, max(SMALLEST_DRAFT_POPULATION, self.population_per_trial * self.max_trials))
        self.design_spaces = list(design_spaces)
        self.database = database
        self.cost_model = cost_model
        if cost_model is not None and self.xgb_warmup_samples is not None:
            model = python_object_of(cost_model)
            if model is cost_model:  # only the FFI handle: no calling frame holds the Python object
                logger.warning("PrunerSearch(xgb_warmup_samples=%d): the cost model's Python object is not held by "
                               "any calling frame, so its warm-up is left as it is; pass the model you made instead "
                               "(ms.cost_model.XGBModel(num_warmup_samples=%d)), or tune with pruner_ms.tune_tir",
                               self.xgb_warmup_samples, self.xgb_warmup_samples)
            else:
                shorten_xgb_warmup(model, self.xgb_warmup_samples)
        self.profile = RoundProfile()
        self.replayer = TraceReplayer(self.context, self._rng, num_threads=self.num_threads, profile=self.profile,
                                     native_sampling=self.native_sampling)
        self.trust = AnalyzerTrust()
        self.random_pool: list[Candidate] = []  # the last draft's random samples (exploration outside drafts)
        self._last_picks: list[Candidate] = []
        self._last_sources: list[str] = []
        self._last_pick_keys: set[int] = set()  # the last batch's keys and program hashes (see _pick's take)
        # a space without decisions (e.g. a ScheduleFn that leaves the program as it is) is one program:
        # it is measured once and the search stops, as MetaSchedule's own strategies do
        self.single_point = all(len(s.trace.decisions) == 0 for s in design_spaces)
        self.round = 0
        self._started_ranked = False  # round 0 drafted without the genetic search (``cold_ranked``)
        self._drafted_round = -1  # the round whose scheduled draft was made (by _pick or best_drafts)
        self.drafts: list[tuple[float, Candidate]] = []
        self.measured: set[int] = set()
        self.batches_measured = 0
        self.valid_measured = 0
        self._analyzer_cache: dict[int, float] = {}
        self._model_scores: dict[int, float] = {}
        # the next round's draft, running in the background while this batch is measured (``overlap_draft``)
        self._draft_executor = ThreadPoolExecutor(1, thread_name_prefix="pruner-draft") if self.overlap_draft else None
        self._pending_draft: tuple[Future, RoundProfile] | None = None
        self._background_profile: tuple[dict, RoundProfile] | None = None  # its counts when taken, and itself
        in_database = self._load_all_measured()
        self.seeds = self._load_seeds()
        self.trials_sent = in_database if self.resume else 0
        if self.resume and database is not None:
            if self.trials_sent:
                logger.warning("PrunerSearch: %d of %d trials already measured in the database; %d to go",
                               self.trials_sent, self.max_trials, max(0, self.max_trials - self.trials_sent))

    @property
    def resumes_from_database(self) -> bool:
        """True if records already in the database count against this strategy's ``max_trials``."""
        return bool(self.resume)

    def post_tuning(self) -> None:
        if self._pending_draft is not None:  # tuning stopped early (e.g. by the task scheduler): finish, drop it
            self._pending_draft[0].result()
            self._pending_draft = None
        if self._draft_executor is not None:
            self._draft_executor.shutdown(wait=True)
            self._draft_executor = None
        logger.info("PrunerSearch: %d measured rounds, %d candidate replays or mutations failed",
                    self.round, self.replayer.failures)
        self.replayer.close()
        self.drafts = []
        self._analyzer_cache = {}

    def generate_measure_candidates(self):
        if self.trials_sent >= self.max_trials or (self.single_point and self.trials_sent > 0):
            return None
        n = min(self.num_trials_per_iter, self.max_trials - self.trials_sent)
        self.profile.start()
        self._model_scores = {}  # the learned model's scores of this round (it is updated between rounds)
        self._background_profile = None
        picks = self._pick(n)
        self.last_round_profile = {**self.profile.as_dict(), "round": self.round, "trust": self.trust_level,
                                   "draft_auc": self.trust.auc, "rho": self.trust.rho,
                                   **{f"picks_{src}": self._last_sources.count(src)
                                      for src in ("draft", "model", "local", "random")},
                                   # a draft made in the background during the last measurement: its
                                   # own time and counts, not part of this round's total_s
                                   **{f"background_{k}": v for k, v in
                                      (self._background_profile[0] if self._background_profile else {}).items()}}
        self._warn_failures(self.last_round_profile, self.profile)
        if self._background_profile is not None:
            self._warn_failures(*self._background_profile)
        prof = self.last_round_profile
        logger.info("PrunerSearch round %d: %d picks (draft %d, model %d, local %d, random %d), trust %.2f (drafts "
                    "beat random programs with p=%s; analyzer rank correlation %s over %d measured), search %.1f s "
                    "(sample %.1f, mutate %.1f, analyze %.1f, predict %.1f)", self.round, len(picks),
                    prof["picks_draft"], prof["picks_model"], prof["picks_local"], prof["picks_random"], prof["trust"],
                    _fmt(prof["draft_auc"]), _fmt(prof["rho"]), self.trust.pairs,
                    prof["total_s"], prof.get("sample_s", 0.0), prof.get("mutate_s", 0.0),
                    prof.get("analyze_s", 0.0), prof.get("predict_s", 0.0))
        self.round += 1
        self._last_picks = list(picks)
        if not picks:
            logger.warning("PrunerSearch: no new valid candidate could be generated; stopping early")
            return None
        self.trials_sent += len(picks)
        self.measured.update(self._last_pick_keys)  # each pick's key and its program's hash (see _pick)
        if self.trials_sent < self.max_trials:
            self._start_background_draft()
        return [MeasureCandidate(c.sch, ArgInfo.from_entry_func(c.sch.mod, remove_preproc=True)) for c in picks]

    def notify_runner_results(self, measure_candidates, results) -> None:
        self.batches_measured += 1
        self.valid_measured += sum(1 for r in results if r.error_msg is None and r.run_secs)
        if len(self._last_picks) == len(results):
            seconds = [result_seconds(r) for r in results]
            self.trust.add(self._analyzer_scores(self._last_picks), seconds, self._last_sources)
            self._record_batch_outcome(seconds)
            # the measured best from the results themselves: MetaSchedule's task scheduler calls this
            # before its measure callbacks commit the batch to the database, so the database does not
            # hold these programs yet (read here, the next round's local search and verify population
            # missed the batch just measured, and round 1 had no measured parents at all)
            self._add_measured(zip(seconds, self._last_picks))
        else:
            logger.warning("PrunerSearch: %d results reported for a batch of %d programs handed out; they are left "
                           "out of the analyzer's trust and of the measured best", len(results), len(self._last_picks))
        self._last_picks = []

    def clone(self):
        return PrunerSearch(**self._params)

    def _record_batch_outcome(self, seconds: list[float]) -> None:
        """Add to the round's profile what its batch measured, per source of the picks: the best
        latency (``measured_best_ms_<source>``) and which source, if any, beat the best measured
        before this batch (``improved_by``), so a run says where its progress came from."""
        if self.last_round_profile is None:
            return
        best: dict[str, float] = {}
        for sec, src in zip(seconds, self._last_sources):
            if math.isfinite(sec):
                best[src] = min(sec, best.get(src, math.inf))
        before = self._measured_best[0][0] if self._measured_best else math.inf
        winner = min(best, key=best.get) if best else None
        self.last_round_profile.update({f"measured_best_ms_{src}": 1e3 * sec for src, sec in best.items()})
        self.last_round_profile["improved_by"] = winner if winner is not None and best[winner] < before else None

    # -- Draft-then-Verify ----------------------------------------------------------------------
    def _load_all_measured(self) -> int:
        """Mark every program of this workload in the database as measured, failed ones included
        (a record whose trace no longer applies is skipped), and keep the best valid ones as
        ``measured_top`` (see :meth:`_add_measured`); return how many records there are."""
        self.measured_top, self._measured_best = [], []
        if self.database is None:
            return 0
        from ..integration.measured_latency import record_seconds
        from ..integration.resume import workload_records

        records = workload_records(self.database, self.context.mod)
        valid = []
        for rec in records:
            cand = self.replayer.replay(rec.trace)
            if cand is not None:
                self.measured.add(cand.key)
                seconds = record_seconds(rec)
                if math.isfinite(seconds):
                    valid.append((seconds, cand))
        self._add_measured(valid)
        return len(records)

    def _add_measured(self, measured) -> None:
        """Merge ``(seconds, candidate)`` pairs into ``measured_top``, the best valid programs measured
        (``init_measured_ratio * population_size`` of them, fastest first)."""
        best = self._measured_best + [(sec, c) for sec, c in measured if math.isfinite(sec)]
        best.sort(key=lambda sc: sc[0])
        self._measured_best = best[: self._measured_top_size()]
        self.measured_top = [c for _, c in self._measured_best]

    def _load_seeds(self) -> list[Candidate]:
        """This workload's programs in ``seed_database``, best first, replayed; measured ones dropped."""
        if self.seed_database is None:
            return []
        from ..integration.measured_latency import record_seconds
        from ..integration.resume import workload_records

        records = sorted(workload_records(self.seed_database, self.context.mod), key=record_seconds)
        seeds = [self.replayer.replay(rec.trace) for rec in records]
        return [c for c in seeds if c is not None and c.key not in self.measured]

    def _measured_top_size(self) -> int:
        return max(1, int(self.init_measured_ratio * self.population_size))

    @property
    def trust_level(self) -> float:
        """How far the analyzer is trusted now (1 without ``adaptive_trust``)."""
        return self.trust.level if self.adaptive_trust else 1.0

    @staticmethod
    def _warn_failures(counts: dict, profile: RoundProfile) -> None:
        """Warn when more than ``FAILURE_WARN_SHARE`` of a round's analyzer evaluations, or of its
        replays and mutations, raised an error (``counts``: ``profile``'s), with the first error."""
        for failed_key, total_key, what in (
                ("analyzer_failures", "analyzer_evaluations", "the analyzer failed on %d of %d programs this round "
                 "(they rank last, so drafting degrades towards random search)"),
                ("replay_errors", "replays", "replaying or mutating %d of %d traces raised an error this round "
                 "(those candidates are dropped, so the search sees less of the space)")):
            failed, total = counts.get(failed_key, 0), counts.get(total_key, 0)
            if total and failed > FAILURE_WARN_SHARE * total:
                logger.warning("PrunerSearch: " + what + "; first error: %s", failed, total,
                               profile.first_error(failed_key))

    def _analyzer_score(self, cand: Candidate, profile: RoundProfile) -> float:
        """The analyzer's score of one program (1 / estimated seconds; 0 if it cannot be analyzed),
        cached by structural key; evaluations and failures are counted in ``profile``. Thread-safe:
        the replay workers and the background draft call it (see :meth:`_analyze_in_worker`)."""
        score = self._analyzer_cache.get(cand.key)
        if score is not None:
            return score
        profile.count("analyzer_evaluations")
        try:
            score = 1.0 / max(self.analyzer.estimate_seconds(cand.sch.mod), 1e-12)
        except Exception as err:  # noqa: BLE001  (an unanalyzable program ranks last; counted, warned)
            profile.fail("analyzer_failures", err)
            logger.debug("analyzer failed: %s", err)
            score = 0.0
        self._analyzer_cache[cand.key] = score
        return score

    def _analyze_in_worker(self, cand: Candidate, profile: RoundProfile) -> None:
        """Score a fresh replay in the worker thread that made it (its CPU time: ``analyze_cpu_s``)."""
        t = time.perf_counter()
        self._analyzer_score(cand, profile)
        profile.add("analyze_cpu_s", time.perf_counter() - t)

    def _analyzer_scores(self, cands, profile: RoundProfile | None = None) -> np.ndarray:
        profile = profile or self.profile
        with profile.timed("analyze_s"):
            return np.array([self._analyzer_score(c, profile) for c in cands], dtype=np.float64)

    def _verify_scores(self, cands) -> np.ndarray:
        """The learned model's scores, blended with the analyzer's while few programs are measured."""
        if not cands:
            return np.zeros(0)
        with self.profile.timed("predict_s"):
            # the model is fixed within a round: a program scored twice (a parent copied unmutated
            # into the next generation, a measured program in both the verify and local search) is
            # predicted once, saving its feature extraction (~7 ms for a conv2d with PerStoreFeature)
            todo = list({c.key: c for c in cands if c.key not in self._model_scores}.values())
            if todo:
                mcs = [MeasureCandidate(c.sch, ArgInfo.from_entry_func(c.sch.mod, remove_preproc=True)) for c in todo]
                predicted = np.asarray(self.cost_model.predict(self.context, mcs), dtype=np.float64)
                self._model_scores.update(zip((c.key for c in todo), predicted.tolist()))
                self.profile.count("predictions", len(todo))
            model = np.array([self._model_scores[c.key] for c in cands], dtype=np.float64)
        a = self._analyzer_weight()
        if a <= 0.0:
            return model
        best = max((score for score, _ in self.drafts), default=0.0)
        analyzer = self._analyzer_scores(cands) / best if best > 0 else 0.0
        return (1.0 - a) * model + a * analyzer

    def _analyzer_weight(self) -> float:
        """The analyzer's weight in the verify blend: large while the model is young, scaled by how
        far the analyzer is trusted."""
        n, prior = self.valid_measured, self.analyzer_prior_samples
        return (prior / (n + prior) if n + prior > 0 else 0.0) * self.trust_level

    def _scoring_in_workers(self, needed: bool = True, *, replayer: TraceReplayer | None = None,
                            profile: RoundProfile | None = None):
        """A block in which fresh replays of ``replayer`` are analyzed by the worker that made them
        (when the analyzer will score them anyway: it then overlaps TVM's replays instead of following them)."""
        if not needed:
            return contextlib.nullcontext()
        return (replayer or self.replayer).scoring(functools.partial(self._analyze_in_worker,
                                                                          profile=profile or self.profile))

    def _draft_plan(self, round_: int) -> dict | None:
        """The keywords of :meth:`_draft` for round ``round_``'s scheduled draft; None if it has none."""
        if self._started_ranked and round_ == 0:  # ``cold_ranked``: rank the sampled population only
            return {"genetic": False}
        if self._started_ranked and round_ == 1:  # the genetic search, on the first round's population
            return {"population": self.random_pool}
        if (round_ - int(self._started_ranked)) % self.draft_every == 0:
            return {}
        return None

    def best_drafts(self, k: int = 1) -> list[tuple[float, Schedule]]:
        """The ``k`` unmeasured programs the analyzer ranks first, with their estimated seconds, best
        first; nothing is built or measured. Call it after ``pre_tuning``: if this round has not drafted
        yet, it drafts now, and the round's :meth:`generate_measure_candidates` then picks from this
        same draft (its first pick is the first of these). The zero-measurement compile
        (:func:`pruner_ms.integration.relax.draft_model`) takes the first."""
        if self._drafted_round != self.round:
            if self.round == 0:
                self._started_ranked = self.cold_ranked and not self.measured_top
            self._draft(**(self._draft_plan(self.round) or {}))
        return [(1.0 / score if score > 0 else math.inf, c.sch) for score, c in self._fresh_drafts()[:k]]

    def _draft(self, *, genetic: bool = True, population: list[Candidate] | None = None) -> None:
        """Draft now: sample a population (or take ``population``) and keep the analyzer's best, after
        a genetic search when ``genetic`` and the analyzer is trusted enough."""
        self._drafted_round = self.round
        self.drafts, self.random_pool = self._draft_population(
            self.replayer, self.profile, genetic=genetic, population=population, exclude=self.measured,
            **self._draft_inputs())

    def _draft_inputs(self) -> dict:
        """What a draft grows from, as known now: the best programs (fresh drafts, measured best) and
        the analyzer's trust."""
        return {"known_best": [c for _, c in self._fresh_drafts()] + self.measured_top, "trust": self.trust_level}

    def _start_background_draft(self) -> None:
        """If the next round redrafts (and ``overlap_draft``), start its draft in the background from
        what is known now; :meth:`_take_background_draft` collects it."""
        plan = self._draft_plan(self.round) if self._draft_executor is not None else None
        if plan is None:
            return
        profile = RoundProfile()
        # its own generator (drawn from the search's), so the main thread's draws stay in a fixed order
        replayer = self.replayer.view(np.random.default_rng(self._rng.integers(2**63)), profile)
        future = self._draft_executor.submit(
            self._draft_population, replayer, profile, genetic=plan.get("genetic", True),
            population=plan.get("population"), exclude=frozenset(self.measured), **self._draft_inputs())
        self._pending_draft = (future, profile)

    def _take_background_draft(self) -> None:
        """Install the draft started in the background when the last batch was handed out (waiting for
        it if it is still running: ``draft_wait_s``); its own profile goes to ``background_*``."""
        future, profile = self._pending_draft
        self._pending_draft = None
        with self.profile.timed("draft_wait_s"):
            self.drafts, self.random_pool = future.result()
        self._background_profile = (profile.as_dict(), profile)

    def _draft_population(self, pop: TraceReplayer, profile: RoundProfile, *, genetic: bool,
                          population: list[Candidate] | None, known_best: list[Candidate], exclude,
                          trust: float) -> tuple[list[tuple[float, Candidate]], list[Candidate]]:
        """One draft with ``pop`` (its generator, timed into ``profile``): the drafts, best first, and
        the random samples they came from. It reads no state that the main thread changes meanwhile
        (``known_best``, ``exclude`` and ``trust`` are taken when it starts), so it may run in the
        background."""
        with self._scoring_in_workers(replayer=pop, profile=profile):
            profile.count("drafted")
            if population is None:
                init = pop.sample(self.design_spaces, max(1, round(self.random_share * self.draft_population)))
                random_pool = list(init)
            else:
                init = [c for c in population if c.key not in exclude]
                random_pool = list(population)
            if len(init) < self.draft_population:  # grow by mutating the best programs known
                seeds = init + known_best
                if seeds:
                    scores = np.maximum(self._analyzer_scores(seeds, profile), 0.0)
                    p = scores / scores.sum() if scores.sum() > 0 else None
                    parents = [seeds[i] for i in pop.rng.choice(len(seeds), size=self.draft_population - len(init), p=p)]
                    init += [c for c in pop.mutate_many(parents) if c is not None]
            iterations = self.draft_iters if genetic and trust >= GA_MIN_TRUST else 0
            profile.count("draft_ga_iterations", iterations)
            drafts = evolve(
                pop, init, functools.partial(self._analyzer_scores, profile=profile),
                iterations=iterations, keep=self.draft_size, mutate_prob=self.mutate_prob,
                exclude=exclude, offspring=self.draft_population,
            )
        return drafts, random_pool

    def _pick(self, n: int) -> list[Candidate]:
        if self.round == 0 and self._drafted_round != 0:  # nothing measured yet, here or in the database
            self._started_ranked = self.cold_ranked and not self.measured_top
        plan = self._draft_plan(self.round)
        if self._pending_draft is not None:  # this round's draft ran while the last batch was measured
            self._take_background_draft()
        elif (plan is not None and self._drafted_round != self.round) or not self._fresh_drafts():
            self._draft(**(plan or {}))
        drafts = self._fresh_drafts()
        draft_keys = {c.key for _, c in drafts}
        outside = [c for c in self.random_pool if c.key not in self.measured and c.key not in draft_keys]
        trust = self.trust_level
        cold = self.cost_model is None or self.batches_measured == 0
        if cold:  # the seeds (e.g. a zero-measurement compile's drafts) first, in the first round
            ranked = (self.seeds if self.round == 0 else []) + [c for _, c in drafts]
        else:
            # the learned model ranks drafts (as many as the analyzer's trust earns, the rest of the
            # population being random samples) and their mutations; a mutation must clear the draft
            # bar, which falls with trust
            n_drafts = math.ceil(trust * len(drafts))
            fill = [outside[i] for i in self._rng.permutation(len(outside))[: len(drafts) - n_drafts]]
            init = [c for _, c in drafts[:n_drafts]] + fill + self.measured_top
            bar = trust * min((score for score, _ in drafts), default=0.0)
            use_bar = self.draft_bar and bar > 0
            with self._scoring_in_workers(use_bar or self._analyzer_weight() > 0):
                verified = evolve(
                    self.replayer, init, self._verify_scores,
                    iterations=self.verify_iters, keep=2 * n, mutate_prob=self.mutate_prob,
                    exclude=self.measured, offspring=len(init),
                    eligible=(lambda cands: self._analyzer_scores(cands) >= bar) if use_bar else None,
                )
            ranked = [c for _, c in verified]
        n_random = int(round(self.eps_greedy * n))
        if cold and self.adaptive_trust:  # hedge the untested analyzer; and the trust needs a fair sample
            n_random = max(n_random, int(round(self.cold_random_share * n)))
        picks: list[Candidate] = []
        sources: list[str] = []  # where each pick came from: local, draft, model (verified outside drafts), random

        def take(c: Candidate, source: str) -> None:
            # the program as it is now, hashed again: two candidates with different keys have been seen
            # to hold the same program (tests/test_strategy_contract.py, a resumed ScheduleFn space),
            # so the contract (never hand out a program twice, or one the database holds) is checked on
            # the program itself
            program = int(tvm_ffi.structural_hash(c.sch.mod))
            if program in keys or program in self.measured:
                return
            picks.append(c)
            sources.append(source)
            keys.update((c.key, program))

        keys: set[int] = set()
        if not cold:
            for c in self._local_search(int(self.local_share * (n - n_random))):
                take(c, "local")
        for c in ranked:
            if len(picks) >= n - n_random:
                break
            if c.key not in self.measured and c.key not in keys:
                take(c, "draft" if c.key in draft_keys or cold else "model")
        # exploration: random samples from outside the drafts (adaptive), or from the whole
        # population of drafts and samples (the paper); drafts top up a batch that is still short
        pool = outside if self.adaptive_trust else outside + [c for _, c in drafts]
        for extra in (pool, [c for _, c in drafts]):
            extra = [c for c in extra if c.key not in keys]
            for i in self._rng.permutation(len(extra)):
                if len(picks) >= n:
                    break
                take(extra[i], "draft" if extra[i].key in draft_keys else "random")
        self._last_sources = sources
        self._last_pick_keys = keys
        return picks

    def _local_search(self, n: int) -> list[Candidate]:
        """Up to ``n`` unmeasured programs near the measured best, by hill-climbing on the model's
        scores. Drafting explores; this exploits what measurement has already confirmed, as the
        trained XGBoost + GA baseline does, which the paper's one-iteration verify stage lacks."""
        parents = self.measured_top[: self.local_parents]
        if n <= 0 or not parents or self.local_mutants <= 0:
            return []
        seen: dict[int, tuple[float, Candidate]] = {}
        for _ in range(self.local_steps):
            with self._scoring_in_workers(self._analyzer_weight() > 0):
                kids = self.replayer.mutate_many([p for p in parents for _ in range(self.local_mutants)])
            kids = [c for c in kids if c is not None and c.key not in self.measured and c.key not in seen]
            kids = list({c.key: c for c in kids}.values())
            if not kids:
                break
            scores = self._verify_scores(kids)
            for s, c in zip(scores, kids):
                seen[c.key] = (float(s), c)
            order = np.argsort(-scores)
            parents = [kids[i] for i in order[: self.local_parents]]
        ranked = sorted(seen.values(), key=lambda sc: -sc[0])
        return [c for _, c in ranked[:n]]

    def _fresh_drafts(self) -> list[tuple[float, Candidate]]:
        return [(s, c) for s, c in self.drafts if c.key not in self.measured]


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"

"""A search strategy that hands every call to another one: the base of wrappers that add a concern
(timing each round, stopping a run early) without touching the search."""
from __future__ import annotations

from tvm.s_tir.meta_schedule.search_strategy import PySearchStrategy


class ForwardingStrategy(PySearchStrategy):
    """Forward MetaSchedule's search-strategy calls to ``inner``.

    Subclasses (decorated with ``@derived_object``) override the calls they add to and
    :meth:`clone`, which must wrap a clone of ``inner``: :meth:`inner_clone` gives one. A Python
    strategy is cloned on its Python object, since the FFI ``clone`` hands back a bare handle that
    hides the clone's attributes (``last_round_profile``) from the wrapper.
    """

    def __init__(self, inner) -> None:
        self.inner = inner

    def _initialize_with_tune_context(self, context) -> None:
        self.inner._initialize_with_tune_context(context)

    def pre_tuning(self, max_trials, num_trials_per_iter, design_spaces, database=None, cost_model=None) -> None:
        self.inner.pre_tuning(max_trials, num_trials_per_iter, design_spaces, database, cost_model)

    def post_tuning(self) -> None:
        self.inner.post_tuning()

    def generate_measure_candidates(self):
        return self.inner.generate_measure_candidates()

    def notify_runner_results(self, measure_candidates, results) -> None:
        self.inner.notify_runner_results(measure_candidates, results)

    def inner_clone(self):
        """A clone of ``inner`` (of its Python object when it has one)."""
        inst = getattr(self.inner, "_inst", None)
        return inst.clone() if inst is not None else self.inner.clone()

    @property
    def last_round_profile(self):
        return getattr(self.inner, "last_round_profile", None)

    @property
    def resumes_from_database(self) -> bool:
        """Whether ``inner`` counts the database's records against its budget (see PrunerSearch)."""
        return bool(getattr(self.inner, "resumes_from_database", False))

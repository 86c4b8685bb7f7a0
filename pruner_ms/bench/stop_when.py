"""Stop a benchmark's search when its time is up.

:class:`StopWhen` wraps any search strategy and ends the tuning run (MetaSchedule stops when a
strategy hands back no candidates) once a condition holds, e.g. a wall-clock budget: the batch in
flight is measured and recorded as usual, so the run's database and curve stay consistent.
"""
from __future__ import annotations

from collections.abc import Callable

from tvm.ir.utils import derived_object

from ..strategy.forwarding import ForwardingStrategy


@derived_object
class StopWhen(ForwardingStrategy):
    """Wrap a search strategy; hand back no candidates (which ends the run) once ``stop()`` is true.

    Parameters
    ----------
    inner : SearchStrategy
        The strategy that searches.
    stop : callable
        Called before each round; ``True`` ends the run.

    Attributes
    ----------
    stopped : bool
        Whether ``stop`` ended the run (rather than the trial budget). MetaSchedule tunes a clone of
        the strategy it is given; clones share this flag with the original.
    """

    def __init__(self, inner, stop: Callable[[], bool], _state: dict | None = None) -> None:
        super().__init__(inner)
        self.stop = stop
        self._state = _state if _state is not None else {"stopped": False}

    @property
    def stopped(self) -> bool:
        return self._state["stopped"]

    def generate_measure_candidates(self):
        if self.stop():
            self._state["stopped"] = True
            return None
        return self.inner.generate_measure_candidates()

    def clone(self):
        return StopWhen(self.inner_clone(), self.stop, self._state)

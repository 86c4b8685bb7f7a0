"""Ctrl-C inside a Python callback that TVM's C++ calls comes back as a bare ``RuntimeError``.

tvm_ffi carries an exception across its C++ boundary by class name and turns it back into the class
registered under that name, ``RuntimeError`` for a name it does not know. ``KeyboardInterrupt`` is not
registered (tvm_ffi 0.1.x registers ``RuntimeError``, ``ValueError``, ``TypeError`` and a few more).
During tuning, Python runs inside C++ calls all the time: MetaSchedule's task scheduler calls the
search strategy, the cost model, the builder and the runner, and its C++ code logs through a Python
logger. A Ctrl-C that lands in one of them reaches the caller as ``RuntimeError('')``:

* ``pruner-ms`` prints a traceback instead of its "interrupted; a re-run resumes" message, and a
  user's ``except KeyboardInterrupt`` around ``tune_tir`` does not see it;
* where it lands in a C++ call that PrunerSearch makes for one candidate (a replay, a mutation, a
  native sample, a postproc that logs), the search takes it for that candidate's failure, which is
  data, not a reason to stop (``except Exception``), so the run goes on to its whole budget: a first
  SIGINT was lost so twice in the twenty-seventh session (``tests/test_resume.py``).

:func:`keep_keyboard_interrupt` registers ``KeyboardInterrupt`` with tvm_ffi's error registry, so it
keeps its type across the boundary and no ``except Exception`` catches it. The registry is the
process's: the registration changes nothing but the type an interrupt comes back as, and it is made
once, when tuning starts (:func:`pruner_ms.tune_tir`, :func:`pruner_ms.integration.relax.tune_model`,
:class:`pruner_ms.PrunerSearch` in any ``TuneContext``).
"""
from __future__ import annotations


def keep_keyboard_interrupt() -> None:
    """Make a ``KeyboardInterrupt`` raised in a callback that C++ calls come back as itself (idempotent)."""
    import tvm_ffi

    if tvm_ffi.core.ERROR_NAME_TO_TYPE.get("KeyboardInterrupt") is not KeyboardInterrupt:
        tvm_ffi.error.register_error("KeyboardInterrupt", KeyboardInterrupt)

"""TVMScript's ``T.prim_func`` decorator calls ``inspect.stack()``, which looks up the module of every
frame on the stack with ``inspect.getmodule``. For a frame without a source file (the import
machinery's ``<frozen importlib._bootstrap>`` frames, TVMScript's own ``<ast>`` evaluation frames),
``getmodule`` finds no cached answer and scans every module in ``sys.modules`` to conclude that there
is none. Tensor intrinsics are ``prim_func``\\ s defined while their module is imported, under about
ten such frames each: importing ``tvm.s_tir.tensor_intrin`` (which ``TuneContext`` does, and which
every CUDA run needs) made ~30,000 such scans over ~2,000 modules (with torch imported), 33-50 s on
2 cores (cProfile: 101 of 113 s in ``getmodule``). :func:`quick_stack_inspection` answers those
file names at once, with the scan's own conclusion (no module): the same import takes 4-9 s
(``docs/results/startup_s33``)."""
from __future__ import annotations

import contextlib
import inspect

#: the file names of frames that have no source file and that a TVMScript definition at import time
#: has on its stack (CPython 3.9-3.13 name the frozen import machinery this way; ``<ast>`` is TVMScript's)
SOURCELESS_FRAME_FILES = ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>", "<ast>")
#: what those names map to in ``inspect``'s file-to-module cache: a name that is no module
_NO_MODULE = "<no module: pruner_ms.quick_stack_inspection>"


@contextlib.contextmanager
def quick_stack_inspection():
    """A block in which ``inspect.getmodule`` answers the frames in :data:`SOURCELESS_FRAME_FILES` from
    its cache instead of scanning ``sys.modules``; the answer is the one the scan gives (``None``).

    The entries are added to ``inspect.modulesbyfile`` (the cache ``getmodule`` itself fills) for the
    block only, and only those not already there; they are removed when it ends."""
    added = [name for name in SOURCELESS_FRAME_FILES if name not in inspect.modulesbyfile]
    for name in added:
        inspect.modulesbyfile[name] = _NO_MODULE
    try:
        yield
    finally:
        for name in added:
            if inspect.modulesbyfile.get(name) == _NO_MODULE:
                del inspect.modulesbyfile[name]

"""Worker processes that import TVM without torch.

TVM's ``PopenPoolExecutor`` starts each worker as ``python -m tvm.exec.popen_worker``, whose
``import tvm`` imports torch (:mod:`.torch_import`): 4.4-5.3 s per worker on 2 cores instead of
1.9-2.6 s, paid by each builder and runner worker, and most of the start-up of a short run
(``pruner-ms tune --trials 8`` starts three). None of them needs torch: they build with TVM and run
compiled modules. :class:`TorchFreePopenPoolExecutor` is TVM's pool whose workers run
:mod:`.torch_import` as their main module, which hides torch while TVM loads and then hands over to
TVM's own worker loop (``tvm.exec.popen_worker.main``); everything else (the pipe protocol, timeouts,
restarts) is TVM's. On Windows the workers are TVM's own.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading

from tvm.support.popen_pool import PopenPoolExecutor, PopenWorker

from ...child_environment import child_environment
from . import torch_import

#: the module a torch-free worker runs (as ``__main__``): it imports no TVM before hiding torch
WORKER_MODULE = torch_import.__name__


class _TorchFreePopenWorker(PopenWorker):
    """TVM's ``PopenWorker`` started as ``python -m`` :data:`WORKER_MODULE` (the same two pipe
    descriptors as arguments, the same pipes)."""

    def _start(self) -> None:
        if self._proc is not None or sys.platform == "win32":
            super()._start()
            return
        main_read, worker_write = os.pipe()
        worker_read, main_write = os.pipe()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", WORKER_MODULE, str(worker_read), str(worker_write)],
            pass_fds=(worker_read, worker_write), stdout=self._stdout, stderr=self._stderr,
            env=child_environment())
        os.close(worker_read)
        os.close(worker_write)
        self._reader = os.fdopen(main_read, "rb")
        self._writer = os.fdopen(main_write, "wb")


class TorchFreePopenPoolExecutor(PopenPoolExecutor):
    """TVM's ``PopenPoolExecutor`` (same arguments) whose workers import TVM without torch."""

    def _worker_run(self, fn, args, kwargs):
        # the worker of this thread, made here as TVM's pool would make it but of the torch-free kind;
        # the pool's own code then finds it and runs the task
        with self._lock:
            tid = threading.get_ident()
            if tid not in self._worker_map:
                self._worker_map[tid] = _TorchFreePopenWorker(
                    self._initializer, self._initargs, self._maximum_process_uses, self._stdout, self._stderr)
        return super()._worker_run(fn, args, kwargs)

    @classmethod
    def like(cls, pool: PopenPoolExecutor) -> "TorchFreePopenPoolExecutor":
        """A torch-free pool with the options of ``pool`` (which must not have started a worker yet;
        it is shut down)."""
        if pool._worker_map:
            raise ValueError("TorchFreePopenPoolExecutor.like: the pool has started workers already")
        new = cls(max_workers=pool._threadpool._max_workers, timeout=pool._timeout, initializer=pool._initializer,
                  initargs=pool._initargs, maximum_process_uses=pool._maximum_process_uses, stdout=pool._stdout,
                  stderr=pool._stderr)
        pool.shutdown()
        return new

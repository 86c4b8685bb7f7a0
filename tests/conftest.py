"""Shared fixtures: the host target, a small GEMM, and a builder that works on 2 cores."""
from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import numpy as np
import pytest

#: the cost-model dataset of this checkout (``scripts/make_dataset.py``; a wheel ships none)
DATASET_DIR = Path(__file__).resolve().parent / "data" / "cpu_dataset"


@pytest.fixture(scope="session", autouse=True)
def calibration_cache(tmp_path_factory):
    """The memory calibration of this session goes to a temporary folder, not the user's cache."""
    with pytest.MonkeyPatch.context() as mp:
        path = tmp_path_factory.mktemp("pruner_ms_cache")
        mp.setenv("PRUNER_MS_CACHE_DIR", str(path))
        yield path


@pytest.fixture(scope="session", autouse=True)
def tensor_intrinsics():
    """All of TVM's tensor intrinsics, imported once (4-9 s) under the workaround for TVMScript's slow
    stack inspection: tests that call MetaSchedule's own ``tune_tir``/``TuneContext`` (whose first use
    imports them) or sample tensor-core programs would otherwise pay 33-50 s for it, once a session.
    ``pruner_ms``'s CPU-only registration is tested in a fresh interpreter (test_tensor_intrinsics)."""
    from pruner_ms.integration.workarounds import import_all_tensor_intrinsics

    import_all_tensor_intrinsics()


@pytest.fixture(scope="session")
def host_spec():
    from pruner_ms.hardware import host_cpu_spec

    return host_cpu_spec()


@pytest.fixture(scope="session")
def target(host_spec):
    import tvm

    return tvm.target.Target(host_spec.target())


@pytest.fixture(scope="session")
def builder(host_spec):
    from pruner_ms import WarmPoolBuilder

    return WarmPoolBuilder(max_workers=host_spec.cores)


@pytest.fixture()
def gemm64():
    from pruner_ms.bench.workloads import gemm

    return gemm(64, 64, 64)


def program_key(func, trace) -> int:
    """The program a tuning record's trace compiles to (as MetaSchedule built it), as a structural hash:
    two records of one workload hold the same program if and only if their keys are equal."""
    import tvm_ffi

    from pruner_ms.integration.database import compiled_schedule

    return int(tvm_ffi.structural_hash(compiled_schedule(func, trace).mod))


def run_and_check(sch_mod, workload, target) -> float:
    """Compile a scheduled module, run it on random inputs, return the max error vs numpy."""
    import tvm

    ex = tvm.compile(sch_mod, target=target)
    inputs = workload.make_inputs(np.random.default_rng(1))
    args = [tvm.runtime.tensor(x) for x in inputs] + [tvm.runtime.empty(workload.output_shape, workload.output_dtype)]
    ex["main"](*args)
    return float(np.max(np.abs(args[-1].numpy() - workload.reference(*inputs))))


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """Run ``pruner-ms ARGV`` in-process: (exit code, stdout, stderr)."""
    from pruner_ms.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def failing_builder(inner, every: int):
    """A builder that fails every ``every``-th candidate and builds the rest with ``inner``."""
    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.builder import BuilderResult, PyBuilder

    @derived_object
    class FailingBuilder(PyBuilder):
        def __init__(self):
            self.count = 0

        def build(self, build_inputs):
            out = []
            for r in inner.build(build_inputs):
                self.count += 1
                out.append(BuilderResult(None, "injected build failure") if self.count % every == 0 else r)
            return out

    return FailingBuilder()


def write_mini_suite(tmp_path, *, trials: int, trials_per_iter: int, size: int) -> str:
    """A one-workload suite file (an fp32 ``size``^3 GEMM on this CPU); returns its path."""
    import json

    path = tmp_path / "mini.json"
    path.write_text(json.dumps({"name": "mini", "target": "host", "trials": trials, "trials_per_iter": trials_per_iter,
                                "workloads": [{"op": "gemm", "args": {"m": size, "n": size, "k": size}}]}))
    return str(path)


def interruptible_child() -> None:
    """``preexec_fn`` for a child process that a test interrupts with SIGINT: the signal's default
    disposition back. A shell that starts a job in the background without job control (``cmd &`` in a
    script, ``nohup``) ignores SIGINT for it and everything it starts; Python started with SIGINT
    ignored installs no KeyboardInterrupt handler, so the child would run on as if never interrupted
    (the "lost first SIGINT" of the twenty-seventh session and of the twenty-ninth session's first
    fresh-clone CI, both started that way)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def pruner_ms_log(level: int = logging.NOTSET):
    """The messages logged to the ``pruner_ms`` logger at ``level`` or above inside the block (pytest's
    logging plugin is off: ``-p no:logging``)."""
    seen: list[str] = []
    handler = logging.Handler(level)
    handler.emit = lambda record: seen.append(record.getMessage())
    log = logging.getLogger("pruner_ms")
    log.addHandler(handler)
    try:
        yield seen
    finally:
        log.removeHandler(handler)

"""MetaSchedule runners: a runner from a specification (``"local"`` or ``"rpc://HOST:PORT/KEY"``, TVM's own
RPC tracker), the check that a GPU target is not measured where there is no GPU,
:class:`BackgroundStartLocalRunner` (``LocalRunner`` without the wait for its worker at construction)
and :class:`SyntheticLatencyRunner`, which computes latencies instead of measuring them.

Start a tracker and any number of servers under one key, then point tuning at the tracker::

    python -m tvm.exec.rpc_tracker --host 0.0.0.0 --port 9190
    python -m tvm.exec.rpc_server --tracker TRACKER_HOST:9190 --key a100     # once per device host

``rpc://TRACKER_HOST:9190/a100`` becomes MetaSchedule's ``RPCRunner`` with one worker per server
registered under the key, so a batch is measured on all of them at once.

:func:`gpu_available` and :func:`check_runner` make :func:`pruner_ms.tune_tir` fail at once with
:class:`NoGPUError` instead of filling the database with 1e10 s latencies.
:class:`SyntheticLatencyRunner` returns latencies computed by a function you supply from each
scheduled module: for benchmarking the host side of the search (candidate generation, cost model,
builds) where no GPU is available. Its numbers are *not* measurements.
"""
from __future__ import annotations

import socket
import urllib.parse
from collections.abc import Callable

from tvm.ir.utils import derived_object
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule.runner import PyRunner, PyRunnerFuture, RunnerInput, RunnerResult

from .builders import BuildRecord
from .workarounds import normalize_target

_CPU_KINDS = ("llvm", "c")


class RunnerSpecError(ValueError):
    """A runner specification that cannot be used."""


def parse_rpc_url(url: str) -> tuple[str, int, str]:
    """``(host, port, key)`` of ``rpc://HOST:PORT/KEY``; raises :class:`RunnerSpecError` with the form."""
    parsed = urllib.parse.urlparse(url)
    key = parsed.path.lstrip("/")
    try:
        port = parsed.port
    except ValueError:
        port = None
    if parsed.scheme != "rpc" or not parsed.hostname or port is None or not key or "/" in key:
        raise RunnerSpecError(
            f"runner {url!r} is not of the form rpc://HOST:PORT/KEY (e.g. rpc://127.0.0.1:9190/a100: "
            "the RPC tracker's address and the key its servers registered with)"
        )
    return parsed.hostname, port, key


def make_runner(spec=None, *, session_timeout_sec: int = 60, max_workers: int | None = None,
                evaluator_config: ms.runner.EvaluatorConfig | None = None):
    """A MetaSchedule runner from ``spec``.

    Parameters
    ----------
    spec : str, Runner or None
        ``None``/``"local"`` (MetaSchedule's ``LocalRunner``, returned as ``"local"``), a ready
        ``Runner`` (returned as is), or ``"rpc://HOST:PORT/KEY"``.
    session_timeout_sec : int
        RPC: time allowed to connect and to run one candidate.
    max_workers : int, optional
        RPC: parallel measurement sessions; by default the number of servers the tracker lists
        under the key (at least 1).
    evaluator_config : EvaluatorConfig, optional
        RPC: how each candidate is timed (MetaSchedule's default if not given).

    Raises
    ------
    RunnerSpecError
        For a malformed specification, an unreachable tracker, or a key with no server.
    """
    if _names_local_runner(spec):
        return "local"
    if not isinstance(spec, str):
        return spec
    if not spec.startswith("rpc://"):
        raise RunnerSpecError(f"unknown runner {spec!r}: use 'local' or rpc://HOST:PORT/KEY")
    host, port, key = parse_rpc_url(spec)
    config = ms.runner.RPCConfig(tracker_host=host, tracker_port=port, tracker_key=key,
                                 session_timeout_sec=session_timeout_sec)
    try:
        # a plain connect first: TVM's own tracker client retries in a background thread for a
        # minute (logging each retry) even after its caller has given up
        socket.create_connection((host, port), timeout=min(5, session_timeout_sec)).close()
        servers = config.count_num_servers(allow_missing=True)
    except Exception as err:  # noqa: BLE001  (tracker down or unreachable)
        raise RunnerSpecError(
            f"cannot reach the RPC tracker at {host}:{port} ({err}). Start one with "
            f"`python -m tvm.exec.rpc_tracker --host {host} --port {port}`"
        ) from None
    if servers < 1:
        raise RunnerSpecError(
            f"the RPC tracker at {host}:{port} has no free server under key {key!r}. Register one with "
            f"`python -m tvm.exec.rpc_server --tracker {host}:{port} --key {key}` "
            f"(see `python -m tvm.exec.query_rpc_tracker --host {host} --port {port}`)"
        )
    return ms.runner.RPCRunner(config, evaluator_config, max_workers=max_workers or servers)


# -- GPU presence ---------------------------------------------------------------------------------
class NoGPUError(RuntimeError):
    """Tuning for a GPU target was asked to measure on this machine, which has no such GPU."""


def gpu_available(target) -> bool:
    """Whether the device of ``target`` is visible here (CPU targets: always ``True``).

    Parameters
    ----------
    target : tvm.target.Target, dict or str
        The tuning target, e.g. ``"nvidia/nvidia-a100"``.

    Returns
    -------
    bool
        ``tvm.device(kind, 0).exist``; ``False`` also when this TVM has no runtime for the kind
        (e.g. its CUDA runtime library did not load because there is no driver).
    """
    import tvm

    kind = normalize_target(target).kind.name
    if kind in _CPU_KINDS:
        return True
    try:
        return bool(tvm.device(kind, 0).exist)
    except Exception:  # noqa: BLE001  (no runtime for this device kind)
        return False


def _names_local_runner(runner) -> bool:
    """``None`` or ``"local"``: MetaSchedule's ``LocalRunner``, named rather than made."""
    return runner is None or (isinstance(runner, str) and runner == "local")


def _is_local_runner(runner) -> bool:
    from tvm.s_tir.meta_schedule.runner import LocalRunner

    return _names_local_runner(runner) or isinstance(runner, (LocalRunner, BackgroundStartLocalRunner))


def _check_runner_functions(f_alloc_argument, f_run_evaluator, f_cleanup) -> None:
    """In the runner's worker: the functions ``LocalRunner`` was given resolve (its own start-up check)."""
    from tvm.s_tir.meta_schedule.utils import get_global_func_with_default_on_worker

    for name in (f_alloc_argument, f_run_evaluator, f_cleanup):
        get_global_func_with_default_on_worker(name=name, default=None)


class _BackgroundStartLocalRunner(ms.runner.LocalRunner._cls):  # type: ignore[name-defined]
    """MetaSchedule's ``LocalRunner`` whose worker starts while the search drafts its first batch.

    ``LocalRunner``'s constructor runs a start-up check in its one worker process and waits for it:
    the worker's ``import tvm`` (3.8 s of a 20 s ``pruner-ms tune --workload gemm-64 --trials 8`` on
    2 cores, thirty-second session) before the first program is even drafted. This runner submits
    the same check at construction and waits for it at its first :meth:`run`, which raises what
    ``LocalRunner``'s check would have. Its worker imports TVM without torch (2-3 s less;
    :mod:`~pruner_ms.integration.workarounds.torch_free_workers`). Measurement is ``LocalRunner``'s,
    unchanged.
    """

    def _sanity_check(self) -> None:
        from .workarounds.torch_free_workers import TorchFreePopenPoolExecutor

        self.pool = TorchFreePopenPoolExecutor.like(self.pool)  # no worker started yet: nothing lost
        self._startup_check = self.pool.submit(_check_runner_functions, self.f_alloc_argument,
                                               self.f_run_evaluator, self.f_cleanup)

    def run(self, runner_inputs):
        if self._startup_check is not None:
            check, self._startup_check = self._startup_check, None
            check.result()
        return super().run(runner_inputs)


# LocalRunner._cls is the undecorated class; decorating the subclass makes it an FFI Runner again.
BackgroundStartLocalRunner = derived_object(_BackgroundStartLocalRunner)


def check_runner(target, runner=None) -> None:
    """Raise :class:`NoGPUError` if ``runner`` would measure ``target`` locally without its GPU.

    Parameters
    ----------
    target : tvm.target.Target, dict or str
        The tuning target.
    runner : Runner, str or None
        What would be passed to ``ms.tune_tir(runner=...)``; ``None`` and ``"local"`` mean
        MetaSchedule's ``LocalRunner``.

    Raises
    ------
    NoGPUError
        For a GPU target, a local runner and no visible device. MetaSchedule itself would record
        every candidate with a latency of 1e10 s and the tuned schedule would be meaningless.
    """
    target = normalize_target(target)
    kind = target.kind.name
    if kind in _CPU_KINDS or not _is_local_runner(runner) or gpu_available(target):
        return
    raise NoGPUError(
        f"no {kind.upper()} GPU is visible on this machine (tvm.{kind}(0).exist is False), so the local "
        "runner cannot measure any candidate: MetaSchedule would record every one with a latency of "
        "1e10 s. Measure on a GPU host through an RPC tracker instead:\n"
        "    # on the GPU host:  python -m tvm.exec.rpc_tracker --host 0.0.0.0 --port 9190\n"
        "    #                   python -m tvm.exec.rpc_server --tracker <tracker-host>:9190 --key a100\n"
        "    runner = ms.runner.RPCRunner(ms.runner.RPCConfig(tracker_host='<tracker-host>', tracker_port=9190,\n"
        "                                                     tracker_key='a100'))\n"
        "    pruner_ms.tune_tir(mod, target, work_dir, max_trials_global, runner=runner)\n"
        "or, to benchmark only the host side of the search, pass "
        "runner=pruner_ms.integration.runners.SyntheticLatencyRunner(builder, latency_fn) (synthetic latencies, "
        "not measurements)."
    )


# -- synthetic runner -----------------------------------------------------------------------------
@derived_object
class _DoneFuture(PyRunnerFuture):
    def __init__(self, result: RunnerResult) -> None:
        self._result = result

    def done(self) -> bool:
        return True

    def result(self) -> RunnerResult:
        return self._result


def hash_latency(record: BuildRecord, *, low: float = 1e-4, high: float = 1e-3) -> float:
    """A deterministic pseudo-latency in ``[low, high)`` s from the scheduled module's structural hash.

    Stable across runs and processes, and unrelated to real performance: it only gives the search
    distinct, repeatable numbers to rank.
    """
    import tvm_ffi

    h = int(tvm_ffi.structural_hash(record.mod)) & 0xFFFFFFFF
    return low + (high - low) * (h / 2**32)


class _SyntheticLatencyRunner(PyRunner):
    """A runner that *computes* latencies instead of measuring them. SYNTHETIC: not a measurement.

    For benchmarking the host side of a GPU search (candidate generation, cost model, builds) on a
    machine without the GPU. ``latency_fn`` receives the :class:`BuildRecord` that ``builder`` kept
    for the artifact (``record.mod`` is the scheduled IRModule) and returns seconds; the result is
    recorded as the candidate's run time. An artifact the builder does not know, a failing
    ``latency_fn`` or a non-positive value becomes a run error.

    Parameters
    ----------
    builder : CudaBuilder
        The builder whose artifacts are run (it maps artifact paths to scheduled modules).
    latency_fn : callable, optional
        ``BuildRecord -> float`` seconds; default :func:`hash_latency`. E.g. an analytical model:
        ``lambda rec: analyzer.analyze(rec.mod).seconds``.
    forget : bool
        Drop the builder's record once used (keeps memory flat in long runs).
    """

    def __init__(self, builder, latency_fn: Callable[[BuildRecord], float] | None = None, *,
                 forget: bool = True) -> None:
        if not hasattr(builder, "record"):
            raise TypeError("SyntheticLatencyRunner needs the CudaBuilder that builds the artifacts")
        self.builder = builder
        self.latency_fn = latency_fn or hash_latency
        self.forget = forget
        self.calls = 0

    def run(self, runner_inputs: list[RunnerInput]) -> list:
        futures = []
        for ri in runner_inputs:
            path = str(ri.artifact_path)
            rec = self.builder.pop_record(path) if self.forget else self.builder.record(path)
            if rec is None:
                res = RunnerResult(None, f"SyntheticLatencyRunner: no build record for {path} "
                                         "(was it built by the CudaBuilder given to this runner?)")
            else:
                try:
                    sec = float(self.latency_fn(rec))
                    if not sec > 0:
                        raise ValueError(f"latency must be positive, got {sec}")
                    res = RunnerResult([sec], None)
                except Exception as err:  # noqa: BLE001  (becomes a run error, as a failed measurement)
                    res = RunnerResult(None, f"SyntheticLatencyRunner: latency_fn failed: {type(err).__name__}: {err}")
            self.calls += 1
            futures.append(_DoneFuture(res))
        return futures


#: The synthetic MetaSchedule runner (an FFI ``Runner``); see :class:`_SyntheticLatencyRunner`.
SyntheticLatencyRunner = derived_object(_SyntheticLatencyRunner)


def start_runner(runner):
    """The runner to hand MetaSchedule for ``runner`` as :func:`make_runner` returns it: ``"local"``
    becomes a :class:`BackgroundStartLocalRunner` (its worker starts now, in the background); any
    other runner is returned as is."""
    return BackgroundStartLocalRunner() if _names_local_runner(runner) else runner

"""Runner specifications: ``"local"`` or ``"rpc://HOST:PORT/KEY"`` (TVM's own RPC tracker).

Start a tracker and any number of servers under one key, then point tuning at the tracker::

    python -m tvm.exec.rpc_tracker --host 0.0.0.0 --port 9190
    python -m tvm.exec.rpc_server --tracker TRACKER_HOST:9190 --key a100     # once per device host

``rpc://TRACKER_HOST:9190/a100`` becomes MetaSchedule's ``RPCRunner`` with one worker per server
registered under the key, so a batch is measured on all of them at once.
"""
from __future__ import annotations

import socket
import urllib.parse

from tvm.s_tir import meta_schedule as ms


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
    if spec is None or (isinstance(spec, str) and spec == "local"):
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

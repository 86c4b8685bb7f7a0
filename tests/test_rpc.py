"""Distributed measurement through TVM's RPC tracker: a tracker and two servers on 127.0.0.1."""
from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest
from tvm.s_tir import meta_schedule as ms

import pruner_ms
from pruner_ms.integration.runners import RunnerSpecError, make_runner, parse_rpc_url

KEY = "pruner-test"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def _servers_under_key(port: int) -> int:
    config = ms.runner.RPCConfig(tracker_host="127.0.0.1", tracker_port=port, tracker_key=KEY, session_timeout_sec=5)
    try:
        return config.count_num_servers(allow_missing=True)
    except Exception:  # noqa: BLE001  (tracker still starting)
        return -1


@pytest.fixture(scope="module")
def tracker():
    port = _free_port()
    procs = [subprocess.Popen([sys.executable, "-m", "tvm.exec.rpc_tracker", "--host", "127.0.0.1",
                               "--port", str(port), "--port-end", str(port + 1)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)]
    try:
        deadline = time.time() + 60
        while not _listening(port) and time.time() < deadline:
            assert procs[0].poll() is None, f"the RPC tracker exited: {procs[0].stderr.read()[-2000:]}"
            time.sleep(0.2)
        for _ in range(2):
            server_port = _free_port()
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "tvm.exec.rpc_server", "--tracker", f"127.0.0.1:{port}", "--key", KEY,
                 "--host", "127.0.0.1", "--port", str(server_port), "--port-end", str(server_port + 1)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        while _servers_under_key(port) < 2 and time.time() < deadline:
            time.sleep(0.5)
        assert _servers_under_key(port) == 2, "the RPC servers did not register with the tracker"
        yield port
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.mark.slow
def test_tune_through_rpc_tracker(tmp_path, tracker, target, builder, gemm64):
    runner = make_runner(f"rpc://127.0.0.1:{tracker}/{KEY}")
    assert isinstance(runner, ms.runner.RPCRunner)
    wd = str(tmp_path / "wd")
    db = pruner_ms.tune_tir(gemm64.func, target, wd, 8, num_trials_per_iter=8, runner=f"rpc://127.0.0.1:{tracker}/{KEY}",
                            strategy=pruner_ms.PrunerSearch(population_size=64, draft_size=32), builder=builder,
                            num_tuning_cores=2, seed=1)
    records = db.get_all_tuning_records()
    assert len(records) == 8
    valid = [r for r in records if r.run_secs and max(float(x) for x in r.run_secs) < 1e9]
    assert len(valid) >= 6, "the RPC servers measured (almost) nothing"
    from .conftest import run_and_check

    sch = ms.tir_integration.compile_tir(db, gemm64.func, target)
    assert run_and_check(sch.mod, gemm64, target) < 1e-3


def test_rpc_errors_name_the_fix(tracker):
    with pytest.raises(RunnerSpecError, match="rpc://HOST:PORT/KEY"):
        parse_rpc_url("rpc://127.0.0.1/key")
    with pytest.raises(RunnerSpecError, match="no free server under key 'nobody'.*rpc_server --tracker"):
        make_runner(f"rpc://127.0.0.1:{tracker}/nobody")
    with pytest.raises(RunnerSpecError, match="cannot reach the RPC tracker.*rpc_tracker"):
        make_runner(f"rpc://127.0.0.1:{_free_port()}/x", session_timeout_sec=2)
    with pytest.raises(RunnerSpecError, match="unknown runner"):
        make_runner("ssh://gpu")

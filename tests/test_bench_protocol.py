"""The side-by-side benchmark protocol: alternating order, fresh work dirs, merging, the new summary
numbers and the ablation strategies (real tuning runs on a 64^3 GEMM, 8 trials each)."""
from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys

import pytest

import pruner_ms

from pruner_ms.bench.compare import ProtocolError, compare, run_one

from .conftest import run_cli as _cli
from .conftest import write_mini_suite

SMALL_PRUNER = {"population_size": 128, "draft_size": 32}  # keeps a PrunerSearch round to seconds on 2 cores




@pytest.mark.slow
def test_order_alternates_with_seed_and_summary_has_new_numbers(tmp_path):
    runs, summaries = compare(["gemm-64"], ["pruner", "default"], trials=8, seeds=[0, 1], trials_per_iter=8,
                              work_root=str(tmp_path / "work"), progress=False, remeasure_passes=1,
                              pruner_kwargs=SMALL_PRUNER, log=lambda *_: None)
    assert [(r["seed"], r["strategy"], r["order"]) for r in runs] == [
        (0, "pruner", 0), (0, "default", 1), (1, "default", 0), (1, "pruner", 1)]
    assert all(r["numpy_ok"] and r["trials"] == 8 for r in runs)
    ours = [r for r in runs if r["strategy"] == "pruner"]
    assert all(len(r["round_profiles"]) == len(r["round_seconds"]) >= 1 for r in runs)
    assert all(p is None for r in runs if r["strategy"] == "default" for p in r["round_profiles"])
    assert set(summaries) == {"measured", "remeasured"}
    for r in runs:  # re-measured in 5 fresh processes (the default), one pass each: the mean of the 5
        assert r["remeasure_processes"] == 5 and r["remeasured"]
        for p in r["remeasured"]:
            assert len(p["remeasured_per_process"]) == 5
            assert p["remeasured"] == pytest.approx(sum(p["remeasured_per_process"]) / 5)
            # the same program as was tuned: its latency within the noise of its tuning-time one
            assert 0.33 < p["remeasured"] / p["latency"] < 3.0, p
    for view in summaries.values():
        item = view["gemm-64x64x64 vs default"]
        for key in ("median_speedup", "median_final_ratio", "median_ours_s_per_trial",
                    "median_baseline_s_per_trial", "median_s_per_trial_ratio", "median_first_batch_ratio",
                    "ours_round_profile"):
            assert key in item, key
        row = item["seeds"][0]
        assert row["ours_s_per_trial"] == pytest.approx(ours[0]["wall_seconds"] / 8)
        assert row["ours_first_batch_ms"] == pytest.approx(ours[0]["batches"][0]["best"] * 1e3)
        assert row["s_per_trial_ratio"] > 0 and row["first_batch_ratio"] > 0


def test_non_empty_work_dir_is_refused_before_any_tuning(tmp_path):
    used = tmp_path / "work" / "gemm-64x64x64" / "default" / "1"
    used.mkdir(parents=True)
    (used / "database_tuning_record.json").write_text("")
    with pytest.raises(ProtocolError, match="Remove it or choose another --work-dir/--out") as info:
        compare(["gemm-64"], ["pruner", "default"], trials=8, seeds=[0, 1], trials_per_iter=8,
                work_root=str(tmp_path / "work"), progress=False, log=lambda *_: None)
    assert str(used) in str(info.value)
    assert not (tmp_path / "work" / "gemm-64x64x64" / "pruner").exists(), "nothing may run before the check"


@pytest.mark.slow
def test_bench_invocations_merge(tmp_path, capsys):
    suite = write_mini_suite(tmp_path, trials=8, trials_per_iter=8, size=64)
    out = tmp_path / "out"
    base = ["bench", "--suite", str(suite), "--strategies", "pruner,default", "--out", str(out), "--no-progress",
            "--remeasure-passes", "1", "--remeasure-processes", "2", "--workloads", "gemm-64x64x64"]
    code, text, err = _cli(capsys, *base, "--seeds", "0")
    assert code == 0, text + err
    assert ("Latencies: re-measured (mean over 2 fresh processes of the median of 1 round-robin passes)"
            in (out / "suite.md").read_text())
    code, text, err = _cli(capsys, *base, "--seeds", "1")
    assert code == 0, text + err
    result = json.loads((out / "suite.json").read_text())
    assert sorted((r["strategy"], r["seed"]) for r in result["runs"]) == [
        ("default", 0), ("default", 1), ("pruner", 0), ("pruner", 1)]
    assert result["seeds"] == [0, 1] and len(result["invocations"]) == 2
    here = os.path.dirname(os.path.abspath(pruner_ms.__file__))
    assert all(i["code"]["path"] == here for i in result["invocations"])
    assert f"Code: pruner_ms {pruner_ms.__version__} from {here}" in (out / "suite.md").read_text()
    assert len(result["summaries"]["remeasured"]["gemm-64x64x64 vs default"]["seeds"]) == 2
    assert "come from more than one invocation" in (out / "suite.md").read_text()
    # the same invocation again runs nothing
    code, text, err = _cli(capsys, *base, "--seeds", "1")
    assert code == 0, text + err
    assert text.count("already in the merged results; not run again") == 2
    assert len(json.loads((out / "suite.json").read_text())["runs"]) == 4
    # another budget does not merge
    code, _, err = _cli(capsys, *base, "--seeds", "2", "--trials", "16")
    assert code == 2 and "trials: 8 there, 16 now" in err


def _git(cwd, *args) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_the_recorded_code_is_the_tree_python_imported(tmp_path):
    """A before/after pair runs two trees; the working directory, not PYTHONPATH, decides which one
    ``python -m`` imports, so a suite records the package it really ran (path, commit, dirty)."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(pruner_ms.__file__)))
    tree = tmp_path / "tree"
    shutil.copytree(os.path.join(repo, "pruner_ms"), tree / "pruner_ms",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(os.path.join(repo, "configs"), tree / "configs")
    _git(tree, "init", "-q")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-qm", "tree")
    probe = "import json; from pruner_ms.bench.provenance import code_provenance; print(json.dumps(code_provenance()))"

    def provenance() -> dict:
        out = subprocess.run([sys.executable, "-c", probe], cwd=tree, env={**os.environ, "PYTHONPATH": repo},
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    code = provenance()
    assert code["path"] == str(tree / "pruner_ms") and code["commit"] == _git(tree, "rev-parse", "HEAD")
    assert code["dirty"] is False and code["pruner_ms"] == pruner_ms.__version__
    with open(tree / "pruner_ms" / "analysis" / "cpu_model.py", "a", encoding="utf-8") as f:
        f.write("\n# an uncommitted change\n")
    assert provenance()["dirty"] is True


def test_bench_workloads_must_be_in_the_suite(tmp_path, capsys):
    code, _, err = _cli(capsys, "bench", "--suite", "cpu", "--workloads", "gemm-64", "--out", str(tmp_path))
    assert code == 2 and "workload 'gemm-64' is not in this suite" in err


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["pruner-paper", "evolutionary-analyzer", "evolutionary-draft"])
def test_ablation_strategies_run(strategy, tmp_path, gemm64, monkeypatch):
    from pruner_ms import PrunerSearch
    from pruner_ms.strategy import pruner_search

    if "adaptive_trust" not in inspect.signature(PrunerSearch.__init__).parameters:  # keyword not landed yet
        monkeypatch.delitem(pruner_search.PAPER_VERIFY, "adaptive_trust")
    run = run_one(gemm64, strategy, trials=8, seed=0, trials_per_iter=8, work_dir=str(tmp_path / "wd"),
                  progress=False, pruner_kwargs=SMALL_PRUNER if strategy.startswith("pruner") else None)
    assert run["numpy_ok"] and run["trials"] == 8 and run["strategy"] == strategy
    assert len(run["round_profiles"]) == len(run["round_seconds"])


def test_a_pruner_ablation_is_a_strategy_name():
    from pruner_ms.bench.compare import check_strategies, make_strategy, split_strategy

    assert split_strategy("pruner+draft_every=4+cold_random_share=0.25") == (
        "pruner", {"draft_every": 4, "cold_random_share": 0.25})
    strategy, _ = make_strategy("pruner+draft_every=4+adaptive_trust=false", cores=2)
    assert strategy._inst.draft_every == 4 and strategy._inst.adaptive_trust is False
    strategy, _ = make_strategy("evolutionary-draft+genetic_num_iters=2+population_size=256", cores=2)
    assert (strategy._inst.genetic_num_iters, strategy._inst.population_size) == (2, 256)
    for bad, says in (("pruner+draft_evry=4", "PrunerSearch keyword"), ("default+draft_every=4", "takes none"),
                      ("evolutionary-draft+draft_every=4", "EvolutionaryDraftSearch keyword"),
                      ("pruner+draft_every", "key=value"), ("prunr", r"unknown strategies \['prunr'\]")):
        with pytest.raises(ValueError, match=says):
            check_strategies(["default", bad])


def test_each_remeasure_pass_times_the_programs_on_newly_allocated_arguments():
    """A program's latency can depend on where its buffers lie (docs/results/cold_share_s29), so every
    re-measurement pass allocates the arguments anew (same values), while the last pass's are held."""
    import numpy as np

    from pruner_ms.bench.remeasure import fresh_arguments
    from pruner_ms.bench.workloads import get_workload

    wl = get_workload("gemm-64")
    first = fresh_arguments(wl)
    second = fresh_arguments(wl)
    assert len(first) == len(wl.make_inputs(np.random.default_rng(0))) + 1
    assert not {a.data_ptr() for a in first} & {a.data_ptr() for a in second}
    for a, b in zip(first[:-1], second[:-1]):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert first[-1].shape == second[-1].shape == tuple(wl.output_shape)


def test_a_failing_remeasurement_process_raises_with_its_error(tmp_path):
    """The re-measuring child's failure is an error that says what went wrong, not a silent gap."""
    import json as json_

    from pruner_ms.bench.remeasure import _run_child

    spec = tmp_path / "spec.json"
    spec.write_text(json_.dumps({"libraries": {"1": str(tmp_path / "missing.so")}, "inputs": str(tmp_path / "no.npz"),
                                 "output_shape": [1], "output_dtype": "float32", "passes": 1, "number": 1,
                                 "min_repeat_ms": 0}))
    with pytest.raises(RuntimeError, match=r"(?s)re-measurement process failed \(exit 1\).*no\.npz"):
        _run_child(str(spec), str(tmp_path / "out.json"))
    assert not (tmp_path / "out.json").exists()

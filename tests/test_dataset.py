"""The shipped CPU dataset (tests/data/cpu_dataset): it loads, is usable, and fails clearly when broken."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from pruner_ms.bench.dataset import (
    RECORD_FILE,
    WORKLOAD_FILE,
    DatasetError,
    dataset_workload,
    list_workloads,
    load_records,
    split_by_workload,
)

from .conftest import DATASET_DIR


@pytest.fixture(scope="module")
def data():
    return load_records(DATASET_DIR)


def test_shipped_dataset_loads(data):
    import json

    names = list_workloads(DATASET_DIR)
    assert len(names) >= 6
    assert list(data) == names
    manifest = json.loads((DATASET_DIR / "manifest.json").read_text())
    assert {w["name"] for w in manifest["workloads"]} == set(names)
    assert (DATASET_DIR / "README.md").read_text().count("make_dataset.py") >= 1
    for w in manifest["workloads"]:
        recs = data[w["name"]]
        assert len(recs) == len(recs.latencies) == w["records"]
        assert recs.sources.count("random") == w["random_records"] > 0
        assert recs.sources.count("search") == w["search_records"] > 0
        assert recs.flops == pytest.approx(dataset_workload(w["name"]).flops)


def test_records_have_valid_spread_latencies(data):
    for name, recs in data.items():
        lat = recs.latencies
        valid = recs.valid
        assert valid.sum() >= 100, name
        assert np.all(np.isinf(lat[~valid])), name  # failures are inf, never 1e10 or 0
        good = lat[valid]
        assert np.all(good > 0) and np.all(np.isfinite(good)), name
        assert good.min() < 0.8 * np.median(good), name
        assert good.max() < 10.0, name  # seconds: no failure marker leaked through
        assert recs.target.kind.name == "llvm" and "mcpu" in recs.target.attrs, name
        assert recs.mod["main"] is not None


def test_candidates_compile_and_best_is_correct(data, target):
    import tvm

    for name, recs in data.items():
        lat = np.where(recs.valid, recs.latencies, np.nan)
        best = int(np.nanargmin(lat))
        median = int(np.nanargmin(np.abs(lat - np.nanmedian(lat))))
        for i in {best, median}:
            ex = tvm.compile(recs.candidates[i].sch.mod, target=target)
            assert ex is not None, (name, i)
        # the fastest program computes the workload
        wl = dataset_workload(name)
        inputs = wl.make_inputs(np.random.default_rng(0))
        args = [tvm.runtime.tensor(x) for x in inputs] + [tvm.runtime.empty(wl.output_shape, wl.output_dtype)]
        tvm.compile(recs.candidates[best].sch.mod, target=target)["main"](*args)
        np.testing.assert_allclose(args[-1].numpy(), wl.reference(*inputs), rtol=1e-3, atol=1e-3)


def test_candidates_carry_arg_info(data):
    recs = data[next(iter(data))]
    assert len(recs.candidates[0].args_info) == len(recs.mod["main"].params)


@pytest.mark.parametrize("fname", [RECORD_FILE, WORKLOAD_FILE])
def test_corrupt_database_file_gives_clear_error(tmp_path, fname):
    name = list_workloads(DATASET_DIR)[0]
    shutil.copytree(DATASET_DIR / name, tmp_path / name)
    path = tmp_path / name / fname
    text = path.read_text()
    path.write_text(text[: len(text) // 2])  # truncated mid-line, as an interrupted copy would leave it
    with pytest.raises(DatasetError) as info:
        load_records(tmp_path)
    msg = str(info.value)
    assert str(path) in msg and "python scripts/make_dataset.py" in msg


def test_valid_json_that_is_not_a_record_gives_clear_error(tmp_path):
    name = list_workloads(DATASET_DIR)[0]
    shutil.copytree(DATASET_DIR / name, tmp_path / name)
    path = tmp_path / name / RECORD_FILE
    path.write_text('[0, ["not a trace", [1.0], null, null]]\n')
    with pytest.raises(DatasetError, match="record 1.*make_dataset.py"):
        load_records(tmp_path)


def test_missing_dataset_gives_clear_error(tmp_path):
    with pytest.raises(DatasetError, match="does not exist.*python scripts/make_dataset.py"):
        load_records(tmp_path / "nowhere")
    with pytest.raises(DatasetError, match="no workload.*make_dataset.py"):
        list_workloads(tmp_path)
    (tmp_path / "gemm").mkdir()
    (tmp_path / "gemm" / RECORD_FILE).write_text("")
    with pytest.raises(DatasetError, match=f"{WORKLOAD_FILE} is missing.*make_dataset.py"):
        load_records(tmp_path)


def test_split_by_workload():
    names = ["a", "b", "c"]
    assert split_by_workload(names, "b") == (["a", "c"], ["b"])
    assert split_by_workload(names, ["c", "a"]) == (["b"], ["a", "c"])
    with pytest.raises(ValueError, match="not in the dataset: z"):
        split_by_workload(names, "z")
    with pytest.raises(ValueError, match="nothing left to train"):
        split_by_workload(names, names)

"""A torch model compiled end to end with PrunerSearch-tuned kernels (Relax, CPU)."""
from __future__ import annotations

import pytest

import pruner_ms
from pruner_ms.bench.models import tiny_cnn
from pruner_ms.integration.relax import (
    ModelImportError,
    compile_model,
    import_torch_model,
)

from .conftest import program_key

SMALL = {"population_size": 32, "draft_size": 16}


@pytest.mark.slow
def test_tiny_model_matches_torch_and_every_task_is_tuned(tmp_path, target, builder):
    model, inputs = tiny_cnn()  # the analyzer-guided task scheduler: every task still gets its share
    report = compile_model(model, inputs, target, str(tmp_path / "wd"), max_trials_global=64, max_trials_per_task=8,
                           num_trials_per_iter=8, strategy=pruner_ms.PrunerSearch(**SMALL), builder=builder, seed=0,
                           repeat=3, task_scheduler="headroom")
    names = [t.name for t in report.tasks]
    assert any("conv" in n for n in names) and any("matmul" in n for n in names), names
    assert report.untuned_tasks == [], report.format()
    # every task with a design space got its 8 trials (a reshape has a single program: 1 trial)
    assert all(t.trials == 8 for t in report.tasks if "conv" in t.name or "matmul" in t.name), report.format()
    assert report.max_abs_error is not None and report.max_abs_error < 1e-4
    assert report.tuned_seconds > 0 and report.untuned_seconds > 0 and report.torch_seconds > 0
    text = report.format()
    assert "max abs error vs torch" in text and "UNTUNED" not in text


@pytest.mark.slow
def test_tasks_left_without_records_are_reported_loudly(tmp_path, target, builder, caplog):
    model, inputs = tiny_cnn()
    report = compile_model(model, inputs, target, str(tmp_path / "wd"), max_trials_global=8, max_trials_per_task=8,
                           num_trials_per_iter=8, strategy=pruner_ms.PrunerSearch(**SMALL), builder=builder, seed=0,
                           repeat=1)
    assert 1 <= len(report.untuned_tasks) < len(report.tasks)
    assert "no valid record: UNTUNED" in report.format()
    assert f"WARNING: {len(report.untuned_tasks)} task(s) have no valid tuning record" in report.format()
    assert report.max_abs_error < 1e-4  # untuned code is still correct, just slow


@pytest.mark.slow
def test_zero_measurement_compile_runs_and_matches_torch(tmp_path, target):
    """Every task gets the analyzer's first-ranked program; nothing is built for measurement and the
    work_dir's database gets no record."""
    from pruner_ms.integration.resume import open_database

    model, inputs = tiny_cnn()
    wd = str(tmp_path / "wd")
    report = compile_model(model, inputs, target, wd, max_trials_global=64, seed=0, repeat=3, zero_measure=True)
    assert report.tasks and all(t.estimated and t.trials == 0 for t in report.tasks)
    assert all(t.tuned for t in report.tasks if "conv" in t.name or "matmul" in t.name), report.format()
    assert report.max_abs_error is not None and report.max_abs_error < 1e-4
    assert report.tuned_seconds > 0 and "drafted, zero measurements" in report.format()
    assert not open_database(wd).get_all_tuning_records()


@pytest.mark.slow
def test_a_measured_run_continues_from_the_zero_measurement_drafts(tmp_path, target, builder):
    """The drafts are saved in the work_dir, apart from the measured records; a measured run there
    measures each task's draft in its first batch."""
    from pruner_ms.integration.resume import open_database, open_drafts, workload_key

    def programs(database) -> dict:
        out: dict = {}
        for rec in database.get_all_tuning_records():
            out.setdefault(workload_key(rec.workload.mod), set()).add(program_key(rec.workload.mod, rec.trace))
        return out

    model, inputs = tiny_cnn()
    wd = str(tmp_path / "wd")
    compile_model(model, inputs, target, wd, max_trials_global=64, seed=0, compare=False, zero_measure=True)
    drafted = programs(open_drafts(wd))
    assert drafted and not open_database(wd).get_all_tuning_records()
    report = compile_model(model, inputs, target, wd, max_trials_global=64, max_trials_per_task=8,
                           num_trials_per_iter=8, strategy=pruner_ms.PrunerSearch(**SMALL), builder=builder,
                           seed=1, repeat=1)
    measured = programs(open_database(wd))
    assert all(drafted[key] <= measured.get(key, set()) for key in drafted), (drafted, measured)
    assert report.max_abs_error < 1e-4


def test_unexportable_model_names_the_problem():
    import torch

    class DataDependent(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:  # data-dependent control flow: torch.export cannot trace it
                return x * 2
            return x

    with pytest.raises(ModelImportError, match="torch.export.export"):
        import_torch_model(DataDependent(), (torch.randn(2, 2),))

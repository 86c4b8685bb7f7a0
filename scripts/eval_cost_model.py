#!/usr/bin/env python
"""Rank held-out workloads with each cost model: PaCM, MetaSchedule's XGBoost and MLP, our analyzer.

For every held-out workload (default: each workload of the dataset in turn), the learned models are
trained on the *other* workloads' measured programs only, then score the held-out programs; the
metrics compare those scores with the measured throughputs: pairwise ranking accuracy, top-1/top-5
recall (is the truly best program among the model's top k) and peak score@k (best true throughput in
the model's top k over the true best). ``--timing`` also times predict on 2,048 candidates and an
update on a batch of 64 for PaCM and XGBoost.

    python scripts/eval_cost_model.py --out results/eval_cost_model.json
    python scripts/eval_cost_model.py --holdout conv2d-1x64x14x14-f64-k3 --models pacm,xgb,analyzer --timing
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

MODELS = ("pacm", "xgb", "mlp", "analyzer")


def _results(latencies):
    import math

    from tvm.s_tir.meta_schedule.runner import RunnerResult

    from pruner_ms.integration.measured_latency import FAILED_THRESHOLD_SECONDS

    return [RunnerResult([float(x)], None) if math.isfinite(x) and x < FAILED_THRESHOLD_SECONDS
            else RunnerResult(None, "failed")
            for x in latencies]


def _context(wl):
    from tvm.s_tir import meta_schedule as ms

    return ms.TuneContext(mod=wl.mod, target=wl.target, num_threads=2)


def _fit(name: str, train: list, root: str, *, epochs: int, seed: int):
    """A trained cost model (or the analyzer) from the training workloads."""
    from tvm.s_tir import meta_schedule as ms

    from pruner_ms import SymbolicCostModel

    if name == "analyzer":
        return SymbolicCostModel()
    if name == "pacm":
        from pruner_ms.cost_model.train import train_offline

        model, _ = train_offline([os.path.join(root, wl.name) for wl in train], epochs=epochs, seed=seed)
        return model
    if name == "xgb":
        model = ms.cost_model.XGBModel(num_warmup_samples=0, num_tuning_cores=2)
    else:
        return _fit_mlp(train)
    for wl in train:  # failed programs go in as failed runs, as during tuning
        model.update(_context(wl), wl.candidates, _results(wl.latencies))
    return model


def _fit_mlp(train: list):
    """MetaSchedule's MLP model (not exported from ``ms.cost_model`` in 0.27) trained once on all the
    training workloads.

    Works around TVM 0.27's ``SegmentSumMLPTrainer``: ``update`` calls ``train_full`` as soon as more
    than a fifth of its data is untrained (so on the first update), and ``train_full`` holds out
    ``test_split`` (0.2) of the workload groups it has, ``floor(groups * 0.2)``, then concatenates the
    held-out groups' results: with fewer than 5 workloads that is nothing, and it raises
    ``ValueError: need at least one array to concatenate``. Fed one workload at a time, as this script
    did and as tuning a single workload does, the model fails on its first update. Here the trainer is
    frozen while every training workload goes in, then trains once.
    """
    from tvm.s_tir.meta_schedule.cost_model.mlp_model import MLPModel

    groups_needed = 5  # floor(groups * test_split) >= 1 with the default test_split of 0.2
    if len(train) < groups_needed:
        raise ValueError(f"MetaSchedule's MLP model needs at least {groups_needed} training workloads "
                         f"(it holds out a fifth of them while training), got {len(train)}")
    model = MLPModel()
    model.trainer.frozen = True
    for wl in train:  # failed programs go in as failed runs, as during tuning
        model.update(_context(wl), wl.candidates, _results(wl.latencies))
    model.trainer.frozen = False
    with _step_lr_without_verbose():
        model.trainer.train_full()
    return model


@contextlib.contextmanager
def _step_lr_without_verbose():
    """TVM 0.27's ``train_full`` builds ``torch.optim.lr_scheduler.StepLR(..., verbose=True)``; torch
    2.13 no longer takes ``verbose`` (``TypeError: StepLR.__init__() got an unexpected keyword argument
    'verbose'``). For the duration, ``StepLR`` is a subclass that drops it; restored afterwards."""
    import torch

    original = torch.optim.lr_scheduler.StepLR

    class StepLR(original):  # type: ignore[misc, valid-type]
        def __init__(self, *args, verbose=None, **kwargs):
            super().__init__(*args, **kwargs)

    torch.optim.lr_scheduler.StepLR = StepLR
    try:
        yield
    finally:
        torch.optim.lr_scheduler.StepLR = original


def _timing(model_names: list[str], wl, *, seed: int) -> dict:
    """Seconds to predict 2,048 candidates and to update on one batch of 64 (PaCM, XGBoost)."""
    import numpy as np
    from tvm.s_tir import meta_schedule as ms

    from pruner_ms.cost_model import PaCM

    ctx = _context(wl)
    cands = (wl.candidates * (2048 // len(wl.candidates) + 1))[:2048]
    batch, lat = wl.candidates[:64], wl.latencies[:64]
    out = {}
    for name in model_names:
        if name == "pacm":
            model = PaCM(seed=seed)
        elif name == "xgb":
            model = ms.cost_model.XGBModel(num_warmup_samples=0, num_tuning_cores=2)
        else:
            continue
        t = time.perf_counter()
        model.update(ctx, batch, _results(lat))
        upd = time.perf_counter() - t
        t = time.perf_counter()
        scores = model.predict(ctx, cands)
        pred = time.perf_counter() - t
        out[name] = {"update_64_s": upd, "predict_2048_s": pred, "finite": bool(np.all(np.isfinite(scores)))}
    return out


def main(argv=None) -> int:
    import numpy as np

    from pruner_ms.bench.dataset import load_records
    from pruner_ms.cost_model.train import ranking_metrics

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", default=None, help="dataset directory (default: the shipped tests/data/cpu_dataset)")
    p.add_argument("--holdout", default=None, help="comma list of held-out workloads (default: each in turn)")
    p.add_argument("--models", default=",".join(MODELS), help=f"comma list of {', '.join(MODELS)}")
    p.add_argument("--epochs", type=int, default=30, help="PaCM training epochs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timing", action="store_true", help="also time predict(2048) and update(64)")
    p.add_argument("--out", default="results/eval_cost_model.json")
    a = p.parse_args(argv)
    models = a.models.split(",")
    for m in models:
        if m not in MODELS:
            p.error(f"unknown model {m!r}; choose from {', '.join(MODELS)}")
    root = a.dataset or str(Path(__file__).resolve().parents[1] / "tests" / "data" / "cpu_dataset")
    data = load_records(root)
    holdouts = a.holdout.split(",") if a.holdout else sorted(data)
    for h in holdouts:
        if h not in data:
            p.error(f"unknown workload {h!r}; the dataset has {', '.join(sorted(data))}")

    per_model: dict[str, list] = {m: [] for m in models}
    rows = []
    for h in holdouts:
        test = data[h]
        train = [wl for name, wl in sorted(data.items()) if name != h]
        thr = np.where(test.valid, 1.0 / np.where(test.valid, test.latencies, 1.0), 0.0)
        for m in models:
            t = time.perf_counter()
            try:
                model = _fit(m, train, root, epochs=a.epochs, seed=a.seed)
                scores = np.asarray(model.predict(_context(test), test.candidates), dtype=np.float64)
            except Exception as err:  # noqa: BLE001  (one model failing must not hide the others)
                print(f"{h} {m}: FAILED {type(err).__name__}: {err}", flush=True)
                rows.append({"holdout": h, "model": m, "error": f"{type(err).__name__}: {err}"})
                continue
            met = ranking_metrics([(scores, thr)])
            per_model[m].append((scores, thr))
            rows.append({"holdout": h, "model": m, "seconds": time.perf_counter() - t, **met})
            print(f"{h} {m}: pairwise {met['pairwise_accuracy']:.3f} recall@10 {met['recall@10']:.2f} "
                  f"ndcg@10 {met['ndcg@10']:.3f} near-best@10 {met['near_best@10']:.2f} "
                  f"peak@5 {met['peak_score@5']:.3f}", flush=True)
    summary = {m: ranking_metrics(groups) for m, groups in per_model.items() if groups}
    print("\n| model | pairwise accuracy | recall@10 | NDCG@10 | near-best@10 (5 %) | peak score@1 | peak score@5 | "
          "workloads |")
    print("|---|---|---|---|---|---|---|---|")
    for m, s in summary.items():
        print(f"| {m} | {s['pairwise_accuracy']:.3f} | {s['recall@10']:.2f} | {s['ndcg@10']:.3f} | "
              f"{s['near_best@10']:.2f} | {s['peak_score@1']:.3f} | {s['peak_score@5']:.3f} | {s['n_groups']} |")
    timing = _timing(models, data[holdouts[0]], seed=a.seed) if a.timing else None
    if timing:
        print("timing (s):", json.dumps(timing))
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({"argv": sys.argv, "summary": summary, "rows": rows, "timing": timing}, f, indent=1, default=str)
    print(f"wrote {a.out}")
    failed = sorted({(r["model"], r["error"]) for r in rows if "error" in r})
    if failed:  # the evaluation asked for these models; a failure is an error, not a footnote
        for m, err in failed:
            print(f"eval_cost_model: model {m} failed: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

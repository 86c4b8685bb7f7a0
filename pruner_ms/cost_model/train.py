"""Offline PaCM training from MetaSchedule work_dirs, and the ranking metrics to judge a cost model.

Each work_dir is a ``JSONDatabase`` (``database_workload.json`` + ``database_tuning_record.json``).
Records are grouped by workload; train and validation sets are split **by workload**, so the
validation metrics measure transfer to workloads the model has not seen.

Metrics (design note section 4 reports them for the reference model), averaged over workloads:

* pairwise accuracy: share of program pairs with different true throughput ordered correctly;
* recall@k: share of the true k best programs that are among the model's k best;
* NDCG@k: discounted gain of the model's k best (gain: throughput over the best) over the ideal's;
* near-best@k: share of the model's k best within 5 % of the best latency;
* peak score@k: best true throughput among the model's k best over the true best.

Ties (equal scores, equal throughputs) are broken at random with a fixed seed, not by input order:
a model that scores every program alike must not look good because the dataset lists good programs
first.

Command line::

    python -m pruner_ms.cost_model.train WORK_DIR... [--holdout NAME]... --out ckpt.pt
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import os
import sys
import time
from collections.abc import Iterable, Sequence

import numpy as np

from ..integration.records import RecordsError, WorkloadRecords, read_work_dir

logger = logging.getLogger("pruner_ms")


# ---------------------------------------------------------------------------------------- metrics
#: a program within this share of the best latency counts as near-best
NEAR_BEST_TOLERANCE = 0.05


def _order(scores, *, seed: int = 0) -> np.ndarray:
    """Indices by descending score, ties broken at random (reproducibly, by ``seed``)."""
    s = np.asarray(scores, dtype=np.float64)
    tie_break = np.random.default_rng(seed).permutation(len(s))
    return np.lexsort((tie_break, -s))


def pairwise_accuracy(scores, throughputs) -> float:
    """Share of pairs with different true throughput that ``scores`` order the same way
    (a score tie counts half); ``nan`` when no such pair exists."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(throughputs, dtype=np.float64)
    dy = np.sign(y[:, None] - y[None, :])
    ds = np.sign(s[:, None] - s[None, :])
    mask = dy > 0
    n = int(mask.sum())
    if n == 0:
        return math.nan
    return float(((ds[mask] > 0).sum() + 0.5 * (ds[mask] == 0).sum()) / n)


def recall_at_k(scores, throughputs, k: int, *, seed: int = 0) -> float:
    """Share of the ``k`` truly best programs among the ``k`` best by ``scores`` (``nan`` when
    nothing ran)."""
    y = np.asarray(throughputs, dtype=np.float64)
    if len(y) == 0 or y.max() <= 0:
        return math.nan
    k = min(k, len(y))
    predicted = set(_order(scores, seed=seed)[:k].tolist())
    true = set(_order(y, seed=seed + 1)[:k].tolist())
    return len(predicted & true) / k


def ndcg_at_k(scores, throughputs, k: int, *, seed: int = 0) -> float:
    """Normalised discounted cumulative gain of the ``k`` best by ``scores``, the gain of a program
    being its throughput over the best (``nan`` when nothing ran)."""
    y = np.asarray(throughputs, dtype=np.float64)
    if len(y) == 0 or y.max() <= 0:
        return math.nan
    gain = y / y.max()
    k = min(k, len(y))
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = float((gain[_order(scores, seed=seed)[:k]] * discount).sum())
    ideal = float((np.sort(gain)[::-1][:k] * discount).sum())
    return dcg / ideal


def near_best_at_k(scores, throughputs, k: int, *, tolerance: float = NEAR_BEST_TOLERANCE, seed: int = 0) -> float:
    """Share of the ``k`` best by ``scores`` whose latency is within ``tolerance`` of the best
    (``nan`` when nothing ran)."""
    y = np.asarray(throughputs, dtype=np.float64)
    if len(y) == 0 or y.max() <= 0:
        return math.nan
    top = _order(scores, seed=seed)[:min(k, len(y))]
    return float(np.mean(y[top] * (1.0 + tolerance) >= y.max()))


def peak_score_at_k(scores, throughputs, k: int, *, seed: int = 0) -> float:
    """Best true throughput among the ``k`` best by ``scores``, over the best true throughput
    (``nan`` when nothing ran)."""
    y = np.asarray(throughputs, dtype=np.float64)
    if len(y) == 0 or y.max() <= 0:
        return math.nan
    return float(y[_order(scores, seed=seed)[:k]].max() / y.max())


def ranking_metrics(groups: Iterable[tuple[np.ndarray, np.ndarray]], ks: Sequence[int] = (1, 5, 10)) -> dict:
    """Metrics of each ``(scores, throughputs)`` group averaged over groups (``nan`` entries skipped).

    Returns
    -------
    dict
        ``pairwise_accuracy`` and, for each ``k``, ``recall@{k}``, ``ndcg@{k}``, ``near_best@{k}``
        and ``peak_score@{k}``; ``n_groups``.
    """
    per_k = {"recall": recall_at_k, "ndcg": ndcg_at_k, "near_best": near_best_at_k, "peak_score": peak_score_at_k}
    rows: dict[str, list[float]] = {"pairwise_accuracy": []}
    for k in ks:
        for name in per_k:
            rows[f"{name}@{k}"] = []
    n = 0
    for scores, thr in groups:
        n += 1
        rows["pairwise_accuracy"].append(pairwise_accuracy(scores, thr))
        for k in ks:
            for name, metric in per_k.items():
                rows[f"{name}@{k}"].append(metric(scores, thr, k))
    out: dict = {}
    for name, vals in rows.items():
        v = [x for x in vals if not math.isnan(x)]
        out[name] = float(np.mean(v)) if v else math.nan
    out["n_groups"] = n
    return out


# ---------------------------------------------------------------------------------------- data
def load_work_dir(work_dir: str) -> list[WorkloadRecords]:
    """The records of a MetaSchedule work_dir grouped by workload (in order of first appearance), named
    by the work_dir's base name (``base/i`` when it holds several); records whose trace no longer
    replays (another TVM version) are left out with a warning. Raises :class:`RecordsError` when
    ``work_dir`` is not a MetaSchedule work_dir or a file is corrupt."""
    return read_work_dir(work_dir, on_replay_error="skip")


def featurize_records(model, wl: WorkloadRecords) -> tuple[list, list]:
    """Featurised programs and latencies of a workload (as :func:`load_work_dir` read it)."""
    from tvm.s_tir import meta_schedule as ms

    from ..integration.workarounds import tensor_intrinsics_for

    with tensor_intrinsics_for(wl.target):
        ctx = ms.TuneContext(wl.mod, target=wl.target, num_threads="physical")
    cands, lats = list(wl.candidates), [float(x) for x in wl.latencies]
    samples = []
    for lo in range(0, len(cands), 512):
        samples += model.featurize(ctx, cands[lo:lo + 512])
    return samples, lats


# ---------------------------------------------------------------------------------------- training
@dataclasses.dataclass
class TrainReport:
    """What :func:`train_offline` did and how well the model ranks."""

    train_workloads: list[str]
    val_workloads: list[str]
    n_train_records: int
    n_val_records: int
    epochs_run: int
    train_loss: list[float]
    train_metrics: dict
    val_metrics: dict
    per_workload: dict
    seconds: float

    def as_dict(self) -> dict:
        """Plain data for JSON (``nan`` metrics, e.g. without validation workloads, become ``None``)."""
        def clean(x):
            if isinstance(x, float) and math.isnan(x):
                return None
            if isinstance(x, dict):
                return {k: clean(v) for k, v in x.items()}
            if isinstance(x, list):
                return [clean(v) for v in x]
            return x

        return clean(dataclasses.asdict(self))


def _split(names: list[str], work_dirs: dict[str, str], holdout: Sequence[str], val_fraction: float,
           seed: int) -> set[str]:
    if holdout:
        val = set()
        for h in holdout:
            hit = {n for n in names if n == h or os.path.basename(os.path.normpath(work_dirs[n])) == h}
            if not hit:
                raise ValueError(f"holdout {h!r} matches no workload; workloads: {', '.join(sorted(names))}")
            val |= hit
        if len(val) == len(names):
            raise ValueError("every workload is held out: nothing is left to train on")
        return val
    if len(names) < 2 or val_fraction <= 0:
        return set()
    n_val = min(len(names) - 1, max(1, round(val_fraction * len(names))))
    rng = np.random.default_rng(seed)
    return {names[i] for i in rng.permutation(len(names))[:n_val]}


def train_offline(work_dirs: list[str], *, holdout: Sequence[str] = (), epochs: int = 50,
                  patience: int | None = 16, val_fraction: float = 0.0, seed: int = 0, progress: bool = True,
                  model_kwargs: dict | None = None):
    """Train a PaCM on the records of MetaSchedule work_dirs and rank the held-out workloads.

    Parameters
    ----------
    work_dirs : list of str
        MetaSchedule work_dirs (JSONDatabase files).
    holdout : sequence of str
        Validation workloads, by workload name or work_dir base name.
    epochs : int, default 50
        Epoch budget (design note section 3.3).
    patience : int or None, default 16
        Early stop when the EMA training loss has not improved for this many epochs.
    val_fraction : float, default 0.0
        Without ``holdout``: share of workloads drawn (seeded) for validation.
    seed : int, default 0
        Seeds the model and the split.
    progress : bool, default True
        tqdm bar over epochs.
    model_kwargs : dict, optional
        Keyword arguments of :class:`~pruner_ms.cost_model.pacm.PaCM` (``seed`` defaults to ``seed``).

    Returns
    -------
    model : PaCM
        The trained model (its training data cleared; ready for ``save`` or online use).
    report : TrainReport
    """
    from .pacm import PaCM, throughput_labels

    t0 = time.perf_counter()
    workloads: list[WorkloadRecords] = []
    for wd in work_dirs:
        workloads += load_work_dir(wd)
    if not workloads:
        raise ValueError(f"no tuning records in {list(work_dirs)}")
    names = [w.name for w in workloads]
    if len(set(names)) != len(names):
        raise ValueError(f"two work_dirs share a base name: {sorted(names)}")
    val = _split(names, {w.name: w.work_dir for w in workloads}, holdout, val_fraction, seed)
    model = PaCM(**{"seed": seed, **(model_kwargs or {})})
    feats = {}
    for w in workloads:
        feats[w.name] = featurize_records(model, w)
        if w.name not in val:
            model.add_measurements(w.name, *feats[w.name])
    history = model.fit(epochs=epochs, patience=patience, progress=progress)
    model.clear_measurements()

    per_workload = {}
    groups = {"train": [], "val": []}
    for w in workloads:
        samples, lats = feats[w.name]
        if not samples:
            continue
        pair = (model.score_samples(samples), throughput_labels(lats))
        split = "val" if w.name in val else "train"
        groups[split].append(pair)
        per_workload[w.name] = {"split": split, "records": len(samples), **ranking_metrics([pair])}
    report = TrainReport(
        train_workloads=[n for n in names if n not in val], val_workloads=[n for n in names if n in val],
        n_train_records=sum(len(feats[n][0]) for n in names if n not in val),
        n_val_records=sum(len(feats[n][0]) for n in names if n in val),
        epochs_run=len(history), train_loss=history,
        train_metrics=ranking_metrics(groups["train"]), val_metrics=ranking_metrics(groups["val"]),
        per_workload=per_workload, seconds=time.perf_counter() - t0,
    )
    return model, report


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m pruner_ms.cost_model.train") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("work_dirs", nargs="+", metavar="WORK_DIR", help="MetaSchedule work_dirs")
    parser.add_argument("--holdout", action="append", default=[], metavar="NAME",
                        help="validation workload (name or work_dir base name); repeatable")
    parser.add_argument("--out", required=True, help="checkpoint to write (torch .pt)")
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--patience", type=int, default=16)
    parser.add_argument("--val-fraction", type=float, default=0.0,
                        help="without --holdout: share of workloads held out at random")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report", help="also write the report as JSON here")
    args = parser.parse_args(argv)
    try:
        model, report = train_offline(args.work_dirs, holdout=args.holdout, epochs=args.epochs,
                                      patience=args.patience, val_fraction=args.val_fraction, seed=args.seed)
    except RecordsError as err:  # a path that is not a work_dir, or a corrupt database file
        parser.error(str(err))
    model.save(args.out)
    text = json.dumps(report.as_dict(), indent=2)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text + "\n")
    print(text)
    print(f"checkpoint written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""PaCM: the pattern-aware learned cost model (the "verify" model), with MoA online adaptation.

Design note ``/work/shared/design/pruner_method.md``: features section 3.1, network 3.2, loss and
optimiser 3.3, MoA section 4, MetaSchedule mapping 6.1-6.4.

Inputs per program
    * statement rows: MetaSchedule's ``PerStoreFeature`` (164 values per store, 172 with the 8
      workload values of ``extract_workload=True``; section 6.1);
    * dataflow-pattern tokens: one per leaf block (:mod:`pruner_ms.cost_model.patterns`), an id
      plus a 13-value vector, padded to ``max_tokens`` (23).

Deliberate differences from the reference (each decided, see section 6.3 "Invariants"):
    * predictions use ``eval()`` BatchNorm statistics (the reference predicted in train mode);
    * the feature-max normalisation is fixed the first time the model is trained (or comes from
      the checkpoint) instead of being recomputed at every retrain, so that warm starts and the
      MoA anchor see inputs on the scale they were trained on;
    * the pattern branch masks padding tokens in the attention and the token sum;
    * online ``update`` (non-MoA) warm-starts from the current weights for ``update_epochs``
      epochs instead of training a fresh net for 50 epochs every round;
    * the LambdaRank loss is taken per workload inside each mini-batch (labels are normalised per
      workload, so cross-workload pairs carry no ranking information);
    * MetaSchedule clamps scores at 0 (section 6.3), so ``predict`` returns
      ``sigmoid(score - offset)``: positive, order-preserving, comparable across calls, with
      ``offset`` the median score on the training data of the last fit.
"""
from __future__ import annotations

import collections
import contextlib
import copy
import dataclasses
import logging
import math
import os

import numpy as np
import torch
import tvm_ffi
from torch import nn
from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.cost_model import PyCostModel

from ..integration.measured_latency import FAILED_THRESHOLD_SECONDS, result_seconds
from .patterns import DEFAULT_MAX_TOKENS, N_TOKEN_FEATURES, VOCAB_SIZE, pattern_features

logger = logging.getLogger("pruner_ms")

CHECKPOINT_FORMAT = "pruner_ms.PaCM"
CHECKPOINT_VERSION = 1
# More of a batch's programs than this without pattern tokens is warned about (PaCM then ranks them on
# their statement features alone).
PATTERN_FAILURE_WARN_SHARE = 0.1
_ARCH_KEYS = ("stmt_hidden", "token_hidden", "pattern_hidden", "heads", "fusion_hidden", "res_blocks",
              "max_tokens", "extract_workload")
_TRAIN_KEYS = ("lr", "weight_decay", "grad_clip", "batch_size", "update_epochs", "momentum", "moa_period",
               "moa_epochs", "patience", "seed")


@tvm_ffi.register_error("pruner_ms.CheckpointError")  # keeps its type through MetaSchedule's FFI calls
class CheckpointError(ValueError):
    """A PaCM checkpoint is missing, unreadable or incompatible with this version of pruner_ms."""


@dataclasses.dataclass
class Sample:
    """One featurised program."""

    stmt: np.ndarray  # (n_stores, n_features) float32, PerStoreFeature rows
    ids: np.ndarray  # (max_tokens,) int64, pattern token ids (0 = padding)
    tokens: np.ndarray  # (max_tokens, N_TOKEN_FEATURES) float32, pattern token vectors


def throughput_labels(latencies) -> np.ndarray:
    """Normalised throughput of one workload: ``(1 / latency) / best``, failed runs (``None``,
    non-finite or a failure marker, see :mod:`~pruner_ms.integration.measured_latency`) 0; all zeros
    when nothing ran."""
    lat = np.array([np.nan if x is None else float(x) for x in latencies], dtype=np.float64)
    ok = np.isfinite(lat) & (lat > 0) & (lat < FAILED_THRESHOLD_SECONDS)
    thr = np.zeros(len(lat))
    thr[ok] = 1.0 / lat[ok]
    best = thr.max(initial=0.0)
    return thr / best if best > 0 else thr


def lambda_rank_loss(scores: torch.Tensor, labels: torch.Tensor, *, sigma: float = 1.0,
                     eps: float = 1e-10) -> torch.Tensor:
    """LambdaRank (NDCG-weighted pairwise logistic) loss of one group, design note section 3.3.

    Predictions sorted descending; ``G = (2^y - 1) / maxDCG``, ``D = log2(1 + rank)``; pair weight
    ``|1/D_i - 1/D_j| * |G_i - G_j|``; loss ``-sum_{y_i > y_j} weight * log2 sigmoid(s_i - s_j)``.
    """
    order = torch.argsort(scores, descending=True)
    s, y = scores[order], labels[order]
    n = s.shape[0]
    disc = torch.log2(torch.arange(2, n + 2, dtype=s.dtype))
    ideal = torch.sort(labels, descending=True).values
    max_dcg = ((torch.pow(2.0, ideal) - 1.0) / disc).sum().clamp(min=eps)
    gain = (torch.pow(2.0, y) - 1.0) / max_dcg
    weight = (1.0 / disc[:, None] - 1.0 / disc[None, :]).abs() * (gain[:, None] - gain[None, :]).abs()
    pairs = (y[:, None] - y[None, :]) > 0
    log2_sig = nn.functional.logsigmoid(sigma * (s[:, None] - s[None, :]).clamp(-1e8, 1e8)) / math.log(2.0)
    return -(weight * log2_sig)[pairs].sum()


class PaCMNet(nn.Module):
    """The PaCM network (design note section 3.2).

    statement rows -> Linear, ReLU, Linear, ReLU -> sum over a program's rows (``h_s``);
    tokens -> (embedding(id) + Linear(vector)), ReLU, Linear, ReLU -> ``z``;
    ``z + MultiheadAttention(z, z, z)`` -> sum over tokens (``h_p``);
    ``[h_s; h_p]`` -> Linear, ReLU, BatchNorm -> ``res_blocks`` x (``x + ReLU(Linear(x))``) -> Linear -> score.
    """

    def __init__(self, n_features: int, *, n_token_features: int = N_TOKEN_FEATURES, vocab_size: int = VOCAB_SIZE,
                 stmt_hidden: int = 256, token_hidden: int = 64, pattern_hidden: int = 128, heads: int = 4,
                 fusion_hidden: int = 256, res_blocks: int = 2) -> None:
        super().__init__()
        self.stmt = nn.Sequential(nn.Linear(n_features, stmt_hidden), nn.ReLU(),
                                  nn.Linear(stmt_hidden, stmt_hidden), nn.ReLU())
        # Embedding(id) + Linear(vector) is one Linear over [one-hot id; vector] (the reference's 23 -> 64)
        self.tok_embed = nn.Embedding(vocab_size, token_hidden, padding_idx=0)
        self.tok_in = nn.Linear(n_token_features, token_hidden)
        self.tok_mlp = nn.Sequential(nn.ReLU(), nn.Linear(token_hidden, pattern_hidden), nn.ReLU())
        self.attn = nn.MultiheadAttention(pattern_hidden, heads, batch_first=True)
        self.fuse = nn.Sequential(nn.Linear(stmt_hidden + pattern_hidden, fusion_hidden), nn.ReLU(),
                                  nn.BatchNorm1d(fusion_hidden))
        self.res = nn.ModuleList(nn.Linear(fusion_hidden, fusion_hidden) for _ in range(res_blocks))
        self.head = nn.Linear(fusion_hidden, 1)

    def forward(self, rows: torch.Tensor, segments: torch.Tensor, ids: torch.Tensor,
                tokens: torch.Tensor) -> torch.Tensor:
        n = ids.shape[0]
        h = self.stmt(rows)
        h_s = torch.zeros(n, h.shape[1], dtype=h.dtype).index_add_(0, segments, h)
        pad = ids == 0
        z = self.tok_mlp(self.tok_embed(ids) + self.tok_in(tokens))
        attn_mask = pad.clone()
        attn_mask[pad.all(dim=1), 0] = False  # a program without tokens: avoid an all-masked softmax
        a, _ = self.attn(z, z, z, key_padding_mask=attn_mask, need_weights=False)
        h_p = ((z + a) * (~pad).unsqueeze(-1).to(z.dtype)).sum(dim=1)
        x = self.fuse(torch.cat([h_s, h_p], dim=1))
        for lin in self.res:
            x = x + torch.relu(lin(x))
        return self.head(x).squeeze(-1)


@dataclasses.dataclass
class _Batch:
    rows: torch.Tensor
    segments: torch.Tensor
    ids: torch.Tensor
    tokens: torch.Tensor


class _Packed:
    """Samples packed into flat arrays (normalised), for fast mini-batch gathering."""

    def __init__(self, samples: list[Sample], stmt_scale: np.ndarray, tok_scale: np.ndarray, n_features: int):
        lens = np.array([s.stmt.shape[0] for s in samples], dtype=np.int64)
        self.lens = lens
        self.starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64) if len(lens) else lens
        rows = [s.stmt for s in samples if s.stmt.shape[0]]
        flat = np.concatenate(rows) if rows else np.zeros((0, n_features), np.float32)
        self.rows = torch.from_numpy((flat / stmt_scale).astype(np.float32))
        self.ids = torch.from_numpy(np.stack([s.ids for s in samples]).astype(np.int64))
        self.tokens = torch.from_numpy((np.stack([s.tokens for s in samples]) / tok_scale).astype(np.float32))

    def batch(self, idx: np.ndarray) -> _Batch:
        lens = self.lens[idx]
        total = int(lens.sum())
        seg = np.repeat(np.arange(len(idx)), lens)
        offs = np.repeat(self.starts[idx] - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
        row_idx = torch.from_numpy(np.arange(total) + offs)
        ti = torch.from_numpy(idx)
        return _Batch(self.rows[row_idx], torch.from_numpy(seg), self.ids[ti], self.tokens[ti])


@contextlib.contextmanager
def _torch_threads(n: int | None):
    """Run torch with ``n`` intra-op threads, restoring the setting afterwards (``None``: leave it)."""
    if n is None or n == torch.get_num_threads():
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


@derived_object
class PaCM(PyCostModel):
    """Pattern-aware cost model (PaCM) as a MetaSchedule cost model, with optional MoA.

    Parameters
    ----------
    stmt_hidden, token_hidden, pattern_hidden, heads, fusion_hidden, res_blocks : int
        Network sizes (design note section 3.2): statement MLP 256, token layer 64, pattern branch
        128 with 4 attention heads, fusion 256, 2 residual blocks.
    max_tokens : int, default 23
        Pattern tokens per program.
    extract_workload : bool, default True
        Append MetaSchedule's 8 workload values to each statement row (172 instead of 164).
    lr, weight_decay, grad_clip : float
        Adam learning rate 7e-4, weight decay 1e-6, gradient-norm clip 0.5 (section 3.3).
    batch_size : int, default 512
        Training mini-batch (programs).
    update_epochs : int, default 5
        Epochs per online ``update`` without MoA, warm-started from the current weights.
    moa : bool or None, default None
        Momentum online adaptation (section 4). ``None``: on when ``pretrained`` is given.
    momentum : float, default 0.99
        MoA momentum of the anchor.
    moa_period : int, default 4
        MoA retrains on every ``moa_period``-th update only.
    moa_epochs : int, default 50
        Epoch budget of an MoA retrain (with early stopping after ``patience`` epochs).
    patience : int, default 16
        Early stop of offline and MoA training when the EMA training loss stops improving.
    pretrained : str, optional
        Checkpoint to start from (architecture taken from the checkpoint).
    predict_batch_size : int, default 4096
        Inference batch.
    seed : int, default 0
        Seeds the initial weights and the mini-batch order: training is reproducible.
    num_threads : int or None, default 1
        torch threads while the model trains or predicts (restored afterwards). With 2 threads on a
        2-core machine that MetaSchedule also keeps busy, torch slows down ~100x; ``None`` leaves
        torch's setting alone.
    feature_cache_size : int, default 16384
        Featurised programs kept by structural hash (about 3 KB each); 0 disables the cache.

    Notes
    -----
    ``@derived_object`` makes ``PaCM(...)`` MetaSchedule's FFI wrapper: reading attributes and calling
    methods reaches the Python object, but an assignment (``model.update_epochs = 2``) would land on
    the wrapper; set hyper-parameters in the constructor (or on ``model._inst``).
    ``predict``/``update``/``save``/``load`` go through the FFI: errors other than
    :class:`CheckpointError` (registered with tvm_ffi) arrive as ``RuntimeError``.

    Examples
    --------
    >>> model = PaCM()                                          # learns online from the first batch
    >>> ms.tune_tir(mod, target, work_dir, 512, cost_model=model, strategy=pruner_ms.PrunerSearch())
    >>> adapted = PaCM(pretrained="cpu_pacm.pt")                # MoA from an offline-trained model
    """

    def __init__(self, *, stmt_hidden: int = 256, token_hidden: int = 64, pattern_hidden: int = 128, heads: int = 4,
                 fusion_hidden: int = 256, res_blocks: int = 2, max_tokens: int = DEFAULT_MAX_TOKENS,
                 extract_workload: bool = True, lr: float = 7e-4, weight_decay: float = 1e-6,
                 grad_clip: float = 0.5, batch_size: int = 512, update_epochs: int = 5, moa: bool | None = None,
                 momentum: float = 0.99, moa_period: int = 4, moa_epochs: int = 50, patience: int = 16,
                 pretrained: str | None = None, predict_batch_size: int = 4096, seed: int = 0,
                 num_threads: int | None = 1, feature_cache_size: int = 16384) -> None:
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"momentum must be in [0, 1], got {momentum}")
        if moa_period < 1 or update_epochs < 0 or batch_size < 2:
            raise ValueError("moa_period must be >= 1, update_epochs >= 0 and batch_size >= 2")
        self.stmt_hidden, self.token_hidden, self.pattern_hidden = stmt_hidden, token_hidden, pattern_hidden
        self.heads, self.fusion_hidden, self.res_blocks = heads, fusion_hidden, res_blocks
        self.max_tokens, self.extract_workload = max_tokens, extract_workload
        self.lr, self.weight_decay, self.grad_clip = lr, weight_decay, grad_clip
        self.batch_size, self.update_epochs = batch_size, update_epochs
        self.moa = bool(pretrained) if moa is None else moa
        self.momentum, self.moa_period, self.moa_epochs, self.patience = momentum, moa_period, moa_epochs, patience
        self.predict_batch_size, self.seed, self.num_threads = predict_batch_size, seed, num_threads
        self.feature_cache_size = feature_cache_size
        self.pretrained = pretrained

        self.stmt_scale: np.ndarray | None = None
        self.tok_scale: np.ndarray | None = None
        self.score_offset = 0.0
        self.n_updates = 0  # update() calls (shared across workloads, as the reference's counter)
        self.n_fits = 0
        self.anchor: dict | None = None  # MoA anchor (theta_s), a state_dict
        self.data: dict = {}  # workload key -> {"samples": [...], "latencies": [...]}
        self._extractor = None
        self._cache: collections.OrderedDict = collections.OrderedDict()  # (target, program hash) -> Sample
        self._build()
        if pretrained is not None:
            self.load(pretrained)
            self.n_updates = 0
            if self.moa:  # section 4: the pretrained model is both the predictor and the anchor
                self.anchor = copy.deepcopy(self.net.state_dict())

    # ------------------------------------------------------------------ network and features
    @property
    def n_features(self) -> int:
        return 172 if self.extract_workload else 164

    def _build(self) -> None:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.net = PaCMNet(self.n_features, stmt_hidden=self.stmt_hidden, token_hidden=self.token_hidden,
                               pattern_hidden=self.pattern_hidden, heads=self.heads,
                               fusion_hidden=self.fusion_hidden, res_blocks=self.res_blocks)
        self.net.eval()

    def hyperparameters(self) -> dict:
        """The architecture and training hyper-parameters (saved in checkpoints)."""
        return {k: getattr(self, k) for k in _ARCH_KEYS + _TRAIN_KEYS}

    def featurize(self, context, candidates) -> list[Sample]:
        """Statement rows (``PerStoreFeature``) and pattern tokens of each candidate.

        Results are cached by the program's structural hash (``feature_cache_size`` programs), so
        programs scored again (drafts kept across rounds, measured programs passed to ``update``)
        cost a hash (~0.07 ms) instead of a feature extraction (~3 ms).
        """
        from tvm.s_tir.meta_schedule.feature_extractor import PerStoreFeature

        candidates = list(candidates)
        if not candidates:
            return []
        if self._extractor is None:
            self._extractor = PerStoreFeature(extract_workload=self.extract_workload)
        cache = self._cache
        if self.feature_cache_size > 0:
            target = str(context.target)
            keys = [(target, int(tvm_ffi.structural_hash(c.sch.mod))) for c in candidates]
        else:
            keys = [None] * len(candidates)
        todo = [i for i, k in enumerate(keys) if k is None or k not in cache]
        fresh: dict[int, Sample] = {}
        if todo:
            feats = self._extractor.extract_from(context, [candidates[i] for i in todo])
            failed, first_error = 0, None
            for i, f in zip(todo, feats):
                stmt = f.numpy().astype(np.float32).reshape(-1, self.n_features)
                try:
                    ids, toks = pattern_features(candidates[i].sch.mod, max_tokens=self.max_tokens)
                except Exception as err:  # noqa: BLE001  (an unreadable program gets no tokens, never aborts tuning)
                    failed += 1
                    first_error = first_error or f"{type(err).__name__}: {err}"
                    logger.debug("pattern extraction failed: %s", err)
                    ids = np.zeros(self.max_tokens, np.int64)
                    toks = np.zeros((self.max_tokens, N_TOKEN_FEATURES), np.float32)
                fresh[i] = Sample(stmt, ids, toks)
            if failed > PATTERN_FAILURE_WARN_SHARE * len(todo):
                logger.warning("PaCM: the pattern tokens of %d of %d programs could not be extracted (they are ranked "
                               "on their statement features alone); first error: %s", failed, len(todo), first_error)
        out = []
        for i, k in enumerate(keys):
            sample = fresh.get(i)
            if sample is None:
                sample = cache[k]
                cache.move_to_end(k)
            elif k is not None:
                cache[k] = sample
            out.append(sample)
        while len(cache) > self.feature_cache_size:
            cache.popitem(last=False)
        return out

    def _pack(self, samples: list[Sample]) -> _Packed:
        return _Packed(samples, self.stmt_scale if self.stmt_scale is not None else np.float32(1.0),
                       self.tok_scale if self.tok_scale is not None else np.float32(1.0), self.n_features)

    def score_samples(self, samples: list[Sample]) -> np.ndarray:
        """Raw network scores (higher = faster) of featurised programs, eval mode."""
        if not samples:
            return np.zeros(0)
        packed = self._pack(samples)
        self.net.eval()
        out = []
        with torch.no_grad(), _torch_threads(self.num_threads):
            for lo in range(0, len(samples), self.predict_batch_size):
                b = packed.batch(np.arange(lo, min(lo + self.predict_batch_size, len(samples))))
                out.append(self.net(b.rows, b.segments, b.ids, b.tokens).numpy())
        return np.concatenate(out).astype(np.float64)

    # ------------------------------------------------------------------ MetaSchedule interface
    def predict(self, context, candidates) -> np.ndarray:
        """Scores in (0, 1), higher = faster: ``sigmoid(raw - offset)``."""
        raw = self.score_samples(self.featurize(context, candidates))
        return 1.0 / (1.0 + np.exp(-np.clip(raw - self.score_offset, -700.0, 700.0)))

    def update(self, context, candidates, results) -> None:
        """Add the measured programs (failed runs = zero throughput) and train (section 3.3 / 4)."""
        key = int(tvm_ffi.structural_hash(context.mod))
        self.add_measurements(key, self.featurize(context, candidates), [result_seconds(r) for r in results])
        self.n_updates += 1
        if self.moa:
            if self.n_updates % self.moa_period == 0:
                self.moa_step()
        elif self.update_epochs > 0:
            self.fit(epochs=self.update_epochs)

    # ------------------------------------------------------------------ training
    def add_measurements(self, key, samples: list[Sample], latencies: list) -> None:
        """Store measured programs of workload ``key`` (latency in seconds; ``None`` or ``inf`` = failed)."""
        if len(samples) != len(latencies):
            raise ValueError(f"{len(samples)} samples but {len(latencies)} latencies")
        group = self.data.setdefault(key, {"samples": [], "latencies": []})
        group["samples"].extend(samples)
        group["latencies"].extend(latencies)

    def clear_measurements(self) -> None:
        """Forget the stored training data (the weights stay)."""
        self.data = {}

    def _training_set(self) -> tuple[list[Sample], np.ndarray, np.ndarray]:
        samples, labels, groups = [], [], []
        for gi, group in enumerate(self.data.values()):
            samples += group["samples"]
            labels.append(throughput_labels(group["latencies"]))
            groups.append(np.full(len(group["samples"]), gi))
        if not samples:
            return [], np.zeros(0), np.zeros(0, np.int64)
        return samples, np.concatenate(labels), np.concatenate(groups)

    def _set_scales(self, samples: list[Sample]) -> None:
        """Feature-max normalisation (section 3.1), fixed from the first training set on."""
        if self.stmt_scale is None:
            rows = [s.stmt for s in samples if s.stmt.shape[0]]
            mx = np.abs(np.concatenate(rows)).max(axis=0) if rows else np.zeros(self.n_features)
            self.stmt_scale = np.where(mx > 1e-6, mx, 1.0).astype(np.float32)
        if self.tok_scale is None:
            mx = np.abs(np.stack([s.tokens for s in samples])).max(axis=(0, 1))
            self.tok_scale = np.where(mx > 1e-6, mx, 1.0).astype(np.float32)

    def loss(self, samples: list[Sample], labels: np.ndarray, groups: np.ndarray) -> float:
        """LambdaRank loss of the model on ``samples`` (eval mode, summed over groups)."""
        if not samples:
            return 0.0
        self._set_scales(samples)
        b = self._pack(samples).batch(np.arange(len(samples)))
        self.net.eval()
        with torch.no_grad(), _torch_threads(self.num_threads):
            pred = self.net(b.rows, b.segments, b.ids, b.tokens)
            return float(self._group_loss(pred, torch.from_numpy(labels).float(), groups))

    @staticmethod
    def _group_loss(pred: torch.Tensor, labels: torch.Tensor, groups: np.ndarray) -> torch.Tensor:
        total = pred.new_zeros(())
        for g in np.unique(groups):
            sel = torch.from_numpy(np.flatnonzero(groups == g))
            if len(sel) > 1:
                total = total + lambda_rank_loss(pred[sel], labels[sel])
        return total

    def fit(self, *, epochs: int, patience: int | None = None, progress: bool = False) -> list[float]:
        """Train on all stored measurements, warm-started from the current weights.

        Parameters
        ----------
        epochs : int
            Epoch budget.
        patience : int, optional
            Stop after this many epochs without improvement of the EMA (0.95) training loss.
        progress : bool, default False
            Show a tqdm bar.

        Returns
        -------
        list of float
            Mean training loss per epoch.
        """
        samples, labels, groups = self._training_set()
        if len(samples) < 2:
            return []
        self._set_scales(samples)
        packed = self._pack(samples)
        y = torch.from_numpy(labels).float()
        rng = np.random.default_rng([self.seed, self.n_fits])
        self.n_fits += 1
        opt = torch.optim.Adam(self.net.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        n_batches = max(1, math.ceil(len(samples) / self.batch_size))
        history: list[float] = []
        ema, best, stale = None, math.inf, 0
        bar = range(epochs)
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(bar, desc="PaCM", unit="epoch")
        with torch.random.fork_rng(devices=[]), _torch_threads(self.num_threads):
            torch.manual_seed(int(rng.integers(2**31)))
            for _ in bar:
                self.net.train()
                losses = []
                for idx in np.array_split(rng.permutation(len(samples)), n_batches):
                    if len(idx) < 2:  # BatchNorm needs two programs
                        continue
                    b = packed.batch(idx)
                    pred = self.net(b.rows, b.segments, b.ids, b.tokens)
                    loss = self._group_loss(pred, y[torch.from_numpy(idx)], groups[idx])
                    if not loss.requires_grad:  # no ordered pair in this batch
                        continue
                    opt.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(self.net.parameters(), self.grad_clip)
                    opt.step()
                    losses.append(loss.item())
                history.append(float(np.mean(losses)) if losses else 0.0)
                if progress:
                    bar.set_postfix(loss=f"{history[-1]:.4g}")
                ema = history[-1] if ema is None else 0.95 * ema + 0.05 * history[-1]
                if ema < best - 1e-12:
                    best, stale = ema, 0
                else:
                    stale += 1
                    if patience is not None and stale >= patience:
                        break
        self.net.eval()
        self.score_offset = float(np.median(self.score_samples(samples)))
        return history

    def moa_step(self) -> list[float]:
        """One MoA retrain (design note section 4, PAMpy:367-400), called on every ``moa_period``-th update.

        1. theta_new <- copy of the anchor theta_s (whole state_dict, BatchNorm statistics included);
        2. train theta_new on all target records collected so far (section 3.3 recipe: Adam, at most
           ``moa_epochs`` epochs, early stop after ``patience``);
        3. momentum step on parameters only: theta_s <- m * theta_s + (1 - m) * theta_new;
        4. predictions use theta_new (the fine-tuned student), not the anchor.
        """
        if self.anchor is None:
            raise RuntimeError("MoA adapts a pretrained model: pass PaCM(pretrained=path) or call load(path) first")
        self.net.load_state_dict(self.anchor)  # 1 (copies the tensors)
        history = self.fit(epochs=self.moa_epochs, patience=self.patience)  # 2
        student = self.net.state_dict()
        params = {name for name, _ in self.net.named_parameters()}
        m = self.momentum
        with torch.no_grad():
            for name in params:  # 3: parameters only; the anchor's buffers stay as they were
                self.anchor[name] = m * self.anchor[name] + (1.0 - m) * student[name].detach()
        return history  # 4: self.net is the student

    # ------------------------------------------------------------------ checkpoints
    def save(self, path: str) -> None:
        """Write a torch checkpoint: format version, hyper-parameters, weights, normalisation, MoA anchor."""
        state = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "hparams": self.hyperparameters(),
            "n_features": self.n_features,
            "n_token_features": N_TOKEN_FEATURES,
            "vocab_size": VOCAB_SIZE,
            "state_dict": self.net.state_dict(),
            "anchor": self.anchor,
            "stmt_scale": None if self.stmt_scale is None else torch.from_numpy(self.stmt_scale),
            "tok_scale": None if self.tok_scale is None else torch.from_numpy(self.tok_scale),
            "score_offset": self.score_offset,
            "n_updates": self.n_updates,
            "n_fits": self.n_fits,
            "torch_version": str(torch.__version__),
        }
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        torch.save(state, path)

    def load(self, path: str) -> None:
        """Read a checkpoint written by :meth:`save` (the architecture comes from the checkpoint;
        training hyper-parameters stay as constructed).

        Raises
        ------
        CheckpointError
            The file is missing, not a PaCM checkpoint, corrupt, or from an incompatible version.
        """
        fix = ("re-create it with PaCM.save(path) or `python -m pruner_ms.cost_model.train WORK_DIR... "
               f"--out {path}`")
        if not os.path.isfile(path):
            raise CheckpointError(f"PaCM checkpoint {path!r} does not exist: train one with `python -m "
                                  f"pruner_ms.cost_model.train WORK_DIR... --out {path}` or pass an existing file")
        try:
            ckpt = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as err:  # any unpickling failure means the same thing here
            raise CheckpointError(f"PaCM checkpoint {path!r} is corrupt or not a torch checkpoint "
                                  f"({type(err).__name__}: {str(err)[:200]}); {fix}") from err
        if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
            raise CheckpointError(f"{path!r} is a torch file but not a PaCM checkpoint (no format "
                                  f"{CHECKPOINT_FORMAT!r}); {fix}")
        if ckpt.get("version") != CHECKPOINT_VERSION:
            raise CheckpointError(f"PaCM checkpoint {path!r} has format version {ckpt.get('version')!r}, this "
                                  f"pruner_ms reads version {CHECKPOINT_VERSION}; {fix}")
        if ckpt.get("n_token_features") != N_TOKEN_FEATURES or ckpt.get("vocab_size") != VOCAB_SIZE:
            raise CheckpointError(f"PaCM checkpoint {path!r} was trained on different pattern tokens "
                                  f"({ckpt.get('vocab_size')} ids x {ckpt.get('n_token_features')} values, "
                                  f"expected {VOCAB_SIZE} x {N_TOKEN_FEATURES}); {fix}")
        saved = {k: getattr(self, k) for k in _ARCH_KEYS}
        try:
            hp = ckpt["hparams"]
            for k in _ARCH_KEYS:
                setattr(self, k, hp[k])
            if ckpt["n_features"] != self.n_features:
                raise KeyError("n_features")
            self._build()
            self.net.load_state_dict(ckpt["state_dict"])
            anchor = ckpt.get("anchor")
            if anchor is not None:
                self.net.load_state_dict(anchor)  # checks it fits the architecture
                self.net.load_state_dict(ckpt["state_dict"])
        except (KeyError, TypeError, RuntimeError) as err:
            for k, v in saved.items():
                setattr(self, k, v)
            self._build()
            raise CheckpointError(f"PaCM checkpoint {path!r} does not match its own hyper-parameters or this "
                                  f"version of PaCM ({type(err).__name__}: {str(err)[:200]}); {fix}") from err
        if anchor is not None:  # resume an adaptation
            self.anchor = {k: v.clone() for k, v in anchor.items()}
        elif self.moa:  # section 4: the loaded model is both the predictor and the anchor
            self.anchor = copy.deepcopy(self.net.state_dict())
        else:
            self.anchor = None
        self.stmt_scale = None if ckpt.get("stmt_scale") is None else ckpt["stmt_scale"].numpy().copy()
        self.tok_scale = None if ckpt.get("tok_scale") is None else ckpt["tok_scale"].numpy().copy()
        self.score_offset = float(ckpt.get("score_offset", 0.0))
        self.n_updates = int(ckpt.get("n_updates", 0))
        self.n_fits = int(ckpt.get("n_fits", 0))
        self._extractor = None
        self._cache.clear()  # the architecture may extract a different feature length
        self.net.eval()

"""Tuning curves: best latency so far against search time and against trials (matplotlib, optional:
``pip install 'pruner_ms[plot]'``)."""
from __future__ import annotations

import math
import os


def plot_curves(runs: list[dict], out_dir: str, *, log=print) -> list[str]:
    """One PNG per workload, two panels (vs seconds, vs trials), a line per strategy and seed.

    Returns the files written; without matplotlib, says how to get it and returns ``[]``.
    """
    if not runs:
        return []
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("tuning-curve PNGs skipped: matplotlib is not installed (pip install 'pruner_ms[plot]')")
        return []
    os.makedirs(out_dir, exist_ok=True)
    strategies = sorted({r["strategy"] for r in runs})
    colors = {s: f"C{i}" for i, s in enumerate(strategies)}
    written = []
    for wl in dict.fromkeys(r["workload"] for r in runs):
        fig, (ax_t, ax_n) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
        for r in (r for r in runs if r["workload"] == wl):
            pts = [(b["seconds"], b["trials"], b["best"] * 1e3) for b in r["batches"] if math.isfinite(b["best"])]
            if not pts:
                continue
            secs, trials, best = zip(*pts)
            style = {"color": colors[r["strategy"]], "linestyle": ["-", "--", ":", "-."][r["seed"] % 4],
                     "label": f"{r['strategy']} seed {r['seed']}", "where": "post", "marker": "o", "markersize": 3}
            ax_t.step(secs, best, **style)
            ax_n.step(trials, best, **style)
        ax_t.set_xlabel("tuning time (s, search + build + measure)")
        ax_n.set_xlabel("measured trials")
        ax_t.set_ylabel("best latency so far (ms)")
        for ax in (ax_t, ax_n):
            ax.grid(alpha=0.3)
        ax_n.legend(fontsize=7)
        fig.suptitle(wl)
        fig.tight_layout()
        path = os.path.join(out_dir, f"{wl}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def plot_model_curves(rows: list[dict], out_dir: str, *, log=print) -> list[str]:
    """One PNG per model: the network's weighted latency (``sum(weight x best)``, ms) against tuning
    time, a line per strategy / task scheduler and seed; the zero-measurement compile is a point at its
    drafting time and its compiled model's latency. Returns the files written (``[]`` without matplotlib)."""
    from .network import ZERO_MEASURE, row_key

    if not rows:
        return []
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("model-curve PNGs skipped: matplotlib is not installed (pip install 'pruner_ms[plot]')")
        return []
    os.makedirs(out_dir, exist_ok=True)
    labels = sorted({row_key(r)[1] for r in rows})
    colors = {s: f"C{i}" for i, s in enumerate(labels)}
    written = []
    for model in dict.fromkeys(r["model"] for r in rows):
        fig, ax = plt.subplots(figsize=(7, 4))
        for r in (r for r in rows if r["model"] == model):
            label = row_key(r)[1]
            name = f"{label} seed {r['seed']}"
            if label == ZERO_MEASURE:
                if r.get("tuned_ms") is not None:
                    ax.plot([r["tuning_seconds"]], [r["tuned_ms"]], "*", color=colors[label], markersize=10,
                            label=f"{name} (compiled model)")
                continue
            if not r.get("curve"):
                continue
            secs, _, weighted = zip(*r["curve"])
            ax.step(secs, weighted, where="post", color=colors[label], linestyle=["-", "--", ":", "-."][r["seed"] % 4],
                    label=name)
        ax.set_xlabel("tuning time (s)")
        ax.set_ylabel("weighted latency, sum(weight x best) (ms)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.suptitle(f"{model} (end to end)")
        fig.tight_layout()
        path = os.path.join(out_dir, f"model-{model}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written

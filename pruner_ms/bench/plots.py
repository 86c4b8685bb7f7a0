"""Tuning curves: best latency so far against search time and against trials (matplotlib, optional:
``pip install 'pruner_ms[plot]'``)."""
from __future__ import annotations

import math
import os


def _pyplot(rows: list, out_dir: str, what: str, log):
    """matplotlib's pyplot (Agg) with ``out_dir`` made, or None when there is nothing to plot or no
    matplotlib (said once in ``log``)."""
    if not rows:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log(f"{what} PNGs skipped: matplotlib is not installed (pip install 'pruner_ms[plot]')")
        return None
    os.makedirs(out_dir, exist_ok=True)
    return plt


def _save(plt, fig, title: str, path: str) -> str:
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_curves(runs: list[dict], out_dir: str, *, log=print) -> list[str]:
    """One PNG per workload, two panels (vs seconds, vs trials), a line per strategy and seed.

    Returns the files written; without matplotlib, says how to get it and returns ``[]``.
    """
    plt = _pyplot(runs, out_dir, "tuning-curve", log)
    if plt is None:
        return []
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
        written.append(_save(plt, fig, wl, os.path.join(out_dir, f"{wl}.png")))
    return written


def plot_model_curves(rows: list[dict], out_dir: str, *, log=print) -> list[str]:
    """One PNG per model: the network's weighted latency (``sum(weight x best)``, ms) against tuning
    time, a line per strategy / task scheduler and seed, with the compiled model's latency (timed at
    the end) as a cross at the line's end; the zero-measurement compile is a star at its drafting time
    and its compiled model's latency. Returns the files written (``[]`` without matplotlib)."""
    from .network import ZERO_MEASURE, row_key

    plt = _pyplot(rows, out_dir, "model-curve", log)
    if plt is None:
        return []
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
            if r.get("tuned_ms") is not None:  # the compiled model, timed once at the end
                ax.plot([secs[-1]], [r["tuned_ms"]], "x", color=colors[label], markersize=8)
        ax.set_xlabel("tuning time (s)")
        ax.set_ylabel("ms: weighted latency sum(weight x best) (lines);\ncompiled model (x, *)", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        written.append(_save(plt, fig, f"{model} (end to end)", os.path.join(out_dir, f"model-{model}.png")))
    return written

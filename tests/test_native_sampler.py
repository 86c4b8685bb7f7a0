"""Random samples by TVM's C++ sampler (``TraceReplayer(native_sampling=True)``) against Python replays."""
from __future__ import annotations

import logging

import numpy as np
import pytest
import tvm
from tvm.s_tir import meta_schedule as ms

from pruner_ms.analysis import analyzer_for_target
from pruner_ms.bench.workloads import gemm
from pruner_ms.strategy import native_sampler
from pruner_ms.strategy.trace_replay import NATIVE_CHUNK, TraceReplayer

from .conftest import pruner_ms_log


@pytest.fixture(scope="module")
def gemm_context(target):
    ctx = ms.TuneContext(tvm.IRModule({"main": gemm(128, 128, 128).func}), target=target,
                         space_generator=ms.space_generator.PostOrderApply(), num_threads=2, rand_state=1)
    return ctx, ctx.generate_design_space()


def _sample(ctx, spaces, seed: int, count: int, *, native: bool, score=None):
    pop = TraceReplayer(ctx, np.random.default_rng(seed), num_threads=2, native_sampling=native)
    try:
        if score is None:
            return pop.sample(spaces, count), pop
        with pop.scoring(score):
            return pop.sample(spaces, count), pop
    finally:
        pop.close()


def _sketch(trace) -> tuple[str, ...]:
    """The design space a program came from: its trace's instruction kinds before the postprocs, less
    the ``Get*`` lookups (TVM's sampler replays simplified traces, which drop unused lookups)."""
    kinds = []
    for inst in trace.insts:
        if inst.kind.name == "EnterPostproc":
            break
        if not inst.kind.name.startswith("Get"):
            kinds.append(inst.kind.name)
    return tuple(kinds)


def test_native_samples_are_postprocessed_fresh_scored_and_reproducible(gemm_context):
    """More than one chunk: every sample is a postprocessed program with decisions drawn anew, the
    scoring hook sees each once, and a seed reproduces the samples in order."""
    ctx, spaces = gemm_context
    count = NATIVE_CHUNK + 40
    scored: list[int] = []
    got, pop = _sample(ctx, spaces, 0, count, native=True, score=lambda c: scored.append(c.key))
    assert pop.native_sampling  # it did not fall back
    assert len(got) == count  # a CPU GEMM's random programs all pass the postprocs
    assert scored == [c.key for c in got]
    assert len({c.key for c in got}) > 0.9 * count  # decisions are sampled, not the design space's
    for c in got:  # the postprocs ran: RewriteParallelVectorizeUnroll consumed the annotations
        kinds = [inst.kind.name for inst in c.sch.trace.insts]
        assert "Unannotate" in kinds[kinds.index("EnterPostproc"):]
    again, _ = _sample(ctx, spaces, 0, count, native=True)
    assert [c.key for c in again] == [c.key for c in got]
    other, _ = _sample(ctx, spaces, 1, count, native=True)
    assert len({c.key for c in other} & {c.key for c in got}) < 0.2 * count


def test_native_and_python_samples_come_from_one_distribution(gemm_context, target):
    """The same spaces sampled both ways: the analyzer's estimates of the two sets have the same
    median (log scale) and spread, and each design space is drawn about as often."""
    ctx, spaces = gemm_context
    analyzer = analyzer_for_target(target)
    sets = {}
    for native in (True, False):
        cands, _ = _sample(ctx, spaces, 5, 300, native=native)
        logs = np.log([analyzer.estimate_seconds(c.sch.mod) for c in cands])
        sketch = [_sketch(c.sch.trace) for c in cands]
        sets[native] = (logs, sketch)
    (ln, sn), (lp, sp) = sets[True], sets[False]
    assert abs(np.median(ln) - np.median(lp)) < 0.35
    assert abs(np.std(ln) - np.std(lp)) < 0.35 * np.std(lp)
    for sk in set(sp):
        share_n, share_p = sn.count(sk) / len(sn), sp.count(sk) / len(sp)
        assert abs(share_n - share_p) < 0.12, (sk[:5], share_n, share_p)


def test_a_failing_native_sampler_falls_back_to_python_replays_loudly(gemm_context, monkeypatch):
    ctx, spaces = gemm_context

    def broken(self, count):
        raise RuntimeError("sampler out of order")

    monkeypatch.setattr(native_sampler.NativeSampler, "sample", broken)
    with pruner_ms_log(logging.WARNING) as seen:
        got, pop = _sample(ctx, spaces, 0, 40, native=True)
    assert len(got) == 40 and not pop.native_sampling
    assert any("native sampler failed" in m and "out of order" in m for m in seen), seen

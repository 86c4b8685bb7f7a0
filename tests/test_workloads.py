"""Benchmark workloads: every op's numpy reference against TVM's own untuned build, and the cpu suite."""
from __future__ import annotations

import numpy as np
import pytest

from pruner_ms.bench import workloads as W

# small shapes of every family the suites use (untuned builds run slowly, so keep them tiny)
SMALL = [
    W.gemm(16, 24, 8),
    W.dense(1, 32, 48),
    W.dense(4, 32, 16),
    W.batch_matmul(2, 8, 12, 16, transpose_b=True),
    W.batch_matmul(2, 8, 12, 16),
    W.conv2d_nchw(1, 4, 9, 9, 6, 3, 3, 1),
    W.conv2d_nchw(1, 4, 9, 9, 6, 3, 3, 1, stride=2),
    W.conv2d_nchw(1, 8, 7, 7, 4, 1, 1, 0),
    W.depthwise_conv2d_nchw(1, 6, 9, 9, 3, 3, 1, 1),
    W.depthwise_conv2d_nchw(1, 6, 10, 10, 3, 3, 2, 1),
    W.conv2d_bias_relu_nchw(1, 4, 8, 8, 6, 3, 3, 1),
    W.conv2d_bias_relu_nchw(1, 4, 9, 9, 6, 3, 3, 1, stride=2),
]


@pytest.mark.parametrize("wl", SMALL, ids=[w.name for w in SMALL])
def test_numpy_reference_matches_untuned_tvm_build(wl, target):
    import tvm

    ex = tvm.compile(wl.func, target=target)
    inputs = wl.make_inputs(np.random.default_rng(0))
    args = [tvm.runtime.tensor(x) for x in inputs] + [tvm.runtime.empty(wl.output_shape, wl.output_dtype)]
    ex["main"](*args)
    ref = wl.reference(*inputs)
    assert ref.shape == tuple(wl.output_shape)
    np.testing.assert_allclose(args[-1].numpy(), ref, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(ref).max())))


def test_bias_relu_clips_and_stride_names():
    wl = W.conv2d_bias_relu_nchw(1, 4, 8, 8, 6, 3, 3, 1)
    out = wl.reference(*wl.make_inputs(np.random.default_rng(0)))
    assert (out == 0).any() and (out > 0).any(), "the bias must push some outputs below zero for ReLU to matter"
    assert W.conv2d_nchw(1, 64, 56, 56, 64, 3, 3, 1).name == "conv2d-1x64x56x56-f64-k3"  # unchanged at stride 1
    assert W.conv2d_nchw(1, 64, 56, 56, 64, 3, 3, 1, stride=2).name == "conv2d-1x64x56x56-f64-k3s2"
    assert W.conv2d_nchw(1, 64, 56, 56, 64, 3, 3, 1, stride=2).output_shape == (1, 64, 28, 28)


def test_cpu_suite_has_ten_unique_sourced_workloads():
    from pruner_ms.bench.suite import load_suite

    suite = load_suite("cpu")
    specs = suite["workloads"]
    wls = [W.workload_from_spec(s) for s in specs]
    names = [w.name for w in wls]
    assert len(names) >= 10 and len(set(names)) == len(names)
    for spec, wl in zip(specs, wls):
        assert spec.get("source") in suite["sources"], f"{wl.name} has no entry in the suite's sources"
        assert wl.flops > 0
        out = wl.reference(*wl.make_inputs(np.random.default_rng(0)))  # full size: numpy only, a second or so
        assert out.shape == tuple(wl.output_shape) and np.isfinite(out).all()
    ops = {s["op"] for s in specs}
    assert {"depthwise_conv2d_nchw", "conv2d_bias_relu_nchw", "batch_matmul"} <= ops
    assert any(s["args"].get("stride", 1) == 2 for s in specs if s["op"] == "conv2d_nchw")
    assert any(s["args"].get("batch") == 1 for s in specs if s["op"] == "dense")


def test_short_names_build():
    for short in ("dense-gemv", "bmm-attn", "dwconv-s1", "dwconv-s2", "conv1x1", "conv-s2", "conv-bias-relu"):
        wl = W.get_workload(short)
        assert wl.flops > 0 and wl.func is not None


def test_models_suite_names_registered_sourced_models_with_room_for_a_task_scheduler():
    from pruner_ms.bench.models import MODELS
    from pruner_ms.bench.suite import load_suite
    from pruner_ms.task_scheduler import TASK_SCHEDULERS

    suite = load_suite("models")
    assert {m["model"] for m in suite["models"]} >= {"resnet18", "mobilenetv2", "bert-layer"}
    for m in suite["models"]:
        assert m["model"] in MODELS and m["model"] in suite["sources"]
        assert "default/gradient" in m["runs"] and "pruner/headroom" in m["runs"]
        assert {label.partition("/")[2] for label in m["runs"]} <= set(TASK_SCHEDULERS)
        assert m["trials_per_task"] > m["trials_per_iter"]  # a task may get more than one round

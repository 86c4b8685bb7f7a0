"""Benchmark workloads: TE definitions plus numpy references to check tuned results against."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
from tvm import te, tirx


@dataclasses.dataclass
class Workload:
    name: str
    func: tirx.PrimFunc
    make_inputs: Callable[[np.random.Generator], list[np.ndarray]]
    reference: Callable[..., np.ndarray]
    output_shape: tuple[int, ...]
    flops: float
    output_dtype: str = "float32"


def gemm(m: int, n: int, k: int) -> Workload:
    A = te.placeholder((m, k), "float32", name="A")
    B = te.placeholder((k, n), "float32", name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return Workload(
        f"gemm-{m}x{n}x{k}", te.create_prim_func([A, B, C]),
        lambda rng: [rng.random((m, k), dtype=np.float32), rng.random((k, n), dtype=np.float32)],
        lambda a, b: a @ b, (m, n), 2.0 * m * n * k,
    )


def dense(batch: int, in_features: int, out_features: int) -> Workload:
    """A dense layer without bias: ``C[i, j] = sum_k X[i, k] * W[j, k]`` (GEMM with a transposed weight).

    Parameters
    ----------
    batch, in_features, out_features : int
        ``X`` is ``batch x in_features``, ``W`` is ``out_features x in_features``.

    Returns
    -------
    Workload
        Named ``dense-{batch}x{in_features}x{out_features}``, with a numpy reference.
    """
    X = te.placeholder((batch, in_features), "float32", name="X")
    W = te.placeholder((out_features, in_features), "float32", name="W")
    r = te.reduce_axis((0, in_features), name="k")
    C = te.compute((batch, out_features), lambda i, j: te.sum(X[i, r] * W[j, r], axis=r), name="C")
    return Workload(
        f"dense-{batch}x{in_features}x{out_features}", te.create_prim_func([X, W, C]),
        lambda rng: [rng.random((batch, in_features), dtype=np.float32),
                     rng.random((out_features, in_features), dtype=np.float32)],
        lambda x, w: x @ w.T, (batch, out_features), 2.0 * batch * in_features * out_features,
    )


def gemm_fp16(m: int, n: int, k: int, *, acc_dtype: str = "float32") -> Workload:
    """C = A @ B on fp16 inputs accumulated in ``acc_dtype``: the shape tensor cores tensorize."""
    A = te.placeholder((m, k), "float16", name="A")
    B = te.placeholder((k, n), "float16", name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r].astype(acc_dtype) * B[r, j].astype(acc_dtype), axis=r),
                   name="C")
    return Workload(
        f"gemm-fp16-{m}x{n}x{k}" + ("" if acc_dtype == "float32" else "-acc16"), te.create_prim_func([A, B, C]),
        lambda rng: [rng.random((m, k)).astype(np.float16), rng.random((k, n)).astype(np.float16)],
        lambda a, b: (a.astype(np.float32) @ b.astype(np.float32)).astype(acc_dtype), (m, n), 2.0 * m * n * k,
        acc_dtype,
    )


def conv2d_nchw(n: int, c: int, h: int, w: int, f: int, kh: int, kw: int, pad: int) -> Workload:
    X = te.placeholder((n, c, h, w), "float32", name="X")
    W = te.placeholder((f, c, kh, kw), "float32", name="W")
    Xp = te.compute(
        (n, c, h + 2 * pad, w + 2 * pad),
        lambda b, ci, y, x: te.if_then_else(
            te.all(y >= pad, y < h + pad, x >= pad, x < w + pad), X[b, ci, y - pad, x - pad], tirx.const(0.0, "float32")),
        name="pad",
    )
    rc = te.reduce_axis((0, c), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    oh, ow = h + 2 * pad - kh + 1, w + 2 * pad - kw + 1
    Y = te.compute(
        (n, f, oh, ow),
        lambda b, fo, y, x: te.sum(Xp[b, rc, y + ry, x + rx] * W[fo, rc, ry, rx], axis=[rc, ry, rx]),
        name="conv",
    )

    def reference(x, wt):
        xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        cols = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))  # n,c,oh,ow,kh,kw
        return np.einsum("ncyxij,fcij->nfyx", cols, wt, optimize=True).astype(np.float32)

    return Workload(
        f"conv2d-{n}x{c}x{h}x{w}-f{f}-k{kh}", te.create_prim_func([X, W, Y]),
        lambda rng: [rng.random((n, c, h, w), dtype=np.float32), rng.random((f, c, kh, kw), dtype=np.float32)],
        reference, (n, f, oh, ow), 2.0 * n * f * oh * ow * c * kh * kw,
    )


WORKLOADS: dict[str, Callable[[], Workload]] = {
    "gemm-512": lambda: gemm(512, 512, 512),
    "gemm-256": lambda: gemm(256, 256, 256),
    "gemm-64": lambda: gemm(64, 64, 64),
    "conv2d-resnet": lambda: conv2d_nchw(1, 64, 56, 56, 64, 3, 3, 1),
    "gemm-fp16-1024": lambda: gemm_fp16(1024, 1024, 1024),
}


def get_workload(name: str) -> Workload:
    try:
        return WORKLOADS[name]()
    except KeyError:
        raise KeyError(f"unknown workload {name!r}; choose from {', '.join(WORKLOADS)}") from None

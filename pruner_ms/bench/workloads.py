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


def batch_matmul(b: int, m: int, n: int, k: int, *, dtype: str = "float32", acc_dtype: str = "float32",
                 transpose_b: bool = False) -> Workload:
    """``C[b] = A[b] @ B[b]`` (``B[b].T`` with ``transpose_b``), as attention's QK^T and PV are.

    fp16 inputs accumulate in ``acc_dtype``, so tensor-core sketches apply.
    """
    A = te.placeholder((b, m, k), dtype, name="A")
    B = te.placeholder((b, n, k) if transpose_b else (b, k, n), dtype, name="B")
    r = te.reduce_axis((0, k), name="k")

    def body(x, i, j):
        bv = B[x, j, r] if transpose_b else B[x, r, j]
        return te.sum(A[x, i, r].astype(acc_dtype) * bv.astype(acc_dtype), axis=r)

    C = te.compute((b, m, n), body, name="C")
    np_dtype = np.dtype(dtype)

    def reference(a, bb):
        bb = np.swapaxes(bb, 1, 2) if transpose_b else bb
        return np.matmul(a.astype(np.float32), bb.astype(np.float32)).astype(acc_dtype)

    tag = "" if dtype == "float32" else f"-{dtype.replace('float', 'fp')}"
    return Workload(
        f"bmm{tag}-{b}x{m}x{n}x{k}" + ("-nt" if transpose_b else ""), te.create_prim_func([A, B, C]),
        lambda rng: [rng.random((b, m, k)).astype(np_dtype),
                     rng.random((b, n, k) if transpose_b else (b, k, n)).astype(np_dtype)],
        reference, (b, m, n), 2.0 * b * m * n * k, acc_dtype,
    )


def conv2d_nhwc(n: int, h: int, w: int, c: int, f: int, kh: int, kw: int, *, stride: int = 1, pad: int = 0,
                dtype: str = "float16", acc_dtype: str = "float32") -> Workload:
    """NHWC conv2d with HWIO weights (the layout tensor-core conv sketches tensorize)."""
    X = te.placeholder((n, h, w, c), dtype, name="X")
    W = te.placeholder((kh, kw, c, f), dtype, name="W")
    Xp = te.compute(
        (n, h + 2 * pad, w + 2 * pad, c),
        lambda b, y, x, ci: te.if_then_else(
            te.all(y >= pad, y < h + pad, x >= pad, x < w + pad), X[b, y - pad, x - pad, ci], tirx.const(0, dtype)),
        name="pad",
    )
    oh, ow = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1
    rc, ry, rx = te.reduce_axis((0, c), name="rc"), te.reduce_axis((0, kh), name="ry"), te.reduce_axis((0, kw), name="rx")
    Y = te.compute(
        (n, oh, ow, f),
        lambda b, y, x, fo: te.sum(Xp[b, y * stride + ry, x * stride + rx, rc].astype(acc_dtype)
                                   * W[ry, rx, rc, fo].astype(acc_dtype), axis=[ry, rx, rc]),
        name="conv",
    )
    np_dtype = np.dtype(dtype)

    def reference(x, wt):
        xp = np.pad(x.astype(np.float32), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
        cols = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(1, 2))[:, ::stride, ::stride]
        return np.einsum("nyxcij,ijcf->nyxf", cols, wt.astype(np.float32), optimize=True).astype(acc_dtype)

    tag = "" if dtype == "float32" else f"-{dtype.replace('float', 'fp')}"
    return Workload(
        f"conv2d-nhwc{tag}-{n}x{h}x{w}x{c}-f{f}-k{kh}s{stride}", te.create_prim_func([X, W, Y]),
        lambda rng: [rng.random((n, h, w, c)).astype(np_dtype), rng.random((kh, kw, c, f)).astype(np_dtype)],
        reference, (n, oh, ow, f), 2.0 * n * f * oh * ow * c * kh * kw, acc_dtype,
    )


# op name in a suite file -> constructor (keyword arguments as in the suite entry)
OPS: dict[str, Callable[..., Workload]] = {
    "gemm": gemm, "dense": dense, "gemm_fp16": gemm_fp16, "conv2d_nchw": conv2d_nchw,
    "batch_matmul": batch_matmul, "conv2d_nhwc": conv2d_nhwc,
}


def workload_from_spec(spec: dict) -> Workload:
    """A workload from a suite entry ``{"op": ..., "args": {...}, "name": optional}``."""
    op = spec.get("op")
    if op not in OPS:
        raise KeyError(f"unknown op {op!r} in suite entry {spec}; ops: {', '.join(OPS)}")
    try:
        wl = OPS[op](**spec.get("args", {}))
    except TypeError as err:
        raise ValueError(f"bad arguments for op {op!r} in suite entry {spec}: {err}") from None
    if spec.get("name"):
        wl.name = spec["name"]
    return wl


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

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


def _pad_nchw(X, pad: int, dtype: str = "float32"):
    """Zero padding of the two spatial axes of an NCHW tensor (a separate block, as TOPI writes it)."""
    n, c, h, w = (int(d) for d in X.shape)
    return te.compute(
        (n, c, h + 2 * pad, w + 2 * pad),
        lambda b, ci, y, x: te.if_then_else(
            te.all(y >= pad, y < h + pad, x >= pad, x < w + pad), X[b, ci, y - pad, x - pad], tirx.const(0.0, dtype)),
        name="pad",
    )


def _np_windows(x: np.ndarray, kh: int, kw: int, stride: int, pad: int) -> np.ndarray:
    """``n, c, oh, ow, kh, kw`` sliding windows of a zero-padded NCHW array (numpy references)."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    return np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]


def _conv_nchw_te(n, c, h, w, f, kh, kw, pad, stride):
    """TE placeholders and the conv block of an NCHW / OIHW conv2d; returns ``(X, W, Y, (oh, ow))``."""
    X = te.placeholder((n, c, h, w), "float32", name="X")
    W = te.placeholder((f, c, kh, kw), "float32", name="W")
    Xp = _pad_nchw(X, pad)
    rc, ry = te.reduce_axis((0, c), name="rc"), te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    oh, ow = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1
    Y = te.compute(
        (n, f, oh, ow),
        lambda b, fo, y, x: te.sum(Xp[b, rc, y * stride + ry, x * stride + rx] * W[fo, rc, ry, rx], axis=[rc, ry, rx]),
        name="conv",
    )
    return X, W, Y, (oh, ow)


def _conv_name(prefix: str, n, c, h, w, f, kh, stride) -> str:
    return f"{prefix}-{n}x{c}x{h}x{w}-f{f}-k{kh}" + ("" if stride == 1 else f"s{stride}")


def conv2d_nchw(n: int, c: int, h: int, w: int, f: int, kh: int, kw: int, pad: int, stride: int = 1) -> Workload:
    """An NCHW conv2d with OIHW weights, zero padding ``pad`` and stride ``stride`` on both spatial axes.

    Parameters
    ----------
    n, c, h, w : int
        Input batch, channels, height and width.
    f, kh, kw : int
        Output channels and kernel height and width.
    pad, stride : int
        Zero padding on each side and stride (default 1).

    Returns
    -------
    Workload
        Named ``conv2d-{n}x{c}x{h}x{w}-f{f}-k{kh}``, with ``s{stride}`` appended when ``stride != 1``.
    """
    X, W, Y, (oh, ow) = _conv_nchw_te(n, c, h, w, f, kh, kw, pad, stride)

    def reference(x, wt):
        cols = _np_windows(x, kh, kw, stride, pad)
        return np.einsum("ncyxij,fcij->nfyx", cols, wt, optimize=True).astype(np.float32)

    return Workload(
        _conv_name("conv2d", n, c, h, w, f, kh, stride), te.create_prim_func([X, W, Y]),
        lambda rng: [rng.random((n, c, h, w), dtype=np.float32), rng.random((f, c, kh, kw), dtype=np.float32)],
        reference, (n, f, oh, ow), 2.0 * n * f * oh * ow * c * kh * kw,
    )


def conv2d_bias_relu_nchw(n: int, c: int, h: int, w: int, f: int, kh: int, kw: int, pad: int,
                          stride: int = 1) -> Workload:
    """``relu(conv2d(X, W) + bias)`` as one PrimFunc (a conv with batch norm folded in, as a fusing compiler emits it).

    Parameters are those of :func:`conv2d_nchw`; the bias has one value per output channel.

    Returns
    -------
    Workload
        Named ``conv2d-bias-relu-{n}x{c}x{h}x{w}-f{f}-k{kh}`` (``s{stride}`` appended when ``stride != 1``).
    """
    X, W, Y, (oh, ow) = _conv_nchw_te(n, c, h, w, f, kh, kw, pad, stride)
    bias = te.placeholder((f,), "float32", name="bias")
    Z = te.compute((n, f, oh, ow), lambda b, fo, y, x: te.max(Y[b, fo, y, x] + bias[fo], tirx.const(0.0, "float32")),
                   name="bias_relu")

    def reference(x, wt, bb):
        conv = np.einsum("ncyxij,fcij->nfyx", _np_windows(x, kh, kw, stride, pad), wt, optimize=True)
        return np.maximum(conv + bb[None, :, None, None], 0.0).astype(np.float32)

    return Workload(
        _conv_name("conv2d-bias-relu", n, c, h, w, f, kh, stride), te.create_prim_func([X, W, bias, Z]),
        lambda rng: [rng.random((n, c, h, w), dtype=np.float32), rng.random((f, c, kh, kw), dtype=np.float32),
                     rng.standard_normal(f).astype(np.float32) * float(c * kh * kw) * 0.25],
        reference, (n, f, oh, ow), 2.0 * n * f * oh * ow * c * kh * kw + 2.0 * n * f * oh * ow,
    )


def depthwise_conv2d_nchw(n: int, c: int, h: int, w: int, kh: int, kw: int, stride: int, pad: int) -> Workload:
    """A depthwise NCHW conv2d (channel multiplier 1, weights ``c x 1 x kh x kw`` as in PyTorch).

    Parameters
    ----------
    n, c, h, w : int
        Input batch, channels, height and width (the output has ``c`` channels too).
    kh, kw, stride, pad : int
        Kernel height and width, stride and zero padding on each side.

    Returns
    -------
    Workload
        Named ``dwconv2d-{n}x{c}x{h}x{w}-k{kh}s{stride}``, with a numpy reference.
    """
    X = te.placeholder((n, c, h, w), "float32", name="X")
    W = te.placeholder((c, 1, kh, kw), "float32", name="W")
    Xp = _pad_nchw(X, pad)
    ry, rx = te.reduce_axis((0, kh), name="ry"), te.reduce_axis((0, kw), name="rx")
    oh, ow = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1
    Y = te.compute(
        (n, c, oh, ow),
        lambda b, ci, y, x: te.sum(Xp[b, ci, y * stride + ry, x * stride + rx] * W[ci, 0, ry, rx], axis=[ry, rx]),
        name="dwconv",
    )

    def reference(x, wt):
        return np.einsum("ncyxij,cij->ncyx", _np_windows(x, kh, kw, stride, pad), wt[:, 0], optimize=True
                         ).astype(np.float32)

    return Workload(
        f"dwconv2d-{n}x{c}x{h}x{w}-k{kh}s{stride}", te.create_prim_func([X, W, Y]),
        lambda rng: [rng.random((n, c, h, w), dtype=np.float32), rng.random((c, 1, kh, kw), dtype=np.float32)],
        reference, (n, c, oh, ow), 2.0 * n * c * oh * ow * kh * kw,
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
    "batch_matmul": batch_matmul, "conv2d_nhwc": conv2d_nhwc, "depthwise_conv2d_nchw": depthwise_conv2d_nchw,
    "conv2d_bias_relu_nchw": conv2d_bias_relu_nchw,
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
    # one per family of the cpu suite (configs/suites/cpu.json says where each shape comes from)
    "dense-gemv": lambda: dense(1, 768, 3072),
    "bmm-attn": lambda: batch_matmul(12, 128, 128, 64, transpose_b=True),
    "dwconv-s1": lambda: depthwise_conv2d_nchw(1, 144, 56, 56, 3, 3, 1, 1),
    "dwconv-s2": lambda: depthwise_conv2d_nchw(1, 96, 112, 112, 3, 3, 2, 1),
    "conv1x1": lambda: conv2d_nchw(1, 256, 56, 56, 64, 1, 1, 0),
    "conv-s2": lambda: conv2d_nchw(1, 64, 56, 56, 128, 3, 3, 1, stride=2),
    "conv-bias-relu": lambda: conv2d_bias_relu_nchw(1, 256, 14, 14, 256, 3, 3, 1),
}


def get_workload(name: str) -> Workload:
    try:
        return WORKLOADS[name]()
    except KeyError:
        raise KeyError(f"unknown workload {name!r}; choose from {', '.join(WORKLOADS)}") from None

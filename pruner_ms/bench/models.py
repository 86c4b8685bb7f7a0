"""Torch models for end-to-end checks: each returns ``(model, example_inputs)``, random weights.

``pruner-ms compile --model NAME`` takes a name from :data:`MODELS` or ``module:function`` for any
importable function with the same contract.

ResNet-18, ResNet-50 and MobileNetV2 are defined here, layer for layer as torchvision 0.28 defines
them (``torchvision.models.resnet`` with the stride on the 3x3 convolution of a bottleneck, v1.5;
``torchvision.models.mobilenetv2``), because torchvision cannot be used with the CPU build of torch
2.13 this project installs: the only torchvision for torch 2.13 (0.28.0) is a CUDA build whose
operator library does not load (``operator torchvision::nms does not exist`` on import), and 0.29
needs torch 2.14. The BERT-base encoder layer (hidden 768, 12 heads, feed-forward 3072, GELU,
post-layer-norm, as ``transformers.BertLayer``) is defined here too, so nothing beyond torch is
needed; no weights are downloaded.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable


def small_cnn(batch: int = 1, size: int = 32, width: int = 16, classes: int = 10):
    """conv3x3+ReLU, conv3x3 (stride 2)+ReLU, flatten, linear+ReLU, linear: a conv, matmuls, activations."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1), nn.ReLU(),
        nn.Conv2d(width, 2 * width, 3, stride=2, padding=1), nn.ReLU(),
        nn.Flatten(),
        nn.Linear(2 * width * (size // 2) ** 2, 64), nn.ReLU(),
        nn.Linear(64, classes),
    ).eval()
    return model, (torch.randn(batch, 3, size, size),)


def tiny_cnn():
    """The smallest model with a conv, a matmul and an activation (for tests)."""
    return small_cnn(size=8, width=4)


def _conv_bn(nn, cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1):
    return [nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]


def _randomize_batch_norms(model) -> None:
    """Running statistics and affine parameters drawn at random (a trained network's are not 0 and 1),
    so the folded scale and shift are real arithmetic, as in a trained model."""
    import torch

    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.1, 0.1)


def _resnet(block: str, layers: list[int], batch: int, size: int):
    import torch
    from torch import nn

    expansion = 1 if block == "basic" else 4

    class Block(nn.Module):
        def __init__(self, cin: int, planes: int, stride: int) -> None:
            super().__init__()
            if block == "basic":
                body = [*_conv_bn(nn, cin, planes, 3, stride), nn.ReLU(), *_conv_bn(nn, planes, planes, 3)]
            else:  # bottleneck, stride on the 3x3 (torchvision's ResNet v1.5)
                body = [*_conv_bn(nn, cin, planes, 1), nn.ReLU(), *_conv_bn(nn, planes, planes, 3, stride), nn.ReLU(),
                        *_conv_bn(nn, planes, planes * expansion, 1)]
            self.body = nn.Sequential(*body)
            out = planes * expansion
            self.down = (nn.Sequential(*_conv_bn(nn, cin, out, 1, stride)) if stride != 1 or cin != out
                         else nn.Identity())
            self.relu = nn.ReLU()

        def forward(self, x):
            return self.relu(self.body(x) + self.down(x))

    torch.manual_seed(0)
    stages, cin = [], 64
    for i, (planes, count) in enumerate(zip((64, 128, 256, 512), layers)):
        for j in range(count):
            stages.append(Block(cin, planes, 2 if i > 0 and j == 0 else 1))
            cin = planes * expansion
    model = nn.Sequential(*_conv_bn(nn, 3, 64, 7, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1), *stages,
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000))
    _randomize_batch_norms(model)
    return model.eval(), (torch.randn(batch, 3, size, size),)


def resnet18(batch: int = 1, size: int = 224):
    """ResNet-18 (torchvision's architecture, random weights), ImageNet-sized input."""
    return _resnet("basic", [2, 2, 2, 2], batch, size)


def resnet50(batch: int = 1, size: int = 224):
    """ResNet-50 (torchvision's v1.5 architecture, random weights), ImageNet-sized input."""
    return _resnet("bottleneck", [3, 4, 6, 3], batch, size)


def mobilenet_v2(batch: int = 1, size: int = 224):
    """MobileNetV2 (torchvision's architecture, width 1.0, random weights), ImageNet-sized input."""
    import torch
    from torch import nn

    class InvertedResidual(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
            super().__init__()
            hidden = cin * expand
            layers = [*_conv_bn(nn, cin, hidden, 1), nn.ReLU6()] if expand != 1 else []
            layers += [*_conv_bn(nn, hidden, hidden, 3, stride, groups=hidden), nn.ReLU6(), *_conv_bn(nn, hidden, cout, 1)]
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            return x + self.body(x) if self.residual else self.body(x)

    torch.manual_seed(0)
    layers, cin = [*_conv_bn(nn, 3, 32, 3, 2), nn.ReLU6()], 32
    for expand, cout, count, stride in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                                        (6, 160, 3, 2), (6, 320, 1, 1)):
        for j in range(count):
            layers.append(InvertedResidual(cin, cout, stride if j == 0 else 1, expand))
            cin = cout
    layers += [*_conv_bn(nn, cin, 1280, 1), nn.ReLU6(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
               nn.Linear(1280, 1000)]
    model = nn.Sequential(*layers)
    _randomize_batch_norms(model)
    return model.eval(), (torch.randn(batch, 3, size, size),)


def bert_layer(batch: int = 1, seq: int = 128, hidden: int = 768, heads: int = 12, ffn: int = 3072):
    """One BERT-base encoder layer (as ``transformers.BertLayer``: self-attention, add & layer norm,
    GELU feed-forward, add & layer norm; no attention mask), random weights."""
    import torch
    from torch import nn

    class BertLayer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.qkv = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(3))
            self.attn_out, self.norm1 = nn.Linear(hidden, hidden), nn.LayerNorm(hidden, eps=1e-12)
            self.ffn = nn.Sequential(nn.Linear(hidden, ffn), nn.GELU(), nn.Linear(ffn, hidden))
            self.norm2 = nn.LayerNorm(hidden, eps=1e-12)

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = (proj(x).reshape(b, s, heads, hidden // heads).transpose(1, 2) for proj in self.qkv)
            scores = torch.softmax(q @ k.transpose(-1, -2) / (hidden // heads) ** 0.5, dim=-1)
            ctx = (scores @ v).transpose(1, 2).reshape(b, s, hidden)
            x = self.norm1(x + self.attn_out(ctx))
            return self.norm2(x + self.ffn(x))

    torch.manual_seed(0)
    return BertLayer().eval(), (torch.randn(batch, seq, hidden),)


MODELS: dict[str, Callable] = {"small-cnn": small_cnn, "tiny-cnn": tiny_cnn, "resnet18": resnet18,
                               "resnet50": resnet50, "mobilenetv2": mobilenet_v2, "bert-layer": bert_layer}


def load_model(name: str):
    """``(model, example_inputs)`` for a name in :data:`MODELS` or ``package.module:function``."""
    if name in MODELS:
        return MODELS[name]()
    if ":" not in name:
        raise KeyError(f"unknown model {name!r}: use one of {', '.join(MODELS)} or module:function "
                       "(a function returning (torch.nn.Module, example_inputs_tuple))")
    module, func = name.split(":", 1)
    try:
        fn = getattr(importlib.import_module(module), func)
    except (ImportError, AttributeError) as err:
        raise KeyError(f"cannot load model function {name!r}: {err}") from None
    out = fn()
    if not (isinstance(out, tuple) and len(out) == 2):
        raise ValueError(f"{name} must return (model, example_inputs), got {type(out).__name__}")
    return out

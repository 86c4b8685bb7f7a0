"""Small torch models for end-to-end checks: each returns ``(model, example_inputs)``.

``pruner-ms compile --model NAME`` takes a name from :data:`MODELS` or ``module:function`` for any
importable function with the same contract.
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


MODELS: dict[str, Callable] = {"small-cnn": small_cnn, "tiny-cnn": tiny_cnn}


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

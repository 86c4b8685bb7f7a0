"""The networks of ``pruner-ms compile --model``: torchvision's architectures defined in the repo."""
from __future__ import annotations

import pytest

from pruner_ms.bench import models

# parameter counts of torchvision 0.28's resnet18, resnet50 and mobilenet_v2 (their model cards) and
# of transformers' BertLayer for BERT-base: the architectures here match them layer for layer
PARAMETERS = {"resnet18": 11_689_512, "resnet50": 25_557_032, "mobilenetv2": 3_504_872, "bert-layer": 7_087_872}


@pytest.mark.parametrize("name", sorted(PARAMETERS))
def test_architectures_match_the_reference_parameter_counts(name):
    import torch

    model, inputs = models.load_model(name)
    assert sum(p.numel() for p in model.parameters()) == PARAMETERS[name]
    with torch.no_grad():
        out = model(*inputs)
    assert out.shape == ((1, 1000) if name != "bert-layer" else (1, 128, 768))


@pytest.mark.slow
@pytest.mark.parametrize("name, families", [("resnet18", ("conv2d",)), ("mobilenetv2", ("conv2d",)),
                                            ("bert-layer", ("matmul",))])
def test_networks_import_into_relax_and_split_into_tasks(name, families, target):
    from pruner_ms.integration.relax import extract_tasks, import_torch_model

    model, inputs = models.load_model(name)
    mod, params = import_torch_model(model, inputs)
    tasks = extract_tasks(mod, target, params)
    names = [t.task_name for t in tasks]
    assert len(tasks) >= 4, names
    assert all(any(f in n for n in names) for f in families), names

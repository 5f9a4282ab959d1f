"""gradgen.nn: PyTorch's torch.nn namespace, for the part gradgen has: `functional`,
`Parameter`, `Module` and a few layers (Linear, ReLU, Tanh, Sigmoid, Sequential,
LeakyReLU, ELU, Softplus, Dropout, LayerNorm, Embedding) and loss modules
(CrossEntropyLoss, MSELoss)."""

from __future__ import annotations

from . import functional
from .modules import (
    ELU,
    CrossEntropyLoss,
    Dropout,
    Embedding,
    LayerNorm,
    LeakyReLU,
    Linear,
    Module,
    MSELoss,
    ReLU,
    Sequential,
    Sigmoid,
    Softplus,
    Tanh,
)
from .parameter import Parameter

__all__ = [
    "functional",
    "Parameter",
    "Module",
    "Linear",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "Sequential",
    "CrossEntropyLoss",
    "MSELoss",
    "LeakyReLU",
    "ELU",
    "Softplus",
    "Dropout",
    "LayerNorm",
    "Embedding",
]

"""torch.nn.modules: the layers, one file per family as PyTorch's (module, container,
linear, activation, loss, dropout, normalization, sparse)."""

from __future__ import annotations

from .activation import ELU, LeakyReLU, ReLU, Sigmoid, Softplus, Tanh
from .container import Sequential
from .dropout import Dropout
from .linear import Linear
from .loss import CrossEntropyLoss, MSELoss
from .module import Module

# The helpers that optim's zero_grad and the tests reach (private: not in __all__).
from .module import _overwrite_ as _overwrite_, _reset_grad as _reset_grad
from .normalization import LayerNorm
from .sparse import Embedding

__all__ = [
    "Module",
    "Sequential",
    "Linear",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "LeakyReLU",
    "ELU",
    "Softplus",
    "CrossEntropyLoss",
    "MSELoss",
    "Dropout",
    "LayerNorm",
    "Embedding",
]

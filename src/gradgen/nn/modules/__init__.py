"""torch.nn.modules: the layers, one file per family as PyTorch's (module, container,
linear, activation, loss, dropout, normalization, sparse, distance, flatten)."""

from __future__ import annotations

from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear
from .activation import (
    ReLU,
    Tanh,
    Sigmoid,
    LeakyReLU,
    ELU,
    Softplus,
    Threshold,
    Hardtanh,
    ReLU6,
    Hardsigmoid,
    Hardswish,
    SiLU,
    Mish,
    GELU,
    SELU,
    CELU,
    GLU,
    PReLU,
    LogSigmoid,
    Softsign,
    Tanhshrink,
    Softshrink,
    Hardshrink,
    Softmax,
    Softmin,
    LogSoftmax,
)
from .loss import (
    L1Loss,
    MSELoss,
    NLLLoss,
    CrossEntropyLoss,
    BCELoss,
    BCEWithLogitsLoss,
    KLDivLoss,
    SmoothL1Loss,
    HuberLoss,
    MarginRankingLoss,
    HingeEmbeddingLoss,
    SoftMarginLoss,
    CosineEmbeddingLoss,
    TripletMarginLoss,
)
from .dropout import Dropout
from .normalization import LayerNorm
from .normalization import GroupNorm, LocalResponseNorm
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .sparse import Embedding
from .distance import CosineSimilarity, PairwiseDistance
from .flatten import Flatten, Unflatten

# The helpers that optim's zero_grad and the tests reach (private: not in __all__).
from .module import _overwrite_ as _overwrite_, _reset_grad as _reset_grad

__all__ = [
    "Module",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
    "Identity",
    "Linear",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "LeakyReLU",
    "ELU",
    "Softplus",
    "Threshold",
    "Hardtanh",
    "ReLU6",
    "Hardsigmoid",
    "Hardswish",
    "SiLU",
    "Mish",
    "GELU",
    "SELU",
    "CELU",
    "GLU",
    "PReLU",
    "LogSigmoid",
    "Softsign",
    "Tanhshrink",
    "Softshrink",
    "Hardshrink",
    "Softmax",
    "Softmin",
    "LogSoftmax",
    "L1Loss",
    "MSELoss",
    "NLLLoss",
    "CrossEntropyLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "KLDivLoss",
    "SmoothL1Loss",
    "HuberLoss",
    "MarginRankingLoss",
    "HingeEmbeddingLoss",
    "SoftMarginLoss",
    "CosineEmbeddingLoss",
    "TripletMarginLoss",
    "Dropout",
    "LayerNorm",
    "GroupNorm",
    "LocalResponseNorm",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "Embedding",
    "CosineSimilarity",
    "PairwiseDistance",
    "Flatten",
    "Unflatten",
]

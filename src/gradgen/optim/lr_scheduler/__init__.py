"""gradgen.optim.lr_scheduler: PyTorch's torch.optim.lr_scheduler, by family.

base (LRScheduler), multiplicative (a factor per step), cyclic (curves between two
rates), plateau (ReduceLROnPlateau), composite (SequentialLR, ChainedScheduler).
"""

from __future__ import annotations

from .base import LRScheduler, _LRScheduler as _LRScheduler
from .composite import ChainedScheduler, SequentialLR
from .cyclic import CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from .multiplicative import (
    ConstantLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
)
from .plateau import ReduceLROnPlateau

__all__ = [
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "PolynomialLR",
    "LRScheduler",
]

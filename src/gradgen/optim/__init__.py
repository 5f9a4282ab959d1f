"""gradgen.optim: PyTorch's torch.optim for the part gradgen has (SGD, Adam).

Updates run under `gradgen.no_grad()` with in-place operators, so parameters stay the
same leaf tensors and their version counters count the steps.
"""

from __future__ import annotations

from .adam import Adam
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam"]

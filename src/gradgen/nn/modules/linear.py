"""torch.nn's linear layers: Linear."""

from __future__ import annotations

import math
from typing import Any

from gradgen.factories import rand, zeros
from gradgen.grad_mode import no_grad
from gradgen.tensor import Tensor

from .. import functional as F
from ..parameter import Parameter
from .module import Module, _overwrite_

__all__ = ["Linear"]


class Linear(Module):
    """y = x @ weight.T + bias, with weight (out_features, in_features).

    Initialised as PyTorch's: weight and bias uniform in [-1/sqrt(in_features),
    1/sqrt(in_features)] (kaiming_uniform_ with a=sqrt(5)), drawn from gradgen's
    generator, so `gradgen.manual_seed` makes it reproducible.
    """

    in_features: int
    out_features: int
    weight: Parameter
    bias: Parameter | None

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, dtype: Any = None
    ) -> None:
        super().__init__()
        for name, value in (
            ("in_features", in_features),
            ("out_features", out_features),
        ):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(
                    f"Linear(): {name} must be an int, got {type(value).__name__}"
                )
            if value < 0:
                raise ValueError(f"Linear(): {name} must be non-negative, got {value}")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(zeros(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(zeros(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
        _uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            _uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


def _uniform_(param: Tensor, low: float, high: float) -> None:
    """Fill `param` in place with U(low, high) drawn by `gradgen.rand` (so
    `gradgen.manual_seed` makes it reproducible), as torch.nn.init.uniform_."""
    with no_grad():
        sample = rand(*param.shape, dtype=param.dtype)
        _overwrite_(param, low + (high - low) * sample._data)

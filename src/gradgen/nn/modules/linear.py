"""torch.nn's linear layers: Identity, Linear, Bilinear, LazyLinear."""

from __future__ import annotations

import math
from typing import Any

from gradgen.factories import zeros
from gradgen.grad_mode import no_grad
from gradgen.tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin, _materialize
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]


class Identity(Module):
    """Its input, unchanged (the constructor takes and ignores any arguments)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


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
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        if type(self) is Linear:
            # The registry directly (Module.__getattr__ costs ~0.7 us a name); a
            # subclass (a parametrization's property) and a weight that is no longer
            # a parameter take the attributes.
            parameters = self._parameters
            weight = parameters.get("weight")
            if weight is not None:
                bias = parameters["bias"] if "bias" in parameters else self.bias
                return F.linear(input, weight, bias)
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """y = x1^T A x2 + b, with weight (out_features, in1_features, in2_features).

    Initialised as PyTorch's: weight and bias uniform in [-1/sqrt(in1_features),
    1/sqrt(in1_features)], drawn from gradgen's generator.
    """

    in1_features: int
    in2_features: int
    out_features: int
    weight: Parameter
    bias: Parameter | None

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(
            zeros(out_features, in1_features, in2_features, dtype=dtype)
        )
        if bias:
            self.bias = Parameter(zeros(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:
            raise ValueError(
                f"in1_features must be > 0, but got (in1_features={self.in1_features})"
            )
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is the last size of its first input (weight and
    bias uninitialized until then); it becomes a Linear after that call."""

    cls_to_become = Linear

    def __init__(
        self,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                _materialize(self.weight, (self.out_features, self.in_features))
                if self.bias is not None:
                    _materialize(self.bias, (self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # the weight came from load_state_dict
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} is not "
                    f"equal to in_features from self.weight: {self.weight.shape[-1]}"
                )
            self.in_features = input.shape[-1]

"""torch.nn.functional's functions, under its names and signatures.

The losses take `reduction` as a string ("none", "mean", "sum") and the legacy
`size_average` / `reduce` flags, as torch.nn.functional does, and call gradgen's
operators (PyTorch's ATen operators, whose `reduction` is an int: None=0, Mean=1,
Sum=2). Activation functions are re-exported only when the operator they wrap exists
in this build of gradgen (they come from other operator batches), so this module
imports before and after those are added.
"""

from __future__ import annotations

import warnings
from typing import Any

import gradgen
from gradgen.tensor import Tensor

__all__ = ["linear", "mse_loss", "nll_loss", "cross_entropy", "binary_cross_entropy"]


# -- torch.nn._reduction -------------------------------------------------------------


def _get_enum(reduction: str) -> int:
    """A reduction name as at::Reduction."""
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
            "instead.",
            stacklevel=3,
        )
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_get_string(size_average: bool | None, reduce: bool | None) -> str:
    """The reduction the deprecated size_average / reduce flags mean (with PyTorch's
    deprecation warning)."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        reduction = "mean"
    elif reduce:
        reduction = "sum"
    else:
        reduction = "none"
    warnings.warn(
        "size_average and reduce args will be deprecated, please use "
        f"reduction='{reduction}' instead.",
        stacklevel=3,
    )
    return reduction


def _broadcast_tensors(*tensors: Tensor) -> list[Tensor]:
    """torch.broadcast_tensors for two tensors: each expanded to the common shape
    (a tensor already of that shape is returned as it is)."""
    shapes = [tuple(t.shape) for t in tensors]
    ndim = max(len(s) for s in shapes)
    common = []
    for i in range(ndim):
        sizes = [s[len(s) - ndim + i] if len(s) - ndim + i >= 0 else 1 for s in shapes]
        size = max(sizes, default=1)
        if 0 in sizes:
            size = 0
        for which, extent in enumerate(sizes):
            if extent != 1 and extent != size:
                raise RuntimeError(
                    f"The size of tensor a ({sizes[0]}) must match the size of tensor b "
                    f"({sizes[1]}) at non-singleton dimension {i}"
                )
        common.append(size)
    shape = tuple(common)
    return [t if tuple(t.shape) == shape else t.expand(shape) for t in tensors]  # type: ignore[attr-defined]


# -- linear and losses ---------------------------------------------------------------


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = input @ weight.T + bias."""
    return gradgen.linear(input, weight, bias)  # type: ignore[attr-defined,no-any-return]


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The mean (or sum) squared error, optionally weighted per element."""
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=2,
        )
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    expanded_input, expanded_target = _broadcast_tensors(input, target)
    if weight is None:
        return gradgen.mse_loss(  # type: ignore[attr-defined,no-any-return]
            expanded_input, expanded_target, _get_enum(reduction)
        )
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    difference = expanded_input - expanded_target
    weighted_squared_errors = difference.pow(2) * weight  # type: ignore[attr-defined]
    if reduction == "none":
        return weighted_squared_errors  # type: ignore[no-any-return]
    if reduction == "sum":
        return weighted_squared_errors.sum()  # type: ignore[no-any-return]
    if reduction == "mean":
        # torch divides by weight.sum(); gradgen's `/` comes with another batch.
        return weighted_squared_errors.sum() * weight.sum().pow(-1)  # type: ignore[attr-defined,no-any-return]
    raise ValueError(
        f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
    )


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood of log-probabilities `input` (class dimension 1)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    return gradgen.nll_loss_nd(  # type: ignore[attr-defined,no-any-return]
        input, target, weight, _get_enum(reduction), ignore_index
    )


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """The cross entropy of logits `input` against class indices or probabilities."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    return gradgen.cross_entropy_loss(  # type: ignore[attr-defined,no-any-return]
        input, target, weight, _get_enum(reduction), ignore_index, label_smoothing
    )


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The binary cross entropy of probabilities `input` against `target`."""
    if size_average is not None or reduce is not None:
        reduction_enum = _get_enum(_legacy_get_string(size_average, reduce))
    else:
        reduction_enum = _get_enum(reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        shape = _broadcast_tensors(target, weight)[1].shape
        weight = weight.expand(shape)  # type: ignore[attr-defined]
    return gradgen.binary_cross_entropy(  # type: ignore[attr-defined,no-any-return]
        input, target, weight, reduction_enum
    )


# -- activations (operators of other batches, when present) --------------------------


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to "
        "include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0) elementwise."""
    if inplace:
        return gradgen.relu_(input)  # type: ignore[attr-defined,no-any-return]
    return gradgen.relu(input)  # type: ignore[attr-defined,no-any-return]


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """input * sigmoid(input) elementwise (in place: the same product written into
    input, as gradgen has no silu_ kernel)."""
    if inplace:
        return input.mul_(input.sigmoid())  # type: ignore[attr-defined,no-any-return]
    return gradgen.silu(input)  # type: ignore[attr-defined,no-any-return]


gelu = gradgen.gelu  # type: ignore[attr-defined]
sigmoid = gradgen.sigmoid  # type: ignore[attr-defined]
tanh = gradgen.tanh  # type: ignore[attr-defined]


def _softmax_like(name: str) -> Any:
    def function(
        input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
    ) -> Tensor:
        if dim is None:
            dim = _get_softmax_dim(name, input.dim(), _stacklevel)
        method = getattr(input, name)
        if dtype is None:
            return method(dim)  # type: ignore[no-any-return]
        return method(dim, dtype=dtype)  # type: ignore[no-any-return]

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.nn.functional.{name}: the {name} of `input` along `dim`."
    return function


softmax = _softmax_like("softmax")
log_softmax = _softmax_like("log_softmax")

__all__ += ["gelu", "log_softmax", "relu", "sigmoid", "silu", "softmax", "tanh"]

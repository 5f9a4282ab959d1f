"""torch.nn.init: fill a tensor in place, outside autograd, from PyTorch's
distributions. Each function returns the tensor it filled.

The values come from gradgen's generator (`gradgen.manual_seed` makes them
reproducible), or from `generator=`: a numpy `Generator`, or an object holding one as
`_generator` (the same streams, not PyTorch's bits).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import gradgen.random as random_numbers
from gradgen.grad_mode import no_grad
from gradgen.tensor import Tensor

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
]

_LINEAR_GAIN_ONE = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
)


def calculate_gain(nonlinearity: str, param: int | float | None = None) -> float:
    """The factor by which `nonlinearity` scales the standard deviation, as PyTorch
    recommends it for the initialisations below."""
    if nonlinearity in _LINEAR_GAIN_ONE:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


# -- drawing and writing ---------------------------------------------------------------


def _numpy_generator(generator: Any) -> np.random.Generator:
    if generator is None:
        return random_numbers.default_generator._generator
    if isinstance(generator, np.random.Generator):
        return generator
    inner = getattr(generator, "_generator", None)
    if isinstance(inner, np.random.Generator):
        return inner
    raise TypeError(
        f"generator must be a gradgen Generator or a numpy Generator, got "
        f"{type(generator).__name__}"
    )


def _write(tensor: Tensor, values: Any) -> Tensor:
    """`values` (an array or a number, broadcast) written into `tensor` in place,
    outside autograd, one version bump."""
    source = Tensor(np.asarray(values, dtype=tensor._data.dtype))
    with no_grad():
        tensor.copy_(source)
    return tensor


def _check_tensor(tensor: Any) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"expected a Tensor to initialise, got {type(tensor).__name__}")


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None
) -> Tensor:
    """Values from U(a, b)."""
    _check_tensor(tensor)
    draw = _numpy_generator(generator).uniform(a, b, tuple(tensor.shape))
    return _write(tensor, draw)


def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None
) -> Tensor:
    """Values from N(mean, std^2)."""
    _check_tensor(tensor)
    draw = _numpy_generator(generator).normal(mean, std, tuple(tensor.shape))
    return _write(tensor, draw)


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> Tensor:
    """Values from N(mean, std^2) conditioned on lying in [a, b] (drawn by
    rejection, then clamped to [a, b] as PyTorch clamps)."""
    _check_tensor(tensor)
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    rng = _numpy_generator(generator)
    draw = rng.normal(mean, std, tuple(tensor.shape))
    for _ in range(100):
        outside = (draw < a) | (draw > b)
        if not outside.any():
            break
        draw[outside] = rng.normal(mean, std, int(outside.sum()))
    return _write(tensor, np.clip(draw, a, b))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Every value `val`."""
    _check_tensor(tensor)
    return _write(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    """Every value 1."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Every value 0."""
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix (a 2-D tensor only)."""
    _check_tensor(tensor)
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The Dirac delta of a convolution weight (3-, 4- or 5-D): each output channel
    (of each of `groups` groups) passes its input channel through unchanged."""
    _check_tensor(tensor)
    dimensions = tensor.dim()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    smallest = min(out_per_group, sizes[1])
    values = np.zeros(sizes)
    centre = tuple(size // 2 for size in sizes[2:])
    for group in range(groups):
        for channel in range(smallest):
            values[(group * out_per_group + channel, channel) + centre] = 1
    return _write(tensor, values)


# -- fan-scaled initialisations ------------------------------------------------------


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out): the input and output sizes times the receptive field (the
    product of the dimensions after the first two)."""
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 "
            "dimensions"
        )
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """U(-bound, bound), bound = gain * sqrt(6 / (fan_in + fan_out)) (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)) (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """U(-bound, bound), bound = gain * sqrt(3 / fan) (He), gain from `nonlinearity`
    with negative slope `a`, fan from `mode`."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """N(0, std^2), std = gain / sqrt(fan) (He)."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """A (semi-)orthogonal matrix times `gain`, the dimensions after the first
    flattened: the Q of the QR decomposition of a normal sample, signs fixed by R's
    diagonal."""
    _check_tensor(tensor)
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flattened = _numpy_generator(generator).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, gain * q.reshape(tuple(tensor.shape)))


def sparse_(
    tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None
) -> Tensor:
    """A 2-D tensor from N(0, std^2) with ceil(sparsity * rows) zeros in each column."""
    _check_tensor(tensor)
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros_per_column = int(math.ceil(sparsity * rows))
    rng = _numpy_generator(generator)
    values = rng.normal(0.0, std, (rows, cols))
    for column in range(cols):
        values[rng.permutation(rows)[:zeros_per_column], column] = 0
    return _write(tensor, values)

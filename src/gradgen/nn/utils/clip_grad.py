"""torch.nn.utils.clip_grad: scale or clamp the gradients of parameters in place."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from gradgen.factories import tensor
from gradgen.grad_mode import no_grad
from gradgen.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_"]

_Parameters = Tensor | Iterable[Tensor]


def _gradients(parameters: _Parameters) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _norm(values: np.ndarray, norm_type: float) -> np.floating[Any]:
    """The `norm_type`-norm of all of `values` (inf: the largest magnitude)."""
    magnitude = np.abs(values.reshape(-1))
    if norm_type == math.inf:
        return magnitude.max() if magnitude.size else values.dtype.type(0)  # type: ignore[no-any-return]
    if norm_type == -math.inf:
        return magnitude.min() if magnitude.size else values.dtype.type(0)  # type: ignore[no-any-return]
    if norm_type == 0:
        return values.dtype.type(np.count_nonzero(magnitude))  # type: ignore[no-any-return]
    return np.power(np.sum(np.power(magnitude, norm_type)), 1.0 / norm_type)  # type: ignore[no-any-return]


def clip_grad_norm_(
    parameters: _Parameters,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the gradients together so that their joint `norm_type`-norm is at most
    `max_norm` (by max_norm / (norm + 1e-6) when it is larger); returns the norm
    before clipping. `foreach` is accepted and has no effect."""
    grads = _gradients(parameters)
    max_norm = float(max_norm)
    norm_type = float(norm_type)
    if not grads:
        return tensor(0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.stack([_norm(g._data, norm_type) for g in grads])
        total = _norm(norms, norm_type)
    total_norm = tensor(total)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    coefficient = total.dtype.type(max_norm) / (total + total.dtype.type(1e-6))
    clamped = min(coefficient, total.dtype.type(1.0))
    with no_grad():
        for grad in grads:
            grad.mul_(tensor(clamped, dtype=grad.dtype))
    return total_norm


def clip_grad_norm(
    parameters: _Parameters,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Deprecated: clip_grad_norm_."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(
    parameters: _Parameters, clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient, in place, to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with no_grad():
        for grad in _gradients(parameters):
            grad.clamp_(-clip_value, clip_value)

"""The operator table's `Line` and the helpers its lines share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import gradgen


@dataclass(frozen=True)
class Line:
    function: Callable[..., Any]
    shapes: tuple[tuple[int, ...], ...]
    complex: bool = False  # inputs are complex128 instead of float64
    positive: bool = False  # inputs in (0.5, 2) instead of (-2, 2)
    compare: bool = True  # compare against torch
    forward: bool = True  # has a forward formula (False: PyTorch has none either)
    # Relative tolerance against torch where PyTorch computes with a less exact
    # algorithm (its trigamma, its Bessel functions); 0 keeps the table's defaults.
    rtol: float = 0.0
    # PyTorch's double backward raises (a not_implemented formula): gradgradcheck
    # must raise NotImplementedError too.
    double_backward: bool = True


def _nn(lib: Any, name: str) -> Callable[..., Any]:
    """gelu, silu: torch._C._nn.NAME in PyTorch (python_module: nn), gradgen.NAME."""
    return getattr(lib._C._nn if lib.__name__ == "torch" else lib, name)


_GRID = np.linspace(-2.0, 2.0, 5)


def _aten(lib: Any, name: str) -> Callable[..., Any]:
    """*_backward operators: only torch.ops.aten.NAME in PyTorch, gradgen.NAME."""
    return getattr(lib.ops.aten if lib.__name__ == "torch" else lib, name)


def _hidden_overload(lib: Any, overload: str) -> Callable[..., Any]:
    """An overload PyTorch hides from Python (add.Scalar, ...): torch.ops.aten.NAME.OVERLOAD,
    or gradgen's dispatcher entry (which takes every argument, defaults included)."""
    if lib is gradgen:
        return getattr(gradgen.generated.operators, overload.replace(".", "_")).call
    name, overload_name = overload.split(".")
    return getattr(getattr(lib.ops.aten, name), overload_name)


def _nan_where_negative(lib: Any, b: Any) -> Any:
    """0/0 (NaN) where b < 0, else 1 (not part of the graph)."""
    c = lib.clamp_min(b.detach(), 0.0)
    return c / c


def _aten_namespace(lib: Any) -> Any:
    """Where an operator lives: gradgen itself, or torch.ops.aten (PyTorch binds the
    losses in torch._C._nn only, and some operators not at all)."""
    return lib.ops.aten if lib.__name__ == "torch" else lib


def _targets(lib: Any, *values: int) -> Any:
    return lib.tensor(list(values))


def _class_weight(lib: Any) -> Any:
    # An explicit weight: gradgen cannot yet save an undefined `Tensor? weight` for
    # backward (see tests/ops/test_loss.py); weight=None is tested there.
    return lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64)


def _probabilities(a: Any) -> Any:
    return a * 0.2 + 0.5  # (-2, 2) -> (0.1, 0.9)


def _bce_target(lib: Any) -> Any:
    return lib.tensor([[0.0, 0.3, 1.0], [0.8, 0.5, 0.1]], dtype=lib.float64)


def _cross_entropy(lib: Any, a: Any) -> Any:
    if not hasattr(lib, "log_softmax"):
        pytest.skip("cross_entropy_loss calls log_softmax, another family's operator")
    return _aten_namespace(lib).cross_entropy_loss(
        a, _targets(lib, 0, 2, -100, 1), _class_weight(lib), 1, -100, 0.1
    )


def _nn_or_aten(lib: Any, name: str) -> Callable[..., Any]:
    """The activation, loss, normalization and sparse operators: torch._C._nn.NAME (the
    activations and losses PyTorch binds there), else torch.NAME, else
    torch.ops.aten.NAME; gradgen.NAME."""
    if lib.__name__ != "torch":
        return getattr(lib, name)
    for namespace in (lib._C._nn, lib):
        if hasattr(namespace, name):
            return getattr(namespace, name)
    return getattr(lib.ops.aten, name)


def _f(name: str) -> Callable[..., Callable[..., Any]]:
    return lambda lib: _nn_or_aten(lib, name)


def _f64(lib: Any, values: Any) -> Any:
    return lib.tensor(values, dtype=lib.float64)


def _layer_norm_backward(lib: Any, g: Any, a: Any, w: Any) -> Any:
    """native_layer_norm_backward of (a, w) with the statistics of a itself (which do
    not require grad: its formulas treat them as functions of a, as PyTorch's do)."""
    b = _f64(lib, [0.5, -1.0, 0.25])
    _, mean, rstd = _f("native_layer_norm")(lib)(a, (3,), w, b, 1e-5)
    grad_input, grad_weight, grad_bias = _f("native_layer_norm_backward")(lib)(
        g, a, (3,), mean, rstd, w, b, [True, True, True]
    )
    return grad_input + grad_weight * 2.0 + grad_bias * grad_weight


def _dispatcher(lib: Any, name: str) -> Callable[..., Any]:
    """An operator without a Python binding (copy, zero, linalg_vector_norm): torch's
    torch.ops.aten.NAME, or gradgen's dispatcher entry (every argument given)."""
    if lib is gradgen:
        return getattr(gradgen.generated.operators, name).call
    return getattr(lib.ops.aten, name)


def _mask(lib: Any) -> Any:
    return lib.tensor([[True, False, True], [False, False, True]])


def _vector_norm(lib: Any, a: Any, ord: float, dim: Any, keepdim: bool) -> Any:
    """linalg_vector_norm (torch.ops.aten's takes dtype as a keyword, the dispatcher
    entry every argument positionally)."""
    if lib is gradgen:
        return _dispatcher(lib, "linalg_vector_norm")(a, ord, dim, keepdim, None)
    return lib.ops.aten.linalg_vector_norm(a, ord, dim, keepdim)


def _vector_norms(lib: Any, a: Any) -> Any:
    def norm(ord: float, dim: Any, keepdim: bool) -> Any:
        return _vector_norm(lib, a, ord, dim, keepdim)

    inf = float("inf")
    return (
        norm(3, [1], True) * a
        + norm(2, None, False)
        + norm(1, [0], False).sum()
        + norm(inf, [1], False).sum()
        + norm(-inf, [0, 1], True) * 2.0
        + norm(0.5, None, False)
        + norm(1.5, [1], True)
        + norm(0, [0], False)
    )


# Helpers of the normalization lines.
def _running(lib: Any) -> tuple[Any, Any]:
    """Running statistics (fresh each call: training updates them in place)."""
    return _f64(lib, [0.5, -0.25, 1.0]), _f64(lib, [1.5, 0.75, 2.0])


def _batch_norm(lib: Any, a: Any, w: Any, b: Any) -> Any:
    """batch_norm in training (batch statistics) plus in evaluation (running ones)."""
    training = _f("batch_norm")(lib)(a, w, b, *_running(lib), True, 0.1, 1e-5, False)
    evaluation = _f("batch_norm")(lib)(a, w, b, *_running(lib), False, 0.1, 1e-5, False)
    return training + evaluation


def _batch_norm_backward(lib: Any, g: Any, a: Any, w: Any) -> Any:
    """native_batch_norm_backward of (a, w) in training (with a's own statistics) and
    in evaluation, all three gradients joined."""
    mean, var = _running(lib)
    _, save_mean, save_invstd = _f("native_batch_norm")(lib)(
        a, w, None, None, None, True, 0.1, 1e-5
    )
    total = 0
    for train, saved in ((True, (save_mean, save_invstd)), (False, (None, None))):
        grad_input, grad_weight, grad_bias = _aten(lib, "native_batch_norm_backward")(
            g, a, w, mean, var, *saved, train, 1e-5, [True, True, True]
        )
        total = total + grad_input + grad_weight.view(1, 3, 1) * grad_bias.view(1, 3, 1)
    return total


def _native_group_norm(lib: Any, a: Any, w: Any, b: Any) -> Any:
    """All three outputs of native_group_norm (mean and rstd are differentiable)."""
    out, mean, rstd = _f("native_group_norm")(lib)(a, w, b, 2, 4, 3, 2, 1e-5)
    return lib.cat([out.flatten(), mean.flatten(), rstd.flatten()])


def _group_norm_backward(lib: Any, a: Any) -> Any:
    """native_group_norm_backward has no derivative (nor has PyTorch's: second
    derivatives of group norm go through another helper): its values for fixed
    arguments against torch's, times the input `a`."""
    g, x, w = _fixed(lib, (2, 4, 3)), _fixed(lib, (2, 4, 3)) * 0.5, _fixed(lib, (4,))
    _, mean, rstd = _f("native_group_norm")(lib)(x, w, None, 2, 4, 3, 2, 1e-5)
    grads = _aten(lib, "native_group_norm_backward")(
        g, x, mean, rstd, w, 2, 4, 3, 2, [True, True, True]
    )
    return a * grads[0] + (grads[1] * grads[2]).sum()


# Helpers of the conv and pooling lines.
def _fixed(lib: Any, shape: tuple[int, ...]) -> Any:
    """Values of a fixed draw (the input whose maxima a pooling backward's indices
    name)."""
    return _f64(lib, np.random.default_rng(11).uniform(-2.0, 2.0, shape))


def _convolution_backward(lib: Any, g: Any, a: Any, w: Any) -> Any:
    """All three gradients of a grouped, strided transposed convolution, joined."""
    grad_input, grad_weight, grad_bias = _f("convolution_backward")(lib)(
        g, a, w, [2], [2, 1], [0, 1], [1, 2], True, [1, 0], 2, [True, True, True]
    )
    return lib.cat(
        [grad_input.flatten(), (grad_weight * grad_weight).flatten(), grad_bias * 3.0]
    )


def _max_pool_indices(lib: Any, name: str, shape: tuple[int, ...], *args: Any) -> Any:
    return _f(name)(lib)(_fixed(lib, shape), *args)[1]


_POOL2D = (
    [3, 2],
    [2, 1],
    [1, 1],
    [1, 2],
    True,
)  # kernel, stride, padding, dilation, ceil
_POOL3D = ([2, 2, 2], [2, 2, 2], [1, 1, 1], [1, 1, 1], True)

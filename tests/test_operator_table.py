"""One line per operator: gradcheck and gradgradcheck on sample inputs, in float64.

Every operator in native_functions.yaml must have a line here (the first test fails
otherwise), so a new operator cannot land untested. A line gives a function of
`gradgen`-like `lib` (so the same line also runs against torch when it is
installed) and the shapes and dtype of its inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import gradgen
from gradgen.autograd import gradcheck, gradgradcheck
from torch_oracle import oracle

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Line:
    function: Callable[..., Any]
    shapes: tuple[tuple[int, ...], ...]
    complex: bool = False  # inputs are complex128 instead of float64
    positive: bool = False  # inputs in (0.5, 2) instead of (-2, 2)
    compare: bool = True  # compare against torch
    forward: bool = True  # has a forward formula (False: PyTorch has none either)


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


TABLE: dict[str, Line] = {}


# ==== family: shape ====
TABLE.update(
    {
        "permute": Line(lambda lib, a: lib.permute(a, (2, 0, 1)), ((2, 3, 4),)),
        "expand": Line(lambda lib, a: a.expand(2, -1, 4) * 1.0, ((3, 1),)),
        "sum_to_size": Line(lambda lib, a: (a * a).sum_to_size(3, 1), ((3, 4),)),
        "view": Line(lambda lib, a: a.view(3, 4) * a.view(3, 4), ((2, 6),)),
        "reshape": Line(lambda lib, a: lib.reshape(a.t(), (4, 3)) * 2.0, ((3, 4),)),
        "squeeze": Line(lambda lib, a: lib.squeeze(a) * a.squeeze(), ((3, 1, 2),)),
        "squeeze.dim": Line(lambda lib, a: lib.squeeze(a, 1) * 3.0, ((3, 1, 2),)),
        "unsqueeze": Line(
            lambda lib, a: lib.unsqueeze(a, -1) * a.unsqueeze(0), ((3,),)
        ),
        "transpose.int": Line(
            lambda lib, a: lib.transpose(a, 0, -1) * 2.0, ((2, 3, 4),)
        ),
        "t": Line(lambda lib, a: lib.t(a) * a.t(), ((2, 3),)),
        "flatten.using_ints": Line(
            lambda lib, a: lib.flatten(a, 1) * 2.0, ((2, 3, 4),)
        ),
        "contiguous": Line(lambda lib, a: a.t().contiguous() * a.t(), ((2, 3),)),
        "select.int": Line(
            lambda lib, a: lib.select(a, 1, -1) * a.select(0, 0), ((3, 3),)
        ),
        "slice.Tensor": Line(
            lambda lib, a: a[1:5:2] * lib.slice(a, 0, None, -2, 2),
            ((6,),),
            compare=False,
        ),
        "narrow": Line(
            lambda lib, a: lib.narrow(a, 0, 1, 2) * a.narrow(0, 2, 2), ((4, 2),)
        ),
        "cat": Line(lambda lib, a, b: lib.cat([a, b * b, a], 1), ((2, 3), (2, 1))),
        "stack": Line(lambda lib, a, b: lib.stack([a, b * b], -1), ((2, 3), (2, 3))),
        "split.Tensor": Line(lambda lib, a: lib.split(a, 2)[1] * 3.0, ((5, 2),)),
        "split.sizes": Line(
            lambda lib, a: a.split([1, 4])[0] * a.split([3, 2])[1][:1], ((5,),)
        ),
        "split_with_sizes": Line(
            lambda lib, a: lib.split_with_sizes(a, [2, 3])[1] * 2.0, ((5,),)
        ),
        "chunk": Line(lambda lib, a: lib.chunk(a, 3)[2] * 2.0, ((7,),)),
        "unbind.int": Line(
            lambda lib, a: lib.unbind(a, 1)[0] * a.unbind()[1], ((2, 2),)
        ),
        "select_backward": Line(
            lambda lib, a: lib.select_backward(a, (3, 4), 0, 1) * 2.0,
            ((4,),),
            compare=False,
        ),
        "slice_backward": Line(
            lambda lib, a: lib.slice_backward(a, (6,), 0, 1, 5, 2) * 2.0,
            ((2,),),
            compare=False,
        ),
        "view_as_real": Line(
            lambda lib, a: lib.view_as_real(a * a), ((3,),), complex=True
        ),
        "view_as_complex": Line(
            lambda lib, a: lib.view_as_complex(a * a) * lib.view_as_complex(a * 1.0),
            ((3, 2),),
        ),
        "flip": Line(lambda lib, a: lib.flip(a, (0, -1)) * a.flip(1), ((2, 3),)),
        "roll": Line(
            lambda lib, a: lib.roll(a, (1, -2), (0, 1)) * a.roll(2), ((2, 3),)
        ),
        # Leading new dims only: the double backward of a repeat along an existing dim
        # goes through reshape of an expanded gradient, which the core reshape cannot
        # do yet (see ops/test_shape.py::test_repeat_double_backward_along_existing_dims).
        "repeat": Line(lambda lib, a: a.repeat(2, 1, 1) * a, ((2, 3),), complex=True),
        "expand_as": Line(lambda lib, a, b: a.expand_as(b) * b, ((3, 1), (2, 3, 4))),
        "view_as": Line(lambda lib, a, b: a.view_as(b) * b, ((2, 3), (3, 2))),
        "reshape_as": Line(lambda lib, a, b: a.reshape_as(b) * b, ((2, 3), (6,))),
        "_unsafe_view": Line(
            lambda lib, a: _aten_namespace(lib)._unsafe_view(a * a, (3, 2)) * 2.0,
            ((2, 3),),
        ),
        "constant_pad_nd": Line(
            lambda lib, a: _f("constant_pad_nd")(lib)(a * a, (1, -1, 2, 0), 0.5),
            ((3, 4),),
        ),
        # sign() and floor() have zero derivatives: detached or not, the same function.
        "detach_": Line(
            lambda lib, a: a * lib.detach_(a.sign() * 2.0)
            + (a.floor() * 1.0).detach_(),
            ((5,),),
        ),
        "diagonal": Line(
            lambda lib, a: lib.diagonal(a, -1, 1, 2) * a.diagonal(1, 2, 1)
            + a.diagonal(0, 0, -1).sum(),
            ((2, 3, 3),),
        ),
        "diagonal_backward": Line(
            lambda lib, a: _aten_namespace(lib).diagonal_backward(
                a * a, (2, 3, 4), 1, 1, 2
            ),
            ((2, 3),),
        ),
        "diagonal_copy": Line(
            lambda lib, a: lib.diagonal_copy(a, -1) * a.diagonal(-1), ((3, 4),)
        ),
        "diag_embed": Line(
            lambda lib, a: lib.diag_embed(a * a, 1, 0, 2) + a.diag_embed().sum(),
            ((2, 3),),
        ),
        "diag": Line(
            lambda lib, a: lib.diag(a, 1).sum() * lib.diag(a[0], -1) + a.diag().sum(),
            ((3, 3),),
        ),
        "concat": Line(lambda lib, a, b: lib.concat([a, b * b], 1), ((2, 3), (2, 1))),
        "concatenate": Line(
            lambda lib, a, b: lib.concatenate([b * b, a], -1), ((2, 3), (2, 1))
        ),
        "swapaxes": Line(
            lambda lib, a: lib.swapaxes(a, 0, -1) * a.swapaxes(2, 0), ((2, 3, 2),)
        ),
        "swapdims": Line(
            lambda lib, a: lib.swapdims(a, 1, 0) * a.swapdims(0, 1), ((2, 3),)
        ),
        "movedim.intlist": Line(
            lambda lib, a: lib.movedim(a, (0, 1), (2, 0)) * a.movedim([2], [0]),
            ((3, 3, 3),),
        ),
        "movedim.int": Line(
            lambda lib, a: lib.movedim(a, 0, -1) * a.movedim(-1, 1), ((3, 3, 3),)
        ),
        "moveaxis.intlist": Line(
            lambda lib, a: lib.moveaxis(a, [0, 2], [1, 0]) * 2.0, ((2, 3, 4),)
        ),
        "moveaxis.int": Line(
            lambda lib, a: a.moveaxis(1, 0) * a.moveaxis(0, 1), ((3, 3),)
        ),
    }
)


# ==== family: elementwise ====
TABLE.update(
    {
        "add.Tensor": Line(
            lambda lib, a, b: lib.add(a, b, alpha=2.5), ((3, 1), (1, 4))
        ),
        "sub.Tensor": Line(
            lambda lib, a, b: lib.sub(a, b, alpha=-0.5), ((2, 3, 4), (4,))
        ),
        "mul.Tensor": Line(lambda lib, a, b: lib.mul(a, b), ((3, 1), (1, 4))),
        "pow.Tensor_Scalar": Line(
            lambda lib, a: lib.pow(a, 2.5), ((5,),), positive=True
        ),
        "neg": Line(lambda lib, a: lib.neg(a), ((3,),)),
        "conj": Line(lambda lib, a: lib.conj(a) * a, ((3,),), complex=True),
        "_conj": Line(
            lambda lib, a: lib._conj(a) * a, ((3,),), complex=True, compare=False
        ),
        "real": Line(lambda lib, a: lib.real(a * a), ((3,),), complex=True),
        "clone": Line(lambda lib, a: lib.clone(a) * a, ((3,),)),
        "_to_copy": Line(
            lambda lib, a: lib._to_copy(a, dtype=lib.complex128) * 1j,
            ((3,),),
            compare=False,
        ),
        "add_.Tensor": Line(
            lambda lib, a, b: (a * 1.0).add_(b * b, alpha=2.0), ((3,), (3,))
        ),
        "sub_.Tensor": Line(lambda lib, a, b: (a * 1.0).sub_(b * b), ((3,), (3,))),
        "mul_.Tensor": Line(lambda lib, a, b: (a * a).mul_(b), ((3,), (3,))),
        "exp": Line(lambda lib, a: lib.exp(a) * a.exp(), ((3, 2),), complex=True),
        "exp2": Line(lambda lib, a: lib.exp2(a), ((4,),), complex=True),
        "log": Line(lambda lib, a: lib.log(a) * a.log(), ((4,),), complex=True),
        "log2": Line(lambda lib, a: lib.log2(a), ((4,),), complex=True),
        "log10": Line(lambda lib, a: a.log10(), ((4,),), complex=True),
        "log1p": Line(lambda lib, a: lib.log1p(a), ((4,),), complex=True),
        "expm1": Line(lambda lib, a: lib.expm1(a), ((4,),), complex=True),
        "sqrt": Line(lambda lib, a: lib.sqrt(a) * a.sqrt(), ((4,),), complex=True),
        "rsqrt": Line(lambda lib, a: lib.rsqrt(a), ((4,),), complex=True),
        "reciprocal": Line(lambda lib, a: a.reciprocal(), ((4,),), complex=True),
        "square": Line(
            lambda lib, a: lib.square(a) * a.square(), ((4,),), complex=True
        ),
        "abs": Line(lambda lib, a: lib.abs(a) * a.abs(), ((4,),), complex=True),
        "sgn": Line(lambda lib, a: lib.sgn(a) * a, ((4,),), complex=True),
        "sign": Line(lambda lib, a: lib.sign(a) * a.sign() * a, ((4,),)),
        "sin": Line(lambda lib, a: lib.sin(a) * a.sin(), ((4,),), complex=True),
        "cos": Line(lambda lib, a: lib.cos(a), ((4,),), complex=True),
        "tan": Line(lambda lib, a: lib.tan(a * 0.5), ((4,),), complex=True),
        "asin": Line(lambda lib, a: lib.asin(a * 0.4), ((4,),), complex=True),
        "acos": Line(lambda lib, a: (a * 0.4).acos(), ((4,),), complex=True),
        "atan": Line(lambda lib, a: lib.atan(a * 0.4), ((4,),), complex=True),
        "sinh": Line(lambda lib, a: lib.sinh(a), ((4,),), complex=True),
        "cosh": Line(lambda lib, a: lib.cosh(a), ((4,),), complex=True),
        "tanh": Line(lambda lib, a: lib.tanh(a) * a.tanh(), ((4,),), complex=True),
        "sigmoid": Line(
            lambda lib, a: lib.sigmoid(a) * a.sigmoid(), ((4,),), complex=True
        ),
        "erf": Line(lambda lib, a: lib.erf(a) * a.erf(), ((5,),)),
        "floor": Line(lambda lib, a: lib.floor(a) * a.floor() * a, ((5,),)),
        "ceil": Line(lambda lib, a: lib.ceil(a) * a, ((5,),)),
        "round": Line(lambda lib, a: lib.round(a) * a.round() * a, ((5,),)),
        "round.decimals": Line(
            lambda lib, a: lib.round(a, decimals=2) * a.round(decimals=-1) * a, ((5,),)
        ),
        "trunc": Line(lambda lib, a: lib.trunc(a) * a, ((5,),)),
        "angle": Line(lambda lib, a: lib.angle(a) * a.angle(), ((4,),), complex=True),
        "imag": Line(lambda lib, a: lib.imag(a * a), ((3, 2),), complex=True),
        "sigmoid_backward": Line(
            lambda lib, a, b: _aten(lib, "sigmoid_backward")(a, b * b),
            ((3,), (3,)),
            complex=True,
        ),
        "tanh_backward": Line(
            lambda lib, a, b: _aten(lib, "tanh_backward")(a, b * b),
            ((3,), (3,)),
            complex=True,
        ),
        "exp_": Line(
            lambda lib, a: (a * 1.0).exp_() * lib.exp_(a * 2.0), ((4,),), complex=True
        ),
        "log_": Line(lambda lib, a: lib.log_(a * 1.0) * a, ((4,),), complex=True),
        "sqrt_": Line(lambda lib, a: (a * 1.0).sqrt_() * a, ((4,),), complex=True),
        "neg_": Line(lambda lib, a: lib.neg_(a * a), ((4,),), complex=True),
        "abs_": Line(lambda lib, a: (a * 1.0).abs_() * lib.abs_(a * a), ((5,),)),
        "sigmoid_": Line(
            lambda lib, a: lib.sigmoid_(a * 1.0) * a, ((4,),), complex=True
        ),
        "tanh_": Line(lambda lib, a: (a * 1.0).tanh_() * a, ((4,),), complex=True),
        "add.Scalar": Line(
            lambda lib, a: _hidden_overload(lib, "add.Scalar")(a, 2.5 - 1j, 2) * a,
            ((3,),),
            complex=True,
        ),
        "sub.Scalar": Line(
            lambda lib, a: _hidden_overload(lib, "sub.Scalar")(a, 1.5, -0.5) * a,
            ((3,),),
        ),
        "mul.Scalar": Line(
            lambda lib, a: _hidden_overload(lib, "mul.Scalar")(a, 2.0 - 1.5j),
            ((3,),),
            complex=True,
        ),
        "div.Tensor": Line(
            lambda lib, a, b: lib.div(a, b),
            ((3, 1), (1, 4)),
            complex=True,
            positive=True,
        ),
        "div.Scalar": Line(
            lambda lib, a: _hidden_overload(lib, "div.Scalar")(a, -2.5) * a, ((3,),)
        ),
        "div.Tensor_mode": Line(
            lambda lib, a, b: lib.div(a * 3.0, b, rounding_mode="floor") * a
            + a.div(b, rounding_mode="trunc") * b
            + lib.div(a, b, rounding_mode=None),
            ((4,), (4,)),
            positive=True,
        ),
        "true_divide.Tensor": Line(
            lambda lib, a, b: lib.true_divide(a, b) * a.true_divide(b),
            ((3,), (3,)),
            positive=True,
        ),
        "div_.Tensor": Line(
            lambda lib, a, b: (a * a).div_(b), ((3,), (3,)), positive=True
        ),
        "div_.Tensor_mode": Line(
            lambda lib, a, b: (a * 3.0).div_(b, rounding_mode="floor") * a,
            ((3,), (3,)),
            positive=True,
        ),
        "floor_divide": Line(  # not differentiable (PyTorch has no formula): forward only
            lambda lib, a, b: lib.floor_divide(a.detach() * 3.0, b.detach()) * (a + b),
            ((4,), (4,)),
        ),
        "floor_divide.Scalar": Line(
            lambda lib, a: a.detach().floor_divide(0.3) * a, ((4,),)
        ),
        "rsub.Tensor": Line(
            lambda lib, a, b: lib.rsub(a, b * b, alpha=2.0 + 1j),
            ((3, 1), (4,)),
            complex=True,
        ),
        "rsub.Scalar": Line(lambda lib, a: lib.rsub(a, 2.5, 3) * a, ((3,),)),
        "maximum": Line(
            lambda lib, a, b: lib.maximum(a, b) * a.maximum(b), ((3, 1), (4,))
        ),
        "minimum": Line(
            lambda lib, a, b: lib.minimum(a, b) * a.minimum(b), ((3, 1), (4,))
        ),
        "fmax": Line(lambda lib, a, b: lib.fmax(a, b * 2.0), ((3, 1), (4,))),
        "fmin": Line(lambda lib, a, b: lib.fmin(a, b * 2.0), ((3, 1), (4,))),
        "atan2": Line(lambda lib, a, b: lib.atan2(a, b) * a.atan2(b), ((3, 1), (4,))),
        "hypot": Line(lambda lib, a, b: lib.hypot(a, b) * a.hypot(b), ((3, 1), (4,))),
        "where.self": Line(
            lambda lib, a, b: lib.where(lib.eq(a, a[0]), a * a, b),
            ((3,), (2, 3)),
            complex=True,
        ),
        "where.ScalarOther": Line(lambda lib, a: lib.where(a > 0, a * a, 2.5), ((5,),)),
        "where.ScalarSelf": Line(lambda lib, a: lib.where(a > 0, 2.5, a * a), ((5,),)),
        "where.Scalar": Line(lambda lib, a: lib.where(a > 0, 2.5, -1) * a, ((5,),)),
        "clamp.Tensor": Line(
            lambda lib, a, b, c: lib.clamp(a, b, c) * a.clamp(c, b),
            ((3, 4), (4,), (3, 1)),
        ),
        "clamp": Line(
            lambda lib, a: lib.clamp(a, -0.5, 0.7) * a.clamp(max=0.2), ((6,),)
        ),
        "clamp_": Line(
            lambda lib, a: lib.clamp_(a * 1.0, min=-0.5) * (a * a).clamp_(0.3, 1.5),
            ((6,),),
        ),
        "clamp_min": Line(
            lambda lib, a: lib.clamp_min(a, -0.5) * a.clamp_min(0.2), ((6,),)
        ),
        "clamp_max": Line(
            lambda lib, a: lib.clamp_max(a, -0.5) * a.clamp_max(0.2), ((6,),)
        ),
        "fmod.Tensor": Line(
            lambda lib, a, b: lib.fmod(a * 3.0, b), ((4,), (4,)), positive=True
        ),
        "fmod.Scalar": Line(lambda lib, a: lib.fmod(a * 3.0, -0.7) * a, ((6,),)),
        "remainder.Tensor": Line(
            lambda lib, a, b: lib.remainder(a * 3.0, b) * a.remainder(-b),
            ((4,), (4,)),
            positive=True,
        ),
        "remainder.Scalar": Line(
            lambda lib, a: lib.remainder(a * 3.0, -0.7) * a, ((6,),)
        ),
        "eq.Tensor": Line(lambda lib, a: a * lib.eq(a, a[1]), ((4,),)),
        "eq.Scalar": Line(lambda lib, a: a * lib.eq(a > 0, True), ((6,),)),
        "ne.Tensor": Line(lambda lib, a: a * lib.ne(a, a[1]), ((4,),)),
        "ne.Scalar": Line(lambda lib, a: a * lib.ne(a > 0, True), ((6,),)),
        "lt.Tensor": Line(lambda lib, a, b: a * b * lib.lt(a, b), ((6,), (6,))),
        "lt.Scalar": Line(lambda lib, a: a * lib.lt(a, 0.3), ((6,),)),
        "le.Tensor": Line(lambda lib, a, b: a * b * lib.le(a, b), ((6,), (6,))),
        "le.Scalar": Line(lambda lib, a: a * lib.le(a, 0.3), ((6,),)),
        "gt.Tensor": Line(lambda lib, a, b: a * b * lib.gt(a, b), ((6,), (6,))),
        "gt.Scalar": Line(lambda lib, a: a * lib.gt(a, 0.3), ((6,),)),
        "ge.Tensor": Line(lambda lib, a, b: a * b * lib.ge(a, b), ((6,), (6,))),
        "ge.Scalar": Line(lambda lib, a: a * lib.ge(a, 0.3), ((6,),)),
        "logical_and": Line(
            lambda lib, a, b: a * b * lib.logical_and(a > 0, b), ((6,), (6,))
        ),
        "logical_or": Line(
            lambda lib, a, b: a * b * lib.logical_or(a > 0, b > 0), ((6,), (6,))
        ),
        "logical_xor": Line(
            lambda lib, a, b: a * b * lib.logical_xor(a > 0, b > 0), ((6,), (6,))
        ),
        "logical_not": Line(lambda lib, a: a * lib.logical_not(a > 0), ((6,),)),
        "bitwise_and.Tensor": Line(
            lambda lib, a, b: a * b * lib.bitwise_and(a > 0, b > 0), ((6,), (6,))
        ),
        "bitwise_or.Tensor": Line(
            lambda lib, a, b: a * b * lib.bitwise_or(a > 0, b > 0), ((6,), (6,))
        ),
        "bitwise_xor.Tensor": Line(
            lambda lib, a, b: a * b * lib.bitwise_xor(a > 0, b > 0), ((6,), (6,))
        ),
        "bitwise_not": Line(lambda lib, a: a * lib.bitwise_not(a > 0), ((6,),)),
        "isnan": Line(
            lambda lib, a, b: a * b * lib.isnan(_nan_where_negative(lib, b)),
            ((6,), (6,)),
        ),
        "isinf": Line(
            lambda lib, a, b: a
            * b
            * lib.isinf(a.detach() / lib.clamp_min(b.detach(), 0.0)),
            ((6,), (6,)),
        ),
        "isfinite": Line(
            lambda lib, a, b: a
            * b
            * lib.isfinite(a.detach() / _nan_where_negative(lib, b)),
            ((6,), (6,)),
        ),
        "pow.Tensor_Tensor": Line(
            lambda lib, a, b: lib.pow(a, b) * a**b, ((3, 2), (2,)), positive=True
        ),
        "pow.Scalar": Line(lambda lib, a: lib.pow(2.5, a) * 2.0**a, ((4,),)),
        "to.dtype": Line(
            lambda lib, a: a.to(lib.complex128) * a + a.to(lib.float64), ((3,),)
        ),
        "copy": Line(
            lambda lib, a, b: _dispatcher(lib, "copy")(a * 1.0, b * b, False) * a,
            ((2, 3), (3,)),
            compare=False,  # PyTorch has no formula for the functional copy
        ),
        "copy_": Line(
            lambda lib, a, b: (a * 1.0).copy_(b * b) * a, ((2, 3), (3,)), complex=True
        ),
        "zero": Line(lambda lib, a: _dispatcher(lib, "zero")(a * a) + a * a, ((2, 3),)),
        "zero_": Line(
            lambda lib, a: lib.zero_(a * 1.0) + (a * a).zero_() * a + a * a, ((2, 3),)
        ),
        "fill.Scalar": Line(lambda lib, a: lib.fill(a * a, 2.5) * a, ((2, 3),)),
        "fill.Tensor": Line(lambda lib, a, v: lib.fill(a * a, v * v) * a, ((2, 3), ())),
        # No forward formula: an in-place entry's `result:` key is not available here
        # (see derivatives.yaml); PyTorch has one.
        "fill_.Scalar": Line(
            lambda lib, a: (a * 1.0).fill_(2.5) * a + lib.fill_(a * a, -1.0),
            ((2, 3),),
            forward=False,
        ),
        "fill_.Tensor": Line(
            lambda lib, a, v: (a * 1.0).fill_(v * v) * a + lib.fill_(a * a, v),
            ((2, 3), ()),
            forward=False,
        ),
        "lerp.Scalar": Line(
            lambda lib, a, b: lib.lerp(a, b, 0.3) * a.lerp(b * b, 0.8),
            ((2, 3), (3,)),
            complex=True,
        ),
        "lerp.Tensor": Line(
            lambda lib, a, b, w: lib.lerp(a, b, w) * a.lerp(b, w * 0.2),
            ((2, 3), (3,), (2, 1)),
            complex=True,
        ),
        "lerp_.Scalar": Line(
            lambda lib, a, b: (a * 1.0).lerp_(b * b, 0.6), ((2, 3), (3,))
        ),
        "lerp_.Tensor": Line(
            lambda lib, a, b, w: (a * a).lerp_(b, w), ((2, 3), (2, 3), (3,))
        ),
        "addcmul": Line(
            lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5) + a.addcmul(b, c),
            ((2, 3), (3,), (2, 1)),
            complex=True,
        ),
        "addcmul_": Line(
            lambda lib, a, b, c: (a * 1.0).addcmul_(b, c * c, value=-2.0),
            ((2, 3), (2, 3), (3,)),
        ),
        "addcdiv": Line(
            lambda lib, a, b, c: lib.addcdiv(a, b, c, value=0.5) + a.addcdiv(b, c),
            ((2, 3), (3,), (2, 1)),
            complex=True,
            positive=True,
        ),
        "addcdiv_": Line(
            lambda lib, a, b, c: (a * 1.0).addcdiv_(b, c * c, value=-2.0),
            ((2, 3), (2, 3), (3,)),
            positive=True,
        ),
        "clip.Tensor": Line(
            lambda lib, a, b, c: lib.clip(a, b, c) * a.clip(c, b),
            ((3, 4), (4,), (3, 1)),
        ),
        "clip": Line(lambda lib, a: lib.clip(a, -0.5, 0.7) * a.clip(max=0.2), ((6,),)),
        "clamp_.Tensor": Line(
            lambda lib, a, b, c: lib.clamp_(a * 1.0, b, c) * (a * a).clamp_(min=b),
            ((3, 4), (4,), (3, 1)),
        ),
        "clip_.Tensor": Line(
            lambda lib, a, b: lib.clip_(a * 1.0, max=b) * (a * a).clip_(b),
            ((3, 4), (4,)),
        ),
        "clip_": Line(
            lambda lib, a: lib.clip_(a * 1.0, min=-0.5) * (a * a).clip_(0.3, 1.5),
            ((6,),),
        ),
        "nan_to_num": Line(
            lambda lib, a: lib.nan_to_num(a) * a.nan_to_num(1.0, 2.0, -3.0),
            ((2, 3),),
        ),
        "nan_to_num_": Line(
            lambda lib, a: lib.nan_to_num_(a * 1.0) * (a * a).nan_to_num_(0.0),
            ((2, 3),),
        ),
        "greater.Tensor": Line(
            lambda lib, a, b: a * b * lib.greater(a, b) + a.greater(b * 0.5),
            ((6,), (6,)),
        ),
        "greater.Scalar": Line(
            lambda lib, a: a * lib.greater(a, 0.3) * a.greater(-0.5), ((6,),)
        ),
        "greater_equal.Tensor": Line(
            lambda lib, a, b: a * b * lib.greater_equal(a, b)
            + a.greater_equal(b * 0.5),
            ((6,), (6,)),
        ),
        "greater_equal.Scalar": Line(
            lambda lib, a: a * lib.greater_equal(a, 0.3) * a.greater_equal(-0.5),
            ((6,),),
        ),
        "less.Tensor": Line(
            lambda lib, a, b: a * b * lib.less(a, b) + a.less(b * 0.5), ((6,), (6,))
        ),
        "less.Scalar": Line(
            lambda lib, a: a * lib.less(a, 0.3) * a.less(-0.5), ((6,),)
        ),
        "less_equal.Tensor": Line(
            lambda lib, a, b: a * b * lib.less_equal(a, b) + a.less_equal(b * 0.5),
            ((6,), (6,)),
        ),
        "less_equal.Scalar": Line(
            lambda lib, a: a * lib.less_equal(a, 0.3) * a.less_equal(-0.5), ((6,),)
        ),
        "not_equal.Tensor": Line(
            lambda lib, a, b: a * b * lib.not_equal(a, b) + a.not_equal(b * 0.5),
            ((6,), (6,)),
        ),
        "not_equal.Scalar": Line(
            lambda lib, a: a * lib.not_equal(a, 0.3) * a.not_equal(-0.5), ((6,),)
        ),
        "absolute": Line(lambda lib, a: lib.absolute(a) * a.absolute(), ((4,),)),
        "negative": Line(lambda lib, a: lib.negative(a) * a.negative(), ((4,),)),
        "arccos": Line(
            lambda lib, a: lib.arccos(a * 0.4) * (a * 0.3).arccos(), ((4,),)
        ),
        "arcsin": Line(
            lambda lib, a: lib.arcsin(a * 0.4) * (a * 0.3).arcsin(), ((4,),)
        ),
        "arctan": Line(lambda lib, a: lib.arctan(a) * a.arctan(), ((4,),)),
        "arctan2": Line(
            lambda lib, a, b: lib.arctan2(a, b) * a.arctan2(b), ((3, 1), (4,))
        ),
        "fix": Line(lambda lib, a: lib.fix(a) * a.fix() * a, ((5,),)),
        "multiply.Tensor": Line(
            lambda lib, a, b: lib.multiply(a, b) * a.multiply(b), ((3, 1), (1, 4))
        ),
        "multiply.Scalar": Line(
            lambda lib, a: lib.multiply(a, -1.5) * a.multiply(2),
            ((3,),),
        ),
        "divide.Tensor": Line(
            lambda lib, a, b: lib.divide(a, b) * a.divide(b),
            ((3, 1), (1, 4)),
            positive=True,
        ),
        "divide.Scalar": Line(
            lambda lib, a: lib.divide(a, -2.5) * a.divide(2), ((3,),)
        ),
        "divide.Tensor_mode": Line(
            lambda lib, a, b: lib.divide(a * 3.0, b, rounding_mode="floor") * a
            + a.divide(b, rounding_mode=None),
            ((4,), (4,)),
            positive=True,
        ),
        "subtract.Tensor": Line(
            lambda lib, a, b: lib.subtract(a, b, alpha=-0.5) * a.subtract(b),
            ((2, 3), (3,)),
        ),
        "subtract.Scalar": Line(
            lambda lib, a: lib.subtract(a, 1.5, alpha=-0.5) * a.subtract(2),
            ((3,),),
        ),
    }
)


# ==== family: reduction ====
TABLE.update(
    {
        "sum": Line(lambda lib, a: lib.sum(a) * a.sum(), ((3, 2),)),
        "sum.dim_IntList": Line(
            lambda lib, a: lib.sum(a, (0, -1), keepdim=True) * a.sum(1, keepdim=True),
            ((2, 3, 4),),
        ),
        "mean": Line(lambda lib, a: lib.mean(a) * a, ((3, 2),)),
        "mean.dim": Line(lambda lib, a: lib.mean(a, -1, True) * a.mean(0), ((3, 3),)),
        "prod": Line(lambda lib, a: lib.prod(a) * a, ((2, 3),), complex=True),
        "prod.dim_int": Line(
            lambda lib, a: lib.prod(a, 1, keepdim=True) * a.prod(-2), ((2, 3),)
        ),
        "max.dim": Line(
            lambda lib, a: lib.max(a, 1).values * a.max(0, keepdim=True)[0], ((3, 3),)
        ),
        "max": Line(lambda lib, a: lib.max(a) * a.max(), ((2, 3),)),
        "min.dim": Line(
            lambda lib, a: lib.min(a, -1, True).values * a.min(dim=0).values, ((3, 3),)
        ),
        "min": Line(lambda lib, a: lib.min(a) * a, ((2, 3),)),
        "amax": Line(
            lambda lib, a: lib.amax(a, (0, 2)) * a.amax(-1, keepdim=True), ((2, 3, 3),)
        ),
        "amin": Line(lambda lib, a: lib.amin(a) * a.amin(1), ((2, 3),)),
        "argmax": Line(
            lambda lib, a: a * lib.argmax(a, 1, keepdim=True) + a.argmax(), ((2, 3),)
        ),
        "argmin": Line(lambda lib, a: a * lib.argmin(a, 0) + a.argmin(), ((2, 3),)),
        "logsumexp": Line(
            lambda lib, a: lib.logsumexp(a, (0, 2), True) * a.logsumexp(0), ((2, 3, 3),)
        ),
        "var": Line(lambda lib, a: lib.var(a) * a.var(unbiased=False), ((2, 3),)),
        "var.dim": Line(lambda lib, a: lib.var(a, 1, False, True) * a, ((2, 3),)),
        "var.correction": Line(
            lambda lib, a: a.var((0, 1), correction=2, keepdim=True) + lib.var(a, 0),
            ((3, 2),),
            complex=True,
        ),
        "std": Line(lambda lib, a: lib.std(a) * a.std(False), ((2, 3),)),
        "std.dim": Line(lambda lib, a: lib.std(a, [0], keepdim=True) * a, ((2, 3),)),
        "std.correction": Line(
            lambda lib, a: a.std(1, correction=0) + lib.std(a, correction=1.5),
            ((2, 3),),
            complex=True,
        ),
        "cumsum": Line(lambda lib, a: lib.cumsum(a, 1) * a, ((2, 3),), complex=True),
        "cumprod": Line(
            lambda lib, a: lib.cumprod(a, 0) * 2.0, ((3, 2),), complex=True
        ),
        "value_selecting_reduction_backward": Line(
            lambda lib, g: lib.value_selecting_reduction_backward(
                g, 1, lib.tensor([2, 0]), (2, 3), False
            )
            * 2.0,
            ((2,),),
            compare=False,  # not in torch's Python API
        ),
        # Methods only (gradgen.any and gradgen.all wait for a generator fix, see
        # native_functions.yaml).
        "any": Line(lambda lib, a: a * (a > 1.5).any() + a.any(), ((2, 3),)),
        "any.dim": Line(
            lambda lib, a: a * (a > 0).any(1, keepdim=True) + a * a.any(dim=0),
            ((2, 3),),
        ),
        "any.dims": Line(
            lambda lib, a: a * (a > 0).any((0,), True) + a * a.any(dim=None),
            ((2, 3),),
        ),
        "all": Line(lambda lib, a: a * (a > -1.5).all() + a.all(), ((2, 3),)),
        "all.dim": Line(
            lambda lib, a: a * (a > 0).all(1, keepdim=True) + a * a.all(dim=0),
            ((2, 3),),
        ),
        "all.dims": Line(
            lambda lib, a: a * (a > -1).all((0, 1), True) + a * a.all(dim=None),
            ((2, 3),),
        ),
        "allclose": Line(
            lambda lib, a, b: a * lib.allclose(a, a * 1.0) + b * a.allclose(b),
            ((2, 3), (2, 3)),
        ),
        "equal": Line(
            lambda lib, a, b: a * lib.equal(a, a * 1.0) + b * a.equal(b),
            ((2, 3), (2, 3)),
        ),
        "sort": Line(
            lambda lib, a: lib.sort(a, 1).values * a.sort(0, descending=True)[0],
            ((3, 3),),
        ),
        "sort.stable": Line(
            lambda lib, a: lib.sort(a, stable=True, dim=0).values * 2.0
            + a.sort(stable=False, descending=True)[0],
            ((3, 3),),
        ),
        "topk": Line(
            lambda lib, a: lib.topk(a, 2, 1).values * a.topk(2, 1, largest=False)[0],
            ((3, 4),),
        ),
    }
)


# ==== family: indexing ====
TABLE.update(
    {
        "index_select": Line(
            lambda lib, a: lib.index_select(a, 0, lib.tensor([2, 0, 2]))
            * a.index_select(1, lib.tensor([1, 1])),
            ((3, 2),),
        ),
        "index_select_backward": Line(
            lambda lib, g: lib.index_select_backward(
                g, (3, 2), 0, lib.tensor([2, 0, 2])
            )
            * 2.0,
            ((3, 2),),
            compare=False,  # not in torch's Python API
        ),
        "index_add": Line(
            lambda lib, a, s: lib.index_add(
                a, 1, lib.tensor([0, 2, 0]), s * s, alpha=1.5
            ),
            ((2, 3), (2, 3)),
        ),
        "gather": Line(
            lambda lib, a: lib.gather(a, 1, lib.tensor([[0, 0, 2], [1, 0, 1]])) * a,
            ((2, 3),),
        ),
        "gather_backward": Line(
            lambda lib, g: lib.gather_backward(
                g,
                lib.zeros(2, 3, dtype=lib.float64),
                1,
                lib.tensor([[0, 2], [1, 1]]),
                False,
            )
            * 2.0,
            ((2, 2),),
            compare=False,  # not in torch's Python API
        ),
        "scatter.src": Line(
            lambda lib, a, s: lib.scatter(a, 1, lib.tensor([[2, 0], [1, 2]]), s * s),
            ((2, 3), (2, 2)),
        ),
        "scatter.value": Line(
            lambda lib, a: a.scatter(0, lib.tensor([[1, 0, 1]]), 2.5) * a, ((2, 3),)
        ),
        "scatter_add": Line(
            lambda lib, a, s: lib.scatter_add(
                a, 0, lib.tensor([[1, 0, 1], [1, 1, 0]]), s
            )
            * a,
            ((2, 3), (2, 3)),
        ),
        "masked_fill.Scalar": Line(
            lambda lib, a: lib.masked_fill(a, lib.tensor([[True], [False]]), 2.5) * a,
            ((2, 3),),
        ),
        "masked_fill.Tensor": Line(
            lambda lib, a, v: a.masked_fill(lib.tensor([True, False, True]), v * v) * a,
            ((2, 3), ()),
        ),
        "index.Tensor": Line(
            lambda lib, a: a[lib.tensor([2, 0, 2])]
            * a[:, lib.tensor([True, False, True])].sum(),
            ((3, 3),),
        ),
        "index_put": Line(
            lambda lib, a, b: lib.index_put(a, (lib.tensor([0, 2, 0]),), b * b, True),
            ((3, 2), (3, 2)),
        ),
        "index_put_": Line(
            lambda lib, a, b: (a * 1.0).index_put_((lib.tensor([2, 0]),), b * 2.0),
            ((3, 2), (2,)),
        ),
        "masked_fill_.Scalar": Line(
            lambda lib, a: (a * 1.0).masked_fill_(_mask(lib), 2.5) * a, ((2, 3),)
        ),
        "masked_fill_.Tensor": Line(
            lambda lib, a, v: (a * a).masked_fill_(_mask(lib), v * v) * a,
            ((2, 3), ()),
        ),
    }
)


# ==== family: linalg ====
TABLE.update(
    {
        "mm": Line(lambda lib, a, b: lib.mm(a, b), ((2, 3), (3, 4)), complex=True),
        "bmm": Line(lambda lib, a, b: a.bmm(b), ((2, 2, 3), (2, 3, 2)), complex=True),
        "dot": Line(lambda lib, a, b: lib.dot(a, b) * a, ((3,), (3,)), complex=True),
        "vdot": Line(lambda lib, a, b: lib.vdot(a, b) * a, ((3,), (3,)), complex=True),
        "mv": Line(lambda lib, a, b: lib.mv(a, b), ((2, 3), (3,)), complex=True),
        "outer": Line(lambda lib, a, b: lib.outer(a, b * b), ((3,), (2,))),
        "ger": Line(lambda lib, a, b: a.ger(b) * a.ger(b), ((3,), (2,))),
        # Batch-broadcasting cases are in tests/ops/test_linalg.py (their double backward
        # needs the shared reshape to copy non-contiguous gradients).
        "matmul": Line(
            lambda lib, a, b: lib.matmul(a, b), ((2, 2, 3), (2, 3, 2)), complex=True
        ),
        "addmm": Line(
            lambda lib, a, b, c: lib.addmm(a, b, c, beta=0.5, alpha=-2.0),
            ((3,), (2, 4), (4, 3)),
            complex=True,
        ),
        "linear": Line(
            lambda lib, a, b, c: _aten_namespace(lib).linear(a, b, c),
            ((2, 4, 3), (5, 3), (5,)),
        ),
        "tril": Line(lambda lib, a: lib.tril(a) * a.tril(-1) + a.tril(2), ((3, 4),)),
        "triu": Line(
            lambda lib, a: lib.triu(a, 1) * a.triu() + a.triu(-1), ((2, 3, 4),)
        ),
        "tril_": Line(lambda lib, a: (a * a).tril_(1) * a, ((4, 3),)),
        "triu_": Line(lambda lib, a: (a * 1.0).triu_(-1) * a, ((4, 3),)),
        "trace": Line(lambda lib, a: lib.trace(a) * a + a.trace(), ((3, 4),)),
        "linalg_vector_norm": Line(_vector_norms, ((2, 3),)),
        "norm.Scalar": Line(
            lambda lib, a: lib.norm(a) * a + a.norm(1) + a.norm(float("inf")),
            ((2, 3),),
        ),
        "norm.ScalarOpt_dim": Line(
            lambda lib, a: lib.norm(a, 2, 1)
            * a.norm(p=float("inf"), dim=0, keepdim=True).sum()
            + lib.norm(a, 3, (0, 1)),
            ((3, 4),),
        ),
        "dist": Line(
            lambda lib, a, b: lib.dist(a, b) * a.dist(b, 3)
            + lib.dist(a, b, float("inf")),
            ((3, 1), (4,)),
        ),
    }
)


# ==== family: activation ====
TABLE.update(
    {
        "relu": Line(lambda lib, a: lib.relu(a) * a.relu(), ((6,),)),
        "gelu": Line(
            lambda lib, a: _nn(lib, "gelu")(a)
            * _nn(lib, "gelu")(a, approximate="tanh"),
            ((6,),),
        ),
        "silu": Line(lambda lib, a: _nn(lib, "silu")(a) * a, ((6,),)),
        "threshold_backward": Line(
            lambda lib, a, b: _aten(lib, "threshold_backward")(a * b, b, 0.25),
            ((6,), (6,)),
        ),
        "gelu_backward": Line(
            lambda lib, a, b: _aten(lib, "gelu_backward")(a, b)
            * _aten(lib, "gelu_backward")(a, b, approximate="tanh"),
            ((5,), (5,)),
        ),
        # PyTorch's silu_backward has no derivative (grad_fn NotImplemented, as here):
        # the line checks its values on constants; the gradient flows through `* a`.
        "silu_backward": Line(
            lambda lib, a: _aten(lib, "silu_backward")(
                lib.tensor(_GRID + 1.0), lib.tensor(_GRID * 2.0)
            )
            * a,
            ((5,),),
        ),
        "relu_": Line(lambda lib, a: (a * 1.0).relu_() * lib.relu_(a * 2.0), ((6,),)),
        "softmax.int": Line(
            lambda lib, a: lib.softmax(a, 0) * a.softmax(-1, dtype=lib.float64),
            ((2, 3),),
        ),
        "_softmax": Line(lambda lib, a: lib._softmax(a, 1, False) * a, ((2, 3),)),
        "_softmax_backward_data": Line(
            lambda lib, g, y: lib._softmax_backward_data(
                g, lib.softmax(y, 1), 1, lib.float64
            ),
            ((2, 3), (2, 3)),
            forward=False,  # PyTorch has no forward formula either
        ),
        "log_softmax.int": Line(
            lambda lib, a: lib.log_softmax(a, 1) * a.log_softmax(0), ((2, 3),)
        ),
        "_log_softmax": Line(
            lambda lib, a: lib._log_softmax(a, 0, False) * a, ((2, 3),)
        ),
        "_log_softmax_backward_data": Line(
            lambda lib, g, y: lib._log_softmax_backward_data(
                g, lib.log_softmax(y, 0), 0, lib.float64
            ),
            ((2, 3), (2, 3)),
            forward=False,  # PyTorch has no forward formula either
        ),
        "leaky_relu": Line(
            lambda lib, a: _f("leaky_relu")(lib)(a) * _f("leaky_relu")(lib)(a, -0.5),
            ((6,),),
        ),
        "leaky_relu_backward": Line(
            lambda lib, g, a: _f("leaky_relu_backward")(lib)(g, a * a - 1, 0.2, False),
            ((6,), (6,)),
        ),
        "leaky_relu_": Line(
            lambda lib, a: _f("leaky_relu_")(lib)(a * 1.0, 0.3) * a, ((6,),)
        ),
        "elu": Line(
            lambda lib, a: _f("elu")(lib)(a) * _f("elu")(lib)(a, 2.0, 1.5, 0.5),
            ((6,),),
        ),
        "elu_backward": Line(
            lambda lib, g, a: _f("elu_backward")(lib)(g, 1.5, 2.0, 0.5, False, a)
            * _f("elu_backward")(lib)(g, 1.5, 2.0, 0.5, True, a * 0.1 - 0.5),
            ((6,), (6,)),
        ),
        "elu_": Line(lambda lib, a: _f("elu_")(lib)(a * 1.0, 0.7) * a, ((6,),)),
        "softplus": Line(
            lambda lib, a: _f("softplus")(lib)(a) * _f("softplus")(lib)(a, 2.0, 1.0),
            ((6,),),
        ),
        "softplus_backward": Line(
            lambda lib, g, a: _f("softplus_backward")(lib)(g, a, 2.0, 1.0), ((6,), (6,))
        ),
        "log_sigmoid": Line(lambda lib, a: _f("log_sigmoid")(lib)(a * 3.0), ((6,),)),
        "log_sigmoid_forward": Line(
            lambda lib, a: _f("log_sigmoid_forward")(lib)(a * 3.0)[0], ((6,),)
        ),
        "log_sigmoid_backward": Line(
            lambda lib, g, a: _f("log_sigmoid_backward")(lib)(
                g, a, _f("log_sigmoid_forward")(lib)(a)[1]
            ),
            ((6,), (6,)),
        ),
        "hardtanh": Line(
            lambda lib, a: _f("hardtanh")(lib)(a) * _f("hardtanh")(lib)(a, -0.5, 1.25),
            ((6,),),
        ),
        "hardtanh_backward": Line(
            lambda lib, g, a: _f("hardtanh_backward")(lib)(g * g, a, -0.5, 1.25),
            ((6,), (6,)),
        ),
        "hardtanh_": Line(
            lambda lib, a: _f("hardtanh_")(lib)(a * 1.0, -0.5, 1.25) * a, ((6,),)
        ),
        "mish": Line(lambda lib, a: _f("mish")(lib)(a * 2.0) * a, ((6,),)),
        # PyTorch's mish_backward has no derivative (grad_fn NotImplemented, as here):
        # the line checks its values on constants; the gradient flows through `* a`.
        "mish_backward": Line(
            lambda lib, a: _f("mish_backward")(lib)(
                lib.tensor(_GRID + 1.0), lib.tensor(_GRID * 2.0)
            )
            * a,
            ((5,),),
        ),
        "mish_": Line(lambda lib, a: _f("mish_")(lib)(a * 1.0) * a, ((6,),)),
        # Deterministic cases only (the mask is random): p == 0, train=False, p == 1.
        "dropout": Line(
            lambda lib, a: _f("dropout")(lib)(a, 0.0, True)
            * _f("dropout")(lib)(a * 2.0, 0.3, False)
            + _f("dropout")(lib)(a, 1.0, True),
            ((5,),),
        ),
    }
)


# ==== family: loss ====
TABLE.update(
    {
        "mse_loss": Line(
            lambda lib, a, b: _aten_namespace(lib).mse_loss(a, b * b, 1),
            ((3, 4), (3, 4)),
        ),
        "mse_loss_backward": Line(
            lambda lib, g, a, b: _aten_namespace(lib).mse_loss_backward(g, a, b * b, 2),
            ((), (3, 4), (3, 4)),
        ),
        "nll_loss_forward": Line(
            lambda lib, a: _aten_namespace(lib).nll_loss_forward(
                a, _targets(lib, 0, 2, -100, 1), _class_weight(lib), 1, -100
            )[0],
            ((4, 3),),
        ),
        "nll_loss_backward": Line(
            lambda lib, g, a: _aten_namespace(lib).nll_loss_backward(
                g * g,
                a,
                _targets(lib, 0, 2, 1),
                _class_weight(lib),
                0,
                1,
                lib.tensor(0.0, dtype=lib.float64),
            ),
            ((3,), (3, 3)),
            forward=False,  # PyTorch has no forward formula either
        ),
        "nll_loss2d_forward": Line(
            lambda lib, a: _aten_namespace(lib).nll_loss2d_forward(
                a, _targets(lib, 0, 2, 1, 2).view(1, 2, 2), _class_weight(lib), 2, 2
            )[0],
            ((1, 3, 2, 2),),
        ),
        "nll_loss2d_backward": Line(
            lambda lib, g, a: _aten_namespace(lib).nll_loss2d_backward(
                g,
                a,
                _targets(lib, 0, 2, 1, 2).view(1, 2, 2),
                _class_weight(lib),
                1,
                -100,
                lib.tensor(5.5, dtype=lib.float64),
            ),
            ((), (1, 3, 2, 2)),
            forward=False,  # PyTorch has no forward formula either
        ),
        "nll_loss": Line(
            lambda lib, a: _aten_namespace(lib).nll_loss(
                a, _targets(lib, 2, 0, 1, 1), _class_weight(lib), 2, 1
            ),
            ((4, 3),),
        ),
        "nll_loss2d": Line(
            lambda lib, a: _aten_namespace(lib).nll_loss2d(
                a, _targets(lib, 0, 2, 1, 2).view(1, 2, 2), _class_weight(lib), 0
            ),
            ((1, 3, 2, 2),),
        ),
        "nll_loss_nd": Line(
            lambda lib, a: _aten_namespace(lib).nll_loss_nd(
                a, _targets(lib, 0, 2, 1, 2).view(2, 2), _class_weight(lib), 1
            ),
            ((2, 3, 2),),
        ),
        "binary_cross_entropy": Line(
            lambda lib, a: _aten_namespace(lib).binary_cross_entropy(
                _probabilities(a), _bce_target(lib), _class_weight(lib), 1
            ),
            ((2, 3),),
        ),
        "binary_cross_entropy_backward": Line(
            lambda lib, g, a: _aten_namespace(lib).binary_cross_entropy_backward(
                g, _probabilities(a), _bce_target(lib), _class_weight(lib), 0
            ),
            ((2, 3), (2, 3)),
        ),
        "cross_entropy_loss": Line(_cross_entropy, ((4, 3),)),
        "l1_loss": Line(
            lambda lib, a, b: _f("l1_loss")(lib)(a, b, 1)
            + _f("l1_loss")(lib)(a, b * 2.0, 0).sum(),
            ((3, 4), (3, 4)),
        ),
        "smooth_l1_loss": Line(
            lambda lib, a, b: _f("smooth_l1_loss")(lib)(a, b, 1, 0.5)
            + _f("smooth_l1_loss")(lib)(a, b * 2.0, 0, 1.5) * a,
            ((3, 4), (3, 4)),
        ),
        "smooth_l1_loss_backward": Line(
            lambda lib, g, a, b: _f("smooth_l1_loss_backward")(lib)(g, a, b, 0, 0.5)
            + _f("smooth_l1_loss_backward")(lib)(g.sum(), a, b * 2.0, 1, 1.5),
            ((3, 4), (3, 4), (3, 4)),
        ),
        "huber_loss": Line(
            lambda lib, a, b: _f("huber_loss")(lib)(a, b, 2, 0.5)
            + _f("huber_loss")(lib)(a, b * 2.0, 0, 1.5) * a,
            ((3, 4), (3, 4)),
        ),
        "huber_loss_backward": Line(
            lambda lib, g, a, b: _f("huber_loss_backward")(lib)(g, a, b, 0, 0.5)
            + _f("huber_loss_backward")(lib)(g.sum(), a, b * 2.0, 1, 1.5),
            ((3, 4), (3, 4), (3, 4)),
            forward=False,  # PyTorch has no forward formula either
        ),
        "binary_cross_entropy_with_logits": Line(
            lambda lib, a, b: _f("binary_cross_entropy_with_logits")(lib)(
                a,
                _probabilities(b),
                _f64(lib, [0.5, 1.0, 2.0]),
                _f64(lib, [[3.0, 0.5, 1.0]]),
                1,
            )
            + _f("binary_cross_entropy_with_logits")(lib)(a, b, None, None, 0) * a,
            ((2, 3), (2, 3)),
        ),
        "kl_div": Line(
            lambda lib, a, b: _f("kl_div")(lib)(a, _probabilities(b), 1)
            + _f("kl_div")(lib)(a, b, 0, log_target=True) * a,
            ((2, 3), (2, 3)),
        ),
    }
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


# ==== family: normalization ====
TABLE.update(
    {
        "batch_norm": Line(_batch_norm, ((4, 3, 2), (3,), (3,))),
        "native_batch_norm": Line(
            lambda lib, a, w, b: _f("native_batch_norm")(lib)(
                a, w, b, *_running(lib), True, 0.1, 1e-5
            )[0],
            ((3, 3), (3,), (3,)),
        ),
        "native_batch_norm_backward": Line(
            _batch_norm_backward,
            ((2, 3, 2), (2, 3, 2), (3,)),
            forward=False,  # PyTorch has no forward formula either
        ),
        "instance_norm": Line(
            lambda lib, a, w, b: _f("instance_norm")(lib)(
                a, w, b, None, None, True, 0.1, 1e-5, False
            )
            + _f("instance_norm")(lib)(
                a, w, b, *_running(lib), False, 0.1, 1e-5, False
            ),
            ((2, 3, 3), (3,), (3,)),
        ),
        "group_norm": Line(
            lambda lib, a, w, b: _f("group_norm")(lib)(a, 2, w, b, 1e-5)
            + _f("group_norm")(lib)(a, 4),
            ((2, 4, 3), (4,), (4,)),
        ),
        "native_group_norm": Line(_native_group_norm, ((2, 4, 3), (4,), (4,))),
        "native_group_norm_backward": Line(_group_norm_backward, ((2, 4, 3),)),
        "layer_norm": Line(
            lambda lib, a, w, b: _f("layer_norm")(lib)(a, (3, 4), w, b, 1e-5)
            + _f("layer_norm")(lib)(a, (4,)),
            ((2, 3, 4), (3, 4), (3, 4)),
        ),
        "native_layer_norm": Line(
            lambda lib, a, w, b: _f("native_layer_norm")(lib)(a, (3,), w, b, 1e-5)[0],
            ((2, 3), (3,), (3,)),
        ),
        "native_layer_norm_backward": Line(
            _layer_norm_backward,
            ((2, 3), (2, 3), (3,)),
            forward=False,  # PyTorch has no forward formula either
        ),
    }
)


# ==== family: sparse ====
TABLE.update(
    {
        "embedding": Line(
            lambda lib, w: _f("embedding")(lib)(w, lib.tensor([[0, 2], [3, 0]]), 1)
            * w[0],
            ((4, 3),),
        ),
        "embedding_backward": Line(
            lambda lib, g: _f("embedding_backward")(lib)(
                g * g, lib.tensor([[0, 1], [3, 1]]), 5, 1, False, False
            ),
            ((2, 2, 3),),
        ),
        # scale_grad_by_freq=True is in tests/ops/test_sparse.py: PyTorch's double backward
        # ignores it, so gradients against torch only agree without it.
        "embedding_dense_backward": Line(
            lambda lib, g: _f("embedding_dense_backward")(lib)(
                g * g, lib.tensor([[0, 1], [3, 1]]), 5, 3, False
            ),
            ((2, 2, 3),),
        ),
        "one_hot": Line(
            lambda lib, a: a * _f("one_hot")(lib)(lib.tensor([0, 2, 1]), 3), ((3, 3),)
        ),
    }
)


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


# ==== family: conv ====
TABLE.update(
    {
        "convolution": Line(
            lambda lib, a, w, b: lib.convolution(
                a, w, b, [2, 1], [1, 0], [1, 2], False, [0, 0], 2
            ),
            ((1, 4, 5, 5), (4, 2, 3, 2), (4,)),
        ),
        "convolution_backward": Line(
            _convolution_backward, ((1, 2, 7, 3), (1, 4, 3, 3), (4, 1, 2, 2))
        ),
        "conv1d": Line(
            lambda lib, a, w, b: lib.conv1d(a, w, b, 2, 1, 2),
            ((2, 3, 7), (4, 3, 3), (4,)),
        ),
        "conv2d": Line(
            lambda lib, a, w, b: lib.conv2d(a, w, b, (1, 2), (1, 0), (2, 1)),
            ((1, 2, 5, 5), (3, 2, 2, 3), (3,)),
        ),
        "conv3d": Line(
            lambda lib, a, w, b: lib.conv3d(a, w, b, groups=2),
            ((1, 2, 3, 4, 3), (2, 1, 2, 2, 2), (2,)),
        ),
        "conv1d.padding": Line(
            lambda lib, a, w: lib.conv1d(a, w, padding="same"), ((2, 6), (3, 2, 2))
        ),
        "conv2d.padding": Line(
            lambda lib, a, w: lib.conv2d(a, w, padding="same", dilation=(1, 2)),
            ((1, 2, 4, 4), (2, 2, 2, 3)),
        ),
        "conv3d.padding": Line(
            lambda lib, a, w: lib.conv3d(a, w, padding="valid"),
            ((1, 1, 3, 3, 3), (2, 1, 2, 2, 2)),
        ),
        "conv_transpose1d": Line(
            lambda lib, a, w, b: lib.conv_transpose1d(a, w, b, 2, 1, 1),
            ((1, 2, 4), (2, 3, 3), (3,)),
        ),
        "conv_transpose2d.input": Line(
            lambda lib, a, w, b: lib.conv_transpose2d(
                a, w, b, (2, 1), (0, 1), (1, 0), 2, (1, 2)
            ),
            ((1, 4, 3, 3), (4, 1, 2, 3), (2,)),
        ),
        "conv_transpose3d.input": Line(
            lambda lib, a, w: lib.conv_transpose3d(a, w, stride=2),
            ((1, 2, 2, 3, 2), (2, 1, 2, 2, 2)),
        ),
    }
)


# ==== family: pooling ====
TABLE.update(
    {
        "max_pool2d_with_indices": Line(
            lambda lib, a: _f("max_pool2d_with_indices")(lib)(a, *_POOL2D)[0],
            ((1, 2, 6, 7),),
        ),
        "max_pool2d_with_indices_backward": Line(
            lambda lib, g, a: _f("max_pool2d_with_indices_backward")(lib)(
                g,
                a,
                *_POOL2D,
                _max_pool_indices(
                    lib, "max_pool2d_with_indices", (1, 2, 6, 7), *_POOL2D
                ),
            ),
            ((1, 2, 4, 7), (1, 2, 6, 7)),
        ),
        "max_pool3d_with_indices": Line(
            lambda lib, a: _f("max_pool3d_with_indices")(lib)(a, *_POOL3D)[0],
            ((1, 1, 4, 4, 4),),
        ),
        "max_pool3d_with_indices_backward": Line(
            lambda lib, g, a: _f("max_pool3d_with_indices_backward")(lib)(
                g,
                a,
                *_POOL3D,
                _max_pool_indices(
                    lib, "max_pool3d_with_indices", (1, 1, 4, 4, 4), *_POOL3D
                ),
            ),
            ((1, 1, 3, 3, 3), (1, 1, 4, 4, 4)),
        ),
        "max_pool1d_with_indices": Line(
            lambda lib, a: lib.max_pool1d_with_indices(a, 3, 2, 1, 1, True)[0],
            ((2, 3, 7),),
        ),
        "max_pool1d": Line(lambda lib, a: lib.max_pool1d(a, 2, 2, 0, 2), ((3, 8),)),
        "max_pool2d": Line(lambda lib, a: lib.max_pool2d(a, 2), ((2, 5, 5),)),
        "max_pool3d": Line(
            lambda lib, a: lib.max_pool3d(a, (1, 2, 2)), ((1, 2, 3, 4, 4),)
        ),
        "avg_pool1d": Line(
            lambda lib, a: lib.avg_pool1d(a, 3, 2, 1, True, False), ((2, 2, 7),)
        ),
        "avg_pool2d": Line(
            lambda lib, a: _f("avg_pool2d")(lib)(a, (3, 2), (2, 1), (1, 1), True),
            ((1, 2, 6, 7),),
        ),
        "avg_pool2d_backward": Line(
            lambda lib, g, a: _f("avg_pool2d_backward")(lib)(
                g, a, [3, 2], [2, 2], [1, 0], False, False, None
            ),
            ((1, 2, 3, 3), (1, 2, 6, 7)),
        ),
        "avg_pool3d": Line(
            lambda lib, a: _f("avg_pool3d")(lib)(a, 2, 2, 1, True, True, 3),
            ((1, 1, 4, 5, 4),),
        ),
        "avg_pool3d_backward": Line(
            lambda lib, g, a: _f("avg_pool3d_backward")(lib)(
                g, a, [2, 2, 2], [2, 2, 2], [1, 1, 1], False, True, None
            ),
            ((1, 1, 3, 3, 3), (1, 1, 4, 5, 4)),
        ),
        "adaptive_avg_pool1d": Line(
            lambda lib, a: lib.adaptive_avg_pool1d(a, 3), ((2, 3, 7),)
        ),
        "adaptive_avg_pool2d": Line(
            lambda lib, a: _f("adaptive_avg_pool2d")(lib)(a, (3, 4)), ((2, 5, 7),)
        ),
        "_adaptive_avg_pool2d": Line(
            lambda lib, a: _f("_adaptive_avg_pool2d")(lib)(a, [3, 4]), ((1, 2, 5, 7),)
        ),
        "_adaptive_avg_pool2d_backward": Line(
            lambda lib, g, a: _f("_adaptive_avg_pool2d_backward")(lib)(g, a),
            ((1, 2, 3, 4), (1, 2, 5, 7)),
        ),
        "adaptive_avg_pool3d": Line(
            lambda lib, a: _f("adaptive_avg_pool3d")(lib)(a, (2, 3, 2)),
            ((1, 1, 3, 4, 5),),
        ),
        "_adaptive_avg_pool3d": Line(
            lambda lib, a: _f("_adaptive_avg_pool3d")(lib)(a, [2, 3, 2]),
            ((1, 1, 3, 4, 5),),
        ),
        "_adaptive_avg_pool3d_backward": Line(
            lambda lib, g, a: _f("_adaptive_avg_pool3d_backward")(lib)(g, a),
            ((1, 1, 2, 3, 2), (1, 1, 3, 4, 5)),
        ),
        "adaptive_max_pool1d": Line(
            lambda lib, a: lib.adaptive_max_pool1d(a, 3)[0], ((2, 7),)
        ),
        "adaptive_max_pool2d": Line(
            lambda lib, a: _f("adaptive_max_pool2d")(lib)(a, (3, 4))[0],
            ((1, 2, 5, 7),),
        ),
        "adaptive_max_pool2d_backward": Line(
            lambda lib, g, a: _f("adaptive_max_pool2d_backward")(lib)(
                g,
                a,
                _max_pool_indices(lib, "adaptive_max_pool2d", (1, 2, 5, 7), [3, 4]),
            ),
            ((1, 2, 3, 4), (1, 2, 5, 7)),
        ),
        "adaptive_max_pool3d": Line(
            lambda lib, a: _f("adaptive_max_pool3d")(lib)(a, (2, 3, 2))[0],
            ((1, 1, 3, 4, 5),),
        ),
        "adaptive_max_pool3d_backward": Line(
            lambda lib, g, a: _f("adaptive_max_pool3d_backward")(lib)(
                g,
                a,
                _max_pool_indices(
                    lib, "adaptive_max_pool3d", (1, 1, 3, 4, 5), [2, 3, 2]
                ),
            ),
            ((1, 1, 2, 3, 2), (1, 1, 3, 4, 5)),
        ),
    }
)


def declared_operators() -> set[str]:
    entries = yaml.safe_load((ROOT / "native_functions.yaml").read_text())
    return {entry["func"].split("(", 1)[0] for entry in entries}


def test_every_operator_has_a_line() -> None:
    declared = declared_operators()
    assert sorted(declared - TABLE.keys()) == [], "operators without a line in TABLE"
    assert (
        sorted(TABLE.keys() - declared) == []
    ), "lines for operators that do not exist"


def inputs(line: Line, lib: Any, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    made = []
    for shape in line.shapes:
        if line.positive:
            data = rng.uniform(0.5, 2.0, shape)
        else:
            data = rng.uniform(-2.0, 2.0, shape)
        if line.complex:
            data = data + 1j * rng.uniform(-2.0, 2.0, shape)
        made.append(lib.tensor(data, requires_grad=True))
    return made


@pytest.mark.parametrize("name", sorted(TABLE))
def test_gradcheck(name: str) -> None:
    line = TABLE[name]
    assert gradcheck(lambda *xs: line.function(gradgen, *xs), inputs(line, gradgen, 0))


@pytest.mark.parametrize("name", sorted(TABLE))
def test_gradgradcheck(name: str) -> None:
    line = TABLE[name]
    assert gradgradcheck(
        lambda *xs: line.function(gradgen, *xs), inputs(line, gradgen, 1)
    )


@pytest.mark.parametrize("name", sorted(n for n, line in TABLE.items() if line.compare))
def test_matches_torch(name: str) -> None:
    """Value and gradients (for a seeded random cotangent) equal PyTorch's."""
    line = TABLE[name]

    def run(lib: Any) -> tuple[Any, list[Any]]:
        primals = inputs(line, lib, 2)
        out = line.function(lib, *primals)
        rng = np.random.default_rng(3)
        shape = tuple(out.shape)
        cotangent = rng.uniform(-1, 1, shape) + (
            1j * rng.uniform(-1, 1, shape) if out.is_complex() else 0
        )
        grads = lib.autograd.grad(out, primals, lib.tensor(cotangent))
        return out.detach().numpy(), [g.numpy() for g in grads]

    (out, got), (expected, want) = run(gradgen), oracle("value and grads", run)
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_forward_ad_matches_a_directional_difference(name: str) -> None:
    """The JVP generated from the `result:` formula, against (f(x+hv) - f(x-hv)) / 2h."""
    from gradgen.autograd import forward_ad

    line = TABLE[name]
    primals = inputs(line, gradgen, 4)
    if not line.forward:
        with forward_ad.dual_level():
            duals = [forward_ad.make_dual(p.detach(), p.detach()) for p in primals]
            with pytest.raises(RuntimeError, match="^Trying to use forward AD with"):
                line.function(gradgen, *duals)
        return
    rng = np.random.default_rng(5)
    directions = []
    for primal in primals:
        direction = rng.uniform(-1, 1, primal.shape)
        if line.complex:
            direction = direction + 1j * rng.uniform(-1, 1, primal.shape)
        directions.append(direction)
    with forward_ad.dual_level():
        duals = [
            forward_ad.make_dual(p.detach(), gradgen.tensor(d))
            for p, d in zip(primals, directions)
        ]
        out = line.function(gradgen, *duals)
        tangent = forward_ad.unpack_dual(out).tangent
    h = 1e-6

    def at(step: float) -> np.ndarray:
        shifted = [
            gradgen.tensor(p.detach().numpy() + step * d)
            for p, d in zip(primals, directions)
        ]
        with gradgen.no_grad():
            return line.function(gradgen, *shifted).numpy()

    expected = (at(h) - at(-h)) / (2 * h)
    assert tangent is not None
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(n for n, line in TABLE.items() if line.forward))
def test_forward_and_reverse_mode_agree(name: str) -> None:
    """<u, J v> from forward mode equals <J^T u, v> from reverse mode (real inner
    products of the real and imaginary parts, so complex functions are covered)."""
    from gradgen.autograd import forward_ad

    line = TABLE[name]
    primals = inputs(line, gradgen, 6)
    rng = np.random.default_rng(7)

    def draw(shape: tuple[int, ...], complex_: bool) -> np.ndarray:
        values = rng.uniform(-1, 1, shape)
        return values + 1j * rng.uniform(-1, 1, shape) if complex_ else values

    directions = [draw(tuple(p.shape), line.complex) for p in primals]
    with forward_ad.dual_level():
        duals = [
            forward_ad.make_dual(p.detach(), gradgen.tensor(d))
            for p, d in zip(primals, directions)
        ]
        tangent = forward_ad.unpack_dual(line.function(gradgen, *duals)).tangent.numpy()
    out = line.function(gradgen, *primals)
    u = draw(tuple(out.shape), out.is_complex())
    vjps = gradgen.autograd.grad(out, primals, gradgen.tensor(u), allow_unused=True)

    def real_inner(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.sum(np.real(a) * np.real(b) + np.imag(a) * np.imag(b)))

    forward = real_inner(u, tangent)
    reverse = sum(
        real_inner(g.numpy(), d) for g, d in zip(vjps, directions) if g is not None
    )
    assert forward == pytest.approx(reverse, rel=1e-9, abs=1e-9)

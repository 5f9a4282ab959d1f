"""One line per operator: gradcheck and gradgradcheck on sample inputs, in float64.

Every operator in native_functions.yaml must have a line here (the first test fails
otherwise), so a new operator cannot land untested. A line gives a function of
`gradgen`-like `lib` (so the same line also runs against torch when it is
installed) and the shapes and dtype of its inputs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import gradgen
from gradgen.autograd import gradcheck, gradgradcheck

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Line:
    function: Callable[..., Any]
    shapes: tuple[tuple[int, ...], ...]
    complex: bool = False  # inputs are complex128 instead of float64
    positive: bool = False  # inputs in (0.5, 2) instead of (-2, 2)
    compare: bool = True  # compare against torch


TABLE: dict[str, Line] = {
    "add.Tensor": Line(lambda lib, a, b: lib.add(a, b, alpha=2.5), ((3, 1), (1, 4))),
    "sub.Tensor": Line(lambda lib, a, b: lib.sub(a, b, alpha=-0.5), ((2, 3, 4), (4,))),
    "mul.Tensor": Line(lambda lib, a, b: lib.mul(a, b), ((3, 1), (1, 4))),
    "pow.Tensor_Scalar": Line(lambda lib, a: lib.pow(a, 2.5), ((5,),), positive=True),
    "permute": Line(lambda lib, a: lib.permute(a, (2, 0, 1)), ((2, 3, 4),)),
    "neg": Line(lambda lib, a: lib.neg(a), ((3,),)),
    "conj": Line(lambda lib, a: lib.conj(a) * a, ((3,),), complex=True),
    "_conj": Line(
        lambda lib, a: lib._conj(a) * a, ((3,),), complex=True, compare=False
    ),
    "real": Line(lambda lib, a: lib.real(a * a), ((3,),), complex=True),
    "expand": Line(lambda lib, a: a.expand(2, -1, 4) * 1.0, ((3, 1),)),
    "sum_to_size": Line(lambda lib, a: (a * a).sum_to_size(3, 1), ((3, 4),)),
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
    "view": Line(lambda lib, a: a.view(3, 4) * a.view(3, 4), ((2, 6),)),
    "reshape": Line(lambda lib, a: lib.reshape(a.t(), (4, 3)) * 2.0, ((3, 4),)),
    "squeeze": Line(lambda lib, a: lib.squeeze(a) * a.squeeze(), ((3, 1, 2),)),
    "squeeze.dim": Line(lambda lib, a: lib.squeeze(a, 1) * 3.0, ((3, 1, 2),)),
    "unsqueeze": Line(lambda lib, a: lib.unsqueeze(a, -1) * a.unsqueeze(0), ((3,),)),
    "transpose.int": Line(lambda lib, a: lib.transpose(a, 0, -1) * 2.0, ((2, 3, 4),)),
    "t": Line(lambda lib, a: lib.t(a) * a.t(), ((2, 3),)),
    "flatten.using_ints": Line(lambda lib, a: lib.flatten(a, 1) * 2.0, ((2, 3, 4),)),
    "contiguous": Line(lambda lib, a: a.t().contiguous() * a.t(), ((2, 3),)),
    "select.int": Line(lambda lib, a: lib.select(a, 1, -1) * a.select(0, 0), ((3, 3),)),
    "slice.Tensor": Line(
        lambda lib, a: a[1:5:2] * lib.slice(a, 0, None, -2, 2), ((6,),), compare=False
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
    "unbind.int": Line(lambda lib, a: lib.unbind(a, 1)[0] * a.unbind()[1], ((2, 2),)),
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
    "sum": Line(lambda lib, a: lib.sum(a) * a.sum(), ((3, 2),)),
    "sum.dim_IntList": Line(
        lambda lib, a: lib.sum(a, (0, -1), keepdim=True) * a.sum(1, keepdim=True),
        ((2, 3, 4),),
    ),
    "mean": Line(lambda lib, a: lib.mean(a) * a, ((3, 2),)),
    "mean.dim": Line(lambda lib, a: lib.mean(a, -1, True) * a.mean(0), ((3, 3),)),
}


# ---- batch A: unary elementwise ----
TABLE.update({})


# ---- batch B: binary, comparison and logical ----
TABLE.update({})


# ---- batch C: reductions, scans and indexing ----
TABLE.update({})


# ---- batch D: linear algebra and losses ----
def _aten(lib: Any) -> Any:
    """Where an operator lives: gradgen itself, or torch.ops.aten (PyTorch binds the
    losses in torch._C._nn only, and some operators not at all)."""
    return lib.ops.aten if lib.__name__ == "torch" else lib


def _targets(lib: Any, *values: int) -> Any:
    return lib.tensor(list(values))


def _class_weight(lib: Any) -> Any:
    # An explicit weight: gradgen cannot yet save an undefined `Tensor? weight` for
    # backward (see tests/test_ops_d.py); weight=None is tested there.
    return lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64)


def _probabilities(a: Any) -> Any:
    return a * 0.2 + 0.5  # (-2, 2) -> (0.1, 0.9)


def _bce_target(lib: Any) -> Any:
    return lib.tensor([[0.0, 0.3, 1.0], [0.8, 0.5, 0.1]], dtype=lib.float64)


def _cross_entropy(lib: Any, a: Any) -> Any:
    if not hasattr(lib, "log_softmax"):
        pytest.skip("cross_entropy_loss calls log_softmax, another batch's operator")
    return _aten(lib).cross_entropy_loss(
        a, _targets(lib, 0, 2, -100, 1), _class_weight(lib), 1, -100, 0.1
    )


TABLE.update(
    {
        "mm": Line(lambda lib, a, b: lib.mm(a, b), ((2, 3), (3, 4)), complex=True),
        "bmm": Line(lambda lib, a, b: a.bmm(b), ((2, 2, 3), (2, 3, 2)), complex=True),
        "dot": Line(lambda lib, a, b: lib.dot(a, b) * a, ((3,), (3,)), complex=True),
        "vdot": Line(lambda lib, a, b: lib.vdot(a, b) * a, ((3,), (3,)), complex=True),
        "mv": Line(lambda lib, a, b: lib.mv(a, b), ((2, 3), (3,)), complex=True),
        "outer": Line(lambda lib, a, b: lib.outer(a, b * b), ((3,), (2,))),
        "ger": Line(lambda lib, a, b: a.ger(b) * a.ger(b), ((3,), (2,))),
        # Batch-broadcasting cases are in tests/test_ops_d.py (their double backward
        # needs the shared reshape to copy non-contiguous gradients).
        "matmul": Line(
            lambda lib, a, b: lib.matmul(a, b), ((2, 2, 3), (2, 3, 2)), complex=True
        ),
        "_unsafe_view": Line(
            lambda lib, a: _aten(lib)._unsafe_view(a * a, (3, 2)) * 2.0, ((2, 3),)
        ),
        "addmm": Line(
            lambda lib, a, b, c: lib.addmm(a, b, c, beta=0.5, alpha=-2.0),
            ((3,), (2, 4), (4, 3)),
            complex=True,
        ),
        "linear": Line(
            lambda lib, a, b, c: _aten(lib).linear(a, b, c), ((2, 4, 3), (5, 3), (5,))
        ),
        "mse_loss": Line(
            lambda lib, a, b: _aten(lib).mse_loss(a, b * b, 1), ((3, 4), (3, 4))
        ),
        "mse_loss_backward": Line(
            lambda lib, g, a, b: _aten(lib).mse_loss_backward(g, a, b * b, 2),
            ((), (3, 4), (3, 4)),
        ),
        "nll_loss_forward": Line(
            lambda lib, a: _aten(lib).nll_loss_forward(
                a, _targets(lib, 0, 2, -100, 1), _class_weight(lib), 1, -100
            )[0],
            ((4, 3),),
        ),
        "nll_loss_backward": Line(
            lambda lib, g, a: _aten(lib).nll_loss_backward(
                g * g, a, _targets(lib, 0, 2, 1), _class_weight(lib), 0, 1,
                lib.tensor(0.0, dtype=lib.float64),
            ),
            ((3,), (3, 3)),
        ),
        "nll_loss2d_forward": Line(
            lambda lib, a: _aten(lib).nll_loss2d_forward(
                a, _targets(lib, 0, 2, 1, 2).view(1, 2, 2), _class_weight(lib), 2, 2
            )[0],
            ((1, 3, 2, 2),),
        ),
        "nll_loss2d_backward": Line(
            lambda lib, g, a: _aten(lib).nll_loss2d_backward(
                g, a, _targets(lib, 0, 2, 1, 2).view(1, 2, 2), _class_weight(lib), 1,
                -100, lib.tensor(5.5, dtype=lib.float64),
            ),
            ((), (1, 3, 2, 2)),
        ),
        "nll_loss": Line(
            lambda lib, a: _aten(lib).nll_loss(
                a, _targets(lib, 2, 0, 1, 1), _class_weight(lib), 2, 1
            ),
            ((4, 3),),
        ),
        "nll_loss2d": Line(
            lambda lib, a: _aten(lib).nll_loss2d(
                a, _targets(lib, 0, 2, 1, 2).view(1, 2, 2), _class_weight(lib), 0
            ),
            ((1, 3, 2, 2),),
        ),
        "nll_loss_nd": Line(
            lambda lib, a: _aten(lib).nll_loss_nd(
                a, _targets(lib, 0, 2, 1, 2).view(2, 2), _class_weight(lib), 1
            ),
            ((2, 3, 2),),
        ),
        "binary_cross_entropy": Line(
            lambda lib, a: _aten(lib).binary_cross_entropy(
                _probabilities(a), _bce_target(lib), _class_weight(lib), 1
            ),
            ((2, 3),),
        ),
        "binary_cross_entropy_backward": Line(
            lambda lib, g, a: _aten(lib).binary_cross_entropy_backward(
                g, _probabilities(a), _bce_target(lib), _class_weight(lib), 0
            ),
            ((2, 3), (2, 3)),
        ),
        "cross_entropy_loss": Line(_cross_entropy, ((4, 3),)),
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
def test_matches_torch(torch, name: str) -> None:  # type: ignore[no-untyped-def]
    line = TABLE[name]
    ours, theirs = inputs(line, gradgen, 2), inputs(line, torch, 2)
    out, expected = line.function(gradgen, *ours), line.function(torch, *theirs)
    np.testing.assert_allclose(
        out.detach().numpy(), expected.detach().numpy(), rtol=1e-12
    )
    rng = np.random.default_rng(3)
    shape = expected.shape
    cotangent = rng.uniform(-1, 1, shape) + (
        1j * rng.uniform(-1, 1, shape) if expected.is_complex() else 0
    )
    got = gradgen.autograd.grad(out, ours, gradgen.tensor(cotangent))
    want = torch.autograd.grad(expected, theirs, torch.tensor(cotangent))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)

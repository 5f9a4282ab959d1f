"""reflection_pad1d/2d/3d and replication_pad1d/2d/3d, their backwards and F.pad's
reflect / replicate modes against PyTorch: values, gradients, second derivatives
(the backwards' own formulas), errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import gradcheck, gradgradcheck
from ops.nn_checks import (
    _arrays,
    _check_against_torch,
    _same_error,
    _second_derivatives_match,
)

KINDS = ("reflection", "replication")
CASES = {
    1: [((2, 3, 5), (2, 1)), ((3, 4), (-1, 3)), ((1, 2, 2), (1, 0))],
    2: [((1, 2, 4, 5), (1, 2, 3, 0)), ((2, 3, 3), (-1, 2, 2, -1))],
    3: [((1, 1, 3, 4, 4), (2, 1, 0, 2, 1, -1)), ((2, 2, 3, 3), (1, 1, 1, 1, 1, 1))],
}
PARAMETERS = [
    (kind, nd, shape, pad)
    for kind in KINDS
    for nd, cases in CASES.items()
    for shape, pad in cases
]


def _op(lib: Any, name: str) -> Any:
    return getattr(lib._C._nn if lib.__name__ == "torch" else lib, name)


def _backward_op(lib: Any, name: str) -> Any:
    return getattr(lib.ops.aten if lib.__name__ == "torch" else lib, name)


@pytest.mark.parametrize("kind, nd, shape, pad", PARAMETERS)
def test_pad_matches_torch(kind: str, nd: int, shape: Any, pad: Any) -> None:
    name = f"{kind}_pad{nd}d"
    _check_against_torch(
        lambda a: _op(gradgen, name)(a, list(pad)),
        lambda torch: lambda a: _op(torch, name)(a, list(pad)),
        _arrays(3, shape),
    )


@pytest.mark.parametrize("kind, nd, shape, pad", PARAMETERS)
def test_pad_second_derivatives_match_torch(
    kind: str, nd: int, shape: Any, pad: Any
) -> None:
    """The backward's own formulas (the pad of the gradient): d/dg of the backward."""
    name = f"{kind}_pad{nd}d"
    [x] = _arrays(5, shape)
    out_shape = tuple(
        (
            size + (pad[2 * (len(shape) - 1 - d)] + pad[2 * (len(shape) - 1 - d) + 1])
            if len(shape) - 1 - d < nd
            else size
        )
        for d, size in enumerate(shape)
    )
    [g] = _arrays(6, out_shape)

    def ours(g: Any) -> Any:
        return _backward_op(gradgen, f"{name}_backward")(g, gradgen.tensor(x), pad)

    def theirs(torch: Any) -> Any:
        return lambda g: _backward_op(torch, f"{name}_backward")(
            g, torch.tensor(x), list(pad)
        )

    _check_against_torch(ours, theirs, [g])
    _second_derivatives_match(
        lambda a: _op(gradgen, name)(a, list(pad)) ** 2,
        lambda torch: lambda a: _op(torch, name)(a, list(pad)) ** 2,
        [x],
    )


@pytest.mark.parametrize("kind", KINDS)
def test_pad_gradcheck_and_forward_ad(kind: str) -> None:
    x = gradgen.tensor(np.random.default_rng(0).normal(size=(1, 2, 3, 4)))
    x.requires_grad_(True)

    def f(a: Any) -> Any:
        return _op(gradgen, f"{kind}_pad2d")(a, [2, 1, -1, 2])

    assert gradcheck(f, (x,), check_forward_ad=True)
    assert gradgradcheck(f, (x,))


def test_pad_values_by_hand() -> None:
    x = gradgen.tensor([[0.0, 1.0, 2.0, 3.0]])
    assert gradgen.reflection_pad1d(x, [2, 1]).tolist() == [[2, 1, 0, 1, 2, 3, 2]]
    assert gradgen.replication_pad1d(x, [2, -1]).tolist() == [[0, 0, 0, 1, 2]]
    # each input element's gradient counts its copies
    x.requires_grad_(True)
    gradgen.reflection_pad1d(x, [2, 1]).sum().backward()
    assert x.grad is not None and x.grad.tolist() == [[1, 2, 3, 1]]


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_functional_pad_routes_to_the_operators(mode: str) -> None:
    kind = {"reflect": "reflection", "replicate": "replication"}[mode]
    x = gradgen.tensor(np.ones((1, 2, 3, 3)), requires_grad=True)
    y = gradgen.nn.functional.pad(x, (1, 1, 1, 1), mode=mode)
    assert type(y.grad_fn).__name__.lower() == f"{kind}pad2dbackward0"
    _check_against_torch(
        lambda a: gradgen.nn.functional.pad(a, (1, 2, 0, 1, 1, 0), mode=mode),
        lambda torch: lambda a: torch.nn.functional.pad(
            a, (1, 2, 0, 1, 1, 0), mode=mode
        ),
        _arrays(2, (1, 2, 3, 3, 4)),
    )


ERRORS = {
    "pad-length": ("reflection_pad2d", (1, 2, 3, 4), [1, 1]),
    "dims": ("replication_pad3d", (2, 3, 4), [1, 1, 1, 1, 1, 1]),
    "zero-size": ("reflection_pad2d", (2, 0, 3), [1, 1, 1, 1]),
    "too-far-w": ("reflection_pad2d", (1, 2, 3, 4), [4, 1, 1, 1]),
    "too-far-h": ("reflection_pad3d", (1, 2, 3, 4, 5), [1, 1, 1, 1, 3, 1]),
    "crop-1d": ("replication_pad1d", (2, 3), [-2, -2]),
    "crop-reflect": ("reflection_pad1d", (2, 3), [-2, -2]),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_pad_errors_match_torch(case: str) -> None:
    name, shape, pad = ERRORS[case]
    data = np.zeros(shape)
    _same_error(
        lambda: _op(gradgen, name)(gradgen.tensor(data), pad),
        lambda torch: lambda: _op(torch, name)(torch.tensor(data), pad),
    )


def test_pad_backward_checks_grad_output() -> None:
    x = gradgen.tensor(np.zeros((2, 3, 4)))
    with pytest.raises(RuntimeError, match="gradOutput width unexpected. Expected: 6"):
        gradgen.reflection_pad1d_backward(
            gradgen.tensor(np.zeros((2, 3, 5))), x, [1, 1]
        )

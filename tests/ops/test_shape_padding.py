"""Padding (constant_pad_nd, functional pad) against PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from gradgen.autograd import gradcheck, gradgradcheck
from torch_oracle import numbered, oracle
from ops.nn_checks import _arrays, _check_against_torch, _dtype_name, _same_error

# torch.autograd.forward_ad's first use scripts a function with torch.jit (deprecated).
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)


# -- padding -----------------------------------------------------------------------------

PAD_CASES = [
    ((2, 3), (1, 1)),
    ((2, 3), (1, 2, 0, 1)),
    ((2, 3), (-1, 0)),
    ((2, 3), (1, -2)),
    ((2, 3), (-3, 0)),
    ((2, 3), (0, 0)),
    ((2, 3), (-1, -1, 0, 0)),
    ((2, 3, 4), (2, -1, 0, 3, 1, 0)),
    ((), ()),
    ((4,), (0, 2)),
]


@pytest.mark.parametrize("shape, pad", PAD_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_constant_pad_nd_matches_torch(shape, pad, dtype) -> None:
    (x,) = _arrays(33, shape, dtype=dtype)
    _check_against_torch(
        lambda a: gradgen.constant_pad_nd(a * 1.0, pad, 1.5),
        lambda torch: lambda a: torch.constant_pad_nd(a * 1.0, pad, 1.5),
        [x],
    )


@pytest.mark.parametrize("shape, pad", [c for c in PAD_CASES[:8] if c[1] != (-3, 0)])
def test_constant_pad_nd_gradgradcheck_and_forward_mode(shape, pad) -> None:
    (x,) = _arrays(34, shape)
    inputs = [gradgen.tensor(x, requires_grad=True)]
    function = lambda a: gradgen.constant_pad_nd(a * a, pad, -2.0)  # noqa: E731
    assert gradcheck(function, inputs, check_forward_ad=True)
    assert gradgradcheck(function, inputs)


def test_constant_pad_nd_dtypes_match_torch() -> None:
    cases = [
        (np.array([1, 2]), 2.5),
        (np.array([1, 2], np.int32), -1),
        (np.array([True, False]), 1),
        (np.array([1 + 1j]), 2),
        (np.array([1 + 1j], np.complex64), 2 - 1j),
        (np.array([1.0], np.float32), math.inf),
    ]
    for x, value in cases:
        ours = gradgen.constant_pad_nd(gradgen.tensor(x), (1, 1), value)
        theirs = oracle(
            numbered("padded"),
            lambda torch: torch.constant_pad_nd(torch.tensor(x), (1, 1), value),
        )
        assert _dtype_name(ours) == theirs.dtype.name
        assert ours.tolist() == theirs.tolist()


def test_constant_pad_nd_errors_match_torch() -> None:
    x = np.ones((2, 3))
    for array, pad, value in (
        (x, (1,), 0),
        (x, (1, 1, 1, 1, 1, 1), 0),
        (x, (-4, 0), 0),
        (x, (0, -4), 0),
        (x, (0, 0, -2, -1), 0),
        (np.ones(()), (1, 1), 0),
        (x, (1, 1), 2 + 1j),
    ):
        _same_error(
            lambda: gradgen.constant_pad_nd(gradgen.tensor(array), pad, value),
            lambda torch: lambda: torch.constant_pad_nd(
                torch.tensor(array), pad, value
            ),
        )


def test_functional_pad() -> None:
    (x,) = _arrays(35, (2, 3))
    for kwargs in ({}, {"value": 2.5}, {"mode": "constant", "value": -1.0}):
        _check_against_torch(
            lambda a: GF.pad(a, (1, 2, 0, 1), **kwargs),
            lambda torch: lambda a: torch.nn.functional.pad(a, (1, 2, 0, 1), **kwargs),
            [x],
        )
    ints = GF.pad(gradgen.tensor([1, 2]), (1, 0))
    assert ints.dtype == gradgen.int64 and ints.tolist() == [0, 1, 2]
    for mode in ("reflect", "replicate", "circular"):
        # numpy's names for the modes; values and gradients against torch (and
        # crops, 2-d and 3-d pads) in tests/nn/test_conv_modules.py.
        numpy_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}
        padded = GF.pad(gradgen.tensor(x), (1, 1), mode=mode)
        expected = np.pad(x, ((0, 0), (1, 1)), mode=numpy_mode[mode])
        np.testing.assert_array_equal(padded.numpy(), expected)
        _same_error(
            lambda: GF.pad(gradgen.tensor(x), (1, 1), mode=mode, value=2.0),
            lambda torch: lambda: torch.nn.functional.pad(
                torch.tensor(x), (1, 1), mode=mode, value=2.0
            ),
        )
    _same_error(
        lambda: GF.pad(gradgen.tensor(x), (1, 1), mode="foo"),
        lambda torch: lambda: torch.nn.functional.pad(
            torch.tensor(x), (1, 1), mode="foo"
        ),
    )

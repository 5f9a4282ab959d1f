"""The pooling family against PyTorch: max pooling with indices (ceil_mode, dilation),
average pooling (count_include_pad, divisor_override), adaptive average and max
pooling, 1d/2d/3d; gradients, second derivatives, PyTorch's messages."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import gradcheck, gradgradcheck
from ops.nn_checks import (
    _arrays,
    _check_against_torch,
    _nn,
    _same_error,
    _second_derivatives_match,
)
from torch_oracle import numbered, oracle

# (name, input shape, positional arguments after the input)
MAX_CASES = [
    ("max_pool1d", (2, 3, 9), (3, 2, 1, 1, False)),
    ("max_pool1d", (3, 8), (2, 3, 1, 2, True)),
    ("max_pool2d", (2, 3, 7, 8), ((3, 2), (2, 1), (1, 1), (1, 2), True)),
    ("max_pool2d", (3, 6, 6), (2,)),
    ("max_pool2d", (1, 2, 9, 7), (3, 3, 1, 2, False)),
    ("max_pool2d", (1, 1, 5, 5), (2, 2, 0, 1, True)),
    ("max_pool3d", (1, 2, 5, 6, 7), ((2, 3, 2), (2, 2, 1), (1, 1, 0), (1, 1, 2), True)),
    ("max_pool3d", (2, 4, 4, 4), (2,)),
]

AVG_CASES = [
    ("avg_pool1d", (2, 3, 9), (3, 2, 1, False, True)),
    ("avg_pool1d", (3, 8), (3, 2, 1, True, False)),
    ("avg_pool2d", (2, 3, 7, 8), ((3, 2), (2, 1), (1, 1), True, True, None)),
    ("avg_pool2d", (2, 3, 7, 8), ((3, 2), (2, 1), (1, 1), True, False, None)),
    ("avg_pool2d", (3, 6, 5), (2, None, 1, False, True, 3)),
    ("avg_pool2d", (1, 1, 5, 5), (2, 2, 0, True, False, None)),
    (
        "avg_pool3d",
        (1, 2, 5, 6, 7),
        ((2, 3, 2), (2, 2, 1), (1, 1, 0), True, False, None),
    ),
    ("avg_pool3d", (2, 4, 4, 5), (2, 1, 1, False, True, 5)),
]

ADAPTIVE_CASES = [
    ("adaptive_avg_pool1d", (2, 3, 9), (4,)),
    ("adaptive_avg_pool1d", (3, 5), (7,)),
    ("adaptive_avg_pool2d", (2, 3, 7, 8), ((3, 5),)),
    ("adaptive_avg_pool2d", (3, 5, 6), ((1, 1),)),
    ("adaptive_avg_pool2d", (1, 2, 4, 5), ((6, 2),)),
    ("adaptive_avg_pool3d", (1, 2, 5, 6, 7), ((2, 3, 4),)),
    ("adaptive_avg_pool3d", (2, 3, 4, 5), (1,)),
    ("adaptive_max_pool1d", (2, 3, 9), (4,)),
    ("adaptive_max_pool2d", (2, 3, 7, 8), ((3, 5),)),
    ("adaptive_max_pool2d", (3, 5, 6), ((5, 4),)),
    ("adaptive_max_pool3d", (1, 2, 5, 6, 7), ((2, 3, 4),)),
]


def _functional(lib: Any, name: str) -> Any:
    return getattr(lib, name) if lib is gradgen else getattr(lib.nn.functional, name)


def _default_stride(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple([] if a is None and i == 1 else a for i, a in enumerate(args))


def _call(name: str, args: tuple[Any, ...]) -> Any:
    def call(lib: Any, x: Any) -> Any:
        # F.*'s stride=None is the operators' empty stride (the kernel size).
        given = args if lib is not gradgen else _default_stride(args)
        result = _functional(lib, name)(x, *given)
        return result[0] if isinstance(result, tuple) else result

    return call


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "name, shape, args",
    MAX_CASES + AVG_CASES + ADAPTIVE_CASES,
    ids=lambda v: str(v),
)
def test_pooling_matches_torch(
    name: str, shape: tuple[int, ...], args: tuple[Any, ...], dtype: str
) -> None:
    call = _call(name, args)
    _check_against_torch(
        lambda x: call(gradgen, x),
        lambda torch: lambda x: call(torch, x),
        _arrays(3, shape, dtype=dtype),
        rtol=1e-5 if dtype == "float32" else None,
    )


@pytest.mark.parametrize(
    "name, shape, args", MAX_CASES + ADAPTIVE_CASES[7:], ids=lambda v: str(v)
)
def test_max_pooling_indices_match_torch(
    name: str, shape: tuple[int, ...], args: tuple[Any, ...]
) -> None:
    """PyTorch's indices: flat positions in each input plane (return_indices=True)."""
    (x,) = _arrays(4, shape)
    expected = oracle(
        numbered("indices"),
        lambda torch: _functional(torch, name)(
            torch.tensor(x), *args, return_indices=True
        )[1],
    )
    operator = name if name.startswith("adaptive") else name + "_with_indices"
    _, indices = getattr(gradgen, operator)(gradgen.tensor(x), *args)
    assert indices.dtype == gradgen.int64
    np.testing.assert_array_equal(indices.numpy(), expected)


@pytest.mark.parametrize(
    "name, shape, args",
    # (not adaptive_avg_pool3d to 1x1x1: a mean, whose gradient does not depend on x)
    MAX_CASES[::2] + AVG_CASES[::2] + ADAPTIVE_CASES[:6:2] + ADAPTIVE_CASES[7::2],
    ids=lambda v: str(v),
)
def test_pooling_second_derivatives_match_torch(
    name: str, shape: tuple[int, ...], args: tuple[Any, ...]
) -> None:
    call = _call(name, args)
    _second_derivatives_match(
        lambda x: call(gradgen, x),
        lambda torch: lambda x: call(torch, x),
        _arrays(6, shape),
    )


@pytest.mark.parametrize(
    "name, shape, args",
    MAX_CASES[:3] + AVG_CASES[2:4] + ADAPTIVE_CASES[2:3] + ADAPTIVE_CASES[8:9],
    ids=lambda v: str(v),
)
def test_pooling_gradcheck_and_gradgradcheck(
    name: str, shape: tuple[int, ...], args: tuple[Any, ...]
) -> None:
    call = _call(name, args)
    x = gradgen.tensor(_arrays(8, shape)[0], requires_grad=True)
    assert gradcheck(lambda t: call(gradgen, t), (x,), check_forward_ad=True)
    assert gradgradcheck(lambda t: call(gradgen, t), (x,))


def test_pooling_by_hand() -> None:
    x = gradgen.tensor([[[1.0, 5.0, 2.0, 4.0, 3.0]]])
    values, indices = gradgen.max_pool1d_with_indices(x, 2, ceil_mode=True)
    assert values.tolist() == [[[5.0, 4.0, 3.0]]]
    assert indices.tolist() == [[[1, 3, 4]]]
    assert gradgen.avg_pool1d(x, 2, padding=1).tolist() == [[[0.5, 3.5, 3.5]]]
    assert gradgen.avg_pool1d(x, 2, padding=1, count_include_pad=False).tolist() == [
        [[1.0, 3.5, 3.5]]
    ]
    assert gradgen.adaptive_avg_pool1d(x, 2).tolist() == [[[pytest.approx(8 / 3), 3.0]]]


def test_max_pool_gradient_goes_to_the_maximum_once_per_window() -> None:
    """Overlapping windows that share a maximum add their gradients there."""
    x = gradgen.tensor([[[0.0, 9.0, 1.0, 2.0]]], requires_grad=True)
    gradgen.max_pool1d(x, 2, 1).sum().backward()
    assert x.grad.tolist() == [[[0.0, 2.0, 0.0, 1.0]]]


def test_adaptive_avg_pool2d_of_one_is_the_mean() -> None:
    x = gradgen.tensor(_arrays(1, (2, 3, 4, 5))[0], requires_grad=True)
    out = gradgen.adaptive_avg_pool2d(x, 1)
    assert out.grad_fn.name() == "MeanBackward1"
    np.testing.assert_allclose(
        out.detach().numpy(), x.detach().numpy().mean(axis=(2, 3), keepdims=True)
    )


ERROR_CASES = [
    ("max_pool2d", (5,), (2,)),
    ("max_pool2d", (2, 4, 5, 5), (3, None, 2)),
    ("max_pool2d", (2, 4, 5, 5), (7,)),
    ("max_pool2d", (2, 4, 5, 5), (2, 0)),
    ("max_pool2d", (2, 4, 5, 5), ((2, 2, 2),)),
    ("max_pool2d", (2, 4, 5, 5), (2, None, 0, 0)),
    ("max_pool2d", (2, 0, 5, 5), (2,)),
    ("avg_pool2d", (2, 0, 5, 5), (2,)),
    ("max_pool3d", (5,), (2,)),
    ("avg_pool3d", (5, 5), (2,)),
    ("max_pool3d", (4, 5), (2,)),
    ("max_pool1d", (5,), (2,)),
    ("max_pool1d", (2, 5), ((2, 2),)),
    ("avg_pool2d", (2, 4, 5, 5), (3, None, 2)),
    ("avg_pool2d", (2, 4, 5, 5), (7,)),
    ("avg_pool2d", (5,), (2,)),
    ("avg_pool2d", (2, 4, 5, 5), (2, None, 0, False, True, 0)),
    ("avg_pool1d", (5,), (2,)),
    ("avg_pool1d", (2, 5), ((2, 2),)),
    ("adaptive_avg_pool2d", (5,), (2,)),
    ("adaptive_avg_pool2d", (2, 2, 0, 3), (2,)),
    ("adaptive_avg_pool1d", (5,), (2,)),
    ("adaptive_avg_pool1d", (2, 5), ((2, 2),)),
    ("adaptive_max_pool2d", (5,), (2,)),
    ("adaptive_max_pool1d", (5,), (2,)),
]


@pytest.mark.parametrize("name, shape, args", ERROR_CASES, ids=lambda v: str(v))
def test_bad_input_raises_pytorchs_errors(
    name: str, shape: tuple[int, ...], args: tuple[Any, ...]
) -> None:
    (x,) = _arrays(0, shape)
    gradgen_args = tuple([] if a is None else a for a in args)
    _same_error(
        lambda: _functional(gradgen, name)(gradgen.tensor(x), *gradgen_args),
        lambda torch: lambda: _nn(torch, name)(torch.tensor(x), *gradgen_args),
    )


def test_max_pool_ties_and_nans_pick_what_pytorch_picks() -> None:
    """The first of equal maxima; a window holding NaN gives NaN at its last NaN."""
    nan = float("nan")
    x = np.array(
        [[[[1, nan, 3, nan], [2, 2, 5, 5], [0, 0, 0, 0], [1, 1, 1, 1]]]], np.float64
    )
    expected = oracle(
        numbered("nans"),
        lambda torch: torch.nn.functional.max_pool2d(
            torch.tensor(x), 2, return_indices=True
        ),
    )
    values, indices = gradgen.max_pool2d_with_indices(gradgen.tensor(x), 2)
    np.testing.assert_array_equal(values.numpy(), expected[0])
    np.testing.assert_array_equal(indices.numpy(), expected[1])
    assert indices.tolist() == [[[[1, 3], [12, 14]]]]

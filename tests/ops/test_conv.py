"""The conv family against PyTorch: convolution 1d/2d/3d, transposed, strided, padded
('same', 'valid'), dilated, grouped; its gradients, second derivatives and forward
mode; PyTorch's messages for bad shapes and arguments."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import forward_ad, gradcheck, gradgradcheck
from ops.nn_checks import (
    _arrays,
    _check_against_torch,
    _same_error,
    _second_derivatives_match,
)

# (name, input, weight, bias, keyword arguments)
CONV_CASES = [
    ("conv1d", (2, 4, 9), (6, 2, 3), True, dict(stride=2, padding=1, groups=2)),
    ("conv1d", (3, 7), (2, 3, 2), False, dict(dilation=3)),
    ("conv2d", (2, 3, 7, 6), (4, 3, 3, 2), True, dict(stride=(2, 1), padding=(1, 0))),
    ("conv2d", (1, 4, 6, 6), (4, 1, 3, 3), True, dict(groups=4, dilation=2, padding=2)),
    ("conv2d", (3, 5, 5), (2, 3, 1, 1), False, dict(stride=3)),
    ("conv3d", (1, 2, 4, 5, 4), (3, 2, 2, 3, 2), True, dict(stride=(1, 2, 1))),
    ("conv3d", (2, 4, 3, 3, 3), (2, 2, 2, 2, 2), False, dict(groups=2, padding=1)),
    ("conv2d", (2, 3, 6, 5), (4, 3, 2, 3), True, dict(padding="same")),
    ("conv2d", (2, 3, 6, 5), (4, 3, 2, 2), False, dict(padding="same", dilation=3)),
    ("conv1d", (2, 3, 8), (4, 3, 4), True, dict(padding="same")),
    ("conv3d", (1, 2, 4, 4, 5), (2, 2, 2, 3, 2), False, dict(padding="same")),
    ("conv2d", (2, 3, 6, 5), (4, 3, 3, 3), True, dict(padding="valid", stride=2)),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), True, dict(stride=2, output_padding=1)),
    ("conv_transpose2d", (2, 4, 4, 3), (4, 1, 3, 2), True, dict(groups=2, padding=1)),
    (
        "conv_transpose2d",
        (4, 3, 4),
        (4, 2, 2, 3),
        False,
        dict(stride=(3, 2), output_padding=(2, 1), dilation=(1, 2)),
    ),
    ("conv_transpose3d", (1, 2, 3, 2, 3), (2, 3, 2, 2, 2), True, dict(stride=2)),
]


def _case_arrays(case: tuple[Any, ...], dtype: str = "float64") -> list[Any]:
    name, input_shape, weight_shape, has_bias, options = case
    transposed = name.startswith("conv_transpose")
    groups = options.get("groups", 1)
    channels = weight_shape[1] * groups if transposed else weight_shape[0]
    shapes = [input_shape, weight_shape] + ([(channels,)] if has_bias else [])
    return _arrays(5, *shapes, dtype=dtype)


def _call(case: tuple[Any, ...]) -> Any:
    name, _, _, has_bias, options = case

    def call(lib: Any, x: Any, w: Any, b: Any = None) -> Any:
        functional = getattr(lib.nn.functional if lib is not gradgen else lib, name)
        return functional(x, w, b, **options)

    return call


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[4]}")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_conv_matches_torch(case: tuple[Any, ...], dtype: str) -> None:
    call = _call(case)
    rtol = 1e-5 if dtype == "float32" else None
    _check_against_torch(
        lambda *t: call(gradgen, *t),
        lambda torch: lambda *t: call(torch, *t),
        _case_arrays(case, dtype),
        rtol=rtol,
    )


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("case", CONV_CASES[::3], ids=lambda c: f"{c[0]}-{c[1]}")
def test_conv_second_derivatives_match_torch(case: tuple[Any, ...]) -> None:
    call = _call(case)
    _second_derivatives_match(
        lambda *t: call(gradgen, *t),
        lambda torch: lambda *t: call(torch, *t),
        _case_arrays(case),
    )


@pytest.mark.parametrize("case", CONV_CASES[:8:2], ids=lambda c: f"{c[0]}-{c[1]}")
def test_conv_gradcheck_and_gradgradcheck(case: tuple[Any, ...]) -> None:
    call = _call(case)
    tensors = [gradgen.tensor(a, requires_grad=True) for a in _case_arrays(case)]
    assert gradcheck(lambda *t: call(gradgen, *t), tensors, check_forward_ad=True)
    assert gradgradcheck(lambda *t: call(gradgen, *t), tensors)


def test_forward_mode_is_the_product_rule() -> None:
    """The tangent of conv2d(x, w, b) along (u, v, c) is conv2d(u, w) + conv2d(x, v)
    + c, by bilinearity, computed here with ordinary calls."""
    x, w, b, u, v, c = _arrays(
        3, (2, 3, 5, 5), (4, 3, 3, 3), (4,), (2, 3, 5, 5), (4, 3, 3, 3), (4,)
    )
    X, W, B, U, V, C = (gradgen.tensor(a) for a in (x, w, b, u, v, c))
    with forward_ad.dual_level():
        out = gradgen.conv2d(
            forward_ad.make_dual(X, U),
            forward_ad.make_dual(W, V),
            forward_ad.make_dual(B, C),
            padding=1,
        )
        tangent = forward_ad.unpack_dual(out).tangent
    expected = gradgen.conv2d(U, W, C, padding=1) + gradgen.conv2d(
        X, V, None, padding=1
    )
    np.testing.assert_allclose(
        tangent.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12
    )


def test_convolution_by_hand() -> None:
    """A 1d convolution small enough to do on paper (cross-correlation, as PyTorch)."""
    x = gradgen.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    w = gradgen.tensor([[[1.0, 0.0, -1.0]]])
    assert gradgen.conv1d(x, w).tolist() == [[[-2.0, -2.0]]]
    assert gradgen.conv1d(x, w, padding=1).tolist() == [[[-2.0, -2.0, -2.0, 3.0]]]
    assert gradgen.conv_transpose1d(gradgen.tensor([[[1.0, 2.0]]]), w).tolist() == [
        [[1.0, 2.0, -1.0, -2.0]]
    ]


def test_convolution_backward_skips_masked_outputs() -> None:
    g, x, w = (
        gradgen.tensor(a) for a in _arrays(2, (1, 2, 3, 3), (1, 3, 5, 5), (2, 3, 3, 3))
    )
    grad_input, grad_weight, grad_bias = gradgen.convolution_backward(
        g, x, w, [2], [1], [0], [1], False, [0], 1, [False, True, False]
    )
    assert not grad_input.numpy().any() and not grad_bias.numpy().any()
    weight = w.detach().requires_grad_()
    (gradgen.conv2d(x, weight) * g).sum().backward()
    np.testing.assert_allclose(grad_weight.numpy(), weight.grad.numpy(), rtol=1e-12)


ERROR_CASES = [
    ("conv2d", (5, 5), (6, 4, 3, 3), {}),
    ("conv2d", (1, 2, 4, 5, 5), (6, 4, 3, 3), {}),
    ("conv1d", (5, 5, 5, 5), (2, 5, 3), {}),
    ("conv2d", (2, 4, 5, 5), (6, 3, 3, 3), {}),
    ("conv2d", (2, 4, 5, 5), (6, 2, 3, 3), dict(groups=3)),
    ("conv2d", (2, 4, 5, 5), (5, 2, 3, 3), dict(groups=2)),
    ("conv2d", (2, 4, 5, 5), (6, 4, 7, 7), {}),
    ("conv2d", (2, 4, 5, 5), (6, 4, 3, 3), dict(stride=0)),
    ("conv2d", (2, 4, 5, 5), (6, 4, 3, 3), dict(padding=-1)),
    ("conv2d", (2, 4, 5, 5), (6, 4, 3, 3), dict(dilation=0)),
    ("conv2d", (2, 4, 5, 5), (6, 4, 3, 3), dict(groups=0)),
    ("conv2d", (2, 4, 5, 5), (6, 4, 3, 3), dict(padding="same", stride=2)),
    ("conv2d", (2, 4, 5, 5), (6, 4, 3, 3), dict(padding="full")),
    ("conv2d", (2, 4, 0, 5), (6, 4, 3, 3), {}),
    ("conv_transpose2d", (5, 5), (5, 2, 3, 3), {}),
    ("conv_transpose2d", (2, 4, 5, 5), (3, 3, 3, 3), {}),
    ("conv_transpose2d", (2, 4, 5, 5), (4, 3, 3, 3), dict(stride=2, output_padding=2)),
    ("conv_transpose1d", (2, 4, 5), (4, 2, 3), dict(stride=2, output_padding=2)),
    ("conv_transpose3d", (1, 4, 3, 3, 3), (4, 2, 2, 2, 2), dict(output_padding=1)),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[3]}")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bad_shapes_raise_pytorchs_errors(case: tuple[Any, ...], dtype: str) -> None:
    name, input_shape, weight_shape, options = case
    x, w = _arrays(0, input_shape, weight_shape, dtype=dtype)
    _same_error(
        lambda: getattr(gradgen, name)(gradgen.tensor(x), gradgen.tensor(w), **options),
        lambda torch: lambda: getattr(torch.nn.functional, name)(
            torch.tensor(x), torch.tensor(w), **options
        ),
    )


@pytest.mark.parametrize(
    "name, bias_shape, bias_dtype",
    [
        ("conv2d", (5,), "float64"),
        ("conv2d", (6,), "float32"),
        ("conv2d", (2, 3), "float64"),
        ("conv_transpose2d", (5,), "float64"),
    ],
)
def test_bad_bias_raises_pytorchs_error(
    name: str, bias_shape: tuple[int, ...], bias_dtype: str
) -> None:
    x, w, b = _arrays(0, (2, 6, 5, 5), (6, 6, 3, 3), bias_shape)
    b = b.astype(bias_dtype)
    _same_error(
        lambda: getattr(gradgen, name)(
            gradgen.tensor(x), gradgen.tensor(w), gradgen.tensor(b)
        ),
        lambda torch: lambda: getattr(torch.nn.functional, name)(
            torch.tensor(x), torch.tensor(w), torch.tensor(b)
        ),
    )


def test_convolution_casts_a_bias_of_another_dtype() -> None:
    """at::convolution itself (unlike conv2d) adds a float32 bias to float64 output."""
    x, w, b = _arrays(0, (1, 2, 4, 4), (3, 2, 3, 3), (3,))
    out = gradgen.convolution(
        gradgen.tensor(x),
        gradgen.tensor(w),
        gradgen.tensor(b.astype("float32")),
        [1],
        [0],
        [1],
        False,
        [0],
        1,
    )
    expected = gradgen.conv2d(gradgen.tensor(x), gradgen.tensor(w)).numpy()
    expected += b.astype("float32").astype("float64")[:, None, None]
    assert out.dtype == gradgen.float64
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize(
    "stride, input_dtype, weight_dtype",
    [
        ([1, 1, 1], "float64", "float64"),
        ([1, 1], "float32", "float64"),
        ([1, 1], "float64", "float32"),
    ],
)
def test_bad_convolution_arguments_raise_pytorchs_errors(
    stride: list[int], input_dtype: str, weight_dtype: str
) -> None:
    x, w = _arrays(0, (2, 4, 5, 5), (6, 4, 3, 3))
    x, w = x.astype(input_dtype), w.astype(weight_dtype)
    arguments = ([0, 0], [1, 1], False, [0, 0], 1)
    _same_error(
        lambda: gradgen.convolution(
            gradgen.tensor(x), gradgen.tensor(w), None, stride, *arguments
        ),
        lambda torch: lambda: torch.convolution(
            torch.tensor(x), torch.tensor(w), None, stride, *arguments
        ),
    )

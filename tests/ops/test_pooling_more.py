"""max_unpool2d/3d, fractional_max_pool2d/3d (+ backwards) and PyTorch's named
convolution kernels (conv_tbc, slow_conv*, depthwise) against PyTorch: values, indices,
gradients, second derivatives, errors; the F.* and nn.* forms."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from ops.nn_checks import (
    _arrays,
    _check_against_torch,
    _same_error,
    _second_derivatives_match,
)
from torch_oracle import oracle


def _nn(lib: Any, name: str) -> Any:
    return getattr(lib._C._nn if lib.__name__ == "torch" else lib, name)


def _samples(shape: tuple[int, ...], seed: int = 4) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.0, 1.0, shape)


FRACTIONAL = {
    "2d": (2, (2, 3, 7, 9), [2, 3], [4, 5], (2, 3, 2)),
    "2d-unbatched": (2, (3, 7, 7), [2, 2], [4, 3], (1, 3, 2)),
    "2d-one": (2, (1, 2, 5, 5), [2, 2], [1, 1], (1, 2, 2)),
    "3d": (3, (1, 2, 6, 7, 5), [2, 2, 2], [3, 4, 2], (1, 2, 3)),
}


@pytest.mark.parametrize("case", sorted(FRACTIONAL))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fractional_max_pool_matches_torch(case: str, dtype: str) -> None:
    nd, shape, kernel, output, samples_shape = FRACTIONAL[case]
    name = f"fractional_max_pool{nd}d"
    samples = _samples(samples_shape).astype(dtype)

    def run(lib: Any) -> Any:
        x = lib.tensor(np.random.default_rng(1).normal(size=shape).astype(dtype))
        values, indices = _nn(lib, name)(x, kernel, output, lib.tensor(samples))
        return values.numpy(), indices.numpy()

    values, indices = run(gradgen)
    expected_values, expected_indices = oracle("values", run)
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_array_equal(values, expected_values)
    if dtype == "float64":
        _check_against_torch(
            lambda a: _nn(gradgen, name)(a, kernel, output, gradgen.tensor(samples))[0],
            lambda torch: lambda a: _nn(torch, name)(
                a, kernel, output, torch.tensor(samples)
            )[0],
            _arrays(2, shape),
        )
        _second_derivatives_match(
            lambda a: _nn(gradgen, name)(a, kernel, output, gradgen.tensor(samples))[0]
            ** 2,
            lambda torch: lambda a: _nn(torch, name)(
                a, kernel, output, torch.tensor(samples)
            )[0]
            ** 2,
            _arrays(3, shape),
        )


def test_fractional_windows_by_hand() -> None:
    """PyTorch's intervals: input 7, window 2, 4 outputs, alpha = 5 / 3; sample u gives
    starts int((i + u) * alpha) - int(u * alpha), the last at 7 - 2 = 5."""
    x = gradgen.tensor(np.arange(7.0).reshape(1, 1, 1, 7))
    for u, starts in ((0.1, [0, 1, 3, 5]), (0.9, [0, 2, 3, 5])):
        samples = gradgen.tensor([[[u, 0.5]]])  # width's sample first
        values, indices = gradgen.fractional_max_pool2d(x, [1, 2], [1, 4], samples)
        assert indices.tolist() == [[[[s + 1 for s in starts]]]]
        assert values.tolist() == [[[[float(s + 1) for s in starts]]]]


def test_functional_fractional_draws_from_the_generator() -> None:
    x = gradgen.tensor(np.random.default_rng(0).normal(size=(2, 3, 9, 9)))
    gradgen.manual_seed(3)
    first = gradgen.nn.functional.fractional_max_pool2d(x, 2, output_ratio=0.5)
    gradgen.manual_seed(3)
    again, indices = gradgen.nn.functional.fractional_max_pool2d(
        x, 2, output_ratio=(0.5, 0.5), return_indices=True
    )
    assert first.shape == (2, 3, 4, 4) and indices.dtype == gradgen.int64
    np.testing.assert_array_equal(first.numpy(), again.numpy())
    pool = gradgen.nn.FractionalMaxPool3d(2, output_size=(2, 3, 2))
    assert pool(gradgen.ones(1, 2, 5, 5, 5)).shape == (1, 2, 2, 3, 2)


def test_fractional_module_with_samples_matches_torch() -> None:
    samples = _samples((1, 2, 2))

    def run(lib: Any) -> Any:
        pool = lib.nn.FractionalMaxPool2d(
            (2, 3), output_size=3, _random_samples=lib.tensor(samples)
        )
        x = lib.tensor(np.random.default_rng(8).normal(size=(1, 2, 6, 8)))
        return repr(pool), pool(x).numpy()

    got, expected = run(gradgen), oracle("module", run)
    assert got[0] == expected[0]
    np.testing.assert_array_equal(got[1], expected[1])


UNPOOL = {
    "2d": (2, (2, 3, 6, 6), [2, 2]),
    "2d-unbatched": (2, (3, 4, 6), [2, 3]),
    "3d": (3, (1, 2, 4, 4, 6), [2, 2, 3]),
}


@pytest.mark.parametrize("case", sorted(UNPOOL))
def test_max_unpool_matches_torch(case: str) -> None:
    nd, shape, kernel = UNPOOL[case]
    [x] = _arrays(6, shape)

    def indices(lib: Any) -> Any:
        pool = _nn(lib, f"max_pool{nd}d_with_indices")
        return pool(lib.tensor(x), kernel, kernel)[1]

    def unpool(lib: Any) -> Any:
        if nd == 2:
            return lambda a: _nn(lib, "max_unpool2d")(a, indices(lib), list(shape[-2:]))
        return lambda a: _nn(lib, "max_unpool3d")(
            a, indices(lib), list(shape[-3:]), kernel, [0, 0, 0]
        )

    pooled_shape = shape[:-nd] + tuple(s // k for s, k in zip(shape[-nd:], kernel))
    _check_against_torch(unpool(gradgen), unpool, _arrays(7, pooled_shape))
    _second_derivatives_match(
        lambda a: unpool(gradgen)(a) ** 2,
        lambda torch: lambda a: unpool(torch)(a) ** 2,
        _arrays(8, pooled_shape),
    )


def test_max_unpool_keeps_the_first_of_repeated_indices() -> None:
    out = gradgen.max_unpool2d(
        gradgen.tensor([[[1.0, 2.0]]]), gradgen.tensor([[[0, 0]]]), [1, 2]
    )
    assert out.tolist() == [[[1.0, 0.0]]]


def test_functional_max_unpool_uses_the_operators() -> None:
    x = gradgen.tensor(np.ones((1, 2, 3, 3)), requires_grad=True)
    y, i = gradgen.nn.functional.max_pool2d(x, 2, return_indices=True)
    out = gradgen.nn.functional.max_unpool2d(y, i, 2, output_size=(3, 3))
    assert type(out.grad_fn).__name__ == "MaxUnpool2DBackward0"


ERRORS: dict[str, tuple[str, Any]] = {
    "unpool-dtype": (
        "max_unpool2d",
        lambda lib: (lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 2, 2), [4, 4]),
    ),
    "unpool-size": (
        "max_unpool2d",
        lambda lib: (
            lib.zeros(1, 1, 2, 2),
            lib.zeros(1, 1, 2, 2, dtype=lib.int64),
            [4, 4, 4],
        ),
    ),
    "unpool-dims": (
        "max_unpool2d",
        lambda lib: (lib.zeros(2, 2), lib.zeros(2, 2, dtype=lib.int64), [4, 4]),
    ),
    "unpool-shape": (
        "max_unpool2d",
        lambda lib: (
            lib.zeros(1, 1, 2, 2),
            lib.zeros(1, 1, 2, 1, dtype=lib.int64),
            [4, 4],
        ),
    ),
    "unpool-index": (
        "max_unpool3d",
        lambda lib: (
            lib.zeros(1, 1, 1, 1, 2),
            lib.tensor([[[[[3, 100]]]]]),
            [2, 2, 2],
            [2, 2, 2],
            [0, 0, 0],
        ),
    ),
    "unpool-stride": (
        "max_unpool3d",
        lambda lib: (
            lib.zeros(1, 1, 1, 1, 1),
            lib.zeros(1, 1, 1, 1, 1, dtype=lib.int64),
            [2, 2, 2],
            [0, 2, 2],
            [0, 0, 0],
        ),
    ),
    "fractional-dims": (
        "fractional_max_pool2d",
        lambda lib: (lib.zeros(5, 5), [2, 2], [3, 3], lib.zeros(1, 2, 2)),
    ),
    "fractional-samples": (
        "fractional_max_pool2d",
        lambda lib: (lib.zeros(1, 2, 5, 5), [2, 2], [3, 3], lib.zeros(1, 2, 3)),
    ),
    "fractional-too-large": (
        "fractional_max_pool2d",
        lambda lib: (lib.zeros(1, 2, 5, 5), [3, 2], [4, 3], lib.zeros(1, 2, 2)),
    ),
    "fractional-3d-time": (
        "fractional_max_pool3d",
        lambda lib: (
            lib.zeros(1, 1, 4, 4, 4),
            [2, 2, 3],
            [3, 3, 3],
            lib.zeros(1, 1, 3),
        ),
    ),
    "conv_tbc-input": (
        "conv_tbc",
        lambda lib: (lib.zeros(5, 2), lib.zeros(3, 3, 4), lib.zeros(4), 1),
    ),
    "conv_tbc-channels": (
        "conv_tbc",
        lambda lib: (lib.zeros(5, 2, 3), lib.zeros(3, 2, 4), lib.zeros(4), 1),
    ),
    "conv_tbc-bias": (
        "conv_tbc",
        lambda lib: (lib.zeros(5, 2, 3), lib.zeros(3, 3, 4), lib.zeros(5), 1),
    ),
    "dilated-kernel": (
        "slow_conv_dilated2d",
        lambda lib: (lib.zeros(1, 2, 5, 5), lib.zeros(3, 2, 2, 2), [3, 3]),
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case: str) -> None:
    name, arguments = ERRORS[case]
    _same_error(
        lambda: _nn(gradgen, name)(*arguments(gradgen)),
        lambda torch: lambda: (
            getattr(torch._C._nn, name, None) or getattr(torch, name)
        )(*arguments(torch)),
    )


def test_fractional_module_errors_match_torch() -> None:
    for kwargs in ({}, {"output_size": 3, "output_ratio": 0.5}, {"output_ratio": 1.5}):
        _same_error(
            lambda: gradgen.nn.FractionalMaxPool2d(2, **kwargs),
            lambda torch: lambda: torch.nn.FractionalMaxPool2d(2, **kwargs),
        )
    _same_error(
        lambda: gradgen.nn.functional.fractional_max_pool2d(
            gradgen.zeros(1, 1, 4, 4), 2
        ),
        lambda torch: lambda: torch.nn.functional.fractional_max_pool2d(
            torch.zeros(1, 1, 4, 4), 2
        ),
    )


def test_conv_tbc_matches_torch_with_second_derivatives() -> None:
    arrays = _arrays(9, (6, 2, 3), (3, 3, 4), (4,))
    _check_against_torch(
        lambda a, w, b: gradgen.conv_tbc(a, w, b, 1),
        lambda torch: lambda a, w, b: torch.conv_tbc(a, w, b, 1),
        arrays,
    )
    _second_derivatives_match(
        lambda a, w, b: gradgen.conv_tbc(a, w, b, 2) ** 2,
        lambda torch: lambda a, w, b: torch.conv_tbc(a, w, b, 2) ** 2,
        arrays,
    )


@pytest.mark.parametrize(
    "name, arguments, shapes",
    [
        (
            "slow_conv_dilated2d",
            ([2, 2], None, [1, 2], [1, 0], [2, 1]),
            ((1, 2, 6, 5), (3, 2, 2, 2)),
        ),
        (
            "slow_conv3d_forward",
            ([2, 2, 2], None, [1, 1, 2], [1, 0, 0]),
            ((1, 2, 3, 3, 4), (2, 2, 2, 2, 2)),
        ),
        (
            "slow_conv_transpose2d",
            ([2, 3], None, [2, 1], [1, 0], [1, 0], [1, 2]),
            ((1, 2, 3, 3), (2, 3, 2, 3)),
        ),
    ],
)
def test_slow_conv_kernels_match_torch(name: str, arguments: Any, shapes: Any) -> None:
    def call(lib: Any) -> Any:
        return lambda a, w: getattr(
            lib.ops.aten if lib.__name__ == "torch" else lib, name
        )(a, w, *arguments)

    _check_against_torch(call(gradgen), call, _arrays(10, *shapes))
    _second_derivatives_match(
        lambda a, w: call(gradgen)(a, w) ** 2,
        lambda torch: lambda a, w: call(torch)(a, w) ** 2,
        _arrays(11, *shapes),
    )

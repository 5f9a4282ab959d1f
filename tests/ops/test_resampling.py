"""The resampling family against torch: upsample_* (values, gradients, double
backward), F.interpolate in every mode, pixel/channel shuffles, unfold/fold,
affine_grid and grid_sample (every mode, padding mode and align_corners, with second
derivatives), and the argument errors. Recorded in tests/golden/ (torch_oracle.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import gradgradcheck
from torch_oracle import oracle, outcome

RNG = np.random.default_rng(13)


@pytest.fixture(autouse=True)
def _seeded() -> None:
    """The same inputs for a test however the run is selected."""
    global RNG
    RNG = np.random.default_rng(13)


def _grads(lib: Any, function: Callable[..., Any], *arrays: np.ndarray) -> list[Any]:
    """function's value and the gradients of a fixed weighted sum of it."""
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = function(lib, *inputs)
    weights = lib.tensor(np.linspace(-1.0, 2.0, out.numel()).reshape(tuple(out.shape)))
    grads = lib.autograd.grad((out * weights).sum(), inputs)
    return [out.detach().numpy()] + [g.numpy() for g in grads]


def _compare(function: Callable[..., Any], *arrays: np.ndarray) -> None:
    ours = _grads(gradgen, function, *arrays)
    theirs = oracle("values and grads", lambda torch: _grads(torch, function, *arrays))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _interpolate(**kwargs: Any) -> Callable[..., Any]:
    return lambda lib, x: lib.nn.functional.interpolate(x, **kwargs)


INTERPOLATE = [
    ((2, 3, 5), dict(size=8)),
    ((2, 3, 5), dict(scale_factor=1.7)),
    ((2, 3, 5), dict(scale_factor=0.6, mode="nearest-exact")),
    ((2, 3, 5), dict(size=7, mode="linear")),
    ((2, 3, 5), dict(size=7, mode="linear", align_corners=True)),
    ((2, 3, 5), dict(scale_factor=2.5, mode="linear", recompute_scale_factor=True)),
    ((2, 3, 7), dict(size=3, mode="area")),
    ((1, 2, 4, 5), dict(size=(6, 3))),
    ((1, 2, 4, 5), dict(scale_factor=(1.5, 0.7), mode="nearest-exact")),
    ((1, 2, 4, 5), dict(size=(6, 7), mode="bilinear")),
    ((1, 2, 4, 5), dict(scale_factor=1.3, mode="bilinear", align_corners=True)),
    ((1, 2, 4, 5), dict(size=(7, 3), mode="bicubic")),
    ((1, 2, 4, 5), dict(scale_factor=2.2, mode="bicubic", align_corners=True)),
    ((1, 2, 4, 5), dict(scale_factor=0.5, mode="area")),
    ((1, 2, 3, 4, 2), dict(size=(4, 3, 5))),
    ((1, 2, 3, 4, 2), dict(scale_factor=(2.0, 0.5, 1.5), mode="trilinear")),
    ((1, 2, 3, 4, 2), dict(size=(5, 6, 3), mode="trilinear", align_corners=True)),
    ((1, 2, 3, 4, 2), dict(size=(2, 2, 1), mode="area")),
    ((1, 1, 6, 6), dict(size=(12, 12), mode="nearest")),  # PyTorch's doubling path
    ((1, 2, 9, 7), dict(size=(4, 3), mode="bilinear", antialias=True)),
    ((1, 2, 9, 7), dict(scale_factor=0.45, mode="bicubic", antialias=True)),
    ((1, 2, 5, 4), dict(size=(7, 9), mode="bicubic", antialias=True)),
    ((1, 1, 9, 7), dict(size=(4, 10), mode="lanczos", antialias=True)),
]


@pytest.mark.parametrize(("shape", "kwargs"), INTERPOLATE)
def test_interpolate_matches_torch(shape: tuple[int, ...], kwargs: Any) -> None:
    _compare(_interpolate(**kwargs), RNG.normal(size=shape))


def test_float32_upsampling_matches_torch() -> None:
    x = RNG.normal(size=(1, 2, 5, 3)).astype(np.float32)

    def run(lib: Any) -> list[Any]:
        t = lib.tensor(x)
        F = lib.nn.functional
        return [
            F.interpolate(t, scale_factor=1.7, mode=mode).numpy()
            for mode in ("nearest", "nearest-exact", "bilinear", "bicubic")
        ]

    for a, b in zip(run(gradgen), oracle("float32", run)):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_nearest_upsampling_takes_uint8() -> None:
    x = RNG.integers(0, 255, size=(1, 1, 3, 4)).astype(np.uint8)

    def run(lib: Any) -> Any:
        t = lib.tensor(x)
        return lib.nn.functional.interpolate(t, size=(5, 7)).numpy()

    got = run(gradgen)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, oracle("uint8", run))


UPSAMPLE_DOUBLE = [
    ("upsample_bilinear2d", (1, 2, 3, 4), ([5, 3], False, None, None)),
    ("upsample_bicubic2d", (1, 1, 3, 4), ([5, 6], True, None, None)),
    ("upsample_nearest3d", (1, 1, 2, 3, 2), ([3, 4, 3], None, None, None)),
    ("upsample_linear1d", (2, 1, 4), ([6], False, 1.5)),
]


@pytest.mark.parametrize(("name", "shape", "args"), UPSAMPLE_DOUBLE)
def test_upsample_second_derivatives(name: str, shape: Any, args: Any) -> None:
    """gradgradcheck, and the gradient of a gradient equals torch's."""
    x = RNG.normal(size=shape)

    def function(lib: Any, t: Any) -> Any:
        target = lib._C._nn if lib.__name__ == "torch" else lib
        return getattr(target, name)(t, *args)

    assert gradgradcheck(
        lambda t: function(gradgen, t) ** 2, [gradgen.tensor(x, requires_grad=True)]
    )

    def second(lib: Any) -> Any:
        t = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad((function(lib, t) ** 3).sum(), [t], create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), [t])
        return gg.numpy()

    np.testing.assert_allclose(second(gradgen), oracle("second", second), rtol=1e-10)


SHUFFLES = [
    (lambda lib, x: lib.nn.functional.pixel_shuffle(x, 3), (2, 18, 2, 3)),
    (lambda lib, x: lib.pixel_shuffle(x, 2), (4, 2, 3)),
    (lambda lib, x: lib.nn.functional.pixel_unshuffle(x, 2), (1, 2, 4, 6)),
    (lambda lib, x: lib.nn.functional.channel_shuffle(x, 3), (2, 6, 2, 2)),
    (lambda lib, x: lib.nn.functional.unfold(x, (2, 3), 1, (1, 0), 2), (2, 3, 5, 6)),
    (lambda lib, x: lib.nn.functional.unfold(x, 2, dilation=2), (3, 5, 6)),
    (
        lambda lib, x: lib.nn.functional.fold(x, (5, 6), 2, dilation=(1, 2), padding=1),
        (2, 12, 36),
    ),
    (lambda lib, x: lib.nn.functional.fold(x, 4, 3, stride=1), (9, 4)),
]


@pytest.mark.parametrize(("function", "shape"), SHUFFLES)
def test_rearrangements_match_torch(function: Any, shape: Any) -> None:
    _compare(function, RNG.normal(size=shape))


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize(
    ("size", "theta"), [((2, 3, 4, 5), (2, 2, 3)), ((1, 2, 3, 1, 4), (1, 3, 4))]
)
def test_affine_grid_matches_torch(size: Any, theta: Any, align_corners: bool) -> None:
    _compare(
        lambda lib, t: lib.nn.functional.affine_grid(t, size, align_corners),
        RNG.normal(size=theta),
    )


GRID_CASES = [
    (mode, padding, align, nd)
    for mode in ("bilinear", "nearest", "bicubic")
    for padding in ("zeros", "border", "reflection")
    for align in (False, True)
    for nd in (2, 3)
    if not (mode == "bicubic" and nd == 3)
]


@pytest.mark.parametrize(("mode", "padding", "align", "nd"), GRID_CASES)
def test_grid_sample_matches_torch(
    mode: str, padding: str, align: bool, nd: int
) -> None:
    shape = (2, 3, 4, 5) if nd == 2 else (2, 2, 3, 4, 3)
    grid = (2, 3, 4, 2) if nd == 2 else (2, 2, 3, 2, 3)

    def function(lib: Any, x: Any, g: Any) -> Any:
        return lib.nn.functional.grid_sample(x, g * 1.4, mode, padding, align)

    _compare(function, RNG.normal(size=shape), RNG.uniform(-1, 1, size=grid))


@pytest.mark.parametrize(("mode", "padding", "align", "nd"), GRID_CASES[::3])
def test_grid_sample_double_backward_matches_torch(
    mode: str, padding: str, align: bool, nd: int
) -> None:
    shape = (1, 2, 3, 4) if nd == 2 else (1, 2, 3, 2, 3)
    grid_shape = (1, 2, 3, 2) if nd == 2 else (1, 2, 1, 2, 3)
    x, grid = RNG.normal(size=shape), RNG.uniform(-1, 1, size=grid_shape)

    def second(lib: Any) -> list[Any]:
        t = lib.tensor(x, requires_grad=True)
        g = lib.tensor(grid, requires_grad=True)
        out = lib.nn.functional.grid_sample(t, g * 1.3, mode, padding, align)
        gt, gg = lib.autograd.grad((out**2).sum(), [t, g], create_graph=True)
        return [
            a.numpy() for a in lib.autograd.grad((gt**2).sum() + (gg**2).sum(), [t, g])
        ]

    for a, b in zip(second(gradgen), oracle("second", second)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


ERRORS = [
    lambda lib: lib.nn.functional.interpolate(
        lib.ones(1, 1, 3), size=4, mode="bilinear"
    ),
    lambda lib: lib.nn.functional.interpolate(
        lib.ones(1, 1, 3), size=4, align_corners=True
    ),
    lambda lib: lib.nn.functional.interpolate(
        lib.ones(1, 1, 3), size=4, scale_factor=2.0
    ),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 3)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 3, 3), size=(2, 2, 2)),
    lambda lib: lib.nn.functional.interpolate(
        lib.ones(1, 1, 3, 3), scale_factor=(2.0,)
    ),
    lambda lib: lib.nn.functional.interpolate(
        lib.ones(1, 1, 3), size=4, recompute_scale_factor=True
    ),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 3), size=4),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 3, 3), size=(2.0, 2)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 3, 3), size=(0, 2)),
    lambda lib: lib.nn.functional.interpolate(
        lib.ones(1, 1, 3, 3, dtype=lib.int64), size=4, mode="bilinear"
    ),
    lambda lib: lib.nn.functional.interpolate(
        lib.ones(1, 1, 3), size=4, antialias=True
    ),
    lambda lib: lib.nn.functional.interpolate(
        lib.ones(1, 1, 3, 3), size=4, mode="lanczos"
    ),
    lambda lib: lib.pixel_shuffle(lib.ones(1, 5, 2, 2), 2),
    lambda lib: lib.pixel_shuffle(lib.ones(5, 2), 2),
    lambda lib: lib.pixel_unshuffle(lib.ones(1, 4, 3, 2), 2),
    lambda lib: lib.pixel_unshuffle(lib.ones(1, 4, 4, 4), 0),
    lambda lib: lib.channel_shuffle(lib.ones(1, 5, 2), 2),
    lambda lib: lib.channel_shuffle(lib.ones(1, 4), 2),
    lambda lib: lib.nn.functional.unfold(lib.ones(1, 2, 3, 3), 4),
    lambda lib: lib.nn.functional.unfold(lib.ones(1, 2, 3, 3), 2, padding=-1),
    lambda lib: lib.nn.functional.fold(lib.ones(1, 7, 4), 3, 2),
    lambda lib: lib.nn.functional.fold(lib.ones(1, 8, 5), 3, 2),
    lambda lib: lib.nn.functional.grid_sample(
        lib.ones(1, 1, 3, 3), lib.ones(1, 2, 2, 3), align_corners=False
    ),
    lambda lib: lib.nn.functional.grid_sample(
        lib.ones(1, 1, 3, 3), lib.ones(2, 2, 2, 2), align_corners=False
    ),
    lambda lib: lib.nn.functional.grid_sample(
        lib.ones(1, 1, 3, 3, 3), lib.ones(1, 2, 2, 2, 3), "bicubic", align_corners=False
    ),
    lambda lib: lib.nn.functional.grid_sample(
        lib.ones(1, 1, 3, 3), lib.ones(1, 2, 2, 2), "cubic", align_corners=False
    ),
    lambda lib: lib.nn.functional.grid_sample(
        lib.ones(1, 1, 3, 3),
        lib.ones(1, 2, 2, 2),
        padding_mode="wrap",
        align_corners=False,
    ),
    lambda lib: lib.nn.functional.affine_grid(lib.ones(1, 2, 3), (1, 1, 3), False),
    lambda lib: lib.nn.functional.affine_grid(lib.ones(1, 3, 3), (1, 1, 3, 4), False),
    lambda lib: lib.nn.functional.affine_grid(
        lib.ones(1, 2, 3, dtype=lib.int64), (1, 1, 3, 4), False
    ),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_match_torch(index: int) -> None:
    def run(lib: Any) -> Any:
        result = outcome(lambda: ERRORS[index](lib))
        return result if isinstance(result, Exception) else "no error"

    ours, theirs = run(gradgen), oracle("error", run)
    assert type(ours).__name__ == type(theirs).__name__
    assert str(ours) == str(theirs).replace("torch.", "gradgen.")

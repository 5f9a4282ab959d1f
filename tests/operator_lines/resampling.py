"""Operator-table lines of the resampling family of native_functions.yaml."""

from __future__ import annotations

from typing import Any

from .common import Line, _f

# name -> (input shape, output size, extra arguments between the sizes and scales)
_UPSAMPLE: dict[str, tuple[tuple[int, ...], list[int], tuple[Any, ...]]] = {
    "upsample_nearest1d": ((2, 2, 3), [5], ()),
    "_upsample_nearest_exact1d": ((2, 2, 3), [5], ()),
    "upsample_nearest2d": ((1, 2, 3, 2), [5, 4], ()),
    "_upsample_nearest_exact2d": ((1, 2, 3, 2), [4, 3], ()),
    "upsample_nearest3d": ((1, 1, 2, 3, 2), [3, 4, 3], ()),
    "_upsample_nearest_exact3d": ((1, 1, 2, 3, 2), [3, 4, 3], ()),
    "upsample_linear1d": ((2, 2, 3), [5], (False,)),
    "upsample_bilinear2d": ((1, 2, 3, 2), [5, 3], (True,)),
    "upsample_bicubic2d": ((1, 1, 3, 4), [5, 3], (False,)),
    "upsample_trilinear3d": ((1, 1, 2, 3, 2), [3, 4, 3], (False,)),
    "_upsample_bilinear2d_aa": ((1, 2, 5, 4), [3, 6], (False,)),
    "_upsample_bicubic2d_aa": ((1, 1, 6, 4), [4, 3], (True,)),
    "_upsample_lanczos2d_aa": ((1, 1, 7, 3), [3, 5], (False,)),
}


def _upsample(name: str, shape: tuple[int, ...], out: list[int], extra: tuple) -> Line:
    return Line(lambda lib, a: _f(name)(lib)(a, out, *extra), (shape,))


def _upsample_backward(
    name: str, shape: tuple[int, ...], out: list[int], extra: tuple
) -> Line:
    return Line(
        lambda lib, g: _f(name + "_backward")(lib)(g, out, list(shape), *extra),
        (shape[:2] + tuple(out),),
    )


def _grid_sampler(name: str, mode: int, padding: int, align: bool) -> Any:
    return lambda lib, a, grid: _f(name)(lib)(a, grid * 0.8, mode, padding, align)


def _grid_sampler_backward(name: str, mode: int, padding: int, align: bool) -> Any:
    def function(lib: Any, g: Any, a: Any, grid: Any) -> Any:
        grad_input, grad_grid = _f(name)(lib)(
            g, a, grid * 0.8, mode, padding, align, [True, True]
        )
        return grad_input.sum() * 0.5 + grad_grid

    return function


LINES: dict[str, Line] = {
    **{name: _upsample(name, *spec) for name, spec in _UPSAMPLE.items()},
    **{
        name + "_backward": _upsample_backward(name, *spec)
        for name, spec in _UPSAMPLE.items()
    },
    "pixel_shuffle": Line(lambda lib, a: lib.pixel_shuffle(a, 2), ((1, 8, 2, 3),)),
    "pixel_unshuffle": Line(lambda lib, a: lib.pixel_unshuffle(a, 2), ((2, 4, 2),)),
    "channel_shuffle": Line(lambda lib, a: lib.channel_shuffle(a, 2), ((2, 6, 2),)),
    "im2col": Line(
        lambda lib, a: _f("im2col")(lib)(a, [2, 3], [1, 2], [1, 0], [2, 1]),
        ((1, 2, 4, 5),),
    ),
    "col2im": Line(
        lambda lib, a: _f("col2im")(lib)(a, [4, 5], [2, 3], [1, 2], [1, 0], [2, 1]),
        ((1, 12, 3),),
    ),
    "affine_grid_generator": Line(
        lambda lib, t: lib.affine_grid_generator(t, [2, 1, 3, 4], False), ((2, 2, 3),)
    ),
    "affine_grid_generator_backward": Line(
        lambda lib, g: _f("affine_grid_generator_backward")(lib)(
            g, [1, 1, 2, 3, 2], True
        ),
        ((1, 2, 3, 2, 3),),
    ),
    "grid_sampler": Line(
        _grid_sampler("grid_sampler", 0, 0, False),
        ((1, 2, 3, 4), (1, 2, 3, 2)),
        forward=False,
    ),
    "grid_sampler_2d": Line(
        _grid_sampler("grid_sampler_2d", 2, 2, False),
        ((1, 2, 3, 4), (1, 2, 3, 2)),
        forward=False,
    ),
    "grid_sampler_2d_backward": Line(
        _grid_sampler_backward("grid_sampler_2d_backward", 0, 1, True),
        ((1, 2, 2, 3), (1, 2, 3, 4), (1, 2, 3, 2)),
        forward=False,
    ),
    "grid_sampler_3d": Line(
        _grid_sampler("grid_sampler_3d", 0, 1, True),
        ((1, 1, 2, 3, 2), (1, 2, 1, 2, 3)),
        forward=False,
    ),
    "grid_sampler_3d_backward": Line(
        _grid_sampler_backward("grid_sampler_3d_backward", 0, 2, False),
        ((1, 1, 2, 1, 2), (1, 1, 2, 3, 2), (1, 2, 1, 2, 3)),
        forward=False,
    ),
}

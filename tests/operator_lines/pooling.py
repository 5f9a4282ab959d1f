"""Operator-table lines of the pooling family of native_functions.yaml."""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import Line, _POOL2D, _POOL3D, _f, _f64, _max_pool_indices


def _samples(lib: Any, nd: int) -> Any:
    """Fixed random_samples for fractional max pooling: one batch of two planes."""
    return _f64(lib, np.random.default_rng(13).uniform(0.0, 1.0, (1, 2, nd)))


_UNPOOL2D = ([2, 2], [2, 2], [0, 0], [1, 1], False)
_UNPOOL3D = ([2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], False)
_FRACTIONAL = {
    2: ([2, 3], [3, 3], (1, 2, 6, 7)),
    3: ([2, 2, 2], [2, 3, 2], (1, 2, 4, 5, 4)),
}


def _fractional(lib: Any, a: Any, nd: int) -> Any:
    kernel, output, _ = _FRACTIONAL[nd]
    return _f(f"fractional_max_pool{nd}d")(lib)(a, kernel, output, _samples(lib, nd))


def _fractional_backward(lib: Any, g: Any, a: Any, nd: int) -> Any:
    kernel, output, shape = _FRACTIONAL[nd]
    indices = _fractional(lib, _max_pool_fixed(lib, shape), nd)[1]
    return _f(f"fractional_max_pool{nd}d_backward")(lib)(g, a, kernel, output, indices)


def _max_pool_fixed(lib: Any, shape: tuple[int, ...]) -> Any:
    return _f64(lib, np.random.default_rng(11).uniform(-2.0, 2.0, shape))


LINES: dict[str, Line] = {
    "max_pool2d_with_indices": Line(
        lambda lib, a: _f("max_pool2d_with_indices")(lib)(a, *_POOL2D)[0],
        ((1, 2, 6, 7),),
    ),
    "max_pool2d_with_indices_backward": Line(
        lambda lib, g, a: _f("max_pool2d_with_indices_backward")(lib)(
            g,
            a,
            *_POOL2D,
            _max_pool_indices(lib, "max_pool2d_with_indices", (1, 2, 6, 7), *_POOL2D),
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
    "max_pool3d": Line(lambda lib, a: lib.max_pool3d(a, (1, 2, 2)), ((1, 2, 3, 4, 4),)),
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
            _max_pool_indices(lib, "adaptive_max_pool3d", (1, 1, 3, 4, 5), [2, 3, 2]),
        ),
        ((1, 1, 2, 3, 2), (1, 1, 3, 4, 5)),
    ),
    # indices of non-overlapping windows (a repeated index keeps one value, so the
    # gradient, which reads every copy, would not be the operator's)
    "max_unpool2d": Line(
        lambda lib, a: _f("max_unpool2d")(lib)(
            a,
            _max_pool_indices(lib, "max_pool2d_with_indices", (1, 2, 6, 6), *_UNPOOL2D),
            [6, 6],
        ),
        ((1, 2, 3, 3),),
    ),
    "max_unpool3d": Line(
        lambda lib, a: _f("max_unpool3d")(lib)(
            a,
            _max_pool_indices(
                lib, "max_pool3d_with_indices", (1, 1, 4, 4, 4), *_UNPOOL3D
            ),
            [4, 4, 4],
            [2, 2, 2],
            [0, 0, 0],
        ),
        ((1, 1, 2, 2, 2),),
    ),
    "fractional_max_pool2d": Line(
        lambda lib, a: _fractional(lib, a, 2)[0], ((1, 2, 6, 7),)
    ),
    "fractional_max_pool2d_backward": Line(
        lambda lib, g, a: _fractional_backward(lib, g, a, 2),
        ((1, 2, 3, 3), (1, 2, 6, 7)),
    ),
    "fractional_max_pool3d": Line(
        lambda lib, a: _fractional(lib, a, 3)[0], ((1, 2, 4, 5, 4),)
    ),
    "fractional_max_pool3d_backward": Line(
        lambda lib, g, a: _fractional_backward(lib, g, a, 3),
        ((1, 2, 2, 3, 2), (1, 2, 4, 5, 4)),
    ),
}

"""Operator-table lines of the pooling family of native_functions.yaml."""

from __future__ import annotations

from .common import Line, _POOL2D, _POOL3D, _f, _max_pool_indices

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
}

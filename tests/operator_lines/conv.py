"""Operator-table lines of the conv family of native_functions.yaml."""

from __future__ import annotations

from .common import Line, _convolution_backward, _f

LINES: dict[str, Line] = {
    "convolution": Line(
        lambda lib, a, w, b: lib.convolution(
            a, w, b, [2, 1], [1, 0], [1, 2], False, [0, 0], 2
        ),
        ((1, 4, 5, 5), (4, 2, 3, 2), (4,)),
    ),
    "convolution_backward": Line(
        _convolution_backward, ((1, 2, 7, 3), (1, 4, 3, 3), (4, 1, 2, 2))
    ),
    "conv1d": Line(
        lambda lib, a, w, b: lib.conv1d(a, w, b, 2, 1, 2),
        ((2, 3, 7), (4, 3, 3), (4,)),
    ),
    "conv2d": Line(
        lambda lib, a, w, b: lib.conv2d(a, w, b, (1, 2), (1, 0), (2, 1)),
        ((1, 2, 5, 5), (3, 2, 2, 3), (3,)),
    ),
    "conv3d": Line(
        lambda lib, a, w, b: lib.conv3d(a, w, b, groups=2),
        ((1, 2, 3, 4, 3), (2, 1, 2, 2, 2), (2,)),
    ),
    "conv1d.padding": Line(
        lambda lib, a, w: lib.conv1d(a, w, padding="same"), ((2, 6), (3, 2, 2))
    ),
    "conv2d.padding": Line(
        lambda lib, a, w: lib.conv2d(a, w, padding="same", dilation=(1, 2)),
        ((1, 2, 4, 4), (2, 2, 2, 3)),
    ),
    "conv3d.padding": Line(
        lambda lib, a, w: lib.conv3d(a, w, padding="valid"),
        ((1, 1, 3, 3, 3), (2, 1, 2, 2, 2)),
    ),
    "conv_transpose1d": Line(
        lambda lib, a, w, b: lib.conv_transpose1d(a, w, b, 2, 1, 1),
        ((1, 2, 4), (2, 3, 3), (3,)),
    ),
    "conv_transpose2d.input": Line(
        lambda lib, a, w, b: lib.conv_transpose2d(
            a, w, b, (2, 1), (0, 1), (1, 0), 2, (1, 2)
        ),
        ((1, 4, 3, 3), (4, 1, 2, 3), (2,)),
    ),
    "conv_transpose3d.input": Line(
        lambda lib, a, w: lib.conv_transpose3d(a, w, stride=2),
        ((1, 2, 2, 3, 2), (2, 1, 2, 2, 2)),
    ),
    "reflection_pad1d": Line(
        lambda lib, a: _f("reflection_pad1d")(lib)(a, [2, -1]), ((2, 3, 5),)
    ),
    "reflection_pad1d_backward": Line(
        lambda lib, g, a: _f("reflection_pad1d_backward")(lib)(g, a, [2, -1]),
        ((2, 3, 6), (2, 3, 5)),
    ),
    "reflection_pad2d": Line(
        lambda lib, a: _f("reflection_pad2d")(lib)(a, [1, 2, -1, 3]), ((1, 2, 4, 5),)
    ),
    "reflection_pad2d_backward": Line(
        lambda lib, g, a: _f("reflection_pad2d_backward")(lib)(g, a, [1, 2, -1, 3]),
        ((1, 2, 6, 8), (1, 2, 4, 5)),
    ),
    "reflection_pad3d": Line(
        lambda lib, a: _f("reflection_pad3d")(lib)(a, [2, 1, 0, 2, 1, -1]),
        ((1, 1, 3, 4, 4),),
    ),
    "reflection_pad3d_backward": Line(
        lambda lib, g, a: _f("reflection_pad3d_backward")(lib)(
            g, a, [2, 1, 0, 2, 1, -1]
        ),
        ((1, 1, 3, 6, 7), (1, 1, 3, 4, 4)),
    ),
    "replication_pad1d": Line(
        lambda lib, a: _f("replication_pad1d")(lib)(a, [2, -1]), ((2, 3, 5),)
    ),
    "replication_pad1d_backward": Line(
        lambda lib, g, a: _f("replication_pad1d_backward")(lib)(g, a, [2, -1]),
        ((2, 3, 6), (2, 3, 5)),
    ),
    "replication_pad2d": Line(
        lambda lib, a: _f("replication_pad2d")(lib)(a, [1, 2, -1, 3]), ((1, 2, 4, 5),)
    ),
    "replication_pad2d_backward": Line(
        lambda lib, g, a: _f("replication_pad2d_backward")(lib)(g, a, [1, 2, -1, 3]),
        ((1, 2, 6, 8), (1, 2, 4, 5)),
    ),
    "replication_pad3d": Line(
        lambda lib, a: _f("replication_pad3d")(lib)(a, [2, 1, 0, 2, 1, -1]),
        ((1, 1, 3, 4, 4),),
    ),
    "replication_pad3d_backward": Line(
        lambda lib, g, a: _f("replication_pad3d_backward")(lib)(
            g, a, [2, 1, 0, 2, 1, -1]
        ),
        ((1, 1, 3, 6, 7), (1, 1, 3, 4, 4)),
    ),
}

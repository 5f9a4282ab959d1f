"""Operator-table lines of the normalization family of native_functions.yaml."""

from __future__ import annotations

from .common import (
    Line,
    _batch_norm,
    _batch_norm_backward,
    _f,
    _group_norm_backward,
    _layer_norm_backward,
    _native_group_norm,
    _running,
)

LINES: dict[str, Line] = {
    "batch_norm": Line(_batch_norm, ((4, 3, 2), (3,), (3,))),
    "native_batch_norm": Line(
        lambda lib, a, w, b: _f("native_batch_norm")(lib)(
            a, w, b, *_running(lib), True, 0.1, 1e-5
        )[0],
        ((3, 3), (3,), (3,)),
    ),
    "native_batch_norm_backward": Line(
        _batch_norm_backward,
        ((2, 3, 2), (2, 3, 2), (3,)),
        forward=False,  # PyTorch has no forward formula either
    ),
    "instance_norm": Line(
        lambda lib, a, w, b: _f("instance_norm")(lib)(
            a, w, b, None, None, True, 0.1, 1e-5, False
        )
        + _f("instance_norm")(lib)(a, w, b, *_running(lib), False, 0.1, 1e-5, False),
        ((2, 3, 3), (3,), (3,)),
    ),
    "group_norm": Line(
        lambda lib, a, w, b: _f("group_norm")(lib)(a, 2, w, b, 1e-5)
        + _f("group_norm")(lib)(a, 4),
        ((2, 4, 3), (4,), (4,)),
    ),
    "native_group_norm": Line(_native_group_norm, ((2, 4, 3), (4,), (4,))),
    "native_group_norm_backward": Line(_group_norm_backward, ((2, 4, 3),)),
    "layer_norm": Line(
        lambda lib, a, w, b: _f("layer_norm")(lib)(a, (3, 4), w, b, 1e-5)
        + _f("layer_norm")(lib)(a, (4,)),
        ((2, 3, 4), (3, 4), (3, 4)),
    ),
    "native_layer_norm": Line(
        lambda lib, a, w, b: _f("native_layer_norm")(lib)(a, (3,), w, b, 1e-5)[0],
        ((2, 3), (3,), (3,)),
    ),
    "native_layer_norm_backward": Line(
        _layer_norm_backward,
        ((2, 3), (2, 3), (3,)),
        forward=False,  # PyTorch has no forward formula either
    ),
    "rms_norm": Line(
        lambda lib, a, w: _f("rms_norm")(lib)(a, (3, 4), w, 1e-3)
        + _f("rms_norm")(lib)(a, (4,)),
        ((2, 3, 4), (3, 4)),
    ),
}

"""Operator-table lines of the normalization family of native_functions.yaml."""

from __future__ import annotations

from typing import Any

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


def _batch_norm_backward_update(lib: Any, g: Any, a: Any, w: Any) -> Any:
    """batch_norm_backward with update (a's own statistics) and without (the running
    ones), all three gradients joined."""
    mean, var = _running(lib)
    _, save_mean, save_invstd = _f("native_batch_norm")(lib)(
        a, w, None, None, None, True, 0.1, 1e-5
    )
    reserve = lib.empty(0, dtype=lib.uint8)
    total = 0
    for update, saved in ((True, (save_mean, save_invstd)), (False, (None, None))):
        grad_input, grad_weight, grad_bias = _f("batch_norm_backward")(lib)(
            g, a, w, mean, var, *saved, update, 1e-5, [True, True, True], reserve
        )
        total = total + grad_input + grad_weight.view(1, 3, 1) * grad_bias.view(1, 3, 1)
    return total


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
    "_native_batch_norm_legit_no_training": Line(
        lambda lib, a, w, b: _f("_native_batch_norm_legit_no_training")(lib)(
            a, w, b, *_running(lib), 0.1, 1e-5
        )[0],
        ((3, 3, 2), (3,), (3,)),
    ),
    "_native_batch_norm_legit.no_stats": Line(
        lambda lib, a, w, b: _f("_native_batch_norm_legit")(lib)(
            a, w, b, True, 0.1, 1e-5
        )[0],
        ((4, 3), (3,), (3,)),
    ),
    "_batch_norm_no_update": Line(
        lambda lib, a, w, b: _f("_batch_norm_no_update")(lib)(
            a, w, b, *_running(lib), 0.1, 1e-5
        )[0],
        ((2, 3, 2), (3,), (3,)),
    ),
    "batch_norm_backward": Line(
        _batch_norm_backward_update,
        ((2, 3, 2), (2, 3, 2), (3,)),
        forward=False,  # PyTorch has no forward formula either
    ),
    "_fused_rms_norm": Line(
        lambda lib, a, w: lib.cat(
            [t.flatten() for t in _f("_fused_rms_norm")(lib)(a, [3, 4], w, 1e-3)]
        ),
        ((2, 3, 4), (3, 4)),
    ),
}

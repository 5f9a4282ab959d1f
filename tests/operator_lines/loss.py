"""Operator-table lines of the loss family of native_functions.yaml."""

from __future__ import annotations

from .common import (
    Line,
    _aten_namespace,
    _bce_target,
    _class_weight,
    _cross_entropy,
    _f,
    _f64,
    _probabilities,
    _targets,
)

LINES: dict[str, Line] = {
    "mse_loss": Line(
        lambda lib, a, b: _aten_namespace(lib).mse_loss(a, b * b, 1),
        ((3, 4), (3, 4)),
    ),
    "mse_loss_backward": Line(
        lambda lib, g, a, b: _aten_namespace(lib).mse_loss_backward(g, a, b * b, 2),
        ((), (3, 4), (3, 4)),
    ),
    "nll_loss_forward": Line(
        lambda lib, a: _aten_namespace(lib).nll_loss_forward(
            a, _targets(lib, 0, 2, -100, 1), _class_weight(lib), 1, -100
        )[0],
        ((4, 3),),
    ),
    "nll_loss_backward": Line(
        lambda lib, g, a: _aten_namespace(lib).nll_loss_backward(
            g * g,
            a,
            _targets(lib, 0, 2, 1),
            _class_weight(lib),
            0,
            1,
            lib.tensor(0.0, dtype=lib.float64),
        ),
        ((3,), (3, 3)),
        forward=False,  # PyTorch has no forward formula either
    ),
    "nll_loss2d_forward": Line(
        lambda lib, a: _aten_namespace(lib).nll_loss2d_forward(
            a, _targets(lib, 0, 2, 1, 2).view(1, 2, 2), _class_weight(lib), 2, 2
        )[0],
        ((1, 3, 2, 2),),
    ),
    "nll_loss2d_backward": Line(
        lambda lib, g, a: _aten_namespace(lib).nll_loss2d_backward(
            g,
            a,
            _targets(lib, 0, 2, 1, 2).view(1, 2, 2),
            _class_weight(lib),
            1,
            -100,
            lib.tensor(5.5, dtype=lib.float64),
        ),
        ((), (1, 3, 2, 2)),
        forward=False,  # PyTorch has no forward formula either
    ),
    "nll_loss": Line(
        lambda lib, a: _aten_namespace(lib).nll_loss(
            a, _targets(lib, 2, 0, 1, 1), _class_weight(lib), 2, 1
        ),
        ((4, 3),),
    ),
    "nll_loss2d": Line(
        lambda lib, a: _aten_namespace(lib).nll_loss2d(
            a, _targets(lib, 0, 2, 1, 2).view(1, 2, 2), _class_weight(lib), 0
        ),
        ((1, 3, 2, 2),),
    ),
    "nll_loss_nd": Line(
        lambda lib, a: _aten_namespace(lib).nll_loss_nd(
            a, _targets(lib, 0, 2, 1, 2).view(2, 2), _class_weight(lib), 1
        ),
        ((2, 3, 2),),
    ),
    "binary_cross_entropy": Line(
        lambda lib, a: _aten_namespace(lib).binary_cross_entropy(
            _probabilities(a), _bce_target(lib), _class_weight(lib), 1
        ),
        ((2, 3),),
    ),
    "binary_cross_entropy_backward": Line(
        lambda lib, g, a: _aten_namespace(lib).binary_cross_entropy_backward(
            g, _probabilities(a), _bce_target(lib), _class_weight(lib), 0
        ),
        ((2, 3), (2, 3)),
    ),
    "cross_entropy_loss": Line(_cross_entropy, ((4, 3),)),
    "l1_loss": Line(
        lambda lib, a, b: _f("l1_loss")(lib)(a, b, 1)
        + _f("l1_loss")(lib)(a, b * 2.0, 0).sum(),
        ((3, 4), (3, 4)),
    ),
    "smooth_l1_loss": Line(
        lambda lib, a, b: _f("smooth_l1_loss")(lib)(a, b, 1, 0.5)
        + _f("smooth_l1_loss")(lib)(a, b * 2.0, 0, 1.5) * a,
        ((3, 4), (3, 4)),
    ),
    "smooth_l1_loss_backward": Line(
        lambda lib, g, a, b: _f("smooth_l1_loss_backward")(lib)(g, a, b, 0, 0.5)
        + _f("smooth_l1_loss_backward")(lib)(g.sum(), a, b * 2.0, 1, 1.5),
        ((3, 4), (3, 4), (3, 4)),
    ),
    "huber_loss": Line(
        lambda lib, a, b: _f("huber_loss")(lib)(a, b, 2, 0.5)
        + _f("huber_loss")(lib)(a, b * 2.0, 0, 1.5) * a,
        ((3, 4), (3, 4)),
    ),
    "huber_loss_backward": Line(
        lambda lib, g, a, b: _f("huber_loss_backward")(lib)(g, a, b, 0, 0.5)
        + _f("huber_loss_backward")(lib)(g.sum(), a, b * 2.0, 1, 1.5),
        ((3, 4), (3, 4), (3, 4)),
        forward=False,  # PyTorch has no forward formula either
    ),
    "binary_cross_entropy_with_logits": Line(
        lambda lib, a, b: _f("binary_cross_entropy_with_logits")(lib)(
            a,
            _probabilities(b),
            _f64(lib, [0.5, 1.0, 2.0]),
            _f64(lib, [[3.0, 0.5, 1.0]]),
            1,
        )
        + _f("binary_cross_entropy_with_logits")(lib)(a, b, None, None, 0) * a,
        ((2, 3), (2, 3)),
    ),
    "kl_div": Line(
        lambda lib, a, b: _f("kl_div")(lib)(a, _probabilities(b), 1)
        + _f("kl_div")(lib)(a, b, 0, log_target=True) * a,
        ((2, 3), (2, 3)),
    ),
}

"""Operator-table lines of the loss family of native_functions.yaml."""

from __future__ import annotations

from typing import Any

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


def _signs(lib: Any) -> Any:
    return _f64(lib, [[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]])


def _margin_targets(lib: Any) -> Any:
    return _targets(lib, 2, 0, 1, 3)


def _multilabel_targets(lib: Any) -> Any:
    return lib.tensor([[3, 0, -1, 1], [1, -1, 0, 0], [2, 1, 0, 3], [-1, 2, 2, 2]])


def _multi_margin(lib: Any, a: Any, p: int, weight: Any, reduction: int) -> Any:
    return _f("multi_margin_loss")(lib)(
        a * 0.3, _margin_targets(lib), p, 0.8, weight, reduction
    )


LINES.update(
    {
        "soft_margin_loss": Line(
            lambda lib, a: _f("soft_margin_loss")(lib)(a, _signs(lib), 1).sum()
            + _f("soft_margin_loss")(lib)(a, _signs(lib), 0) * a,
            ((2, 3),),
        ),
        "soft_margin_loss_backward": Line(
            lambda lib, g, a: _f("soft_margin_loss_backward")(lib)(g, a, _signs(lib), 0)
            + _f("soft_margin_loss_backward")(lib)(g.sum(), a, _signs(lib), 1),
            ((2, 3), (2, 3)),
            forward=False,  # PyTorch has no forward formula either
        ),
        "multi_margin_loss": Line(
            lambda lib, a: _multi_margin(lib, a, 1, None, 1)
            + _multi_margin(lib, a, 2, _f64(lib, [0.5, 1.0, 2.0, 1.5]), 0)
            + _multi_margin(lib, a, 2, None, 2),
            ((4, 4),),
            forward=False,  # PyTorch has no forward formula either
        ),
        "multi_margin_loss_backward": Line(
            lambda lib, g, a: _f("multi_margin_loss_backward")(lib)(
                g, a * 0.3, _margin_targets(lib), 2, 0.8, None, 0
            )
            + _f("multi_margin_loss_backward")(lib)(
                g.sum(), a * 0.3, _margin_targets(lib), 1, 0.8, None, 1
            ),
            ((4,), (4, 4)),
            compare=False,  # PyTorch has no derivative: tested in test_activation_entries
            forward=False,
        ),
        "multilabel_margin_loss": Line(
            lambda lib, a: _f("multilabel_margin_loss")(lib)(
                a * 0.3, _multilabel_targets(lib), 1
            )
            + _f("multilabel_margin_loss")(lib)(a * 0.3, _multilabel_targets(lib), 0),
            ((4, 4),),
            forward=False,  # PyTorch has no forward formula either
        ),
        "multilabel_margin_loss_forward": Line(
            lambda lib, a: _f("multilabel_margin_loss_forward")(lib)(
                a * 0.3, _multilabel_targets(lib), 2
            )[0],
            ((4, 4),),
            forward=False,  # PyTorch has no forward formula either
        ),
        "multilabel_margin_loss_backward": Line(
            lambda lib, g, a: _f("multilabel_margin_loss_backward")(lib)(
                g,
                a * 0.3,
                _multilabel_targets(lib),
                0,
                _f("multilabel_margin_loss_forward")(lib)(
                    a.detach(), _multilabel_targets(lib), 0
                )[1],
            ),
            ((4,), (4, 4)),
            compare=False,  # PyTorch has no derivative: tested in test_activation_entries
            forward=False,
        ),
    }
)

"""Operator-table lines of the activation family of native_functions.yaml."""

from __future__ import annotations

from typing import Any

from .common import Line, _GRID, _aten, _f, _f64, _nn

LINES: dict[str, Line] = {
    "relu": Line(lambda lib, a: lib.relu(a) * a.relu(), ((6,),)),
    "gelu": Line(
        lambda lib, a: _nn(lib, "gelu")(a) * _nn(lib, "gelu")(a, approximate="tanh"),
        ((6,),),
    ),
    "silu": Line(lambda lib, a: _nn(lib, "silu")(a) * a, ((6,),)),
    "threshold_backward": Line(
        lambda lib, a, b: _aten(lib, "threshold_backward")(a * b, b, 0.25),
        ((6,), (6,)),
    ),
    "gelu_backward": Line(
        lambda lib, a, b: _aten(lib, "gelu_backward")(a, b)
        * _aten(lib, "gelu_backward")(a, b, approximate="tanh"),
        ((5,), (5,)),
    ),
    # PyTorch's silu_backward has no derivative (grad_fn NotImplemented, as here):
    # the line checks its values on constants; the gradient flows through `* a`.
    "silu_backward": Line(
        lambda lib, a: _aten(lib, "silu_backward")(
            lib.tensor(_GRID + 1.0), lib.tensor(_GRID * 2.0)
        )
        * a,
        ((5,),),
    ),
    "relu_": Line(lambda lib, a: (a * 1.0).relu_() * lib.relu_(a * 2.0), ((6,),)),
    "softmax.int": Line(
        lambda lib, a: lib.softmax(a, 0) * a.softmax(-1, dtype=lib.float64),
        ((2, 3),),
    ),
    "_softmax": Line(lambda lib, a: lib._softmax(a, 1, False) * a, ((2, 3),)),
    "_softmax_backward_data": Line(
        lambda lib, g, y: lib._softmax_backward_data(
            g, lib.softmax(y, 1), 1, lib.float64
        ),
        ((2, 3), (2, 3)),
        # A forward formula of gradgen's own (PyTorch has none): nested jvp needs it.
    ),
    "log_softmax.int": Line(
        lambda lib, a: lib.log_softmax(a, 1) * a.log_softmax(0), ((2, 3),)
    ),
    "_log_softmax": Line(lambda lib, a: lib._log_softmax(a, 0, False) * a, ((2, 3),)),
    "_log_softmax_backward_data": Line(
        lambda lib, g, y: lib._log_softmax_backward_data(
            g, lib.log_softmax(y, 0), 0, lib.float64
        ),
        ((2, 3), (2, 3)),
        # A forward formula of gradgen's own (PyTorch has none): nested jvp needs it.
    ),
    "leaky_relu": Line(
        lambda lib, a: _f("leaky_relu")(lib)(a) * _f("leaky_relu")(lib)(a, -0.5),
        ((6,),),
    ),
    "leaky_relu_backward": Line(
        lambda lib, g, a: _f("leaky_relu_backward")(lib)(g, a * a - 1, 0.2, False),
        ((6,), (6,)),
    ),
    "leaky_relu_": Line(
        lambda lib, a: _f("leaky_relu_")(lib)(a * 1.0, 0.3) * a, ((6,),)
    ),
    "elu": Line(
        lambda lib, a: _f("elu")(lib)(a) * _f("elu")(lib)(a, 2.0, 1.5, 0.5),
        ((6,),),
    ),
    "elu_backward": Line(
        lambda lib, g, a: _f("elu_backward")(lib)(g, 1.5, 2.0, 0.5, False, a)
        * _f("elu_backward")(lib)(g, 1.5, 2.0, 0.5, True, a * 0.1 - 0.5),
        ((6,), (6,)),
    ),
    "elu_": Line(lambda lib, a: _f("elu_")(lib)(a * 1.0, 0.7) * a, ((6,),)),
    "softplus": Line(
        lambda lib, a: _f("softplus")(lib)(a) * _f("softplus")(lib)(a, 2.0, 1.0),
        ((6,),),
    ),
    "softplus_backward": Line(
        lambda lib, g, a: _f("softplus_backward")(lib)(g, a, 2.0, 1.0), ((6,), (6,))
    ),
    "log_sigmoid": Line(lambda lib, a: _f("log_sigmoid")(lib)(a * 3.0), ((6,),)),
    "log_sigmoid_forward": Line(
        lambda lib, a: _f("log_sigmoid_forward")(lib)(a * 3.0)[0], ((6,),)
    ),
    "log_sigmoid_backward": Line(
        lambda lib, g, a: _f("log_sigmoid_backward")(lib)(
            g, a, _f("log_sigmoid_forward")(lib)(a)[1]
        ),
        ((6,), (6,)),
    ),
    "hardtanh": Line(
        lambda lib, a: _f("hardtanh")(lib)(a) * _f("hardtanh")(lib)(a, -0.5, 1.25),
        ((6,),),
    ),
    "hardtanh_backward": Line(
        lambda lib, g, a: _f("hardtanh_backward")(lib)(g * g, a, -0.5, 1.25),
        ((6,), (6,)),
    ),
    "hardtanh_": Line(
        lambda lib, a: _f("hardtanh_")(lib)(a * 1.0, -0.5, 1.25) * a, ((6,),)
    ),
    "mish": Line(lambda lib, a: _f("mish")(lib)(a * 2.0) * a, ((6,),)),
    # PyTorch's mish_backward has no derivative (grad_fn NotImplemented, as here):
    # the line checks its values on constants; the gradient flows through `* a`.
    "mish_backward": Line(
        lambda lib, a: _f("mish_backward")(lib)(
            lib.tensor(_GRID + 1.0), lib.tensor(_GRID * 2.0)
        )
        * a,
        ((5,),),
    ),
    "mish_": Line(lambda lib, a: _f("mish_")(lib)(a * 1.0) * a, ((6,),)),
    # Deterministic cases only (the mask is random): p == 0, train=False, p == 1.
    "dropout": Line(
        lambda lib, a: _f("dropout")(lib)(a, 0.0, True)
        * _f("dropout")(lib)(a * 2.0, 0.3, False)
        + _f("dropout")(lib)(a, 1.0, True),
        ((5,),),
    ),
}


def _rrelu(lib: Any, a: Any, training: bool) -> Any:
    """rrelu_with_noise with a fixed noise: in training the kernel draws the slopes into
    it (random: only the relation out = a * noise is checked, through the backward);
    otherwise leaky_relu with the mean slope. The noise is made from `a` (batched
    under vmap as `a` is, as each example's own noise)."""
    noise = a.detach() * 0.0 + 1.0
    out = _f("rrelu_with_noise")(lib)(a, noise, 0.1, 0.3, training)
    if training:
        return out - a * noise  # zero, with the gradient of the backward's noise
    return out


LINES.update(
    {
        "celu": Line(
            lambda lib, a: _f("celu")(lib)(a) * _f("celu")(lib)(a, 0.5), ((6,),)
        ),
        "glu": Line(
            lambda lib, a: lib.cat(
                [_f("glu")(lib)(a, 1).flatten(), _f("glu")(lib)(a, 0).flatten()]
            ),
            ((4, 6),),
        ),
        "glu_backward": Line(
            lambda lib, g, a: _aten(lib, "glu_backward")(g, a, -1), ((2, 3), (2, 6))
        ),
        "hardshrink": Line(
            lambda lib, a: _f("hardshrink")(lib)(a) * a.hardshrink(0.7), ((6,),)
        ),
        "hardshrink_backward": Line(
            lambda lib, g, a: _aten(lib, "hardshrink_backward")(g * g, a, 0.7),
            ((6,), (6,)),
        ),
        "softshrink": Line(
            lambda lib, a: _f("softshrink")(lib)(a) * _f("softshrink")(lib)(a, 0.7),
            ((6,),),
        ),
        "softshrink_backward": Line(
            lambda lib, g, a: _aten(lib, "softshrink_backward")(g * g, a, 0.7),
            ((6,), (6,)),
        ),
        "hardsigmoid": Line(
            lambda lib, a: _f("hardsigmoid")(lib)(a * 2.0) * a, ((6,),)
        ),
        # PyTorch's hardsigmoid_backward has no derivative: its values on constants,
        # times `a` (the gradient flows through `* a`).
        "hardsigmoid_backward": Line(
            lambda lib, a: _aten(lib, "hardsigmoid_backward")(
                lib.tensor(_GRID + 1.0), lib.tensor(_GRID * 2.0)
            )
            * a,
            ((5,),),
        ),
        "hardswish": Line(lambda lib, a: _f("hardswish")(lib)(a * 2.0) * a, ((6,),)),
        "hardswish_backward": Line(
            lambda lib, g, a: _aten(lib, "hardswish_backward")(g, a * 2.0),
            ((6,), (6,)),
        ),
        "threshold": Line(
            lambda lib, a: _f("threshold")(lib)(a, 0.25, -1.5) * a, ((6,),)
        ),
        "rrelu_with_noise": Line(
            lambda lib, a: _rrelu(lib, a, False) + _rrelu(lib, a, True), ((6,),)
        ),
        "rrelu_with_noise_backward": Line(
            lambda lib, g, a: _aten(lib, "rrelu_with_noise_backward")(
                g, a, lib.ones(6, dtype=lib.float64) * 0.5, 0.1, 0.3, False, False
            )
            + _aten(lib, "rrelu_with_noise_backward")(
                g, a, _f64(lib, [0.5, 1.0, 0.2, 1.0, 0.3, 1.0]), 0.1, 0.3, True, False
            ),
            ((6,), (6,)),
        ),
        "prelu": Line(
            lambda lib, a, w: lib.prelu(a, w) * a.prelu(w[:1]), ((2, 3, 2), (3,))
        ),
        "_prelu_kernel": Line(
            lambda lib, a, w: lib._prelu_kernel(a, w), ((2, 3, 2), (3, 1))
        ),
        "_prelu_kernel_backward": Line(
            lambda lib, g, a, w: lib.cat(
                [x.flatten() for x in _aten(lib, "_prelu_kernel_backward")(g, a, w)]
            ),
            ((2, 3), (2, 3), (3,)),
        ),
    }
)


def _native_dropout(lib: Any, a: Any) -> Any:
    """The deterministic cases (the mask is random): p == 0 and p == 1 in training,
    p == 0.3 not training; the masks joined as numbers."""
    total = 0
    for p, train in ((0.0, True), (1.0, True), (0.3, False)):
        out, mask = _f("native_dropout")(lib)(a, p, train)
        total = total + out * (mask.to(lib.float64) + 1.0)
    return total


LINES.update(
    {
        "native_dropout": Line(_native_dropout, ((5,),)),
        "native_dropout_backward": Line(
            lambda lib, g: _aten(lib, "native_dropout_backward")(
                g, lib.tensor([True, False, True, True, False]), 2.5
            ),
            ((5,),),
            forward=False,  # PyTorch has no forward formula either
        ),
    }
)

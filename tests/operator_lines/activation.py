"""Operator-table lines of the activation family of native_functions.yaml."""

from __future__ import annotations

from .common import Line, _GRID, _aten, _f, _nn

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

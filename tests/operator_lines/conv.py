"""Operator-table lines of the conv family of native_functions.yaml."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .common import Line, _convolution_backward, _f


def _slow_conv2d_backward(lib: Any, g: Any, a: Any, w: Any) -> Any:
    """All three gradients of _slow_conv2d_forward, joined."""
    grad_input, grad_weight, grad_bias = _f("_slow_conv2d_backward")(lib)(
        g, a, w, [2, 2], [1, 2], [1, 0], [True, True, True]
    )
    return lib.cat(
        [grad_input.flatten(), (grad_weight * grad_weight).flatten(), grad_bias * 3.0]
    )


def _depthwise(name: str, nd: int) -> Callable[..., Any]:
    """gradgen's depthwise kernels (CUDA-only in PyTorch) against torch's grouped
    convolution."""

    def run(lib: Any, a: Any, w: Any, b: Any) -> Any:
        stride, padding, dilation = [2] + [1] * (nd - 1), [1] + [0] * (nd - 1), [1] * nd
        if lib.__name__ == "torch":
            conv = lib.conv2d if nd == 2 else lib.conv3d
            return conv(a, w, b, stride, padding, dilation, a.shape[1])
        kernel = list(w.shape[2:])
        return getattr(lib, name)(a, w, kernel, b, stride, padding, dilation)

    return run


def _overrideable_backward(lib: Any, g: Any, a: Any, w: Any) -> Any:
    """All three gradients of convolution_backward_overrideable (torch's CPU has none:
    convolution_backward there), joined."""
    arguments = ([2, 1], [0, 1], [1, 2], True, [1, 0], 2, [True, True, True])
    if lib.__name__ == "torch":
        grads = lib.ops.aten.convolution_backward(g, a, w, [4], *arguments)
    else:
        grads = lib.convolution_backward_overrideable(g, a, w, *arguments)
    grad_input, grad_weight, grad_bias = grads
    return lib.cat(
        [grad_input.flatten(), (grad_weight * grad_weight).flatten(), grad_bias * 3.0]
    )


def _other_backend(name: str) -> Callable[..., Any]:
    """convolution_overrideable and _nnpack_spatial_convolution (which torch's CPU
    refuses in float64) against torch's convolution."""

    def run(lib: Any, a: Any, w: Any, b: Any) -> Any:
        if name == "_nnpack_spatial_convolution":
            arguments: tuple[Any, ...] = ([1, 0], [2, 1])
            if lib.__name__ == "torch":
                return lib.conv2d(a, w, b, [2, 1], [1, 0])
        else:
            arguments = ([1, 2], [1, 0], [2, 1], False, [0, 0], 1)
            if lib.__name__ == "torch":
                return lib.convolution(a, w, b, *arguments)
        return getattr(lib, name)(a, w, b, *arguments)

    return run


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
    "conv_tbc": Line(
        lambda lib, a, w, b: _f("conv_tbc")(lib)(a, w, b, 1),
        ((5, 2, 3), (3, 3, 4), (4,)),
        forward=False,  # PyTorch has no forward formula either
    ),
    "slow_conv_transpose2d": Line(
        lambda lib, a, w, b: _f("slow_conv_transpose2d")(lib)(
            a, w, [2, 3], b, [2, 1], [1, 0], [1, 0], [1, 2]
        ),
        ((1, 2, 3, 3), (2, 3, 2, 3), (3,)),
        forward=False,
    ),
    "slow_conv_transpose3d": Line(
        lambda lib, a, w: _f("slow_conv_transpose3d")(lib)(a, w, [2, 2, 2]),
        ((1, 2, 2, 3, 2), (2, 1, 2, 2, 2)),
        forward=False,
    ),
    "_slow_conv2d_forward": Line(
        lambda lib, a, w, b: _f("_slow_conv2d_forward")(lib)(
            a, w, [2, 2], b, [1, 2], [1, 0]
        ),
        ((1, 2, 4, 5), (3, 2, 2, 2), (3,)),
        forward=False,
    ),
    "_slow_conv2d_backward.output_mask": Line(
        _slow_conv2d_backward,
        ((1, 3, 5, 2), (1, 2, 4, 4), (3, 2, 2, 2)),
        forward=False,
    ),
    "_conv_depthwise2d": Line(
        _depthwise("_conv_depthwise2d", 2),
        ((1, 2, 5, 4), (4, 1, 2, 2), (4,)),
        forward=False,
    ),
    "conv_depthwise3d": Line(
        _depthwise("conv_depthwise3d", 3),
        ((1, 2, 4, 3, 3), (2, 1, 2, 2, 2), (2,)),
        forward=False,
    ),
    "slow_conv3d_forward": Line(
        lambda lib, a, w, b: _f("slow_conv3d_forward")(lib)(
            a, w, [2, 2, 2], b, [1, 1, 2], [1, 0, 0]
        ),
        ((1, 2, 3, 3, 4), (2, 2, 2, 2, 2), (2,)),
        forward=False,
    ),
    "slow_conv_dilated2d": Line(
        lambda lib, a, w, b: _f("slow_conv_dilated2d")(lib)(
            a, w, [2, 2], b, [1, 1], [1, 0], [2, 1]
        ),
        ((1, 2, 5, 5), (3, 2, 2, 2), (3,)),
        forward=False,
    ),
    "slow_conv_dilated3d": Line(
        lambda lib, a, w: _f("slow_conv_dilated3d")(lib)(
            a, w, [2, 2, 2], None, [1, 1, 1], [0, 0, 0], [2, 1, 1]
        ),
        ((1, 1, 4, 3, 3), (2, 1, 2, 2, 2)),
        forward=False,
    ),
    "_convolution": Line(
        lambda lib, a, w, b: _f("_convolution")(lib)(
            a, w, b, [2, 1], [1, 0], [1, 2], False, [0, 0], 2, False, False, True, True
        ),
        ((1, 4, 5, 5), (4, 2, 3, 2), (4,)),
    ),
    "convolution_overrideable": Line(
        _other_backend("convolution_overrideable"),
        ((1, 2, 5, 5), (3, 2, 2, 3), (3,)),
        forward=False,  # PyTorch has no forward formula either
    ),
    "convolution_backward_overrideable": Line(
        _overrideable_backward,
        ((1, 2, 7, 3), (1, 4, 3, 3), (4, 1, 2, 2)),
        forward=False,
    ),
    "_nnpack_spatial_convolution": Line(
        _other_backend("_nnpack_spatial_convolution"),
        ((1, 2, 5, 4), (3, 2, 2, 2), (3,)),
        forward=False,
    ),
}

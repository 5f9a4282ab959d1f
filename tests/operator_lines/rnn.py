"""Operator-table lines of the rnn family of native_functions.yaml.

The fused cells (`_thnn_fused_*`) are CUDA-only in PyTorch, so their lines are not
compared with torch here: the cells and layers over them (`lstm_cell`, `lstm.input`,
...) and the differentiable backward composites are, and tests/nn/test_rnn.py checks
the fused backward kernels against those composites."""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import Line, _aten, _f64


def _joined(lib: Any, *tensors: Any) -> Any:
    return lib.cat([t.reshape(-1) for t in tensors])


def _fixed(lib: Any, seed: int, *shape: int) -> Any:
    return _f64(lib, np.random.default_rng(seed).uniform(-1.5, 1.5, shape))


def _lstm_backward_kernel(lib: Any, a: Any) -> Any:
    """_thnn_fused_lstm_cell_backward_impl has no derivative (nor has PyTorch's):
    its values for a fixed cell, times `a`."""
    ig, hg, cx = _fixed(lib, 1, 2, 12), _fixed(lib, 2, 2, 12), _fixed(lib, 3, 2, 3)
    _, cy, workspace = lib._thnn_fused_lstm_cell(ig, hg, cx)
    grads = lib._thnn_fused_lstm_cell_backward_impl(
        _fixed(lib, 4, 2, 3), _fixed(lib, 5, 2, 3), cx, cy, workspace, True
    )
    return a * _joined(lib, *grads).sum()


def _lstm_backward(lib: Any, a: Any) -> Any:
    ig, hg, cx = _fixed(lib, 1, 2, 12), _fixed(lib, 2, 2, 12), _fixed(lib, 3, 2, 3)
    _, cy, workspace = lib._thnn_fused_lstm_cell(ig, hg, cx)
    grads = lib._thnn_fused_lstm_cell_backward(
        _fixed(lib, 4, 2, 3), None, cx, cy, workspace, False
    )
    return a * _joined(lib, *grads).sum()


def _gru_backward(lib: Any, a: Any) -> Any:
    ig, hg, hx = _fixed(lib, 1, 2, 9), _fixed(lib, 2, 2, 9), _fixed(lib, 3, 2, 3)
    _, workspace = lib._thnn_fused_gru_cell(ig, hg, hx, _fixed(lib, 4, 9))
    grads = lib._thnn_fused_gru_cell_backward(_fixed(lib, 5, 2, 3), workspace, True)
    return a * _joined(lib, *grads).sum()


def _layer(lib: Any, name: str, x: Any, states: list[Any], params: list[Any]) -> Any:
    """A bidirectional, batch-first layer of `name` (1 layer, biases)."""
    hx = states if name == "lstm" else states[0]
    outputs = getattr(lib, name)(x, hx, params, True, 1, 0.0, True, True, True)
    return _joined(lib, *outputs)


def _packed_layer(
    lib: Any, name: str, data: Any, states: list[Any], params: list[Any]
) -> Any:
    """Two layers without biases over a packed batch of lengths (3, 2)."""
    hx = states if name == "lstm" else states[0]
    sizes = lib.tensor([2, 2, 1])
    outputs = getattr(lib, name)(data, sizes, hx, params, False, 2, 0.0, True, False)
    return _joined(lib, *outputs)


def _layer_shapes(gates: int, states: int) -> tuple[tuple[int, ...], ...]:
    """(x, the states, w_ih, w_hh, b_ih, b_hh per direction): input 2, hidden 2."""
    direction = ((gates * 2, 2), (gates * 2, 2), (gates * 2,), (gates * 2,))
    return ((2, 3, 2),) + ((2, 2, 2),) * states + direction * 2


def _packed_shapes(gates: int, states: int) -> tuple[tuple[int, ...], ...]:
    """(data, the states, w_ih, w_hh for two layers): input 2, hidden 2."""
    return ((5, 2),) + ((2, 2, 2),) * states + ((gates * 2, 2),) * 4


def _lines() -> dict[str, Line]:
    lines = {
        "_thnn_fused_lstm_cell": Line(
            lambda lib, ig, hg, cx, ib, hb: _joined(
                lib, *lib._thnn_fused_lstm_cell(ig, hg, cx, ib, hb)[:2]
            ),
            ((2, 12), (2, 12), (2, 3), (12,), (12,)),
            compare=False,
        ),
        "_thnn_fused_lstm_cell_backward_impl": Line(
            _lstm_backward_kernel, ((2,),), compare=False
        ),
        "_thnn_fused_lstm_cell_backward": Line(_lstm_backward, ((2,),), compare=False),
        "_thnn_differentiable_lstm_cell_backward": Line(
            lambda lib, ghy, gcy, ig, hg, ib, hb, cx, cy: _joined(
                lib,
                *_aten(lib, "_thnn_differentiable_lstm_cell_backward")(
                    ghy, gcy, ig, hg, ib, hb, cx, cy
                ),
            ),
            ((2, 3), (2, 3), (2, 12), (2, 12), (12,), (12,), (2, 3), (2, 3)),
        ),
        "_thnn_fused_gru_cell": Line(
            lambda lib, ig, hg, hx, ib, hb: lib._thnn_fused_gru_cell(
                ig, hg, hx, ib, hb
            )[0],
            ((2, 9), (2, 9), (2, 3), (9,), (9,)),
            compare=False,
        ),
        "_thnn_fused_gru_cell_backward": Line(_gru_backward, ((2,),), compare=False),
        "_thnn_differentiable_gru_cell_backward": Line(
            lambda lib, ghy, ig, hg, hx, ib, hb: _joined(
                lib,
                *_aten(lib, "_thnn_differentiable_gru_cell_backward")(
                    ghy, ig, hg, hx, ib, hb
                ),
            ),
            ((2, 3), (2, 9), (2, 9), (2, 3), (9,), (9,)),
        ),
        "lstm_cell": Line(
            lambda lib, x, h, c, wi, wh, bi, bh: _joined(
                lib, *lib.lstm_cell(x, [h, c], wi, wh, bi, bh)
            ),
            ((2, 2), (2, 3), (2, 3), (12, 2), (12, 3), (12,), (12,)),
        ),
        "gru_cell": Line(
            lambda lib, x, h, wi, wh, bi, bh: lib.gru_cell(x, h, wi, wh, bi, bh),
            ((2, 2), (2, 3), (9, 2), (9, 3), (9,), (9,)),
        ),
        "rnn_tanh_cell": Line(
            lambda lib, x, h, wi, wh, bi: lib.rnn_tanh_cell(x, h, wi, wh, bi),
            ((2, 2), (2, 3), (3, 2), (3, 3), (3,)),
        ),
        "rnn_relu_cell": Line(
            lambda lib, x, h, wi, wh: lib.rnn_relu_cell(x, h, wi, wh),
            ((2, 2), (2, 3), (3, 2), (3, 3)),
        ),
    }
    for name, gates, states in (
        ("lstm", 4, 2),
        ("gru", 3, 1),
        ("rnn_tanh", 1, 1),
        ("rnn_relu", 1, 1),
    ):
        lines[f"{name}.input"] = Line(
            lambda lib, x, *rest, name=name, states=states: _layer(
                lib, name, x, list(rest[:states]), list(rest[states:])
            ),
            _layer_shapes(gates, states),
        )
        lines[f"{name}.data"] = Line(
            lambda lib, data, *rest, name=name, states=states: _packed_layer(
                lib, name, data, list(rest[:states]), list(rest[states:])
            ),
            _packed_shapes(gates, states),
        )
    return lines


LINES: dict[str, Line] = _lines()

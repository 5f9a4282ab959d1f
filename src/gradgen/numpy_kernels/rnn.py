"""Kernels of the rnn family: PyTorch's fused LSTM and GRU cells
(`_thnn_fused_lstm_cell`, `_thnn_fused_gru_cell`) and their backward kernels.

A cell step takes the two gate pre-activations, `input_gates = x @ w_ih.T` and
`hidden_gates = h @ w_hh.T`, and the optional biases; everything after the two matrix
products happens here in a few whole-array numpy calls, and the activated gates are
kept in a `workspace` that the backward kernel reads instead of recomputing them. The
gate order is PyTorch's: (input, forget, cell, output) for LSTM, (reset, update, new)
for GRU. A sigmoid is computed as 0.5 + 0.5 * tanh(x / 2): one tanh over all the
gates, no overflow for large |x|.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "fused_lstm_cell",
    "fused_lstm_cell_backward_impl",
    "fused_gru_cell",
    "fused_gru_cell_backward",
]


def _check_gates(
    name: str,
    input_gates: np.ndarray,
    hidden_gates: np.ndarray,
    state: np.ndarray,
    gates: int,
) -> int:
    """The hidden size, after PyTorch's size checks of a fused cell's arguments."""
    if input_gates.ndim != 2:
        raise RuntimeError(
            f"{name}: input_gates must be 2-dimensional, got {input_gates.ndim} "
            "dimensions"
        )
    if hidden_gates.shape != input_gates.shape:
        raise RuntimeError(
            f"{name}: input_gates of size {list(input_gates.shape)} and hidden_gates "
            f"of size {list(hidden_gates.shape)} must have the same size"
        )
    batch, width = input_gates.shape
    hidden = width // gates
    if width % gates != 0 or state.shape != (batch, hidden):
        raise RuntimeError(
            f"{name}: expected a state of size {[batch, hidden]} for gates of size "
            f"{[batch, width]} ({gates} gates), got {list(state.shape)}"
        )
    return hidden


def _gate_sum(
    input_gates: np.ndarray,
    hidden_gates: np.ndarray,
    input_bias: np.ndarray | None,
    hidden_bias: np.ndarray | None,
) -> np.ndarray:
    """input_gates + hidden_gates (+ the biases), a new array."""
    gates = input_gates + hidden_gates
    if input_bias is not None:
        gates += input_bias
    if hidden_bias is not None:
        gates += hidden_bias
    return gates


def _sigmoid_in_place(values: np.ndarray) -> None:
    """sigmoid(values) into values, as 0.5 + 0.5 * tanh(values / 2)."""
    values *= 0.5
    np.tanh(values, out=values)
    values *= 0.5
    values += 0.5


def _lstm_activation_scales(hidden: int, dtype: np.dtype) -> tuple[np.ndarray, ...]:
    """Per-column (scale, offset) so that offset + scale * tanh(scale * x) is the
    sigmoid on the i, f, o quarters (0.5, 0.5) and tanh on the g quarter (1, 0)."""
    key = (hidden, dtype.str)
    if key not in _LSTM_SCALES:
        scale = np.full(4 * hidden, 0.5, dtype)
        scale[2 * hidden : 3 * hidden] = 1.0
        offset = np.where(scale == 0.5, 0.5, 0.0).astype(dtype)
        _LSTM_SCALES[key] = (scale, offset)
    return _LSTM_SCALES[key]


_LSTM_SCALES: dict[tuple[int, str], tuple[np.ndarray, ...]] = {}


def fused_lstm_cell(
    input_gates: np.ndarray,
    hidden_gates: np.ndarray,
    cx: np.ndarray,
    input_bias: np.ndarray | None,
    hidden_bias: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hy, cy, workspace): cy = f * cx + i * g, hy = o * tanh(cy), with i, f, o the
    sigmoids and g the tanh of the four quarters of the summed gates; the workspace
    holds (i, f, g, o). All four activations are one tanh over the whole array."""
    hidden = _check_gates(
        "_thnn_fused_lstm_cell", input_gates, hidden_gates, cx, gates=4
    )
    workspace = _gate_sum(input_gates, hidden_gates, input_bias, hidden_bias)
    scale, offset = _lstm_activation_scales(hidden, workspace.dtype)
    workspace *= scale
    np.tanh(workspace, out=workspace)
    workspace *= scale
    workspace += offset
    i, f, g, o = np.split(workspace, 4, axis=1)
    cy = f * cx
    cy += i * g
    hy = np.tanh(cy)
    hy *= o
    return hy, cy, workspace


def fused_lstm_cell_backward_impl(
    grad_hy: np.ndarray | None,
    grad_cy: np.ndarray | None,
    cx: np.ndarray,
    cy: np.ndarray,
    workspace: np.ndarray,
    has_bias: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(grad_gates, grad_cx, grad_bias) of `fused_lstm_cell` from the gradients of hy
    and cy (either may be None); grad_bias sums grad_gates over the batch, zeros
    without a bias (PyTorch's is undefined).

    Each gate's gradient is (what multiplies it) * (the gradient it scales) * (its
    activation's derivative): g, cx, i times grad_c for i, f, g; tanh(cy) times
    grad_hy for o; s * (1 - s) for a sigmoid s, (1 - t) * (1 + t) for the tanh t."""
    i, f, g, o = np.split(workspace, 4, axis=1)
    batch, hidden = i.shape
    tanh_cy = np.tanh(cy)
    grad_c = np.zeros_like(cx) if grad_cy is None else np.array(grad_cy, copy=True)
    if grad_hy is not None:
        grad_c += grad_hy * o * (1 - tanh_cy * tanh_cy)
    grad_gates = np.concatenate((g, cx, i, tanh_cy), axis=1)
    grad_gates.reshape(batch, 4, hidden)[:, :3] *= grad_c[:, None]
    if grad_hy is None:
        grad_gates[:, 3 * hidden :] = 0
    else:
        grad_gates[:, 3 * hidden :] *= grad_hy
    _, offset = _lstm_activation_scales(hidden, workspace.dtype)
    grad_gates *= 1 - workspace
    grad_gates *= workspace + (1 - 2 * offset)  # + 0 for a sigmoid, + 1 for the tanh
    grad_cx = grad_c * f
    if has_bias:
        grad_bias = grad_gates.sum(axis=0)
    else:
        grad_bias = np.zeros(workspace.shape[1], workspace.dtype)
    return grad_gates, grad_cx, grad_bias


def fused_gru_cell(
    input_gates: np.ndarray,
    hidden_gates: np.ndarray,
    hx: np.ndarray,
    input_bias: np.ndarray | None,
    hidden_bias: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(hy, workspace): r, z the sigmoids of the first two thirds of the summed gates,
    n = tanh(i_n + r * h_n) with h_n the hidden third (and its bias), hy = (1 - z) * n
    + z * hx; the workspace holds (r, z, n, hx, h_n)."""
    hidden = _check_gates("_thnn_fused_gru_cell", input_gates, hidden_gates, hx, 3)
    dtype = np.result_type(input_gates, hidden_gates, hx)
    batch = hx.shape[0]
    workspace = np.empty((batch, 5 * hidden), dtype)
    r_z = workspace[:, : 2 * hidden]
    np.add(input_gates[:, : 2 * hidden], hidden_gates[:, : 2 * hidden], out=r_z)
    hidden_new = workspace[:, 4 * hidden :]
    hidden_new[...] = hidden_gates[:, 2 * hidden :]
    new = workspace[:, 2 * hidden : 3 * hidden]
    new[...] = input_gates[:, 2 * hidden :]
    if input_bias is not None:
        r_z += input_bias[: 2 * hidden]
        new += input_bias[2 * hidden :]
    if hidden_bias is not None:
        r_z += hidden_bias[: 2 * hidden]
        hidden_new += hidden_bias[2 * hidden :]
    _sigmoid_in_place(r_z)
    r, z = workspace[:, :hidden], workspace[:, hidden : 2 * hidden]
    new += r * hidden_new
    np.tanh(new, out=new)
    workspace[:, 3 * hidden : 4 * hidden] = hx
    hy = hx - new
    hy *= z
    hy += new
    return hy, workspace


def fused_gru_cell_backward(
    grad_hy: np.ndarray, workspace: np.ndarray, has_bias: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias,
    grad_hidden_bias) of `fused_gru_cell`; the bias gradients are zeros without a
    bias (PyTorch's are undefined)."""
    r, z, n, hx, hidden_new = np.split(workspace, 5, axis=1)
    hidden = r.shape[1]
    grad_input_gates = np.empty((workspace.shape[0], 3 * hidden), workspace.dtype)
    grad_new = grad_hy * (1 - z) * (1 - n * n)
    grad_input_gates[:, :hidden] = grad_new * hidden_new * r * (1 - r)
    grad_input_gates[:, hidden : 2 * hidden] = grad_hy * (hx - n) * z * (1 - z)
    grad_input_gates[:, 2 * hidden :] = grad_new
    grad_hidden_gates = grad_input_gates.copy()
    grad_hidden_gates[:, 2 * hidden :] *= r
    grad_hx = grad_hy * z
    if has_bias:
        grad_input_bias = grad_input_gates.sum(axis=0)
        grad_hidden_bias = grad_hidden_gates.sum(axis=0)
    else:
        grad_input_bias = np.zeros(3 * hidden, workspace.dtype)
        grad_hidden_bias = np.zeros(3 * hidden, workspace.dtype)
    return (
        grad_input_gates,
        grad_hidden_gates,
        grad_hx,
        grad_input_bias,
        grad_hidden_bias,
    )

"""Formula helpers of the rnn family: the forward-mode formulas of the fused LSTM and
GRU cells (PyTorch has none: its fused cells run on CUDA only, and its CPU cells are
composites that forward mode goes through; here the fused cells run on CPU, so they
carry their own).

Each tangent is the chain rule through the activated gates the cell saved in its
workspace, written with operators (so differentiable again)."""

from __future__ import annotations

from ..generated.ops import tanh
from ..tensor import Tensor

__all__ = ["fused_lstm_cell_jvp", "fused_gru_cell_jvp"]


def _sum_tangents(*tangents: Tensor | None) -> Tensor:
    """The sum of the tangents that exist (a missing bias has none)."""
    present = [t for t in tangents if t is not None]
    total = present[0]
    for tangent in present[1:]:
        total = total + tangent
    return total


def fused_lstm_cell_jvp(
    input_gates_t: Tensor,
    hidden_gates_t: Tensor,
    input_bias_t: Tensor | None,
    hidden_bias_t: Tensor | None,
    cx_p: Tensor,
    cx_t: Tensor,
    cy: Tensor,
    workspace: Tensor,
) -> tuple[Tensor, Tensor]:
    """(tangent of hy, tangent of cy) of `_thnn_fused_lstm_cell`."""
    i, f, g, o = workspace.chunk(4, 1)
    gates_t = _sum_tangents(input_gates_t, hidden_gates_t, input_bias_t, hidden_bias_t)
    i_t, f_t, g_t, o_t = gates_t.chunk(4, 1)
    cy_t = (
        f * (1 - f) * f_t * cx_p
        + f * cx_t
        + i * (1 - i) * i_t * g
        + i * (1 - g * g) * g_t
    )
    tanh_cy = tanh(cy)
    hy_t = o * (1 - o) * o_t * tanh_cy + o * (1 - tanh_cy * tanh_cy) * cy_t
    return hy_t, cy_t


def fused_gru_cell_jvp(
    input_gates_t: Tensor,
    hidden_gates_t: Tensor,
    input_bias_t: Tensor | None,
    hidden_bias_t: Tensor | None,
    hx_t: Tensor,
    workspace: Tensor,
) -> Tensor:
    """The tangent of hy of `_thnn_fused_gru_cell`."""
    r, z, n, hx, hidden_n = workspace.chunk(5, 1)
    input_t = _sum_tangents(input_gates_t, input_bias_t)
    hidden_t = _sum_tangents(hidden_gates_t, hidden_bias_t)
    input_r_t, input_z_t, input_n_t = input_t.chunk(3, 1)
    hidden_r_t, hidden_z_t, hidden_n_t = hidden_t.chunk(3, 1)
    r_t = r * (1 - r) * (input_r_t + hidden_r_t)
    z_t = z * (1 - z) * (input_z_t + hidden_z_t)
    n_t = (1 - n * n) * (input_n_t + r_t * hidden_n + r * hidden_n_t)
    return n_t * (1 - z) + z_t * (hx - n) + z * hx_t

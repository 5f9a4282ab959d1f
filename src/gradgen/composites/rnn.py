"""Composites of the rnn family: the cells (lstm_cell, gru_cell, rnn_tanh_cell,
rnn_relu_cell), the multi-layer recurrences (lstm, gru, rnn_tanh, rnn_relu, each over
a padded `.input` or a packed `.data` sequence) and the differentiable backward of the
fused cells, as PyTorch's CompositeImplicitAutograd functions.

The recurrences follow PyTorch's CPU layout: per layer and direction, the input
projection of the whole sequence is one matrix product (`linear`, with b_ih), then
each time step adds `h @ w_hh.T` and runs one fused cell (`_thnn_fused_lstm_cell`,
`_thnn_fused_gru_cell`, whose backward is one numpy kernel) or, for the plain RNN,
tanh / relu of the sum. `params` holds, per layer and direction, (w_ih, w_hh[, b_ih,
b_hh][, w_hr]); a packed sequence's `batch_sizes` lets sequences end early, their last
hidden state taken at that step, as PyTorch's packed layers do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..factories import zeros_like
from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)

__all__ = [
    "lstm_cell",
    "gru_cell",
    "rnn_tanh_cell",
    "rnn_relu_cell",
    "thnn_fused_lstm_cell_backward",
    "thnn_differentiable_lstm_cell_backward",
    "thnn_differentiable_gru_cell_backward",
    "lstm_input",
    "lstm_data",
    "gru_input",
    "gru_data",
    "rnn_tanh_input",
    "rnn_tanh_data",
    "rnn_relu_input",
    "rnn_relu_data",
]

# -- the cells ------------------------------------------------------------------------


def _check_cell(
    input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor
) -> None:
    """PyTorch's check_rnn_cell_forward_input / _hidden, in its words."""
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(
            f"input has inconsistent input_size: got {input.shape[1]} expected "
            f"{w_ih.shape[1]}"
        )
    for index, hidden in enumerate(hx):
        if input.shape[0] != hidden.shape[0]:
            raise RuntimeError(
                f"Input batch size {input.shape[0]} doesn't match hidden{index} batch "
                f"size {hidden.shape[0]}"
            )
        if hidden.shape[1] != w_hh.shape[1]:
            raise RuntimeError(
                f"hidden{index} has inconsistent hidden_size: got {hidden.shape[1]}, "
                f"expected {w_hh.shape[1]}"
            )


def lstm_cell(
    input: Tensor,
    hx: Sequence[Tensor],
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """(h', c') of one LSTM step, the gates summed and activated by the fused cell."""
    _check_cell(input, hx, w_ih, w_hh)
    hy, cy, _ = ops._thnn_fused_lstm_cell(
        ops.mm(input, w_ih.t()), ops.mm(hx[0], w_hh.t()), hx[1], b_ih, b_hh
    )
    return hy, cy


def gru_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """h' of one GRU step (r and z gates, the new gate's hidden part scaled by r)."""
    _check_cell(input, [hx], w_ih, w_hh)
    hy, _ = ops._thnn_fused_gru_cell(
        ops.mm(input, w_ih.t()), ops.mm(hx, w_hh.t()), hx, b_ih, b_hh
    )
    return hy


def _simple_cell(
    activation: Callable[[Tensor], Tensor],
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None,
    b_hh: Tensor | None,
) -> Tensor:
    _check_cell(input, [hx], w_ih, w_hh)
    return activation(ops.linear(input, w_ih, b_ih) + ops.linear(hx, w_hh, b_hh))


def rnn_tanh_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)."""
    return _simple_cell(ops.tanh, input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """relu(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)."""
    return _simple_cell(ops.relu, input, hx, w_ih, w_hh, b_ih, b_hh)


# -- the fused cells' backward, as operators --------------------------------------------


def thnn_fused_lstm_cell_backward(
    grad_hy: Tensor | None,
    grad_cy: Tensor | None,
    cx: Tensor,
    cy: Tensor,
    workspace: Tensor,
    has_bias: bool,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """The five gradients of `_thnn_fused_lstm_cell` (both gate inputs get the same
    gradient, and so do both biases) from its backward kernel."""
    grad_gates, grad_cx, grad_bias = ops._thnn_fused_lstm_cell_backward_impl(
        grad_hy, grad_cy, cx, cy, workspace, has_bias
    )
    return grad_gates, grad_gates, grad_cx, grad_bias, grad_bias


def thnn_differentiable_lstm_cell_backward(
    grad_hy: Tensor | None,
    grad_cy: Tensor | None,
    input_gates: Tensor,
    hidden_gates: Tensor,
    input_bias: Tensor | None,
    hidden_bias: Tensor | None,
    cx: Tensor,
    cy: Tensor,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """The gradients of `_thnn_fused_lstm_cell` written with operators (the gates
    recomputed), so that they can be differentiated again."""
    gates = input_gates + hidden_gates
    for bias in (input_bias, hidden_bias):
        if bias is not None:
            gates = gates + bias
    pre_i, pre_f, pre_g, pre_o = gates.chunk(4, 1)
    i, f, g, o = pre_i.sigmoid(), pre_f.sigmoid(), pre_g.tanh(), pre_o.sigmoid()
    tanh_cy = cy.tanh()
    if grad_hy is not None:
        grad_o = ops.sigmoid_backward(grad_hy * tanh_cy, o)
        grad_c = ops.tanh_backward(grad_hy * o, tanh_cy)
        if grad_cy is not None:
            grad_c = grad_c + grad_cy
    else:
        grad_o = zeros_like(cx)
        grad_c = grad_cy if grad_cy is not None else zeros_like(cx)
    grad_gates = ops.cat(
        [
            ops.sigmoid_backward(grad_c * g, i),
            ops.sigmoid_backward(grad_c * cx, f),
            ops.tanh_backward(grad_c * i, g),
            grad_o,
        ],
        1,
    )
    grad_bias = grad_gates.sum(0)
    return grad_gates, grad_gates, grad_c * f, grad_bias, grad_bias


def thnn_differentiable_gru_cell_backward(
    grad_hy: Tensor,
    input_gates: Tensor,
    hidden_gates: Tensor,
    hx: Tensor,
    input_bias: Tensor | None,
    hidden_bias: Tensor | None,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """The gradients of `_thnn_fused_gru_cell` written with operators."""
    if input_bias is not None:
        input_gates = input_gates + input_bias
    if hidden_bias is not None:
        hidden_gates = hidden_gates + hidden_bias
    input_r, input_z, input_n = input_gates.chunk(3, 1)
    hidden_r, hidden_z, hidden_n = hidden_gates.chunk(3, 1)
    r = (input_r + hidden_r).sigmoid()
    z = (input_z + hidden_z).sigmoid()
    n = (input_n + r * hidden_n).tanh()
    grad_n = ops.tanh_backward(grad_hy * (1 - z), n)
    grad_r = ops.sigmoid_backward(grad_n * hidden_n, r)
    grad_z = ops.sigmoid_backward(grad_hy * (hx - n), z)
    grad_input_gates = ops.cat([grad_r, grad_z, grad_n], 1)
    grad_hidden_gates = ops.cat([grad_r, grad_z, grad_n * r], 1)
    return (
        grad_input_gates,
        grad_hidden_gates,
        grad_hy * z,
        grad_input_gates.sum(0),
        grad_hidden_gates.sum(0),
    )


# -- the recurrences ----------------------------------------------------------------------

# One step: (gates of the input projection, the state, the layer's weights) -> the new
# state; the state is a list: [h] or, for LSTM, [h, c].
Step = Callable[[Tensor, list[Tensor], "_Weights"], list[Tensor]]


class _Weights:
    """One layer and direction's parameters: w_ih, w_hh.T (transposed once), the
    biases (None without) and the LSTM projection w_hr.T (None without)."""

    def __init__(self, group: Sequence[Tensor], has_biases: bool) -> None:
        self.w_ih = group[0]
        self.w_hh_t = group[1].t()
        self.b_ih = group[2] if has_biases else None
        self.b_hh = group[3] if has_biases else None
        projection = 4 if has_biases else 2
        self.w_hr_t = group[projection].t() if len(group) > projection else None


def _lstm_step(gates: Tensor, state: list[Tensor], weights: _Weights) -> list[Tensor]:
    h, c = state
    hy, cy, _ = ops._thnn_fused_lstm_cell(
        gates, ops.mm(h, weights.w_hh_t), c, None, weights.b_hh
    )
    if weights.w_hr_t is not None:
        hy = ops.mm(hy, weights.w_hr_t)
    return [hy, cy]


def _gru_step(gates: Tensor, state: list[Tensor], weights: _Weights) -> list[Tensor]:
    (h,) = state
    hy, _ = ops._thnn_fused_gru_cell(
        gates, ops.mm(h, weights.w_hh_t), h, None, weights.b_hh
    )
    return [hy]


def _hidden_sum(gates: Tensor, h: Tensor, weights: _Weights) -> Tensor:
    if weights.b_hh is None:
        return gates + ops.mm(h, weights.w_hh_t)
    return gates + ops.addmm(weights.b_hh, h, weights.w_hh_t)


def _tanh_step(gates: Tensor, state: list[Tensor], weights: _Weights) -> list[Tensor]:
    return [ops.tanh(_hidden_sum(gates, state[0], weights))]


def _relu_step(gates: Tensor, state: list[Tensor], weights: _Weights) -> list[Tensor]:
    return [ops.relu(_hidden_sum(gates, state[0], weights))]


def _run_direction(
    step: Step,
    gates: list[Tensor],
    state: list[Tensor],
    weights: _Weights,
    batch_sizes: list[int] | None,
    reverse: bool,
) -> tuple[list[Tensor], list[Tensor]]:
    """(the outputs per time step, in time order; the final state). With batch_sizes
    (non-increasing), the rows past a step's batch size have ended: forward, their
    state is set aside when they end; reverse, they join when they begin."""
    order = range(len(gates) - 1, -1, -1) if reverse else range(len(gates))
    outputs: list[Tensor] = [gates[0]] * len(gates)
    if batch_sizes is None:
        for t in order:
            state = step(gates[t], state, weights)
            outputs[t] = state[0]
        return outputs, state
    full = state
    ended: list[list[Tensor]] = []
    current = batch_sizes[-1] if reverse else batch_sizes[0]
    state = [s[:current] for s in full]
    for t in order:
        size = batch_sizes[t]
        if size < current:  # forward: rows size.. end here
            ended.append([s[size:] for s in state])
            state = [s[:size] for s in state]
        elif size > current:  # reverse: rows current.. begin here
            state = [ops.cat([s, f[current:size]], 0) for s, f in zip(state, full)]
        current = size
        state = step(gates[t], state, weights)
        outputs[t] = state[0]
    if ended:
        pieces = [state] + ended[::-1]
        state = [ops.cat([p[k] for p in pieces], 0) for k in range(len(state))]
    return outputs, state


def _recurrence(
    step: Step,
    input: Tensor,
    batch_sizes: list[int] | None,
    hx: Sequence[Tensor],
    params: Sequence[Tensor],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Tensor, list[Tensor]]:
    """(the last layer's output, the final states stacked per layer and direction).
    `input` is (T, B, *) or, with batch_sizes, packed (sum(batch_sizes), *)."""
    directions = 2 if bidirectional else 1
    per_group = len(params) // (num_layers * directions)
    finals: list[list[Tensor]] = []
    layer_input = input
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            index = layer * directions + direction
            weights = _Weights(
                params[index * per_group : (index + 1) * per_group], has_biases
            )
            projected = ops.linear(layer_input, weights.w_ih, weights.b_ih)
            if batch_sizes is None:
                gates = list(projected.unbind(0))
            else:
                gates = list(projected.split_with_sizes(batch_sizes, 0))
            state = [h[index] for h in hx]
            steps, final = _run_direction(
                step, gates, state, weights, batch_sizes, direction == 1
            )
            outputs.append(ops.stack(steps) if batch_sizes is None else ops.cat(steps))
            finals.append(final)
        layer_input = outputs[0] if directions == 1 else ops.cat(outputs, -1)
        if dropout > 0 and train and layer < num_layers - 1:
            layer_input = ops.dropout(layer_input, dropout, train)
    stacked = [ops.stack([f[k] for f in finals]) for k in range(len(finals[0]))]
    return layer_input, stacked


def _dense(
    step: Step,
    input: Tensor,
    hx: Sequence[Tensor],
    params: Sequence[Tensor],
    flags: tuple[bool, int, float, bool, bool, bool],
) -> tuple[Tensor, list[Tensor]]:
    has_biases, num_layers, dropout, train, bidirectional, batch_first = flags
    if batch_first:
        input = input.transpose(0, 1)
    flags_without_layout = (has_biases, num_layers, dropout, train, bidirectional)
    output, finals = _recurrence(step, input, None, hx, params, *flags_without_layout)
    return (output.transpose(0, 1) if batch_first else output), finals


def _packed(
    step: Step,
    data: Tensor,
    batch_sizes: Tensor,
    hx: Sequence[Tensor],
    params: Sequence[Tensor],
    flags: tuple[bool, int, float, bool, bool],
) -> tuple[Tensor, list[Tensor]]:
    sizes = [int(size) for size in batch_sizes.tolist()]
    return _recurrence(step, data, sizes, hx, params, *flags)


def lstm_input(
    input: Tensor,
    hx: Sequence[Tensor],
    params: Sequence[Tensor],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Tensor, Tensor, Tensor]:
    """(output, h_n, c_n) of a multi-layer LSTM over (T, B, input_size) input."""
    flags = (has_biases, num_layers, dropout, train, bidirectional, batch_first)
    output, (h, c) = _dense(_lstm_step, input, hx, params, flags)
    return output, h, c


def lstm_data(
    data: Tensor,
    batch_sizes: Tensor,
    hx: Sequence[Tensor],
    params: Sequence[Tensor],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Tensor, Tensor, Tensor]:
    """(output data, h_n, c_n) of a multi-layer LSTM over a packed sequence."""
    flags = (has_biases, num_layers, dropout, train, bidirectional)
    output, (h, c) = _packed(_lstm_step, data, batch_sizes, hx, params, flags)
    return output, h, c


def _one_state_input(
    step: Step,
    input: Tensor,
    hx: Tensor,
    params: Sequence[Tensor],
    flags: tuple[bool, int, float, bool, bool, bool],
) -> tuple[Tensor, Tensor]:
    output, (h,) = _dense(step, input, [hx], params, flags)
    return output, h


def _one_state_data(
    step: Step,
    data: Tensor,
    batch_sizes: Tensor,
    hx: Tensor,
    params: Sequence[Tensor],
    flags: tuple[bool, int, float, bool, bool],
) -> tuple[Tensor, Tensor]:
    output, (h,) = _packed(step, data, batch_sizes, [hx], params, flags)
    return output, h


def gru_input(
    input: Tensor,
    hx: Tensor,
    params: Sequence[Tensor],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Tensor, Tensor]:
    """(output, h_n) of a multi-layer GRU."""
    flags = (has_biases, num_layers, dropout, train, bidirectional, batch_first)
    return _one_state_input(_gru_step, input, hx, params, flags)


def gru_data(
    data: Tensor,
    batch_sizes: Tensor,
    hx: Tensor,
    params: Sequence[Tensor],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Tensor, Tensor]:
    """(output data, h_n) of a multi-layer GRU over a packed sequence."""
    flags = (has_biases, num_layers, dropout, train, bidirectional)
    return _one_state_data(_gru_step, data, batch_sizes, hx, params, flags)


def rnn_tanh_input(
    input: Tensor,
    hx: Tensor,
    params: Sequence[Tensor],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Tensor, Tensor]:
    """(output, h_n) of a multi-layer Elman RNN with tanh."""
    flags = (has_biases, num_layers, dropout, train, bidirectional, batch_first)
    return _one_state_input(_tanh_step, input, hx, params, flags)


def rnn_tanh_data(
    data: Tensor,
    batch_sizes: Tensor,
    hx: Tensor,
    params: Sequence[Tensor],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Tensor, Tensor]:
    """(output data, h_n) of a tanh RNN over a packed sequence."""
    flags = (has_biases, num_layers, dropout, train, bidirectional)
    return _one_state_data(_tanh_step, data, batch_sizes, hx, params, flags)


def rnn_relu_input(
    input: Tensor,
    hx: Tensor,
    params: Sequence[Tensor],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Tensor, Tensor]:
    """(output, h_n) of a multi-layer Elman RNN with relu."""
    flags = (has_biases, num_layers, dropout, train, bidirectional, batch_first)
    return _one_state_input(_relu_step, input, hx, params, flags)


def rnn_relu_data(
    data: Tensor,
    batch_sizes: Tensor,
    hx: Tensor,
    params: Sequence[Tensor],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Tensor, Tensor]:
    """(output data, h_n) of a relu RNN over a packed sequence."""
    flags = (has_biases, num_layers, dropout, train, bidirectional)
    return _one_state_data(_relu_step, data, batch_sizes, hx, params, flags)

"""torch.nn's recurrent layers: RNN, LSTM, GRU and their one-step cells RNNCell,
LSTMCell, GRUCell, with PyTorch's constructor arguments, checks, parameter names
(weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_hr_l0 for an LSTM
projection, `_reverse` for the second direction), initialisation (every parameter
uniform in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)]) and repr.

The layers call the multi-layer operators of the rnn family (`lstm`, `gru`,
`rnn_tanh`, `rnn_relu`: their `.input` overload for a padded batch, `.data` for a
PackedSequence); unbatched (2-d) input gets a batch of one.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from gradgen.factories import empty, zeros
from gradgen.generated import ops
from gradgen.tensor import Tensor

from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = [
    "RNNBase",
    "RNN",
    "LSTM",
    "GRU",
    "RNNCellBase",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _check_layer_arguments(
    hidden_size: Any, num_layers: int, dropout: Any, proj_size: int
) -> None:
    """RNNBase's constructor checks, in PyTorch's order and words."""
    if (
        not isinstance(dropout, numbers.Number)
        or isinstance(dropout, bool)
        or not 0 <= dropout <= 1  # type: ignore[operator]
    ):
        raise ValueError(
            "dropout should be a number in range [0, 1] representing the "
            "probability of an element being zeroed"
        )
    if dropout > 0 and num_layers == 1:  # type: ignore[operator]
        warnings.warn(
            "dropout option adds dropout after all but last recurrent layer, so "
            "non-zero dropout expects num_layers greater than 1, but got "
            f"dropout={dropout} and num_layers={num_layers}"
        )
    if not isinstance(hidden_size, int):
        raise TypeError(
            f"hidden_size should be of type int, got: {type(hidden_size).__name__}"
        )
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError(
            "proj_size should be a positive integer or zero to disable projections"
        )
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters per layer and direction, the
    checks of the input and the hidden state, and the call of the operator."""

    mode: str
    input_size: int
    hidden_size: int
    num_layers: int
    bias: bool
    batch_first: bool
    dropout: float
    bidirectional: bool
    proj_size: int

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        _check_layer_arguments(hidden_size, num_layers, dropout, proj_size)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(self._directions()):
                self._all_weights.append(self._add_layer(layer, direction, dtype))
        self.reset_parameters()

    def _directions(self) -> int:
        return 2 if self.bidirectional else 1

    def _add_layer(self, layer: int, direction: int, dtype: Any) -> list[str]:
        """Registers one layer and direction's parameters; returns their names."""
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        layer_input = (
            self.input_size if layer == 0 else real_hidden * self._directions()
        )
        gate_size = _GATES[self.mode] * self.hidden_size
        shapes: list[tuple[str, tuple[int, ...]]] = [
            ("weight_ih", (gate_size, layer_input))
        ]
        shapes.append(("weight_hh", (gate_size, real_hidden)))
        if self.bias:
            shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
        if self.proj_size > 0:
            shapes.append(("weight_hr", (self.proj_size, self.hidden_size)))
        suffix = "_reverse" if direction == 1 else ""
        names = []
        for kind, shape in shapes:
            name = f"{kind}_l{layer}{suffix}"
            self.register_parameter(name, Parameter(empty(*shape, dtype=dtype)))
            names.append(name)
        return names

    def reset_parameters(self) -> None:
        """Every parameter uniform in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)]."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    @property
    def _flat_weights_names(self) -> list[str]:
        return [name for names in self._all_weights for name in names]

    @property
    def _flat_weights(self) -> list[Tensor]:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Nothing to do: gradgen keeps no fused weight buffer (cuDNN's in PyTorch)."""

    # -- checks ----------------------------------------------------------------------

    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype "
                f"({weight_dtype}). Convert input: input.to({weight_dtype}), or "
                f"convert model: model.to({input.dtype})"
            )
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(
                f"input must have {expected} dimensions, got {input.dim()}"
            )
        if self.input_size != input.shape[-1]:
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.shape[-1]}"
            )

    def get_expected_hidden_size(
        self, input: Tensor, batch_sizes: Tensor | None
    ) -> tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * self._directions(), mini_batch, size)

    def check_hidden_size(
        self,
        hx: Tensor,
        expected_hidden_size: tuple[int, ...],
        msg: str = "Expected hidden size {}, got {}",
    ) -> None:
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def check_forward_args(
        self, input: Tensor, hidden: Tensor, batch_sizes: Tensor | None
    ) -> None:
        self.check_input(input, batch_sizes)
        expected = self.get_expected_hidden_size(input, batch_sizes)
        self.check_hidden_size(hidden, expected)

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None) -> Tensor:
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # -- the call ----------------------------------------------------------------------

    def _operator_flags(self) -> tuple[bool, int, float, bool, bool]:
        return (
            self.bias,
            self.num_layers,
            self.dropout,
            self.training,
            self.bidirectional,
        )

    def _zeros_state(self, input: Tensor, batch: int, size: int) -> Tensor:
        layers = self.num_layers * self._directions()
        return zeros(layers, batch, size, dtype=input.dtype)

    def _unbatched(self, input: Tensor) -> bool:
        """Whether a padded input has no batch dimension (PyTorch's is_batched)."""
        if input.dim() not in (2, 3):
            raise ValueError(
                f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                f"{input.dim()}D instead"
            )
        return input.dim() == 2

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            text += f", bidirectional={self.bidirectional}"
        return text


class _OneStateRNN(RNNBase):
    """RNN and GRU: one hidden state h of (layers * directions, batch, hidden)."""

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        batch_dim = 0 if self.batch_first else 1
        unbatched = self._unbatched(input)
        if unbatched:
            input = input.unsqueeze(batch_dim)
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(
                        "For unbatched 2-D input, hx should also be 2-D but got "
                        f"{hx.dim()}-D tensor"
                    )
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(
                "For batched 3-D input, hx should also be 3-D but got "
                f"{hx.dim()}-D tensor"
            )
        if hx is None:
            hx = self._zeros_state(input, input.shape[batch_dim], self.hidden_size)
        self.check_forward_args(input, hx, None)
        operator = getattr(ops, self._operator_name())
        output, hidden = operator(
            input, hx, self._flat_weights, *self._operator_flags(), self.batch_first
        )
        if unbatched:
            return output.squeeze(batch_dim), hidden.squeeze(1)
        return output, hidden

    def _forward_packed(
        self, input: PackedSequence, hx: Tensor | None
    ) -> tuple[PackedSequence, Tensor]:
        data, batch_sizes, sorted_indices, unsorted_indices = input
        if hx is None:
            hx = self._zeros_state(data, int(batch_sizes[0]), self.hidden_size)
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(data, hx, batch_sizes)
        operator = getattr(ops, self._operator_name())
        output, hidden = operator(
            data, batch_sizes, hx, self._flat_weights, *self._operator_flags()
        )
        packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        return packed, self.permute_hidden(hidden, unsorted_indices)

    def _operator_name(self) -> str:
        return self.mode.lower()


class RNN(_OneStateRNN):
    """An Elman RNN: h_t = tanh (or relu) of x_t @ W_ih.T + b_ih + h_{t-1} @ W_hh.T
    + b_hh. Arguments as PyTorch's: RNN(input_size, hidden_size, num_layers=1,
    nonlinearity='tanh', bias=True, batch_first=False, dropout=0.0,
    bidirectional=False)."""

    nonlinearity: str

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError(
                "proj_size argument is only supported for LSTM, not RNN or GRU"
            )
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or "
                "'relu'."
            )
        super().__init__(mode, *args, **kwargs)

    def _operator_name(self) -> str:
        return "rnn_tanh" if self.mode == "RNN_TANH" else "rnn_relu"


class GRU(_OneStateRNN):
    """A gated recurrent unit: reset and update gates r, z; n = tanh(x W_in + b_in +
    r * (h W_hn + b_hn)); h' = (1 - z) * n + z * h. PyTorch's arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError(
                "proj_size argument is only supported for LSTM, not RNN or GRU"
            )
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """A long short-term memory layer: input, forget, cell and output gates, a cell
    state c and, with proj_size, the hidden state projected by weight_hr. PyTorch's
    arguments; forward(input, (h_0, c_0)) returns (output, (h_n, c_n))."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(
        self, input: Tensor, batch_sizes: Tensor | None
    ) -> tuple[int, int, int]:
        expected = self.get_expected_hidden_size(input, batch_sizes)
        return (expected[0], expected[1], self.hidden_size)

    def check_forward_args(  # type: ignore[override]
        self,
        input: Tensor,
        hidden: tuple[Tensor, Tensor],
        batch_sizes: Tensor | None,
    ) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0],
            self.get_expected_hidden_size(input, batch_sizes),
            "Expected hidden[0] size {}, got {}",
        )
        self.check_hidden_size(
            hidden[1],
            self.get_expected_cell_size(input, batch_sizes),
            "Expected hidden[1] size {}, got {}",
        )

    def permute_hidden(  # type: ignore[override]
        self, hx: tuple[Tensor, Tensor], permutation: Tensor | None
    ) -> tuple[Tensor, Tensor]:
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def _zero_states(self, input: Tensor, batch: int) -> tuple[Tensor, Tensor]:
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (
            self._zeros_state(input, batch, real_hidden),
            self._zeros_state(input, batch, self.hidden_size),
        )

    def forward(
        self, input: Any, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Any, tuple[Tensor, Tensor]]:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        batch_dim = 0 if self.batch_first else 1
        unbatched = self._unbatched(input)
        if unbatched:
            input = input.unsqueeze(batch_dim)
        if hx is None:
            hx = self._zero_states(input, input.shape[batch_dim])
        else:
            hx = self._batched_states(hx, unbatched)
        self.check_forward_args(input, hx, None)
        flags = (*self._operator_flags(), self.batch_first)
        output, h, c = ops.lstm(input, list(hx), self._flat_weights, *flags)
        if unbatched:
            return output.squeeze(batch_dim), (h.squeeze(1), c.squeeze(1))
        return output, (h, c)

    @staticmethod
    def _batched_states(
        hx: tuple[Tensor, Tensor], unbatched: bool
    ) -> tuple[Tensor, Tensor]:
        """The given (h_0, c_0), checked against the input's batching (3-d, or 2-d
        for unbatched input, which get a batch of one)."""
        want = 2 if unbatched else 3
        if hx[0].dim() != want or hx[1].dim() != want:
            kind = "unbatched 2-D" if unbatched else "batched 3-D"
            raise RuntimeError(
                f"For {kind} input, hx and cx should also be {want}-D but got "
                f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
            )
        if unbatched:
            return hx[0].unsqueeze(1), hx[1].unsqueeze(1)
        return hx[0], hx[1]

    def _forward_packed(
        self, input: PackedSequence, hx: tuple[Tensor, Tensor] | None
    ) -> tuple[PackedSequence, tuple[Tensor, Tensor]]:
        data, batch_sizes, sorted_indices, unsorted_indices = input
        if hx is None:
            hx = self._zero_states(data, int(batch_sizes[0]))
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(data, hx, batch_sizes)
        output, h, c = ops.lstm(
            data, batch_sizes, list(hx), self._flat_weights, *self._operator_flags()
        )
        packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        return packed, self.permute_hidden((h, c), unsorted_indices)


# -- the cells -----------------------------------------------------------------------------


class RNNCellBase(Module):
    """What the cells share: weight_ih (chunks * hidden, input), weight_hh (chunks *
    hidden, hidden), the optional biases, PyTorch's initialisation and repr."""

    input_size: int
    hidden_size: int
    bias: bool
    weight_ih: Parameter
    weight_hh: Parameter
    bias_ih: Parameter | None
    bias_hh: Parameter | None

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(empty(gates, input_size, dtype=dtype))
        self.weight_hh = Parameter(empty(gates, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(gates, dtype=dtype))
            self.bias_hh = Parameter(empty(gates, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every parameter uniform in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)]."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            text += f", nonlinearity={nonlinearity}"
        return text

    def _batched(self, input: Tensor) -> bool:
        if input.dim() not in (1, 2):
            raise ValueError(
                f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                f"{input.dim()}D instead"
            )
        return input.dim() == 2

    def _check_state(self, state: Tensor, label: str) -> None:
        if state.dim() not in (1, 2):
            raise ValueError(
                f"{type(self).__name__}: Expected {label} to be 1D or 2D, got "
                f"{state.dim()}D instead"
            )

    def _weights(self) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: tanh (or relu) of x @ W_ih.T + b_ih + h @ W_hh.T +
    b_hh."""

    nonlinearity: str

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        batched = self._batched(input)
        if hx is not None:
            self._check_state(hx, "hidden")
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
        elif not batched:
            hx = hx.unsqueeze(0)
        if self.nonlinearity == "tanh":
            result = ops.rnn_tanh_cell(input, hx, *self._weights())
        elif self.nonlinearity == "relu":
            result = ops.rnn_relu_cell(input, hx, *self._weights())
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return result if batched else result.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: forward(input, (h, c)) returns (h', c')."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        batched = self._batched(input)
        if hx is not None:
            for index, state in enumerate(hx):
                self._check_state(state, f"hx[{index}]")
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            state = zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
            hx = (state, state)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = ops.lstm_cell(input, list(hx), *self._weights())
        if batched:
            return h, c
        return h.squeeze(0), c.squeeze(0)


class GRUCell(RNNCellBase):
    """One GRU step: forward(input, h) returns h'."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        batched = self._batched(input)
        if hx is not None:
            self._check_state(hx, "hidden")
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
        elif not batched:
            hx = hx.unsqueeze(0)
        result = ops.gru_cell(input, hx, *self._weights())
        return result if batched else result.squeeze(0)

"""The recurrent layers (gradgen.nn.RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell)
against torch.nn: the same weights and inputs give the same outputs, input and state
gradients and every parameter's gradient, the same parameter names, repr and errors.
Recorded in tests/golden/ (see torch_oracle.py)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import gradgen
from gradgen import nn
from gradgen.autograd import gradcheck, gradgradcheck
from torch_oracle import oracle, outcome

RNG = np.random.default_rng(2027)


def _normal(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape)


class Layer(NamedTuple):
    build: Callable[[Any], Any]
    input: np.ndarray
    # the state argument: None, an array, or a pair of arrays (LSTM's (h_0, c_0))
    state: Any = None


LAYERS: dict[str, Layer] = {
    "RNN": Layer(lambda lib: lib.nn.RNN(3, 4), _normal(5, 2, 3)),
    "RNN-relu-2-layers-h0": Layer(
        lambda lib: lib.nn.RNN(3, 4, 2, nonlinearity="relu"),
        _normal(5, 2, 3),
        _normal(2, 2, 4),
    ),
    "RNN-positional-nonlinearity": Layer(
        lambda lib: lib.nn.RNN(3, 4, 1, "relu", False, True), _normal(2, 4, 3)
    ),
    "RNN-bidirectional-unbatched": Layer(
        lambda lib: lib.nn.RNN(3, 4, bidirectional=True), _normal(5, 3), _normal(2, 4)
    ),
    "LSTM": Layer(lambda lib: lib.nn.LSTM(3, 4), _normal(6, 2, 3)),
    "LSTM-h0-c0": Layer(
        lambda lib: lib.nn.LSTM(3, 4, num_layers=2),
        _normal(5, 3, 3),
        (_normal(2, 3, 4), _normal(2, 3, 4)),
    ),
    "LSTM-bidirectional-batch-first": Layer(
        lambda lib: lib.nn.LSTM(3, 5, 2, batch_first=True, bidirectional=True),
        _normal(2, 4, 3),
    ),
    "LSTM-no-bias": Layer(lambda lib: lib.nn.LSTM(2, 3, bias=False), _normal(4, 2, 2)),
    "LSTM-proj": Layer(
        lambda lib: lib.nn.LSTM(3, 5, 2, proj_size=2, bidirectional=True),
        _normal(4, 2, 3),
        (_normal(4, 2, 2), _normal(4, 2, 5)),
    ),
    "LSTM-unbatched": Layer(
        lambda lib: lib.nn.LSTM(3, 4), _normal(5, 3), (_normal(1, 4), _normal(1, 4))
    ),
    "LSTM-unbatched-no-state": Layer(
        lambda lib: lib.nn.LSTM(3, 4, batch_first=True), _normal(5, 3)
    ),
    "GRU": Layer(lambda lib: lib.nn.GRU(3, 4), _normal(5, 2, 3)),
    "GRU-h0-bidirectional-2-layers": Layer(
        lambda lib: lib.nn.GRU(3, 4, 2, bidirectional=True),
        _normal(4, 3, 3),
        _normal(4, 3, 4),
    ),
    "GRU-no-bias-batch-first": Layer(
        lambda lib: lib.nn.GRU(2, 3, bias=False, batch_first=True), _normal(3, 4, 2)
    ),
    "GRU-unbatched": Layer(lambda lib: lib.nn.GRU(3, 4), _normal(5, 3), _normal(1, 4)),
    # dropout=1 zeroes the first layer's output: the same (deterministic) in both.
    "LSTM-dropout-1": Layer(
        lambda lib: lib.nn.LSTM(3, 4, 2, dropout=1.0), _normal(4, 2, 3)
    ),
    "RNNCell": Layer(lambda lib: lib.nn.RNNCell(3, 4), _normal(2, 3), _normal(2, 4)),
    "RNNCell-relu-no-state": Layer(
        lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="relu"), _normal(2, 3)
    ),
    "RNNCell-unbatched": Layer(
        lambda lib: lib.nn.RNNCell(3, 4, bias=False), _normal(3), _normal(4)
    ),
    "LSTMCell": Layer(
        lambda lib: lib.nn.LSTMCell(3, 4), _normal(2, 3), (_normal(2, 4), _normal(2, 4))
    ),
    "LSTMCell-no-state-no-bias": Layer(
        lambda lib: lib.nn.LSTMCell(3, 4, bias=False), _normal(2, 3)
    ),
    "LSTMCell-unbatched": Layer(
        lambda lib: lib.nn.LSTMCell(3, 4), _normal(3), (_normal(4), _normal(4))
    ),
    "GRUCell": Layer(lambda lib: lib.nn.GRUCell(3, 4), _normal(2, 3), _normal(2, 4)),
    "GRUCell-unbatched-no-state": Layer(lambda lib: lib.nn.GRUCell(3, 4), _normal(3)),
}


def _weights(shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """Fixed weights for a layer's state dict (the same for both libraries)."""
    generator = np.random.default_rng(11)
    return {name: generator.normal(size=shape) * 0.5 for name, shape in shapes.items()}


def _tensors(result: Any) -> list[Any]:
    """The tensors of a layer's result (nested tuples), in order."""
    if isinstance(result, tuple):
        return [t for item in result for t in _tensors(item)]
    return [result]


def _run_layer(lib: Any, layer: Layer) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dropout with one layer warns
        module = layer.build(lib).double()
    shapes = {name: tuple(p.shape) for name, p in module.state_dict().items()}
    module.load_state_dict({n: lib.tensor(v) for n, v in _weights(shapes).items()})
    x = lib.tensor(layer.input, requires_grad=True)
    leaves = [x]
    if layer.state is None:
        result = module(x)
    elif isinstance(layer.state, tuple):
        state = tuple(lib.tensor(s, requires_grad=True) for s in layer.state)
        leaves += list(state)
        result = module(x, state)
    else:
        state = lib.tensor(layer.state, requires_grad=True)
        leaves.append(state)
        result = module(x, state)
    outputs = _tensors(result)
    loss = sum((out * out * (k + 1)).sum() for k, out in enumerate(outputs))
    loss.backward()
    return {
        "repr": repr(module),
        "shapes": {name: list(shape) for name, shape in shapes.items()},
        "outputs": [out.detach().numpy() for out in outputs],
        "leaf grads": [leaf.grad.numpy() for leaf in leaves],
        "param grads": {n: p.grad.numpy() for n, p in module.named_parameters()},
    }


def _close(ours: Any, theirs: Any) -> None:
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_matches_torch(name: str) -> None:
    layer = LAYERS[name]
    ours = _run_layer(gradgen, layer)
    theirs = oracle("layer", lambda torch: _run_layer(torch, layer))
    assert ours["repr"] == theirs["repr"]
    assert ours["shapes"] == theirs["shapes"]  # names, order and shapes
    assert len(ours["outputs"]) == len(theirs["outputs"])
    for mine, want in zip(ours["outputs"], theirs["outputs"]):
        _close(mine, want)
    for mine, want in zip(ours["leaf grads"], theirs["leaf grads"], strict=True):
        _close(mine, want)
    assert sorted(ours["param grads"]) == sorted(theirs["param grads"])
    for key, mine in ours["param grads"].items():
        _close(mine, theirs["param grads"][key])


REPRS: dict[str, Callable[[Any], Any]] = {
    "LSTM-everything": lambda lib: lib.nn.LSTM(
        4, 5, 2, False, True, 0.1, True, proj_size=3
    ),
    "GRU": lambda lib: lib.nn.GRU(4, 5),
    "RNN-relu": lambda lib: lib.nn.RNN(4, 5, nonlinearity="relu"),
    "RNNCell-relu": lambda lib: lib.nn.RNNCell(4, 5, nonlinearity="relu"),
    "LSTMCell-no-bias": lambda lib: lib.nn.LSTMCell(4, 5, bias=False),
    "GRUCell": lambda lib: lib.nn.GRUCell(4, 5),
    "Sequential": lambda lib: lib.nn.Sequential(lib.nn.GRU(2, 3), lib.nn.RNNCell(3, 2)),
}


@pytest.mark.parametrize("name", sorted(REPRS))
def test_repr_and_parameter_names_match_torch(name: str) -> None:
    def run(lib: Any) -> dict[str, Any]:
        module = REPRS[name](lib)
        return {
            "repr": repr(module),
            "names": [n for n, _ in module.named_parameters()],
            "shapes": [list(p.shape) for p in module.parameters()],
        }

    assert run(gradgen) == oracle("repr", run)


ERRORS: dict[str, Callable[[Any], Any]] = {
    "input-size": lambda lib: lib.nn.LSTM(4, 5, 2)(lib.randn(7, 3, 6)),
    "4d-input": lambda lib: lib.nn.LSTM(4, 5)(lib.randn(3, 4, 4, 4)),
    "hidden0-size": lambda lib: lib.nn.LSTM(4, 5, 2)(
        lib.randn(7, 3, 4), (lib.randn(2, 2, 5), lib.randn(2, 3, 5))
    ),
    "hidden1-size": lambda lib: lib.nn.LSTM(4, 5, 2)(
        lib.randn(7, 3, 4), (lib.randn(2, 3, 5), lib.randn(2, 3, 6))
    ),
    "unbatched-3d-state": lambda lib: lib.nn.LSTM(4, 5, 2)(
        lib.randn(7, 4), (lib.randn(2, 3, 5), lib.randn(2, 3, 5))
    ),
    "batched-2d-state": lambda lib: lib.nn.LSTM(4, 5)(
        lib.randn(7, 3, 4), (lib.randn(1, 5), lib.randn(1, 5))
    ),
    "gru-hidden-size": lambda lib: lib.nn.GRU(4, 5)(
        lib.randn(7, 3, 4), lib.randn(2, 3, 5)
    ),
    "gru-batched-2d-state": lambda lib: lib.nn.GRU(4, 5)(
        lib.randn(7, 3, 4), lib.randn(1, 3)
    ),
    "rnn-unbatched-3d-state": lambda lib: lib.nn.RNN(4, 5)(
        lib.randn(7, 4), lib.randn(1, 3, 5)
    ),
    "dtype": lambda lib: lib.nn.GRU(4, 5)(lib.randn(7, 3, 4, dtype=lib.float64)),
    "dropout-range": lambda lib: lib.nn.LSTM(4, 5, dropout=1.5),
    "dropout-bool": lambda lib: lib.nn.LSTM(4, 5, dropout=True),
    "proj-size-large": lambda lib: lib.nn.LSTM(4, 5, proj_size=5),
    "proj-size-negative": lambda lib: lib.nn.LSTM(4, 5, proj_size=-1),
    "proj-size-gru": lambda lib: lib.nn.GRU(4, 5, proj_size=2),
    "nonlinearity": lambda lib: lib.nn.RNN(4, 5, nonlinearity="x"),
    "hidden-size-zero": lambda lib: lib.nn.RNN(4, 0),
    "hidden-size-float": lambda lib: lib.nn.RNN(4, 2.5),
    "num-layers-zero": lambda lib: lib.nn.GRU(4, 5, num_layers=0),
    "cell-3d-input": lambda lib: lib.nn.LSTMCell(4, 5)(lib.randn(2, 3, 4)),
    "cell-3d-hx": lambda lib: lib.nn.LSTMCell(4, 5)(
        lib.randn(3, 4), (lib.randn(3, 5), lib.randn(1, 3, 5))
    ),
    "gru-cell-3d-hidden": lambda lib: lib.nn.GRUCell(4, 5)(
        lib.randn(3, 4), lib.randn(1, 3, 5)
    ),
    "rnn-cell-3d-input": lambda lib: lib.nn.RNNCell(4, 5)(lib.randn(2, 3, 4)),
    "cell-input-size": lambda lib: lib.nn.LSTMCell(4, 5)(lib.randn(3, 6)),
    "cell-batch": lambda lib: lib.nn.GRUCell(4, 5)(lib.randn(3, 4), lib.randn(2, 5)),
    "cell-hidden-size": lambda lib: lib.nn.LSTMCell(4, 5)(
        lib.randn(3, 4), (lib.randn(3, 5), lib.randn(3, 6))
    ),
    "cell-unknown-nonlinearity": lambda lib: lib.nn.RNNCell(4, 5, nonlinearity="foo")(
        lib.randn(3, 4)
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    def run(lib: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return outcome(lambda: ERRORS[name](lib))

    ours, theirs = run(gradgen), oracle("error", run)
    assert isinstance(theirs, Exception), theirs
    assert type(ours).__name__ == type(theirs).__name__
    # gradgen's dtypes print as gradgen.float64 where torch's print torch.float64
    assert str(ours).replace("gradgen.", "torch.") == str(theirs)


def test_dropout_with_one_layer_warns_as_torch() -> None:
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater"):
        nn.LSTM(3, 4, dropout=0.5)


def test_default_initialisation_is_uniform_in_the_hidden_bound() -> None:
    gradgen.manual_seed(0)
    for module in (nn.LSTM(3, 100, 2, proj_size=20), nn.GRUCell(3, 100)):
        bound = 1 / math.sqrt(100)
        values = np.concatenate(
            [p.detach().numpy().ravel() for p in module.parameters()]
        )
        assert values.min() >= -bound and values.max() <= bound
        # uniform in [-b, b]: mean 0, variance b^2 / 3 (to sampling accuracy)
        assert abs(values.mean()) < 0.05 * bound
        assert values.var() == pytest.approx(bound**2 / 3, rel=0.05)


def test_flatten_parameters_is_a_no_op_and_all_weights_lists_them() -> None:
    lstm = nn.LSTM(2, 3, 2, bidirectional=True)
    before = [p.detach().numpy().copy() for p in lstm.parameters()]
    assert lstm.flatten_parameters() is None
    assert all(
        np.array_equal(a, p.detach().numpy()) for a, p in zip(before, lstm.parameters())
    )
    assert [len(group) for group in lstm.all_weights] == [4, 4, 4, 4]
    assert lstm.all_weights[1][0] is lstm.weight_ih_l0_reverse


def test_eval_mode_ignores_dropout() -> None:
    gradgen.manual_seed(1)
    lstm = nn.LSTM(2, 3, 2, dropout=0.9).double().eval()
    x = gradgen.tensor(_normal(4, 1, 2))
    first, _ = lstm(x)
    second, _ = lstm(x)
    np.testing.assert_array_equal(first.detach().numpy(), second.detach().numpy())


def test_training_dropout_changes_the_second_layer_input() -> None:
    gradgen.manual_seed(2)
    lstm = nn.LSTM(2, 3, 2, dropout=0.5).double()
    x = gradgen.tensor(_normal(4, 1, 2))
    outputs = {tuple(lstm(x)[0].detach().numpy().ravel().round(12)) for _ in range(6)}
    assert len(outputs) > 1
    lstm.eval()
    assert len({tuple(lstm(x)[0].detach().numpy().ravel()) for _ in range(3)}) == 1


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_layers_pass_gradcheck_and_gradgradcheck(mode: str) -> None:
    gradgen.manual_seed(3)
    layer = getattr(nn, mode)(2, 3, 2, bidirectional=True).double()
    weights = list(layer.parameters())

    def run(x: Any, *params: Any) -> Any:
        for name, value in zip([n for n, _ in layer.named_parameters()], params):
            object.__getattribute__(layer, "_parameters")[name] = value
        out = layer(x)
        return gradgen.cat([t.reshape(-1) for t in _tensors(out)])

    x = gradgen.tensor(_normal(3, 2, 2), requires_grad=True)
    params = [gradgen.tensor(w.detach().numpy(), requires_grad=True) for w in weights]
    assert gradcheck(run, (x, *params))
    assert gradgradcheck(run, (x, params[0], params[1]))


# -- the fused cells' backward kernels against their differentiable composites ---------


@pytest.mark.parametrize("given", ["both", "hy only", "cy only"])
@pytest.mark.parametrize("bias", [True, False])
def test_fused_lstm_backward_kernel_matches_the_composite(
    given: str, bias: bool
) -> None:
    """The numpy kernel's gradients equal `_thnn_differentiable_lstm_cell_backward`'s
    (an operator composite, compared with torch in the operator table)."""
    ig, hg = gradgen.tensor(_normal(3, 8)), gradgen.tensor(_normal(3, 8))
    cx = gradgen.tensor(_normal(3, 2))
    ib, hb = (
        (gradgen.tensor(_normal(8)), gradgen.tensor(_normal(8)))
        if bias
        else (None, None)
    )
    _, cy, workspace = gradgen._thnn_fused_lstm_cell(ig, hg, cx, ib, hb)
    grad_hy = gradgen.tensor(_normal(3, 2)) if given != "cy only" else None
    grad_cy = gradgen.tensor(_normal(3, 2)) if given != "hy only" else None
    fused = gradgen._thnn_fused_lstm_cell_backward(
        grad_hy, grad_cy, cx, cy, workspace, bias
    )
    composite = gradgen._thnn_differentiable_lstm_cell_backward(
        grad_hy, grad_cy, ig, hg, ib, hb, cx, cy
    )
    count = 5 if bias else 3  # without a bias the composite's bias gradient is unused
    for mine, want in zip(fused[:count], composite[:count]):
        _close(mine.numpy(), want.numpy())


@pytest.mark.parametrize("bias", [True, False])
def test_fused_gru_backward_kernel_matches_the_composite(bias: bool) -> None:
    ig, hg = gradgen.tensor(_normal(3, 6)), gradgen.tensor(_normal(3, 6))
    hx = gradgen.tensor(_normal(3, 2))
    ib, hb = (
        (gradgen.tensor(_normal(6)), gradgen.tensor(_normal(6)))
        if bias
        else (None, None)
    )
    _, workspace = gradgen._thnn_fused_gru_cell(ig, hg, hx, ib, hb)
    grad_hy = gradgen.tensor(_normal(3, 2))
    fused = gradgen._thnn_fused_gru_cell_backward(grad_hy, workspace, bias)
    composite = gradgen._thnn_differentiable_gru_cell_backward(
        grad_hy, ig, hg, hx, ib, hb
    )
    count = 5 if bias else 3
    for mine, want in zip(fused[:count], composite[:count]):
        _close(mine.numpy(), want.numpy())


def test_fused_cell_errors_name_the_sizes() -> None:
    with pytest.raises(
        RuntimeError, match=r"_thnn_fused_lstm_cell: input_gates of size"
    ):
        gradgen._thnn_fused_lstm_cell(
            gradgen.zeros(2, 8), gradgen.zeros(2, 4), gradgen.zeros(2, 2)
        )
    with pytest.raises(RuntimeError, match=r"expected a state of size \[2, 2\]"):
        gradgen._thnn_fused_gru_cell(
            gradgen.zeros(2, 6), gradgen.zeros(2, 6), gradgen.zeros(3, 2)
        )
    with pytest.raises(RuntimeError, match="must be 2-dimensional"):
        gradgen._thnn_fused_lstm_cell(
            gradgen.zeros(8), gradgen.zeros(8), gradgen.zeros(2)
        )

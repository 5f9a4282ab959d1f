"""Workload LSTM (issue 13): one forward + backward of a one-layer nn.LSTM (batch 32,
50 steps, 64 inputs, 128 hidden) summed over its output, for gradgen, torch and a
hand-written numpy forward and backward (the limit); the target is gradgen within 2x
of torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import gradgen

from harness import Config, PEER, Prepared, Unavailable, _np, implementation

LSTM_BATCH, LSTM_STEPS, LSTM_INPUT, LSTM_HIDDEN = 32, 50, 64, 128


def lstm_inputs() -> tuple[np.ndarray, list[np.ndarray]]:
    """The input (steps, batch, input) and (w_ih, w_hh, b_ih, b_hh), drawn as
    PyTorch initialises them."""
    rng = np.random.default_rng(13)
    bound = 1 / np.sqrt(LSTM_HIDDEN)
    gates = 4 * LSTM_HIDDEN
    shapes = [(gates, LSTM_INPUT), (gates, LSTM_HIDDEN), (gates,), (gates,)]
    params = [rng.uniform(-bound, bound, shape) for shape in shapes]
    return rng.standard_normal((LSTM_STEPS, LSTM_BATCH, LSTM_INPUT)), params


def _lstm_torchlike(lib: Any) -> Prepared:
    x0, params0 = lstm_inputs()
    layer = lib.nn.LSTM(LSTM_INPUT, LSTM_HIDDEN).double()
    params = [
        layer.weight_ih_l0,
        layer.weight_hh_l0,
        layer.bias_ih_l0,
        layer.bias_hh_l0,
    ]
    with lib.no_grad():
        for param, value in zip(params, params0):
            param.copy_(lib.tensor(value))
    x = lib.tensor(x0)

    def step() -> None:
        for param in params:
            param.grad = None
        output, _ = layer(x)
        output.sum().backward()

    return Prepared(step, lambda: [_np(p.grad) for p in params])


@implementation("LSTM", "gradgen")
def lstm_gradgen(config: Config) -> Prepared:
    if not hasattr(gradgen.nn, "LSTM"):
        raise Unavailable("n/a (needs nn.LSTM)")
    return _lstm_torchlike(gradgen)


@implementation("LSTM", "torch")
def lstm_torch(config: Config) -> Prepared:
    return _lstm_torchlike(PEER["torch"].module)


def _sigmoid(values: np.ndarray) -> np.ndarray:
    return 0.5 + 0.5 * np.tanh(0.5 * values)


def _numpy_forward(
    x: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, bias: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The activated gates (steps, batch, 4H) and the states h, c (steps + 1, ...)."""
    steps, batch, _ = x.shape
    hidden = w_hh.shape[1]
    projected = x @ w_ih.T + bias
    h = np.zeros((steps + 1, batch, hidden))
    c = np.zeros((steps + 1, batch, hidden))
    gates = np.empty((steps, batch, 4 * hidden))
    for t in range(steps):
        g = projected[t] + h[t] @ w_hh.T
        g[:, : 2 * hidden] = _sigmoid(g[:, : 2 * hidden])
        g[:, 2 * hidden : 3 * hidden] = np.tanh(g[:, 2 * hidden : 3 * hidden])
        g[:, 3 * hidden :] = _sigmoid(g[:, 3 * hidden :])
        i, f, cell, o = np.split(g, 4, axis=1)
        c[t + 1] = f * c[t] + i * cell
        h[t + 1] = o * np.tanh(c[t + 1])
        gates[t] = g
    return gates, h, c


def _numpy_backward(
    x: np.ndarray, w_hh: np.ndarray, gates: np.ndarray, h: np.ndarray, c: np.ndarray
) -> list[np.ndarray]:
    """The gradients of sum(output) for (w_ih, w_hh, b_ih, b_hh)."""
    steps, batch, width = gates.shape
    hidden = width // 4
    grad_h = np.zeros((batch, hidden))
    grad_c = np.zeros((batch, hidden))
    grad_gates = np.empty_like(gates)
    for t in reversed(range(steps)):
        grad_h += 1.0
        i, f, cell, o = np.split(gates[t], 4, axis=1)
        tanh_c = np.tanh(c[t + 1])
        grad_c += grad_h * o * (1 - tanh_c * tanh_c)
        d = grad_gates[t]
        d[:, :hidden] = grad_c * cell * i * (1 - i)
        d[:, hidden : 2 * hidden] = grad_c * c[t] * f * (1 - f)
        d[:, 2 * hidden : 3 * hidden] = grad_c * i * (1 - cell * cell)
        d[:, 3 * hidden :] = grad_h * tanh_c * o * (1 - o)
        grad_c = grad_c * f
        grad_h = d @ w_hh
    flat = grad_gates.reshape(steps * batch, width)
    grad_w_ih = flat.T @ x.reshape(steps * batch, -1)
    grad_w_hh = flat.T @ h[:-1].reshape(steps * batch, hidden)
    grad_bias = flat.sum(axis=0)
    return [grad_w_ih, grad_w_hh, grad_bias, grad_bias]


@implementation("LSTM", "numpy")
def lstm_numpy(config: Config) -> Prepared:
    x, (w_ih, w_hh, b_ih, b_hh) = lstm_inputs()
    out: list[Any] = []

    def step() -> None:
        gates, h, c = _numpy_forward(x, w_ih, w_hh, b_ih + b_hh)
        np.sum(h[1:])  # the loss
        out[:] = _numpy_backward(x, w_hh, gates, h, c)

    return Prepared(step, lambda: out)


@implementation("LSTM", "autograd")
def lstm_autograd(config: Config) -> Prepared:
    raise Unavailable("n/a (no LSTM layer)")


@implementation("LSTM", "mygrad")
def lstm_mygrad(config: Config) -> Prepared:
    raise Unavailable("n/a (no LSTM layer)")


@implementation("LSTM", "micrograd")
def lstm_micrograd(config: Config) -> Prepared:
    raise Unavailable("n/a (scalar engine)")

"""Workloads W1 (the seed example on 0-d tensors) and W2 (100 small vector steps):
gradgen's per-operation overhead, for gradgen, numpy and each peer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import gradgen

from harness import Config, PEER, Prepared, _leaf, _np, implementation

# -- W1: the seed example ---------------------------------------------------------------

W1_A, W1_B = 2.0, 6.0


def _w1_torchlike(lib: Any) -> Prepared:
    a, b = _leaf(lib, W1_A), _leaf(lib, W1_B)

    def step() -> None:
        a.grad = None
        b.grad = None
        Q = 3 * a**3 - b**2
        Q.backward()

    return Prepared(step, lambda: [_np(a.grad), _np(b.grad)])


@implementation("W1", "gradgen")
def w1_gradgen(config: Config) -> Prepared:
    return _w1_torchlike(gradgen)


@implementation("W1", "torch")
def w1_torch(config: Config) -> Prepared:
    return _w1_torchlike(PEER["torch"].module)


@implementation("W1", "numpy")
def w1_numpy(config: Config) -> Prepared:
    a, b = np.array(W1_A), np.array(W1_B)
    out: list[Any] = [None, None]

    def step() -> None:
        3 * a**3 - b**2  # the forward (Q), which the limit must also compute
        out[0] = 9 * a**2  # dQ/da
        out[1] = -2 * b  # dQ/db

    return Prepared(step, lambda: out)


@implementation("W1", "autograd")
def w1_autograd(config: Config) -> Prepared:
    gradient = PEER["autograd"].module.grad(lambda a, b: 3 * a**3 - b**2, argnum=(0, 1))
    out: list[Any] = [None]

    def step() -> None:
        out[0] = gradient(W1_A, W1_B)

    return Prepared(step, lambda: list(out[0]))


@implementation("W1", "mygrad")
def w1_mygrad(config: Config) -> Prepared:
    mg = PEER["mygrad"].module
    a, b = mg.tensor(W1_A), mg.tensor(W1_B)

    def step() -> None:
        Q = 3 * a**3 - b**2
        Q.backward()

    return Prepared(step, lambda: [a.grad, b.grad])


@implementation("W1", "micrograd")
def w1_micrograd(config: Config) -> Prepared:
    Value = PEER["micrograd"].module.Value
    a, b = Value(W1_A), Value(W1_B)

    def step() -> None:
        a.grad = 0.0
        b.grad = 0.0
        Q = 3 * a**3 - b**2
        Q.backward()

    return Prepared(step, lambda: [a.grad, b.grad])


# -- W2: many small operators ----------------------------------------------------------

W2_SIZE, W2_STEPS = 8, 100


def w2_inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    return rng.uniform(-1.0, 1.0, W2_SIZE), rng.uniform(0.5, 1.0, W2_SIZE)


def w2_operators(config: Config) -> int:
    return 3 * W2_STEPS + (1 if config.seed_mode == "sum" else 0)


def _w2_torchlike(lib: Any, config: Config) -> Prepared:
    x0, c0 = w2_inputs()
    x, c = _leaf(lib, x0), _leaf(lib, c0)
    ones = lib.ones(W2_SIZE, dtype=lib.float64)
    use_sum = config.seed_mode == "sum"

    def step() -> None:
        x.grad = None
        c.grad = None
        y = x
        for _ in range(W2_STEPS):
            y = y * c + 0.5 - x
        if use_sum:
            y.sum().backward()
        else:
            y.backward(gradient=ones)

    return Prepared(step, lambda: [_np(x.grad), _np(c.grad)])


@implementation("W2", "gradgen")
def w2_gradgen(config: Config) -> Prepared:
    return _w2_torchlike(gradgen, config)


@implementation("W2", "torch")
def w2_torch(config: Config) -> Prepared:
    return _w2_torchlike(PEER["torch"].module, config)


@implementation("W2", "numpy")
def w2_numpy(config: Config) -> Prepared:
    x, c = w2_inputs()
    use_sum = config.seed_mode == "sum"
    out: list[Any] = [None, None]

    def step() -> None:
        # forward, keeping what the backward needs (each step's input y)
        tape = []
        y = x
        for _ in range(W2_STEPS):
            tape.append(y)
            y = y * c + 0.5 - x
        if use_sum:
            np.sum(y)
        # backward of y_{i+1} = y_i * c + 0.5 - x, seeded with ones (= d sum / d y)
        gy = np.ones(W2_SIZE)
        gx = np.zeros(W2_SIZE)
        gc_ = np.zeros(W2_SIZE)
        for y_in in reversed(tape):
            gx -= gy
            gc_ += gy * y_in
            gy = gy * c
        gx += gy  # y_0 = x
        out[0], out[1] = gx, gc_

    return Prepared(step, lambda: out)


def _w2_function() -> Callable[[Any, Any], Any]:
    def f(x: Any, c: Any) -> Any:
        y = x
        for _ in range(W2_STEPS):
            y = y * c + 0.5 - x
        return y

    return f


@implementation("W2", "autograd")
def w2_autograd(config: Config) -> Prepared:
    ag = PEER["autograd"].module
    import autograd.numpy as anp

    x, c = w2_inputs()
    f = _w2_function()
    out: list[Any] = [None]
    if config.seed_mode == "sum":
        gradient = ag.grad(lambda x, c: anp.sum(f(x, c)), argnum=(0, 1))

        def step() -> None:
            out[0] = gradient(x, c)

    else:
        make_vjp = ag.make_vjp(f, argnum=(0, 1))
        ones = np.ones(W2_SIZE)

        def step() -> None:
            vjp, _ = make_vjp(x, c)
            out[0] = vjp(ones)

    return Prepared(step, lambda: list(out[0]))


@implementation("W2", "mygrad")
def w2_mygrad(config: Config) -> Prepared:
    mg = PEER["mygrad"].module
    x0, c0 = w2_inputs()
    x, c = mg.tensor(x0), mg.tensor(c0)
    ones = np.ones(W2_SIZE)
    use_sum = config.seed_mode == "sum"

    def step() -> None:
        y = x
        for _ in range(W2_STEPS):
            y = y * c + 0.5 - x
        if use_sum:
            mg.sum(y).backward()
        else:
            y.backward(ones)

    return Prepared(step, lambda: [x.grad, c.grad])


@implementation("W2", "micrograd")
def w2_micrograd(config: Config) -> Prepared:
    Value = PEER["micrograd"].module.Value
    x0, c0 = w2_inputs()
    xs = [Value(float(v)) for v in x0]
    cs = [Value(float(v)) for v in c0]

    def step() -> None:
        for v in xs + cs:
            v.grad = 0.0
        ys = []
        for x, c in zip(xs, cs):
            y = x
            for _ in range(W2_STEPS):
                y = y * c + 0.5 - x
            ys.append(y)
        sum(ys).backward()  # one root over the 8 scalar graphs: gradient of ones

    return Prepared(
        step,
        lambda: [np.array([v.grad for v in xs]), np.array([v.grad for v in cs])],
        note="micrograd is a scalar engine: each vector operator is 8 scalar ones, "
        "and its backward is seeded through a sum of the 8 outputs",
    )

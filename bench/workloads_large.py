"""Workloads W3 (an expression on 1e6-element vectors) and W4 (an MLP training step):
how close gradgen comes to numpy when the arrays are large, for gradgen, numpy and
each peer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import gradgen

from harness import Config, PEER, Prepared, Unavailable, _leaf, _np, implementation

# -- W3: large elementwise vectors ------------------------------------------------------


def w3_inputs(config: Config) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    n = config.w3_size
    return rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)


def _w3_torchlike(lib: Any, config: Config) -> Prepared:
    a0, b0, c0 = w3_inputs(config)
    a, b, c = _leaf(lib, a0), _leaf(lib, b0), _leaf(lib, c0)
    ones = lib.ones(config.w3_size, dtype=lib.float64)
    use_sum = config.seed_mode == "sum"

    def step() -> None:
        a.grad = None
        b.grad = None
        c.grad = None
        Q = (a * b - c) ** 2
        if use_sum:
            Q.sum().backward()
        else:
            Q.backward(gradient=ones)

    return Prepared(step, lambda: [_np(a.grad), _np(b.grad), _np(c.grad)])


@implementation("W3", "gradgen")
def w3_gradgen(config: Config) -> Prepared:
    return _w3_torchlike(gradgen, config)


@implementation("W3", "torch")
def w3_torch(config: Config) -> Prepared:
    return _w3_torchlike(PEER["torch"].module, config)


@implementation("W3", "numpy")
def w3_numpy(config: Config) -> Prepared:
    a, b, c = w3_inputs(config)
    use_sum = config.seed_mode == "sum"
    ones = np.ones(config.w3_size)
    out: list[Any] = [None, None, None]

    def step() -> None:
        t = a * b - c
        q = t**2
        if use_sum:
            np.sum(q)
            g = 2.0 * t  # d sum(t**2) / dt
        else:
            g = ones * (2.0 * t)  # the seed times dq/dt
        out[0] = g * b
        out[1] = g * a
        out[2] = -g

    return Prepared(step, lambda: out)


@implementation("W3", "autograd")
def w3_autograd(config: Config) -> Prepared:
    ag = PEER["autograd"].module
    import autograd.numpy as anp

    a, b, c = w3_inputs(config)
    out: list[Any] = [None]
    if config.seed_mode == "sum":
        gradient = ag.grad(lambda a, b, c: anp.sum((a * b - c) ** 2), argnum=(0, 1, 2))

        def step() -> None:
            out[0] = gradient(a, b, c)

    else:
        make_vjp = ag.make_vjp(lambda a, b, c: (a * b - c) ** 2, argnum=(0, 1, 2))
        ones = np.ones(config.w3_size)

        def step() -> None:
            vjp, _ = make_vjp(a, b, c)
            out[0] = vjp(ones)

    return Prepared(step, lambda: list(out[0]))


@implementation("W3", "mygrad")
def w3_mygrad(config: Config) -> Prepared:
    mg = PEER["mygrad"].module
    a0, b0, c0 = w3_inputs(config)
    a, b, c = mg.tensor(a0), mg.tensor(b0), mg.tensor(c0)
    ones = np.ones(config.w3_size)
    use_sum = config.seed_mode == "sum"

    def step() -> None:
        Q = (a * b - c) ** 2
        if use_sum:
            mg.sum(Q).backward()
        else:
            Q.backward(ones)

    return Prepared(step, lambda: [a.grad, b.grad, c.grad])


@implementation("W3", "micrograd")
def w3_micrograd(config: Config) -> Prepared:
    raise Unavailable("n/a (scalar engine)")


# -- W4: an MLP training step -----------------------------------------------------------

W4_BATCH, W4_IN, W4_HIDDEN, W4_OUT, W4_LR = 64, 784, 128, 10, 0.01


def w4_inputs() -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(4)
    X = rng.standard_normal((W4_BATCH, W4_IN))
    Y = rng.standard_normal((W4_BATCH, W4_OUT))
    params = [
        rng.standard_normal((W4_IN, W4_HIDDEN)) * math.sqrt(2.0 / W4_IN),
        rng.uniform(-0.1, 0.1, W4_HIDDEN),
        rng.standard_normal((W4_HIDDEN, W4_OUT)) * math.sqrt(1.0 / W4_HIDDEN),
        rng.uniform(-0.1, 0.1, W4_OUT),
    ]
    return X, Y, params


def _w4_torchlike(lib: Any) -> Prepared:
    X0, Y0, params0 = w4_inputs()
    X = lib.tensor(X0, dtype=lib.float64)
    Y = lib.tensor(Y0, dtype=lib.float64)
    params = [_leaf(lib, p) for p in params0]
    W1, b1, W2, b2 = params

    def step() -> None:
        for p in params:
            p.grad = None
        h = lib.relu(lib.matmul(X, W1) + b1)
        out = lib.matmul(h, W2) + b2
        loss = lib.mean((out - Y) ** 2)
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= W4_LR * p.grad

    return Prepared(step, lambda: [_np(p.grad) for p in params])


@implementation("W4", "gradgen")
def w4_gradgen(config: Config) -> Prepared:
    # The torch code runs unchanged once gradgen has these operators.
    missing = [
        name for name in ("matmul", "relu", "mean") if not hasattr(gradgen, name)
    ]
    if missing:
        raise Unavailable(f"n/a (needs {', '.join(missing)})")
    return _w4_torchlike(gradgen)


@implementation("W4", "torch")
def w4_torch(config: Config) -> Prepared:
    return _w4_torchlike(PEER["torch"].module)


@implementation("W4", "numpy")
def w4_numpy(config: Config) -> Prepared:
    X, Y, params = w4_inputs()
    W1, b1, W2, b2 = params  # updated in place
    scale = 2.0 / (W4_BATCH * W4_OUT)
    out: list[Any] = [None] * 4

    def step() -> None:
        pre = X @ W1 + b1
        h = np.maximum(pre, 0.0)
        diff = h @ W2 + b2 - Y
        np.mean(diff**2)  # the loss
        g_out = scale * diff
        gW2 = h.T @ g_out
        gb2 = g_out.sum(axis=0)
        g_h = (g_out @ W2.T) * (pre > 0)
        gW1 = X.T @ g_h
        gb1 = g_h.sum(axis=0)
        grads = [gW1, gb1, gW2, gb2]
        for p, g in zip(params, grads):
            p -= W4_LR * g  # in place: W1..b2 are these arrays
        out[:] = grads

    return Prepared(step, lambda: out)


@implementation("W4", "autograd")
def w4_autograd(config: Config) -> Prepared:
    ag = PEER["autograd"].module
    import autograd.numpy as anp

    X, Y, params0 = w4_inputs()
    state: dict[str, Any] = {"params": params0, "grads": None}

    def loss(params: list[Any]) -> Any:
        W1, b1, W2, b2 = params
        h = anp.maximum(anp.dot(X, W1) + b1, 0.0)
        return anp.mean((anp.dot(h, W2) + b2 - Y) ** 2)

    gradient = ag.grad(loss)

    def step() -> None:
        grads = gradient(state["params"])
        state["params"] = [p - W4_LR * g for p, g in zip(state["params"], grads)]
        state["grads"] = grads

    return Prepared(step, lambda: state["grads"])


@implementation("W4", "mygrad")
def w4_mygrad(config: Config) -> Prepared:
    mg = PEER["mygrad"].module
    X, Y, params0 = w4_inputs()
    params = [mg.tensor(p) for p in params0]
    W1, b1, W2, b2 = params

    def step() -> None:
        h = mg.nnet.relu(mg.matmul(X, W1) + b1)
        loss = mg.mean((mg.matmul(h, W2) + b2 - Y) ** 2)
        loss.backward()
        for p in params:
            p.data -= W4_LR * p.grad

    return Prepared(step, lambda: [p.grad for p in params])


@implementation("W4", "micrograd")
def w4_micrograd(config: Config) -> Prepared:
    raise Unavailable("n/a (scalar engine)")

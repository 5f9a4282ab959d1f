#!/usr/bin/env python3
"""gradgen.compile against eager gradgen, the numpy limit and torch, in one run:
`python bench/compile.py [--quick]`.

    W1   Q = 3*a**3 - b**2 on 0-d tensors, forward + backward              us/iter
    W2   8-element vectors, 100 x (y = y*c + 0.5 - x), forward + backward   us/op
    W4   MLP step 64x784 -> 128 -> 10, relu, MSE, SGD update               x numpy
    W5   chain of 100,000 multiplications: compile + one forward + backward      s
    MLP compile time: the first call of a fresh compiled step (trace, passes,
         code generation, the check against eager) minus one eager step

The workloads and their numpy, eager and torch versions are bench/run.py's (imported
from bench/workloads_*.py); this file adds the compiled ones and times all of them
interleaved with the same harness, so machine load hits them alike.
"""

from __future__ import annotations

import argparse
import os
import sys
from time import perf_counter
from typing import Any

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

import gradgen  # noqa: E402
import harness  # noqa: E402
import workloads_chain  # noqa: E402
import workloads_large  # noqa: E402
import workloads_small  # noqa: E402
from harness import (  # noqa: E402
    IMPLEMENTATIONS,
    PEER,
    Config,
    Prepared,
    _leaf,
    _np,
    load_peers,
    looped,
    make_config,
    measure,
)

COMPILED = "gradgen.compile"


def w1_compiled(config: Config) -> Prepared:
    a, b = _leaf(gradgen, workloads_small.W1_A), _leaf(gradgen, workloads_small.W1_B)
    q = gradgen.compile(lambda a, b: 3 * a**3 - b**2)

    def step() -> None:
        a.grad = None
        b.grad = None
        q(a, b).backward()

    return Prepared(step, lambda: [_np(a.grad), _np(b.grad)])


def w2_compiled(config: Config) -> Prepared:
    x0, c0 = workloads_small.w2_inputs()
    x, c = _leaf(gradgen, x0), _leaf(gradgen, c0)
    steps = workloads_small.W2_STEPS

    @gradgen.compile
    def f(x: Any, c: Any) -> Any:
        y = x
        for _ in range(steps):
            y = y * c + 0.5 - x
        return y.sum()

    def step() -> None:
        x.grad = None
        c.grad = None
        f(x, c).backward()

    return Prepared(step, lambda: [_np(x.grad), _np(c.grad)])


def w4_compiled(config: Config) -> Prepared:
    X0, Y0, params0 = workloads_large.w4_inputs()
    X = gradgen.tensor(X0, dtype=gradgen.float64)
    Y = gradgen.tensor(Y0, dtype=gradgen.float64)
    params = [_leaf(gradgen, p) for p in params0]
    W1, b1, W2, b2 = params
    lr = workloads_large.W4_LR

    @gradgen.compile
    def loss_of(X: Any, Y: Any) -> Any:
        h = gradgen.relu(gradgen.matmul(X, W1) + b1)
        out = gradgen.matmul(h, W2) + b2
        return gradgen.mean((out - Y) ** 2)

    def step() -> None:
        for p in params:
            p.grad = None
        loss_of(X, Y).backward()
        with gradgen.no_grad():
            for p in params:
                p -= lr * p.grad

    return Prepared(step, lambda: [_np(p.grad) for p in params])


FACTORIES = {"W1": w1_compiled, "W2": w2_compiled, "W4": w4_compiled}
UNITS = {"W1": "us/iter", "W2": "us/op", "W4": "x numpy"}


def per_unit(workload: str, seconds: float, numpy: float) -> str:
    if workload == "W2":
        return f"{seconds * 1e6 / (3 * workloads_small.W2_STEPS):.3f}"
    if workload == "W4":
        return f"{seconds / numpy:.2f}x ({seconds * 1e3:.2f} ms)"
    return f"{seconds * 1e6:.1f}"


def run_timed(workload: str, config: Config) -> dict[str, float]:
    prepared = {
        library: IMPLEMENTATIONS[(workload, library)](config)
        for library in ("numpy", "gradgen", "torch")
        if (workload, library) in IMPLEMENTATIONS
        and not (library == "torch" and PEER["torch"].missing)
    }
    prepared[COMPILED] = FACTORIES[workload](config)
    reference = None
    for library, item in prepared.items():
        item.step()
        grads = [np.asarray(g, dtype=np.float64) for g in item.grads()]
        if reference is None:
            reference = grads
        elif not all(
            np.allclose(g, r, rtol=1e-6, atol=1e-9) for g, r in zip(grads, reference)
        ):
            raise SystemExit(f"{workload}: {library}'s gradients differ from numpy's")
    timings = measure(
        {library: looped(item.step) for library, item in prepared.items()},
        repeat=config.repeat,
        target=config.target,
        budget=config.budget,
        collect=False,
        progress=workload,
    )
    return {
        library: t.median
        for library, t in timings.items()
        if isinstance(t, harness.Timing)
    }


def w5(config: Config) -> dict[str, float]:
    """One compile + forward + backward of the chain, against one eager step."""
    n = config.w5_length
    factor = workloads_chain.W5_FACTOR
    results: dict[str, float] = {}

    def chain(x: Any) -> Any:
        y = x
        for _ in range(n):
            y = y * factor
        return y

    for library in ("numpy", "gradgen", "torch"):
        if (library == "torch" and PEER["torch"].missing) or (
            ("W5", library) not in IMPLEMENTATIONS
        ):
            continue
        step = IMPLEMENTATIONS[("W5", library)](config).step
        started = perf_counter()
        step()
        results[library] = perf_counter() - started
    x = _leaf(gradgen, 1.0)
    started = perf_counter()
    gradgen.compile(chain)(x).backward()
    results[COMPILED] = perf_counter() - started
    return results


def mlp_compile_time() -> float:
    """The first call of a fresh compiled MLP step, less one compiled call."""
    X0, Y0, params0 = workloads_large.w4_inputs()
    X = gradgen.tensor(X0, dtype=gradgen.float64)
    Y = gradgen.tensor(Y0, dtype=gradgen.float64)
    W1, b1, W2, b2 = [_leaf(gradgen, p) for p in params0]

    def loss_of(X: Any, Y: Any) -> Any:
        h = gradgen.relu(gradgen.matmul(X, W1) + b1)
        return gradgen.mean((gradgen.matmul(h, W2) + b2 - Y) ** 2)

    compiled = gradgen.compile(loss_of)
    started = perf_counter()
    compiled(X, Y).backward()
    first = perf_counter() - started
    started = perf_counter()
    compiled(X, Y).backward()
    return first - (perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs, W5 of 10,000")
    args = parser.parse_args()
    PEER.update(load_peers())
    config = make_config(args.quick, "sum")
    libraries = ("numpy", "gradgen", COMPILED, "torch")
    print(f"{'':4} {'unit':>8} " + " ".join(f"{name:>22}" for name in libraries))
    for workload in ("W1", "W2", "W4"):
        medians = run_timed(workload, config)
        cells = [
            (
                per_unit(workload, medians[name], medians["numpy"])
                if name in medians
                else "-"
            )
            for name in libraries
        ]
        print(
            f"{workload:4} {UNITS[workload]:>8} " + " ".join(f"{c:>22}" for c in cells)
        )
    seconds = w5(config)
    cells = [f"{seconds[name]:.3f}" if name in seconds else "-" for name in libraries]
    print(f"{'W5':4} {'s':>8} " + " ".join(f"{c:>22}" for c in cells))
    print(f"MLP step compile time: {mlp_compile_time():.3f} s (target < 0.5 s)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

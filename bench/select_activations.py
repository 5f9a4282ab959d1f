"""The branchy activations made branchless (leaky_relu, elu, softplus, prelu and their
backwards): per call, on fresh random data of random sign (a pool of arrays cycled, so
that the branch predictor cannot learn one), best of N rounds, the four measured in
turn within each round, in one process (torch on one thread):

- `np.where`: the kernel's expression as it was (np.where on the comparison),
- `kernel`: gradgen's kernel now (numpy_kernels/activation.py),
- `gradgen`: the operator on Tensors (no grad), through the dispatcher,
- `torch`: PyTorch's operator on tensors sharing the same memory.

    .venv/bin/python bench/select_activations.py [--repeat N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import gradgen
from gradgen.numpy_kernels import activation as kernels

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

POOL = 8  # arrays cycled per measurement
SLOPE, ALPHA, BETA, THRESHOLD = 0.01, 1.0, 1.0, 20.0


def _interleaved(
    calls: list[tuple[Callable[[Any], Any], list[Any]]], repeat: int
) -> list[float]:
    """Best time of one call of each (call, pool) over `repeat` rounds (seconds); each
    round runs every call once through its pool, so load changes hit all alike."""
    best = [float("inf")] * len(calls)
    for _ in range(repeat):
        for index, (call, pool) in enumerate(calls):
            start = time.perf_counter()
            for item in pool:
                call(item)
            best[index] = min(best[index], (time.perf_counter() - start) / len(pool))
    return best


def _before(name: str) -> Callable[..., Any]:
    """The np.where expressions the kernels computed before (checks left out)."""
    if name == "leaky_relu":
        return lambda x: np.where(x > 0, x, x * SLOPE)
    if name == "leaky_relu_backward":
        return lambda g, x: np.where(x > 0, g, g * SLOPE)
    if name == "elu":
        return lambda x: np.where(x <= 0, np.expm1(np.minimum(x, 0)) * ALPHA, x * 1.0)
    if name == "elu_backward":
        return lambda g, x: np.where(
            x <= 0, g * ALPHA * np.exp(np.minimum(x, 0)), g * 1.0
        )
    if name == "softplus":
        return lambda x: np.where(
            x * BETA > THRESHOLD,
            x,
            np.log1p(np.exp(np.minimum(x * BETA, THRESHOLD))) / BETA,
        )
    if name == "softplus_backward":

        def softplus_backward(g: Any, x: Any) -> Any:
            z = np.exp(np.minimum(x * BETA, THRESHOLD))
            return np.where(x * BETA > THRESHOLD, g, g * z / (z + 1))

        return softplus_backward
    if name == "prelu":
        return lambda x, w: np.where(x >= 0, x, w * x)
    return lambda g, x, w: (
        np.where(x < 0, g * w, g),
        np.where(x < 0, g * x, 0),
    )


def _kernel(name: str) -> Callable[..., Any]:
    return {
        "leaky_relu": lambda x: kernels.leaky_relu(x, SLOPE),
        "leaky_relu_backward": lambda g, x: kernels.leaky_relu_backward(
            g, x, SLOPE, False
        ),
        "elu": lambda x: kernels.elu(x, ALPHA, 1.0, 1.0),
        "elu_backward": lambda g, x: kernels.elu_backward(g, ALPHA, 1.0, 1.0, False, x),
        "softplus": lambda x: kernels.softplus(x, BETA, THRESHOLD),
        "softplus_backward": lambda g, x: kernels.softplus_backward(
            g, x, BETA, THRESHOLD
        ),
        "prelu": kernels.prelu_kernel,
        "prelu_backward": kernels.prelu_kernel_backward,
    }[name]


def _operator(lib: Any, name: str) -> Callable[..., Any]:
    """The operator on lib's tensors (torch.ops.aten for the backwards)."""
    aten = lib.ops.aten if lib is torch else lib
    return {
        "leaky_relu": lambda x: lib.nn.functional.leaky_relu(x, SLOPE),
        "leaky_relu_backward": lambda g, x: aten.leaky_relu_backward(
            g, x, SLOPE, False
        ),
        "elu": lambda x: lib.nn.functional.elu(x, ALPHA),
        "elu_backward": lambda g, x: aten.elu_backward(g, ALPHA, 1.0, 1.0, False, x),
        "softplus": lambda x: lib.nn.functional.softplus(x, BETA, THRESHOLD),
        "softplus_backward": lambda g, x: aten.softplus_backward(g, x, BETA, THRESHOLD),
        "prelu": lambda x, w: aten._prelu_kernel(x, w),
        "prelu_backward": lambda g, x, w: aten._prelu_kernel_backward(g, x, w),
    }[name]


ARITY = {"prelu": 2, "prelu_backward": 3}
NAMES = [
    "leaky_relu",
    "leaky_relu_backward",
    "elu",
    "elu_backward",
    "softplus",
    "softplus_backward",
    "prelu",
    "prelu_backward",
]


def _pool(name: str, shape: tuple[int, ...], dtype: Any, seed: int) -> list[tuple]:
    """POOL argument tuples of fresh normal data (prelu: a weight per channel, dim 1)."""
    rng = np.random.default_rng(seed)
    channels = (shape[1],) + (1,) * (len(shape) - 2) if len(shape) > 1 else (1,)
    pool = []
    for _ in range(POOL):
        x = (rng.standard_normal(shape) * 2).astype(dtype)
        g = rng.standard_normal(shape).astype(dtype)
        if name == "prelu":
            w = rng.uniform(0.1, 0.3, channels)
            pool.append((x, w.astype(dtype)))
        elif name == "prelu_backward":
            w = rng.uniform(0.1, 0.3, channels)
            pool.append((g, x, w.astype(dtype)))
        elif name.endswith("_backward"):
            pool.append((g, x))
        else:
            pool.append((x,))
    return pool


def _row(name: str, shape: tuple[int, ...], dtype: Any, repeat: int) -> list[float]:
    pool = _pool(name, shape, dtype, seed=len(name))
    before, kernel, ours = _before(name), _kernel(name), _operator(gradgen, name)
    tensors = [tuple(gradgen.from_numpy(v) for v in args) for args in pool]
    calls: list[tuple[Callable[[Any], Any], list[Any]]] = [
        (lambda a: before(*a), pool),
        (lambda a: kernel(*a), pool),
        (lambda a: ours(*a), tensors),
    ]
    if torch is not None:
        theirs = _operator(torch, name)
        torch_tensors = [tuple(torch.from_numpy(v) for v in args) for args in pool]
        calls.append((lambda a: theirs(*a), torch_tensors))
    with np.errstate(all="ignore"):
        return _interleaved(calls, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    if torch is not None:
        torch.set_num_threads(1)
    cases = [
        ((1_000_000,), np.float32),
        ((1_000_000,), np.float64),
        ((256, 128), np.float32),
    ]
    print(
        f"{'operator':<20} {'shape':<10} {'dtype':<8} {'np.where':>9} {'kernel':>9} "
        f"{'gradgen':>9} {'torch':>9} {'before/kernel':>13} {'gradgen/torch':>13}"
    )
    for name in NAMES:
        for shape, dtype in cases:
            times = _row(name, shape, dtype, options.repeat)
            cells = " ".join(f"{t * 1e6:9.1f}" for t in times)
            if len(times) == 3:
                cells += f" {'-':>9}"
            ratio = f"{times[0] / times[1]:12.1f}x"
            versus = f"{times[2] / times[3]:12.2f}x" if len(times) == 4 else ""
            size = "x".join(map(str, shape))
            label = np.dtype(dtype).name
            print(f"{name:<20} {size:<10} {label:<8} {cells} {ratio} {versus}")
    print("(microseconds per call, best of", options.repeat, "rounds)")


if __name__ == "__main__":
    main()

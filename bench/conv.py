"""conv2d forward + backward (batch 32, 3 -> 16 channels, 32x32, 3x3, padding 1,
float32 or --dtype float64), one thread: gradgen, torch and plain numpy (the same im2col + GEMM work
with no autograd: the floor gradgen's kernel can reach) in the same run, interleaved,
median of the repeats.

    .venv/bin/python bench/conv.py [--repeats N]
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

import gradgen  # noqa: E402
from gradgen.numpy_kernels.conv import convolution, convolution_backward  # noqa: E402

SHAPE = (32, 3, 32, 32)
WEIGHT = (16, 3, 3, 3)


def _gradgen_step(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> Callable[[], None]:
    xt = gradgen.tensor(x, requires_grad=True)
    wt = gradgen.tensor(w, requires_grad=True)
    bt = gradgen.tensor(b, requires_grad=True)

    def step() -> None:
        xt.grad = wt.grad = bt.grad = None
        gradgen.nn.functional.conv2d(xt, wt, bt, padding=1).sum().backward()

    return step


def _numpy_step(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> Callable[[], None]:
    def step() -> None:
        y = convolution(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
        grad = np.ones_like(y)
        convolution_backward(
            grad, x, w, [16], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [1, 1, 1]
        )

    return step


def _torch_step(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> Callable[[], None]:
    import torch

    torch.set_num_threads(1)
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    bt = torch.tensor(b, requires_grad=True)

    def step() -> None:
        xt.grad = wt.grad = bt.grad = None
        torch.nn.functional.conv2d(xt, wt, bt, padding=1).sum().backward()

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    options = parser.parse_args()
    repeats, dtype = options.repeats, np.dtype(options.dtype)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(dtype)
    w = rng.standard_normal(WEIGHT).astype(dtype)
    b = rng.standard_normal(WEIGHT[:1]).astype(dtype)
    steps = {"gradgen": _gradgen_step(x, w, b), "numpy": _numpy_step(x, w, b)}
    try:
        steps["torch"] = _torch_step(x, w, b)
    except ImportError:
        pass
    times: dict[str, list[float]] = {name: [] for name in steps}
    for step in steps.values():  # warm up
        step()
    for _ in range(repeats):
        for name, step in steps.items():
            start = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"conv2d fwd+bwd (32x3x32x32, 16x3x3x3, padding 1, {dtype}, one thread)")
    for name, value in medians.items():
        print(f"  {name:8s} {value * 1e3:8.3f} ms")
    if "torch" in medians:
        print(f"  gradgen / torch = {medians['gradgen'] / medians['torch']:.2f}x")


if __name__ == "__main__":
    main()

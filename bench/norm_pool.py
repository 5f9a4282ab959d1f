"""batch_norm (training, running stats) and max_pool2d (2x2, stride 2), forward +
backward on a batch 32 x 16 channels x 32 x 32 activation, one thread: gradgen and
torch in the same run, interleaved, median of the repeats (issue 13's "within 2x").

    .venv/bin/python bench/norm_pool.py [--repeats N] [--dtype float64]
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import gradgen  # noqa: E402

SHAPE = (32, 16, 32, 32)


def _batch_norm_step(lib: Any, x: np.ndarray) -> Callable[[], None]:
    xt = lib.tensor(x, requires_grad=True)
    layer = lib.nn.BatchNorm2d(SHAPE[1]).to(xt.dtype)

    def step() -> None:
        xt.grad = None
        layer.zero_grad()
        layer(xt).square().sum().backward()

    return step


def _max_pool_step(lib: Any, x: np.ndarray) -> Callable[[], None]:
    xt = lib.tensor(x, requires_grad=True)

    def step() -> None:
        xt.grad = None
        lib.nn.functional.max_pool2d(xt, 2).square().sum().backward()

    return step


def _measure(title: str, steps: dict[str, Callable[[], None]], repeats: int) -> None:
    times: dict[str, list[float]] = {name: [] for name in steps}
    for step in steps.values():  # warm up
        step()
    for _ in range(repeats):
        for name, step in steps.items():
            start = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(title)
    for name, value in medians.items():
        print(f"  {name:8s} {value * 1e3:8.3f} ms")
    if "torch" in medians:
        print(f"  gradgen / torch = {medians['gradgen'] / medians['torch']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    options = parser.parse_args()
    dtype = np.dtype(options.dtype)
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(dtype)
    libraries: dict[str, Any] = {"gradgen": gradgen}
    try:
        import torch

        torch.set_num_threads(1)
        libraries["torch"] = torch
    except ImportError:
        pass
    for title, make in (
        (f"batch_norm2d training fwd+bwd (32x16x32x32, {dtype})", _batch_norm_step),
        (f"max_pool2d 2x2 fwd+bwd (32x16x32x32, {dtype})", _max_pool_step),
    ):
        steps = {name: make(lib, x) for name, lib in libraries.items()}
        _measure(title, steps, options.repeats)


if __name__ == "__main__":
    main()

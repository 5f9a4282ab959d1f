"""Memory over a long training run: 10,000 SGD steps of a small MLP, traced.

Each step builds a graph (matmul, relu, mse_loss), runs backward (which frees the
saved tensors) and updates the parameters under no_grad. Memory must not grow with
the number of steps: the script prints tracemalloc's current size after step 100 and
after the last step, and exits non-zero when the growth exceeds 64 kB. Both readings
follow a gc.collect(): CPython keeps freed small tuples in free lists (up to 2,000 per
size), which tracemalloc counts as allocated; a backward that saves a few more tuples
(strides, sizes) fills them by tens of kB without anything being retained. Collecting
empties them. The automatic collector is off during the run, so the last collection
also counts the objects left in reference cycles by steps 101 to N: any is a failure
(the graph must be freed by reference counting alone).

    python bench/memory.py [--steps 10000]
"""

from __future__ import annotations

import argparse
import gc
import sys
import tracemalloc

import numpy as np

import gradgen
import gradgen.nn.functional as F


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10_000)
    steps = parser.parse_args().steps
    rng = np.random.default_rng(0)
    x = gradgen.tensor(rng.standard_normal((32, 16)))
    y = gradgen.tensor(rng.standard_normal((32, 4)))
    w1 = gradgen.tensor(rng.standard_normal((16, 32)) * 0.1, requires_grad=True)
    w2 = gradgen.tensor(rng.standard_normal((32, 4)) * 0.1, requires_grad=True)
    tracemalloc.start()
    gc.disable()
    baseline = None
    loss_value = 0.0
    for step in range(1, steps + 1):
        loss = F.mse_loss((x @ w1).relu() @ w2, y)
        loss.backward()
        with gradgen.no_grad():
            for parameter in (w1, w2):
                parameter -= 0.01 * parameter.grad
                parameter.grad = None
        loss_value = loss.item()
        if step == 100:
            gc.collect()  # empties CPython's free lists (see the module docstring)
            baseline = tracemalloc.get_traced_memory()[0]
    in_cycles = gc.collect()
    gc.enable()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert baseline is not None
    growth = current - baseline
    print(
        f"{steps} steps: traced memory {baseline / 1024:.1f} kB after step 100, "
        f"{current / 1024:.1f} kB after step {steps} (growth {growth / 1024:+.1f} kB), "
        f"peak {peak / 1024:.1f} kB; {in_cycles} objects in reference cycles; "
        f"final loss {loss_value:.4f}"
    )
    return 0 if growth <= 64 * 1024 and in_cycles == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

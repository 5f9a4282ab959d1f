"""Per-example gradients of an MLP: `vmap(grad(loss))` against one batched backward.

    .venv/bin/python bench/func_per_example.py [--batch 256] [--repeat 30]
        [--dtype float32|float64] [--targets probabilities|classes]

Times the best of `--repeat` runs of each row, in rounds of 5 runs of each row in
turn (so that every row sees the same load), both wall-clock and the thread's CPU
time (on a shared machine a run of a few ms is often preempted; its CPU time is not):

- gradgen's vmap(grad(loss)) over the batch (batched: the batching rules run every
  operator once on the whole batch);
- gradgen's one batched backward of the mean loss (forward included: the batch's
  gradient, not per example), the yardstick of issue 15 (vmap(grad) within 2x);
- numpy by hand: the same per-example gradients written directly in numpy (what no
  transform can beat), and its per-example weight-gradient writes alone (the
  256 x 25856 values every per-example method must write; both write them as
  gradgen's bmm does, by BLAS over a contraction of 2, two examples per product,
  numpy's fastest way (an odd batch: one per product, padded by zeros)), and
  `fill` of as many fresh values (the machine's store bandwidth: a floor no method
  that returns the per-example gradients can go below; on a machine whose memory is
  slow next to its arithmetic, it alone can be a large part of the 2x budget);
- torch.func's vmap(grad) and torch's batched backward, when torch is installed:
  torch is imported and its rows timed after the others (in rounds of their own),
  as merely importing torch makes numpy's large writes in this process 5-10% slower
  (the per-example rows, not the batched backward): the gradgen and numpy rows are
  timed without it.

The targets are one-hot class probabilities (the default) or, with `--targets
classes`, the class indices (gradgen's and torch's rows; numpy's rows take the
one-hot rows, the same gradients).

gradgen's vmap by its per-example loop (what the batched run must equal) is checked
against the batched run once, and timed on a few rounds (`--loop-repeat`).
"""

from __future__ import annotations

import os

# One BLAS thread, as a fair timing on a shared machine (set before numpy loads).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import gradgen  # noqa: E402
from gradgen.func import functional_call, grad, vmap  # noqa: E402
from gradgen.func.randomness import Randomness  # noqa: E402
from gradgen.func.vmap import _check_in_dims, _per_example  # noqa: E402

SIZES = (64, 128, 128, 10)
BLOCK = 5  # runs of one row in a row (see `_best`)
Row = tuple[str, Callable[[], Any]]


def _model(lib: Any, dtype: Any) -> Any:
    nn = lib.nn
    lib.manual_seed(0)
    layers: list[Any] = []
    for fan_in, fan_out in zip(SIZES, SIZES[1:]):
        layers += [nn.Linear(fan_in, fan_out, dtype=dtype), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def _loss(lib: Any, model: Any, functional: Any) -> Callable[..., Any]:
    def loss(params: Any, x: Any, target: Any) -> Any:
        logits = functional(model, params, (x.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(logits, target.unsqueeze(0))

    return loss


def _best(
    rows: list[Row], repeat: int, block: int = BLOCK
) -> list[tuple[str, float, float]]:
    """(name, best wall seconds, best CPU seconds) of each row over `repeat` runs: in
    rounds of `block` runs of each row in turn (the rows see the same load; the runs
    after a block's first find the caches as a loop of that row leaves them)."""
    wall = [float("inf")] * len(rows)
    cpu = [float("inf")] * len(rows)
    for _ in range(max(repeat // block, 1)):
        for index, (_, run) in enumerate(rows):
            for _ in range(block):
                start_cpu, start = time.thread_time(), time.perf_counter()
                run()
                wall[index] = min(wall[index], time.perf_counter() - start)
                cpu[index] = min(cpu[index], time.thread_time() - start_cpu)
    return [(name, w, c) for (name, _), w, c in zip(rows, wall, cpu)]


def _gradgen_rows(
    data: np.ndarray, labels: np.ndarray, dtype: Any, one_hot: np.ndarray
) -> tuple[list[Row], Callable[[], Any], dict[str, np.ndarray]]:
    """The timed gradgen rows, the per-example loop, and the weights (as arrays)."""
    model = _model(gradgen, getattr(gradgen, dtype))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, t = gradgen.tensor(data), gradgen.tensor(labels)
    loss = _loss(gradgen, model, functional_call)
    per_example = vmap(grad(loss), in_dims=(None, 0, 0))

    def loop() -> Any:
        args = (params, x, t)
        size, dims, flat, spec = _check_in_dims(per_example, (None, 0, 0), args)
        return _per_example(
            grad(loss), 0, size, dims, flat, spec, {}, Randomness("error")
        )

    def batched_backward() -> Any:
        total = gradgen.nn.functional.cross_entropy(model(x), t)
        return gradgen.autograd.grad(total, list(model.parameters()))

    batched, looped = per_example(params, x, t), loop()
    tolerance = 1e-5 if dtype == "float32" else 1e-10
    for name in params:
        got, want = batched[name].numpy(), looped[name].numpy()
        assert np.allclose(got, want, atol=tolerance), name
    rows: list[Row] = [
        ("gradgen vmap(grad)", lambda: per_example(params, x, t)),
        ("gradgen one batched backward", batched_backward),
    ]
    arrays = {k: v.numpy() for k, v in params.items()}
    _check_by_hand(arrays, data, one_hot, batched, tolerance)
    return rows, loop, arrays


def _outer_products(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """(b, n, m): each example's outer product of a row of `left` and one of `right`,
    numpy's fastest way (the one gradgen's bmm takes): BLAS products over a
    contraction of length 2, two examples per product, ``[[l0, 0], [0, l1]] @ [r0;
    r1]`` (each element its one product plus 0 times the other example's finite
    value: exactly the product), the block diagonal stored by columns (given to
    matmul transposed: ~5% faster than by rows). One example per product padded
    by zeros takes ~10% longer, einsum ("bi,bj->bij") about twice as long, as it
    zeroes its output first."""
    batch, n = left.shape
    if batch % 2:  # one example per product, the contraction padded by zeros
        columns = np.zeros((batch, 2, n), left.dtype)
        columns[:, 0, :] = left
        rows = np.zeros((batch, 2, right.shape[1]), right.dtype)
        rows[:, 0, :] = right
        return np.matmul(columns.transpose(0, 2, 1), rows)
    half = batch // 2
    blocks = np.zeros((half, 2, 2, n), left.dtype)
    blocks[:, 0, 0, :] = left[0::2]
    blocks[:, 1, 1, :] = left[1::2]
    product = np.matmul(
        blocks.reshape(half, 2, 2 * n).transpose(0, 2, 1),
        right.reshape(half, 2, -1),
    )
    return product.reshape(batch, n, right.shape[1])


def _by_hand(
    params: dict[str, np.ndarray], x: np.ndarray, target: np.ndarray
) -> list[np.ndarray]:
    """The per-example gradients in numpy: forward, softmax, then per layer the
    weight gradients as outer products and the input gradient by one mm."""
    weights = [params[f"{i}.weight"] for i in (0, 2, 4)]
    biases = [params[f"{i}.bias"] for i in (0, 2, 4)]
    inputs = [x]
    for weight, bias in zip(weights[:-1], biases[:-1]):
        inputs.append(np.maximum(inputs[-1] @ weight.T + bias, 0))
    logits = inputs[-1] @ weights[-1].T + biases[-1]
    shifted = np.exp(logits - logits.max(1, keepdims=True))
    probabilities = shifted / shifted.sum(1, keepdims=True)
    grad_out = probabilities * target.sum(1, keepdims=True) - target
    grads: list[np.ndarray] = []
    for layer in (2, 1, 0):
        grads += [grad_out, _outer_products(grad_out, inputs[layer])]
        if layer:
            grad_out = (grad_out @ weights[layer]) * (inputs[layer] > 0)
    return grads[::-1]


def _check_by_hand(
    params: dict[str, np.ndarray],
    x: np.ndarray,
    target: np.ndarray,
    batched: dict[str, Any],
    tolerance: float,
) -> None:
    names = [f"{i}.{kind}" for i in (0, 2, 4) for kind in ("weight", "bias")]
    for name, expected in zip(names, _by_hand(params, x, target)):
        assert np.allclose(batched[name].numpy(), expected, atol=tolerance), name


def _numpy_rows(
    params: dict[str, np.ndarray], x: np.ndarray, target: np.ndarray
) -> list[Row]:
    rng = np.random.default_rng(1)
    left = [rng.standard_normal((len(x), n)).astype(x.dtype) for n in SIZES[1:]]
    right = [rng.standard_normal((len(x), n)).astype(x.dtype) for n in SIZES[:-1]]

    def writes() -> Any:
        return [_outer_products(a, b) for a, b in zip(left, right)]

    def fills() -> Any:
        arrays = [
            np.empty((len(x), a.shape[1], b.shape[1]), x.dtype)
            for a, b in zip(left, right)
        ]
        for array in arrays:
            array.fill(1.0)
        return arrays

    return [
        ("numpy by hand: per-example gradients", lambda: _by_hand(params, x, target)),
        ("numpy: the weight-gradient writes alone", writes),
        ("numpy: filling as many values (store floor)", fills),
    ]


def _torch_rows(data: np.ndarray, labels: np.ndarray, dtype: str) -> list[Row]:
    try:
        import torch
    except ImportError:
        return []
    torch.set_num_threads(1)  # as gradgen (numpy on one core), on a shared machine
    model = _model(torch, getattr(torch, dtype))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, t = torch.tensor(data), torch.tensor(labels)
    loss = _loss(torch, model, torch.func.functional_call)
    per_example = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))

    def batched_backward() -> Any:
        total = torch.nn.functional.cross_entropy(model(x), t)
        return torch.autograd.grad(total, list(model.parameters()))

    return [
        ("torch.func vmap(grad)", lambda: per_example(params, x, t)),
        ("torch one batched backward", batched_backward),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--loop-repeat", type=int, default=2)
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    parser.add_argument(
        "--targets", choices=("probabilities", "classes"), default="probabilities"
    )
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    data = rng.standard_normal((options.batch, SIZES[0])).astype(options.dtype)
    classes = rng.integers(0, SIZES[-1], options.batch)
    one_hot = np.eye(SIZES[-1], dtype=options.dtype)[classes]
    labels = classes if options.targets == "classes" else one_hot
    rows, loop, params = _gradgen_rows(data, labels, options.dtype, one_hot)
    rows += _numpy_rows(params, data, one_hot)
    results = _best(rows, options.repeat)
    results += _best(_torch_rows(data, labels, options.dtype), options.repeat)
    results += _best(
        [("gradgen vmap by per-example loop", loop)], options.loop_repeat, block=1
    )
    print(
        f"per-example gradients, MLP {SIZES}, batch {options.batch}, "
        f"{options.dtype}, {options.targets}, best of {options.repeat} "
        f"(rounds of {BLOCK})"
    )
    print(f"  {'':45s} {'wall ms':>9s} {'CPU ms':>9s}")
    for name, wall, cpu in results:
        print(f"  {name:45s} {wall * 1e3:9.2f} {cpu * 1e3:9.2f}")
    timing = {name: (wall, cpu) for name, wall, cpu in results}
    for top, bottom in (
        ("gradgen vmap(grad)", "gradgen one batched backward"),
        ("numpy by hand: per-example gradients", "gradgen one batched backward"),
        ("numpy: the weight-gradient writes alone", "gradgen one batched backward"),
        ("numpy: filling as many values (store floor)", "gradgen one batched backward"),
        ("torch.func vmap(grad)", "torch one batched backward"),
    ):
        if top in timing:
            wall, cpu = (timing[top][i] / timing[bottom][i] for i in (0, 1))
            print(f"  {top} / {bottom}: {wall:.2f}x wall, {cpu:.2f}x CPU")


if __name__ == "__main__":
    main()

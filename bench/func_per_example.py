"""Per-example gradients of an MLP: `vmap(grad(loss))` against one batched backward.

    .venv/bin/python bench/func_per_example.py [--batch 256] [--repeat 5]

Reports the median time of: gradgen's vmap(grad(loss)) over the batch (batched: the
batching rules run every operator once on the whole batch), gradgen's vmap by its
per-example loop (what the batch must equal), gradgen's one batched backward of the
mean loss (the batch's gradient, not per example), and torch.func's vmap(grad) when
torch is installed. The per-example results are checked against the loop.
"""

from __future__ import annotations

import os

# One BLAS thread, as a fair timing on a shared machine (set before numpy loads).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import gradgen  # noqa: E402
from gradgen.func import functional_call, grad, vmap  # noqa: E402
from gradgen.func.randomness import Randomness  # noqa: E402
from gradgen.func.vmap import _check_in_dims, _per_example  # noqa: E402

SIZES = (64, 128, 128, 10)


def _median(run: Callable[[], Any], repeat: int) -> float:
    run()  # warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _model(lib: Any) -> Any:
    nn = lib.nn
    lib.manual_seed(0)
    layers: list[Any] = []
    for fan_in, fan_out in zip(SIZES, SIZES[1:]):
        layers += [nn.Linear(fan_in, fan_out), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def _loss(lib: Any, model: Any, functional: Any) -> Callable[..., Any]:
    def loss(params: Any, x: Any, target: Any) -> Any:
        logits = functional(model, params, (x.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(logits, target.unsqueeze(0))

    return loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    data = rng.standard_normal((options.batch, SIZES[0])).astype(np.float32)
    labels = np.eye(SIZES[-1], dtype=np.float32)[
        rng.integers(0, SIZES[-1], options.batch)
    ]

    model = _model(gradgen)
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
    for name in params:
        assert np.allclose(batched[name].numpy(), looped[name].numpy(), atol=1e-5), name
    rows = [
        (
            "gradgen vmap(grad) (batching rules)",
            _median(lambda: per_example(params, x, t), options.repeat),
        ),
        ("gradgen vmap(grad) by per-example loop", _median(loop, options.repeat)),
        (
            "gradgen one batched backward (mean loss)",
            _median(batched_backward, options.repeat),
        ),
    ]
    rows += _torch_rows(data, labels, options)
    print(f"per-example gradients, MLP {SIZES}, batch {options.batch}")
    for name, seconds in rows:
        print(f"  {name:45s} {seconds * 1e3:9.2f} ms")
    ratio = rows[0][1] / rows[2][1]
    print(f"  vmap(grad) / one batched backward: {ratio:.2f}x")


def _torch_rows(
    data: np.ndarray, labels: np.ndarray, options: Any
) -> list[tuple[str, float]]:
    try:
        import torch
    except ImportError:
        return []
    torch.set_num_threads(1)  # as gradgen (numpy on one core), on a shared machine
    model = _model(torch)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, t = torch.tensor(data), torch.tensor(labels)
    loss = _loss(torch, model, torch.func.functional_call)
    per_example = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))
    return [
        (
            "torch.func vmap(grad)",
            _median(lambda: per_example(params, x, t), options.repeat),
        )
    ]


if __name__ == "__main__":
    main()

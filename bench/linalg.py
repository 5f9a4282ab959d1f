"""SVD and eigh, forward and backward, against numpy's own decomposition and torch in
the same process, one thread (issue 13: "SVD/eigh backward at numpy's LAPACK speed
plus small overhead"). Run: .venv/bin/python bench/linalg.py [--batch 8 --n 64]."""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import gradgen  # noqa: E402


def median_ms(step: Callable[[], Any], repeats: int) -> float:
    step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def svd_loss(lib: Any, a: Any) -> Any:
    U, S, Vh = lib.linalg.svd(a, full_matrices=False)
    return (U.abs() * S.unsqueeze(-2)).sum() + Vh.abs().sum()


def eigh_loss(lib: Any, a: Any) -> Any:
    L, V = lib.linalg.eigh(a)
    return (V.abs() * L.unsqueeze(-2)).sum()


def rows(
    batch: int, n: int, repeats: int
) -> list[tuple[str, float, float, float, float]]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, n, n))
    sym = x + np.swapaxes(x, -1, -2)
    libs: dict[str, Any] = {"gradgen": gradgen}
    try:
        import torch

        torch.set_num_threads(1)
        libs["torch"] = torch
    except ImportError:  # pragma: no cover
        pass
    found = []
    cases = (
        ("svd", svd_loss, x, lambda: np.linalg.svd(x, full_matrices=False)),
        ("eigh", eigh_loss, sym, lambda: np.linalg.eigh(sym)),
    )
    for name, loss, data, numpy_step in cases:
        numpy_ms = median_ms(numpy_step, repeats)
        timings = {}
        for label, lib in libs.items():

            def forward(lib: Any = lib) -> Any:
                return loss(lib, lib.tensor(data))

            def both(lib: Any = lib) -> Any:
                a = lib.tensor(data, requires_grad=True)
                loss(lib, a).backward()

            timings[label] = (median_ms(forward, repeats), median_ms(both, repeats))
        torch_both = timings.get("torch", (float("nan"),) * 2)[1]
        found.append(
            (name, numpy_ms, timings["gradgen"][0], timings["gradgen"][1], torch_both)
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    print(f"batch {args.batch} of {args.n}x{args.n} float64, one thread, median ms")
    print(
        "| op | numpy decomposition | gradgen forward | gradgen fwd+bwd | torch fwd+bwd "
        "| gradgen/numpy | gradgen/torch |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, numpy_ms, forward, both, torch_both in rows(
        args.batch, args.n, args.repeats
    ):
        print(
            f"| {name} | {numpy_ms:.2f} | {forward:.2f} | {both:.2f} | {torch_both:.2f} "
            f"| {both / numpy_ms:.2f}x | {both / torch_both:.2f}x |"
        )


if __name__ == "__main__":
    main()

"""repeat_interleave with a Tensor of repeats under vmap: each example repeats by its
own counts (the composite once read example 0's counts from the array for every
example), as torch.func.vmap gives; and the counts' dtypes as PyTorch's CPU kernel
takes them (int64 and int32, kept in the result; others not implemented)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_compare import same_error
from torch_oracle import oracle

from .common import assert_same, plain

VALUES = np.arange(6.0).reshape(2, 3)
REPEATS = np.array([[1, 2, 1], [2, 1, 1]])

CASES: dict[str, tuple[Callable[[Any], Any], tuple[Any, ...]]] = {
    # (function of the library, in_dims)
    "both batched": (lambda lib: lambda a, r: lib.repeat_interleave(a, r), (0, 0)),
    "repeats batched": (
        lambda lib: lambda a, r: lib.repeat_interleave(a, r),
        (None, 0),
    ),
    "counts batched": (lambda lib: lambda a, r: lib.repeat_interleave(r), (None, 0)),
    "values batched": (lambda lib: lambda a, r: lib.repeat_interleave(a, r), (0, None)),
    "along a dim": (
        lambda lib: lambda a, r: lib.repeat_interleave(a[None], r, dim=1),
        (0, 0),
    ),
}


def _run(lib: Any, case: str) -> Any:
    function, in_dims = CASES[case]
    vmap = lib.vmap if lib is gradgen else lib.func.vmap
    values = lib.tensor(VALUES if in_dims[0] == 0 else VALUES[0])
    repeats = lib.tensor(REPEATS if in_dims[1] == 0 else REPEATS[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the counts' per-example loop
        return plain(vmap(function(lib), in_dims=in_dims)(values, repeats))


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_example_repeats_by_its_own_counts(case: str) -> None:
    assert_same(_run(gradgen, case), oracle("vmap", lambda t: _run(t, case)), case)


def test_the_gradient_through_batched_repeats() -> None:
    def run(lib: Any) -> Any:
        vmap = lib.vmap if lib is gradgen else lib.func.vmap
        grad = lib.func.grad

        def loss(a: Any, r: Any) -> Any:
            return (lib.repeat_interleave(a, r) * lib.arange(4.0)).sum()

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return plain(vmap(grad(loss))(lib.tensor(VALUES), lib.tensor(REPEATS)))

    assert_same(run(gradgen), oracle("grads", run))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_counts_keep_their_integer_dtype(dtype: str) -> None:
    def run(lib: Any) -> Any:
        counts = lib.tensor([1, 0, 2], dtype=getattr(lib, dtype))
        return str(lib.repeat_interleave(counts).dtype).split(".")[-1]

    assert run(gradgen) == oracle("dtype", run)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bool", "uint8", "int16"])
def test_other_count_dtypes_are_not_implemented(dtype: str) -> None:
    same_error(
        lambda lib: lib.repeat_interleave(lib.tensor([1, 0], dtype=getattr(lib, dtype)))
    )
    same_error(
        lambda lib: lib.repeat_interleave(
            lib.arange(2.0), lib.tensor([1, 0], dtype=getattr(lib, dtype))
        )
    )

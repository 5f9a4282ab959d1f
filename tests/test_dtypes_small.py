"""The small dtypes PyTorch users name: int8, int16, uint8, float16. numpy arrays of
them keep their dtype, promotion follows PyTorch's table, and everyday operators give
PyTorch's result dtypes."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle

SMALL = ["int8", "int16", "uint8", "float16"]


def _name(t: Any) -> str:
    return str(t.dtype).split(".")[-1]


@pytest.mark.parametrize("name", SMALL)
def test_numpy_arrays_keep_their_dtype(name: str) -> None:
    array = np.array([1, 2, 3], dtype=name)
    assert _name(gradgen.tensor(array)) == name
    shared = gradgen.from_numpy(array)
    assert _name(shared) == name
    array[0] = 7
    assert shared.tolist()[0] == 7
    assert gradgen.tensor(array).numpy().dtype == np.dtype(name)


def test_the_dtypes_and_aliases_exist() -> None:
    assert gradgen.half is gradgen.float16 and gradgen.short is gradgen.int16
    assert gradgen.zeros(2, dtype=gradgen.int8).dtype == gradgen.int8
    assert gradgen.ones(2).half().dtype == gradgen.float16
    assert gradgen.ones(2).byte().dtype == gradgen.uint8
    assert gradgen.ones(2).char().dtype == gradgen.int8
    assert gradgen.ones(2).short().dtype == gradgen.int16


PAIRS = [(a, b) for a in SMALL + ["bool", "int64", "float32"] for b in SMALL]


def test_promotion_as_pytorch() -> None:
    def by_add(lib: Any) -> list[str]:
        return [
            _name(
                lib.ones(1, dtype=getattr(lib, a)) + lib.ones(1, dtype=getattr(lib, b))
            )
            for a, b in PAIRS
        ]

    assert by_add(gradgen) == oracle("promotion", by_add)


OPERATIONS: list[Callable[[Any, Any], Any]] = [
    lambda lib, x: x + 1,
    lambda lib, x: x * 2.5,
    lambda lib, x: x / 2,
    lambda lib, x: -x if x.dtype != lib.uint8 else x,
    lambda lib, x: x.sum(),
    lambda lib, x: x.abs(),
    lambda lib, x: lib.cat([x, x]),
    lambda lib, x: x.reshape(2, 2).t(),
    lambda lib, x: x > 1,
    lambda lib, x: x.to(lib.float32),
    lambda lib, x: x.max(),
]


@pytest.mark.parametrize("name", SMALL)
def test_operators_on_small_dtypes(name: str) -> None:
    values = np.array([1, 2, 3, 4], dtype=name)

    def run(lib: Any) -> list[Any]:
        x = lib.tensor(values)
        results = [op(lib, x) for op in OPERATIONS]
        return [
            (_name(r), np.asarray(r.tolist(), np.float64).tolist()) for r in results
        ]

    assert run(gradgen) == oracle("results", run)


def test_float16_requires_grad_and_differentiates() -> None:
    x = gradgen.tensor([1.0, 2.0], dtype=gradgen.float16, requires_grad=True)
    (x * x).sum().backward()
    assert x.grad is not None and x.grad.dtype == gradgen.float16
    assert x.grad.tolist() == [2.0, 4.0]

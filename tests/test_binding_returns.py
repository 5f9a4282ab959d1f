"""What the Python bindings return for an operator returning Tensor[]: a tuple, as
PyTorch's bindings (the operator itself gives a list), tested against torch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import gradgen
from torch_oracle import oracle

CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "split": lambda lib, x: lib.split(x, 2),
    "split sizes": lambda lib, x: lib.split(x, [1, 3]),
    "Tensor.split": lambda lib, x: x.split(2),
    "split_with_sizes": lambda lib, x: lib.split_with_sizes(x, [1, 3]),
    "chunk": lambda lib, x: lib.chunk(x, 3),
    "Tensor.chunk": lambda lib, x: x.chunk(2),
    "unbind": lambda lib, x: lib.unbind(x),
    "Tensor.unbind": lambda lib, x: x.unbind(0),
    "tensor_split": lambda lib, x: lib.tensor_split(x, 3),
    "Tensor.tensor_split": lambda lib, x: x.tensor_split([1, 2]),
    "hsplit": lambda lib, x: lib.hsplit(x, 2),
    "broadcast_tensors": lambda lib, x: lib.broadcast_tensors(x, x),
    "meshgrid": lambda lib, x: lib.meshgrid(x, x, indexing="ij"),
}


def _shape(lib: Any, name: str) -> tuple[str, list[list[float]]]:
    result = CALLS[name](lib, lib.arange(4.0))
    return type(result).__name__, [part.tolist() for part in result]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_tensor_list_results_are_tuples_as_torch(name: str) -> None:
    assert _shape(gradgen, name) == tuple(
        oracle(name, lambda torch: list(_shape(torch, name)))
    )

"""Schema facts and small helpers the batching rules share (batching_rules.py and
its family modules)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from ..tensor import Tensor
from .batching import HANDLES, call_plain


@functools.cache
def arguments(schema: str) -> tuple[tuple[str, str], ...]:
    """(type, name) of each argument of a schema string, keyword-only ones included."""
    inner = schema[schema.index("(") + 1 : schema.rindex(") ->")]
    found = []
    for part in inner.split(", "):
        if part == "*" or not part:
            continue
        declaration = part.split("=")[0]
        kind, _, name = declaration.rpartition(" ")
        found.append((kind, name))
    return tuple(found)


DIM_NAMES = frozenset(
    {
        "dim",
        "dim0",
        "dim1",
        "dim2",
        "dims",
        "start_dim",
        "end_dim",
        "source",
        "destination",
    }
)


def pad(value: Tensor, logical_rank: int, rank: int) -> Tensor:
    """`value` (batch first) with size-1 dims after the batch up to logical `rank`."""
    for _ in range(rank - logical_rank):
        value = call_plain(HANDLES["unsqueeze"], value, 1)
    return value


def wrap_dim(dim: int, rank: int) -> int:
    if not -max(rank, 1) <= dim < max(rank, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(rank, 1)}, "
            f"{max(rank, 1) - 1}], but got {dim})"
        )
    return dim % max(rank, 1)


def tensors_of(args: Sequence[Any]) -> list[Tensor]:
    return [a for a in args if isinstance(a, Tensor)]


def same_kind(container: Any, items: Sequence[Any]) -> Any:
    """`items` in a container of the type of `container` (namedtuples included)."""
    if hasattr(container, "_fields"):
        return type(container)(*items)
    return type(container)(items)

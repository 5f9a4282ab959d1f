"""Watching the engine's hand-over of gradients to leaves, for tests that check a
fresh gradient array becomes `.grad` without a copy."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gradgen import engine, engine_tree


@contextmanager
def accumulated_arrays() -> Iterator[list[int]]:
    """The ids of the gradient arrays the engine hands to AccumulateGrad nodes (both
    loops: the general one and the tree one), in order, while the block runs."""
    seen: list[int] = []
    original = engine._accumulate_array

    def spy(node: Any, inputs: Any) -> bool:
        seen.append(id(inputs[0]))
        return original(node, inputs)

    engine._accumulate_array = engine_tree._accumulate_array = spy
    try:
        yield seen
    finally:
        engine._accumulate_array = engine_tree._accumulate_array = original

"""torch.nn.modules.utils' argument helpers: a number or a sequence as an n-tuple."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = ["_single", "_pair", "_triple", "_reverse_repeat_tuple"]


def _ntuple(n: int) -> Callable[[Any], tuple[Any, ...]]:
    def parse(x: Any) -> tuple[Any, ...]:
        if isinstance(x, Iterable) and not isinstance(x, str):
            return tuple(x)
        return (x,) * n

    return parse


_single = _ntuple(1)
_pair = _ntuple(2)
_triple = _ntuple(3)


def _reverse_repeat_tuple(t: Sequence[int], n: int) -> tuple[int, ...]:
    """`t` reversed, each element repeated n times: F.pad's order for a padding given
    first dimension first."""
    return tuple(x for x in reversed(t) for _ in range(n))

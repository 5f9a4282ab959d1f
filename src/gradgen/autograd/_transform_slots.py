"""What autograd needs from gradgen.func, filled in by gradgen.func when it loads.

autograd sits on floor 4 and gradgen.func on floor 6 (tests/test_floors.py), so
autograd cannot import vmap; but ``grad(..., is_grads_batched=True)`` runs the
backward pass under vmap, and a custom Function called inside a transform must know
that it is. gradgen.func sets these slots at import, as an operator's kernels are
registered with the dispatcher from above it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class _Slots:
    # gradgen.func.vmap: vmap(func, in_dims, out_dims)(*args).
    vmap: Callable[..., Callable[..., Any]] | None = None
    # Whether a gradgen.func transform (grad, vjp, jvp, vmap, ...) is running.
    transform_active: Callable[[], bool] = staticmethod(lambda: False)
    # How Function.apply runs with BatchedTensor arguments: (cls, args) -> output, or
    # NotImplemented when no argument is batched.
    function_vmap: Callable[[Any, tuple[Any, ...]], Any] | None = None


slots = _Slots()


def require_vmap() -> Callable[..., Callable[..., Any]]:
    """gradgen.func.vmap (gradgen.func loads with gradgen, so it is always there)."""
    if slots.vmap is None:
        raise RuntimeError(
            "is_grads_batched=True needs gradgen.func (import gradgen loads it)"
        )
    return slots.vmap

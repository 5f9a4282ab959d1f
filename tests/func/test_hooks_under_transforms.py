"""Tensor hooks registered inside vmap(grad(...)) against torch.func: they fire once
per batch, see the gradient with one example's shape (batched underneath), and what
they return replaces the gradient of every example (recorded in tests/golden/)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import gradgen
from torch_oracle import oracle

X = np.arange(6.0).reshape(2, 3) - 2.0
X3 = np.arange(12.0).reshape(2, 2, 3) / 4.0 - 1.0


def _run(
    lib: Any, hook: Callable[[Any, Any], Any], on_input: bool, data: np.ndarray
) -> tuple[np.ndarray, list[list[int]]]:
    """vmap(grad(f)) (vmap twice for 3-d `data`) with `hook(lib, g)` on y = x * 2 or
    on the input x; the gradients and the shapes the hook saw."""
    shapes: list[list[int]] = []

    def recorded(g: Any) -> Any:
        shapes.append(list(g.shape))
        return hook(lib, g)

    def f(x: Any) -> Any:
        y = x * 2
        (x if on_input else y).register_hook(recorded)
        return (y**3).sum()

    transform = lib.func.vmap(lib.func.grad(f))
    if data.ndim == 3:
        transform = lib.func.vmap(transform)
    found = transform(lib.tensor(data))
    return np.asarray(found.detach().numpy()), shapes


CASES: dict[str, tuple[Callable[[Any, Any], Any], bool, np.ndarray]] = {
    "observe_intermediate": (lambda lib, g: None, False, X),
    "observe_input": (lambda lib, g: None, True, X),
    "square_intermediate": (lambda lib, g: g * g, False, X),
    "shift_input": (lambda lib, g: g + 1.0, True, X),
    "unbatched_replacement": (lambda lib, g: lib.ones(3, dtype=lib.float64), False, X),
    "nested_vmap_square": (lambda lib, g: g * g, False, X3),
    "nested_vmap_observe": (lambda lib, g: None, True, X3),
}


def test_hooks_under_vmap_grad_match_torch() -> None:
    for name, (hook, on_input, data) in CASES.items():
        ours = _run(gradgen, hook, on_input, data)
        theirs = oracle(name, lambda torch: _run(torch, hook, on_input, data))
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, err_msg=name)
        assert ours[1] == [list(s) for s in theirs[1]], name


def test_hook_replacement_values_by_hand() -> None:
    # y = 2x, loss = sum(y^3): dL/dy = 3 y^2, squared by the hook, times dy/dx = 2.
    found, shapes = _run(gradgen, lambda lib, g: g * g, False, X)
    np.testing.assert_allclose(found, 2 * (3 * (2 * X) ** 2) ** 2)
    assert shapes == [[3]]

"""Running one function on gradgen and PyTorch, shared by the nn operator tests
(activations, losses, normalization, embedding, padding, functional).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import numbered, oracle, outcome

NONE, MEAN, SUM = 0, 1, 2


TOLERANCE = {"float64": 1e-12, "float32": 2e-6}


def _arrays(seed: int, *shapes: tuple[int, ...], dtype: str = "float64") -> list[Any]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2, 2, shape).astype(dtype) for shape in shapes]


def _nn(torch: Any, name: str) -> Callable[..., Any]:
    """torch._C._nn.NAME, else torch.NAME, else torch.ops.aten.NAME."""
    for namespace in (torch._C._nn, torch):
        if hasattr(namespace, name):
            return getattr(namespace, name)
    return getattr(torch.ops.aten, name)


def _dtype_name(t: Any) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def _flags(arrays: list[Any], requires_grad: Any) -> list[bool]:
    if isinstance(requires_grad, (list, tuple)):
        return list(requires_grad)
    return [requires_grad] * len(arrays)


def _run(
    lib: Any, fn: Callable[..., Any], arrays: list[Any], flags: list[bool], seed: int
) -> dict[str, Any]:
    """fn(*tensors of lib): value, dtype, shape, grad_fn name and, when it requires
    grad, the gradients of the inputs that require grad for one seeded cotangent."""
    inputs = [lib.tensor(a, requires_grad=f) for a, f in zip(arrays, flags)]
    out = fn(*inputs)
    answer: dict[str, Any] = {
        "dtype": _dtype_name(out),
        "shape": tuple(out.shape),
        "out": out.detach().numpy(),
        "grad_fn": None if out.grad_fn is None else out.grad_fn.name(),
    }
    grad_inputs = [i for i, t in enumerate(inputs) if t.requires_grad]
    if out.requires_grad and grad_inputs:
        cotangent = np.random.default_rng(seed).uniform(-1, 1, tuple(out.shape))
        cotangent = cotangent.astype(arrays[grad_inputs[0]].dtype)
        grads = lib.autograd.grad(
            out, [inputs[i] for i in grad_inputs], lib.tensor(cotangent)
        )
        answer["grads"] = [g.numpy() for g in grads]
    return answer


def _check_against_torch(
    ours_fn: Callable[..., Any],
    theirs_fn: Callable[[Any], Callable[..., Any]],
    arrays: list[Any],
    requires_grad: Any = True,
    seed: int = 7,
    rtol: float | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Values, dtype, shape, grad_fn name and (for inputs requiring grad) gradients of
    ours_fn equal those of theirs_fn(torch) (recorded, see torch_oracle). Returns both
    answers (see _run)."""
    flags = _flags(arrays, requires_grad)
    expected = oracle(
        numbered("check"),
        lambda torch: _run(torch, theirs_fn(torch), arrays, flags, seed),
    )
    out = _run(gradgen, ours_fn, arrays, flags, seed)
    assert out["dtype"] == expected["dtype"]
    assert out["shape"] == expected["shape"]
    tolerance = rtol if rtol is not None else TOLERANCE.get(out["dtype"], 0)
    np.testing.assert_allclose(
        out["out"], expected["out"], rtol=tolerance, atol=tolerance
    )
    if "grads" in expected:
        assert out["grad_fn"] == expected["grad_fn"]
        assert "grads" in out and len(out["grads"]) == len(expected["grads"])
        for g, w in zip(out["grads"], expected["grads"]):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=10 * tolerance, atol=10 * tolerance)
    return out, expected


def _second(
    lib: Any, fn: Callable[..., Any], arrays: list[Any], seed: int
) -> list[Any]:
    """d/dx <w, d f/dx . v> (create_graph=True, then a second grad)."""
    rng = np.random.default_rng(seed)
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*inputs)
    cotangent = rng.uniform(-1, 1, tuple(out.shape))
    first = lib.autograd.grad(out, inputs, lib.tensor(cotangent), create_graph=True)
    weights = [rng.uniform(-1, 1, a.shape) for a in arrays]
    total = sum((g * lib.tensor(w)).sum() for g, w in zip(first, weights))
    second = lib.autograd.grad(total, inputs, allow_unused=True)
    return [None if g is None else g.numpy() for g in second]


def _second_derivatives_match(
    ours_fn: Callable[..., Any],
    theirs_fn: Callable[[Any], Callable[..., Any]],
    arrays: list[Any],
    seed: int = 11,
) -> None:
    """d/dx <w, d f/dx . v> against torch's (recorded, see torch_oracle)."""
    expected = oracle(
        numbered("second"), lambda torch: _second(torch, theirs_fn(torch), arrays, seed)
    )
    got = _second(gradgen, ours_fn, arrays, seed)
    for g, w in zip(got, expected, strict=True):
        if w is None:
            assert g is None or not np.any(g)
            continue
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def _same_error(
    ours: Callable[[], Any], theirs: Callable[[Any], Callable[[], Any]]
) -> None:
    """ours() raises the error theirs(torch)() raises (recorded): type and message."""
    expected = oracle(numbered("error"), lambda torch: outcome(theirs(torch)))
    assert isinstance(expected, Exception), f"torch raised nothing: {expected!r}"
    with pytest.raises(type(expected)) as got:
        ours()
    assert str(got.value) == str(expected)

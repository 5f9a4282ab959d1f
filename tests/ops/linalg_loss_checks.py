"""Running one function on gradgen and PyTorch, shared by the linalg and loss tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import gradgen
from torch_oracle import numbered, oracle

TOLERANCE = {"float64": 1e-12, "float32": 2e-6, "complex128": 1e-12, "complex64": 2e-6}

# gradgen's shared reshape views a clone, and clone keeps a transposed or expanded
# layout, so reshaping a non-contiguous tensor fails ("view size is not compatible
# with input tensor's size and stride"). matmul's own reshapes avoid it, but the
# backward formulas of view/_unsafe_view reshape the incoming gradient, which is
# transposed in these cases. Fix: clone with memory_format="contiguous_format" in
# reshape/contiguous (and a clone kernel that honours it).
# The generated autograd kernel saves an optional tensor argument unconditionally:
# SavedVariable(None) raises AttributeError ('NoneType' object has no attribute
# '_version_counter') for weight=None when the input requires grad.
OPTIONAL_SAVE_GAP = (
    "generated code saves an undefined Tensor? weight with SavedVariable"
)
# codegen/load.py _op_prefix replaces "ForwardBackward" before appending "Backward",
# so nll_loss_forward's node is NllLossForwardBackward0 (PyTorch: NllLossBackward0).
OP_PREFIX_BUG = (
    "codegen _op_prefix: NllLossForwardBackward0 instead of NllLossBackward0"
)


def _arrays(seed: int, *shapes: tuple[int, ...], dtype: str = "float64") -> list[Any]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2, 2, shape).astype(dtype) for shape in shapes]


def _run(
    lib: Any, fn: Callable[..., Any], arrays: list[Any], requires_grad: Any, seed: int
) -> dict[str, Any]:
    """fn(*tensors of lib): value, dtype, shape, grad_fn name and, when it requires grad,
    the gradients of the inputs that require grad for one seeded cotangent."""
    flags = (
        requires_grad
        if isinstance(requires_grad, (list, tuple))
        else [requires_grad] * len(arrays)
    )
    inputs = [lib.tensor(a, requires_grad=f) for a, f in zip(arrays, flags)]
    out = fn(*inputs)
    answer: dict[str, Any] = {
        "dtype": str(out.dtype).split(".")[-1],
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
) -> tuple[Any, dict[str, Any]]:
    """Values, dtype, shape and (for inputs requiring grad) gradients of ours_fn equal
    those of theirs_fn(torch) (recorded, see torch_oracle). Returns gradgen's result
    and torch's answer (see _run)."""
    expected = oracle(
        numbered("check"),
        lambda torch: _run(torch, theirs_fn(torch), arrays, requires_grad, seed),
    )
    ours = _run(gradgen, ours_fn, arrays, requires_grad, seed)
    assert ours["dtype"] == expected["dtype"]
    assert ours["shape"] == expected["shape"]
    rtol = TOLERANCE.get(ours["dtype"], 0)
    np.testing.assert_allclose(ours["out"], expected["out"], rtol=rtol, atol=rtol)
    if "grads" in expected:
        assert "grads" in ours, "torch's result requires grad, gradgen's does not"
        assert len(ours["grads"]) == len(expected["grads"])
        for g, w in zip(ours["grads"], expected["grads"]):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=10 * rtol, atol=10 * rtol)
    flags = (
        requires_grad
        if isinstance(requires_grad, (list, tuple))
        else [requires_grad] * len(arrays)
    )
    out = ours_fn(*[gradgen.tensor(a, requires_grad=f) for a, f in zip(arrays, flags)])
    return out, expected

"""`compare(fn, *arrays)` and `same_error(fn)`: one function of `lib` run on gradgen and
on PyTorch, whose answer is recorded in tests/golden/ (see torch_oracle.py), so the
comparison also runs where torch is not installed."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import numbered, oracle, outcome


def leaves(lib: Any, arrays: Sequence[Any]) -> list[Any]:
    """Tensors of `lib` for the arrays (floating and complex ones require grad); other
    arguments are passed as they are."""
    return [
        (
            lib.tensor(a.copy(), requires_grad=a.dtype.kind in "fc")
            if isinstance(a, np.ndarray)
            else a
        )
        for a in arrays
    ]


def to_numpy(tensor: Any) -> np.ndarray:
    detached = tensor.detach()
    if hasattr(detached, "resolve_conj"):  # torch's lazy conjugation and zero tensors
        return np.asarray(detached.numpy(force=True))
    return np.asarray(detached.numpy())


def dtype_name(tensor: Any) -> str:
    return str(tensor.dtype).replace("torch.", "").replace("gradgen.", "")


def run(
    lib: Any,
    fn: Callable[..., Any],
    arrays: Sequence[Any],
    create_graph: bool,
    second: Sequence[bool] | None = None,
) -> dict[str, Any]:
    """fn(lib, *leaves): value, dtype, shape, and the gradients for one fixed cotangent;
    with `create_graph`, the gradients of the squared norm of the gradients that
    `second` selects (by default: those that require grad)."""
    inputs = leaves(lib, arrays)
    out = fn(lib, *inputs)
    answer: dict[str, Any] = {
        "dtype": dtype_name(out),
        "shape": tuple(out.shape),
        "out": to_numpy(out),
        "requires_grad": out.requires_grad,
    }
    wrt = [leaf for leaf in inputs if getattr(leaf, "requires_grad", False)]
    if not out.requires_grad or not wrt:
        return answer
    cotangent = np.random.default_rng(7).uniform(0.5, 1.5, tuple(out.shape))
    grads = lib.autograd.grad(
        out,
        wrt,
        lib.tensor(cotangent).to(out.dtype),
        create_graph=create_graph,
        allow_unused=True,
    )
    answer["grads"] = [None if g is None else to_numpy(g) for g in grads]
    answer["grad_dtypes"] = [None if g is None else dtype_name(g) for g in grads]
    answer["second"] = [g is not None and g.requires_grad for g in grads]
    chosen = [g for g, s in zip(grads, second or answer["second"]) if s]
    if create_graph and chosen:
        total = sum((g * g.conj()).real.sum() for g in chosen)
        again = lib.autograd.grad(total, wrt, allow_unused=True)
        answer["again"] = [None if g is None else to_numpy(g) for g in again]
    return answer


def _assert_same_or_zero(got: Any, want: Any, **tolerances: Any) -> None:
    """Equal gradients; where torch has none, gradgen has none or zeros."""
    for g, w in zip(got, want, strict=True):
        if w is None:
            assert g is None or not np.any(g)
            continue
        assert g is not None
        rtol = tolerances["rtol"]
        if g.dtype in (np.float32, np.complex64):
            rtol = max(rtol, tolerances.get("rtol32", rtol))
        np.testing.assert_allclose(
            g, w, rtol=rtol, atol=tolerances["atol"], equal_nan=True
        )


def compare(
    fn: Callable[..., Any],
    *arrays: Any,
    create_graph: bool = False,
    grad_rtol32: float = 1e-10,
) -> None:
    """Run `fn(lib, *leaves)` on gradgen and torch: same values (NaN where torch has
    NaN), dtypes and shapes, and the same gradients for one fixed cotangent (relative
    tolerance 1e-10, `grad_rtol32` for single precision); with `create_graph`, the same
    gradients of those gradients too."""
    theirs = oracle(numbered("compare"), lambda t: run(t, fn, arrays, create_graph))
    ours = run(gradgen, fn, arrays, create_graph, theirs.get("second"))
    assert ours["dtype"] == theirs["dtype"]
    assert ours["shape"] == theirs["shape"]
    rtol = 1e-6 if ours["dtype"] in ("float32", "complex64") else 1e-12
    np.testing.assert_allclose(ours["out"], theirs["out"], rtol=rtol, equal_nan=True)
    if "grads" not in theirs:
        assert not ours["requires_grad"]
        return
    assert "grads" in ours, "torch's result requires grad, gradgen's does not"
    _assert_same_or_zero(
        ours["grads"], theirs["grads"], rtol=1e-10, rtol32=grad_rtol32, atol=1e-12
    )
    for g, w in zip(ours["grad_dtypes"], theirs["grad_dtypes"]):
        assert w is None or g == w
    if "again" in theirs:
        _assert_same_or_zero(ours["again"], theirs["again"], rtol=1e-9, atol=1e-12)


def same_error(fn: Callable[[Any], Any]) -> None:
    """fn(gradgen) raises what fn(torch) raises: the same type and message."""
    theirs = oracle(numbered("error"), lambda t: outcome(lambda: fn(t)))
    assert isinstance(theirs, Exception), f"torch raised nothing: {theirs!r}"
    with pytest.raises(type(theirs), match=re.escape(str(theirs))):
        fn(gradgen)


def _answer(value: Any) -> Any:
    """An outcome as comparable data: (class name, message, "torch." read as
    "gradgen.") of an error, an array of a tensor (or the value itself)."""
    if isinstance(value, Exception):
        return type(value).__name__, str(value).replace("torch.", "gradgen.")
    return value.numpy() if hasattr(value, "numpy") else value


def same_outcome(call: Callable[[Any], Any]) -> None:
    """call(gradgen) does what call(torch) does: the same error (class and message),
    or a tensor of the same dtype and exactly the same values."""
    expected = _answer(oracle("answer", lambda torch: outcome(lambda: call(torch))))
    got = _answer(outcome(lambda: call(gradgen)))
    if isinstance(expected, tuple):
        assert got == expected
    else:
        assert isinstance(got, np.ndarray), got
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)

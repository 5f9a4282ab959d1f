"""Shared by tests/test_runtime_safety_cases.py: the form a case states PyTorch's answer
in (`Raises`, `Value`), the small programs the cases run, and how an outcome is taken
and compared."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Raises:
    """PyTorch raises `error` with `message` (its text; `torch.` names are compared
    with gradgen's `gradgen.` ones)."""

    error: str
    message: str


@dataclass(frozen=True)
class Value:
    """PyTorch returns a tensor with these values and dtype (or a plain value)."""

    values: Any
    dtype: str | None = None


def _setitem(
    dtype: str, index: Any, value: Callable[[Any], Any]
) -> Callable[[Any], Any]:
    def run(lib: Any) -> Any:
        t = lib.zeros(3, dtype=getattr(lib, dtype))
        t[index(lib) if callable(index) else index] = value(lib)
        return t

    return run


def _inplace(
    dtype: str, method: str, *args: Callable[[Any], Any]
) -> Callable[[Any], Any]:
    def run(lib: Any) -> Any:
        t = lib.zeros(2, dtype=getattr(lib, dtype))
        getattr(t, method)(*[a(lib) for a in args])
        return t

    return run


def _hook_result(kind: str, result: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """backward through `x * 2` with a hook returning `result(grad...)`."""

    def run(lib: Any) -> Any:
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        if kind == "leaf":
            x.register_hook(lambda g: result(g))
        elif kind == "tensor":
            y.register_hook(lambda g: result(g))
        elif kind == "pre":
            y.grad_fn.register_prehook(lambda go: result(go))
        else:
            y.grad_fn.register_hook(lambda gi, go: result(gi))
        y.sum().backward()
        return x.grad

    return run


def _grad_assign(dtype: str, grad_dtype: str) -> Callable[[Any], Any]:
    def run(lib: Any) -> Any:
        t = lib.zeros(2, dtype=getattr(lib, dtype), requires_grad=True)
        t.grad = lib.zeros(2, dtype=getattr(lib, grad_dtype))
        return t.grad

    return run


def _backward_inputs(lib: Any) -> Any:
    a = lib.ones(2, requires_grad=True)
    t = lib.ones(2)
    (a * t).sum().backward(inputs=[t])
    return a.grad


def _index_grad(lib: Any) -> Any:
    x = lib.ones(2, requires_grad=True)
    x[True].sum().backward()
    return x.grad


def _no_grad_fn_after_long(lib: Any) -> Any:
    y = lib.ones(2, requires_grad=True).long()
    return [y.tolist(), y.requires_grad, y.grad_fn is None]


def _norm_grad(lib: Any) -> Any:
    x = lib.tensor([[3.0, 4.0], [6.0, 8.0]], requires_grad=True)
    lib.norm(x, dim=1).sum().backward()
    return x.grad


OVERFLOW = "Overflow when unpacking long long"
GRAD_DTYPE = (
    "attempting to assign a gradient with dtype '{}' to a tensor with grad_dtype '{}'. "
    "The gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). "
    "You can set the tensor's grad_dtype attribute with a specific dtype, or None to "
    "allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and "
    "its gradient may break downstream systems that assume they match."
)
MUST_BE_INTS = "{}(): argument 'size' (position 1) must be tuple of ints, not {}"


def _outcome(function: Callable[[Any], Any], lib: Any) -> Raises | Value:
    """What `function(lib)` does, in the form the cases state it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = function(lib)
    except Exception as error:  # noqa: BLE001 - the exception is the answer
        return Raises(type(error).__name__, str(error).replace("gradgen.", "torch."))
    if hasattr(result, "tolist") and hasattr(result, "dtype"):
        return Value(result.tolist(), str(result.dtype).split(".")[-1])
    return Value(result)


def _same(expected: Raises | Value, got: Raises | Value) -> bool:
    if isinstance(expected, Value) and isinstance(got, Value):
        if expected.dtype != got.dtype:
            return False
        want, have = np.asarray(expected.values, dtype=object), np.asarray(
            got.values, dtype=object
        )
        if want.shape != have.shape:
            return False
        try:
            return bool(
                np.allclose(
                    np.asarray(expected.values, float),
                    np.asarray(got.values, float),
                    rtol=1e-6,
                )
            )
        except (TypeError, ValueError):
            return expected.values == got.values
    return expected == got

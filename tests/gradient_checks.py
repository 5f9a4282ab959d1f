"""Shared by the tests/test_gradients_*.py modules: numpy-only numerical Jacobians and
vector-Jacobian products, numpy and gradgen implementations of the operators, and the
reverse-mode and PyTorch drivers (see tests/test_gradients_first_order.py)."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import gradgen

from torch_oracle import oracle

EPS = 1e-6
NUMERIC_RTOL = 1e-6
NUMERIC_ATOL = 1e-6
MODES = ("backward", "grad")


# ---------------------------------------------------------------------------------------
# The numerical checker (numpy only, float64)
# ---------------------------------------------------------------------------------------


def numerical_jacobian(
    f: Callable[..., np.ndarray],
    inputs: Sequence[np.ndarray],
    index: int,
    eps: float = EPS,
) -> np.ndarray:
    """d f / d inputs[index] by central differences, as a (f.size, input.size) matrix."""
    arrays = [np.array(x, dtype=np.float64, copy=True) for x in inputs]
    x = arrays[index]
    flat = x.reshape(-1)  # a view: writing it perturbs `x`
    out_size = np.asarray(f(*arrays)).size
    jacobian = np.empty((out_size, flat.size), dtype=np.float64)
    for j in range(flat.size):
        original = flat[j]
        flat[j] = original + eps
        plus = np.array(f(*arrays), dtype=np.float64, copy=True).reshape(-1)
        flat[j] = original - eps
        minus = np.array(f(*arrays), dtype=np.float64, copy=True).reshape(-1)
        flat[j] = original
        jacobian[:, j] = (plus - minus) / (2 * eps)
    return jacobian


def numerical_vjp(
    f: Callable[..., np.ndarray], inputs: Sequence[np.ndarray], v: np.ndarray
) -> list[np.ndarray]:
    """v^T J for every input, each shaped like its input."""
    v_flat = np.asarray(v, dtype=np.float64).reshape(-1)
    return [
        (v_flat @ numerical_jacobian(f, inputs, i)).reshape(np.shape(x))
        for i, x in enumerate(inputs)
    ]


# ---------------------------------------------------------------------------------------
# Operator back ends: the same case runs on numpy (reference), gradgen and torch
# ---------------------------------------------------------------------------------------


class NumpyOps:
    """Reference semantics of each operator, in plain numpy."""

    @staticmethod
    def add(a: Any, b: Any, alpha: Any = 1) -> np.ndarray:
        return np.asarray(a + alpha * np.asarray(b))

    @staticmethod
    def sub(a: Any, b: Any, alpha: Any = 1) -> np.ndarray:
        return np.asarray(a - alpha * np.asarray(b))

    @staticmethod
    def mul(a: Any, b: Any) -> np.ndarray:
        return np.asarray(a * b)

    @staticmethod
    def pow(a: np.ndarray, exponent: float) -> np.ndarray:
        return np.power(a, exponent)

    @staticmethod
    def permute(a: np.ndarray, dims: Sequence[int]) -> np.ndarray:
        return np.transpose(a, [d % a.ndim for d in dims])

    permute_method = permute

    @staticmethod
    def neg(a: np.ndarray) -> np.ndarray:
        return -a

    neg_method = neg

    @staticmethod
    def clone(a: np.ndarray) -> np.ndarray:
        return np.array(a, copy=True)

    @staticmethod
    def expand(a: np.ndarray, size: Sequence[int]) -> np.ndarray:
        lead = len(size) - a.ndim
        target = tuple(a.shape[i - lead] if s == -1 else s for i, s in enumerate(size))
        return np.broadcast_to(a, target)

    @staticmethod
    def expand_tuple(a: np.ndarray, size: Sequence[int]) -> np.ndarray:
        return NumpyOps.expand(a, size)

    @staticmethod
    def sum_to_size_tuple(a: np.ndarray, size: Sequence[int]) -> np.ndarray:
        return NumpyOps.sum_to_size(a, size)

    @staticmethod
    def sum_to_size(a: np.ndarray, size: Sequence[int]) -> np.ndarray:
        lead = a.ndim - len(size)
        result = a.sum(axis=tuple(range(lead))) if lead else a
        for i, s in enumerate(size):
            if s == 1 and result.shape[i] != 1:
                result = result.sum(axis=i, keepdims=True)
        return np.asarray(result)

    @staticmethod
    def conj(a: np.ndarray) -> np.ndarray:
        return np.conj(a)

    @staticmethod
    def real(a: np.ndarray) -> np.ndarray:
        return np.real(a)


class ModuleOps:
    """The operators of `import gradgen as torch` code: gradgen or torch itself."""

    def __init__(self, module: Any) -> None:
        self.m = module

    def add(self, a: Any, b: Any, alpha: Any = 1) -> Any:
        return self.m.add(a, b, alpha=alpha)

    def sub(self, a: Any, b: Any, alpha: Any = 1) -> Any:
        return self.m.sub(a, b, alpha=alpha)

    def mul(self, a: Any, b: Any) -> Any:
        return self.m.mul(a, b)

    def pow(self, a: Any, exponent: float) -> Any:
        return self.m.pow(a, exponent)

    def permute(self, a: Any, dims: Sequence[int]) -> Any:
        return self.m.permute(a, tuple(dims))

    def permute_method(self, a: Any, dims: Sequence[int]) -> Any:
        return a.permute(*dims)

    def neg(self, a: Any) -> Any:
        return self.m.neg(a)

    def neg_method(self, a: Any) -> Any:
        return a.neg()

    def clone(self, a: Any) -> Any:
        return self.m.clone(a)

    def expand(self, a: Any, size: Sequence[int]) -> Any:
        return a.expand(*size)

    def sum_to_size(self, a: Any, size: Sequence[int]) -> Any:
        # Varargs form, or the one-tuple form for the empty size (torch needs an argument).
        return a.sum_to_size(*size) if size else a.sum_to_size(tuple(size))

    def expand_tuple(self, a: Any, size: Sequence[int]) -> Any:
        return a.expand(tuple(size))

    def sum_to_size_tuple(self, a: Any, size: Sequence[int]) -> Any:
        return a.sum_to_size(tuple(size))

    def conj(self, a: Any) -> Any:
        return self.m.conj(a)

    def real(self, a: Any) -> Any:
        return self.m.real(a)


NUMPY_OPS = NumpyOps()
GRADGEN_OPS = ModuleOps(gradgen)


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _as_numpy(t: Any) -> np.ndarray:
    """A gradgen or torch tensor's values (detached), as numpy."""
    t = t.detach()
    if hasattr(t, "resolve_conj"):  # torch: a lazily conjugated tensor
        t = t.resolve_conj()
    return np.asarray(t.numpy())


def torch_vjp(
    arrays: Sequence[np.ndarray],
    fn: Callable[..., Any],
    cotangent: Callable[[tuple[int, ...]], np.ndarray],
    key: str = "value and grads",
) -> dict[str, Any]:
    """PyTorch's answer (see torch_oracle.oracle): `out` = fn(torch ops, *leaves) and
    `grads` = the VJP with cotangent(out.shape) (None for an unused input)."""

    def compute(t: Any) -> dict[str, Any]:
        leaves = [t.tensor(a, requires_grad=True) for a in arrays]
        out = fn(ModuleOps(t), *leaves)
        v = t.tensor(cotangent(tuple(out.shape)))
        grads = t.autograd.grad(out, leaves, grad_outputs=v, allow_unused=True)
        return {"out": out, "grads": list(grads)}

    answer: dict[str, Any] = oracle(key, compute)
    return answer


def reverse_grads(
    out: Any, inputs: Sequence[Any], v: Any, mode: str, **kw: Any
) -> tuple[Any, ...]:
    """The gradients of `out` (upstream `v`) for `inputs`, by autograd.grad or backward."""
    if mode == "grad":
        return tuple(gradgen.autograd.grad(out, inputs, grad_outputs=v, **kw))
    for x in inputs:
        x.grad = None
    out.backward(v, **kw)
    grads = tuple(x.grad for x in inputs)
    for x in inputs:
        x.grad = None
    return grads

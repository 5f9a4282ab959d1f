"""Gradients keep float32, follow type promotion, and match PyTorch (see
tests/test_gradients_first_order.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import gradgen

from torch_oracle import oracle
from gradient_checks import (
    GRADGEN_OPS,
    NUMPY_OPS,
    _as_numpy,
    _rng,
    numerical_vjp,
    reverse_grads,
    torch_vjp,
)

# ---------------------------------------------------------------------------------------
# 4. dtypes: float32 stays float32, PyTorch's promotion
# ---------------------------------------------------------------------------------------


class Float32Case(NamedTuple):
    name: str
    shapes: tuple[tuple[int, ...], ...]
    fn: Callable[..., Any]  # fn(ops, *inputs)
    positive: bool = False


_FLOAT32_CASES = [
    Float32Case("mul_number", ((3, 4),), lambda o, a: a * 2.5),
    Float32Case("rmul_number", ((3, 4),), lambda o, a: 2.5 * a),
    Float32Case("mul_int_number", ((3, 4),), lambda o, a: a * 3),
    Float32Case("add_number", ((3, 4),), lambda o, a: a + 2.5),
    Float32Case("rsub_number", ((3, 4),), lambda o, a: 2.5 - a),
    Float32Case("pow_2.5", ((3, 4),), lambda o, a: a**2.5, positive=True),
    Float32Case(
        "pow_function_2.5", ((3, 4),), lambda o, a: o.pow(a, 2.5), positive=True
    ),
    Float32Case("pow_-1", ((3, 4),), lambda o, a: a**-1, positive=True),
    Float32Case("pow_3", ((3, 4),), lambda o, a: a**3),
    Float32Case("mul_0d_number", ((),), lambda o, a: a * 2.5),
    Float32Case("pow_0d_2.5", ((),), lambda o, a: a**2.5, positive=True),
    Float32Case("mul", ((3, 4), (3, 4)), lambda o, a, b: a * b),
    Float32Case("add_alpha", ((3, 4), (3, 4)), lambda o, a, b: o.add(a, b, alpha=2.5)),
    Float32Case("sub_alpha", ((3, 4), (3, 4)), lambda o, a, b: o.sub(a, b, alpha=-3)),
    Float32Case("neg_clone", ((3, 4),), lambda o, a: o.clone(o.neg(a))),
    Float32Case(
        "composition", ((3, 4), (3, 4)), lambda o, a, b: (a * b - 1.5) ** 2 * 0.5
    ),
    Float32Case("bcast_add", ((3, 1), (1, 4)), lambda o, a, b: a + b),
    Float32Case("bcast_mul_number", ((2, 3, 4), (4,)), lambda o, a, b: (a * b) * 2.5),
    Float32Case(
        "bcast_pow", ((3, 1), (1, 4)), lambda o, a, b: (a * b) ** 2.5, positive=True
    ),
    Float32Case("permute", ((2, 3, 4),), lambda o, a: o.permute(a, (2, 0, 1)) * 2.5),
]


def _float32_inputs(case: Float32Case) -> list[np.ndarray]:
    rng = _rng("f32", case.name)
    if case.positive:
        arrays = [rng.uniform(0.5, 2.0, s) for s in case.shapes]
    else:
        arrays = [rng.standard_normal(s) for s in case.shapes]
    return [np.asarray(a, dtype=np.float32) for a in arrays]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in _FLOAT32_CASES])
def test_float32_stays_float32(case: Float32Case) -> None:
    arrays = _float32_inputs(case)
    leaves = [gradgen.tensor(a, requires_grad=True) for a in arrays]
    for leaf in leaves:
        assert leaf.dtype == gradgen.float32
    out = case.fn(GRADGEN_OPS, *leaves)
    assert out.dtype == gradgen.float32

    # Values against a float64 numpy reference (float32 precision).
    arrays64 = [a.astype(np.float64) for a in arrays]
    reference = lambda *xs: case.fn(NUMPY_OPS, *xs)  # noqa: E731
    np.testing.assert_allclose(
        _as_numpy(out), reference(*arrays64), rtol=1e-5, atol=1e-5
    )
    v_np = _rng("f32-v", case.name).standard_normal(tuple(out.shape)).astype(np.float32)
    grads = reverse_grads(out, leaves, gradgen.tensor(v_np), "backward")
    expected = numerical_vjp(reference, arrays64, v_np.astype(np.float64))
    for got, want in zip(grads, expected):
        assert got.dtype == gradgen.float32
        np.testing.assert_allclose(_as_numpy(got), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in _FLOAT32_CASES])
def test_float32_matches_torch(case: Float32Case) -> None:
    arrays = _float32_inputs(case)

    def cotangent(shape: tuple[int, ...]) -> np.ndarray:
        return _rng("f32-v", case.name).standard_normal(shape).astype(np.float32)

    theirs = torch_vjp(arrays, case.fn, cotangent)

    leaves = [gradgen.tensor(a, requires_grad=True) for a in arrays]
    out = case.fn(GRADGEN_OPS, *leaves)
    assert str(out.dtype).split(".")[-1] == theirs["out"].dtype.name
    np.testing.assert_allclose(_as_numpy(out), theirs["out"], rtol=1e-6, atol=1e-6)
    v = gradgen.tensor(cotangent(tuple(out.shape)))
    grads = reverse_grads(out, leaves, v, "backward")
    assert len(grads) == len(theirs["grads"])
    for got, want in zip(grads, theirs["grads"]):
        assert str(got.dtype).split(".")[-1] == want.dtype.name
        np.testing.assert_allclose(_as_numpy(got), want, rtol=1e-5, atol=1e-6)


class PromotionCase(NamedTuple):
    name: str
    fn: Callable[[Any, Any], Any]  # fn(module, numpy->tensor factory) -> result
    expected_dtype: str


def _promotion_cases() -> list[PromotionCase]:
    ints = np.array([1, 2, -3], dtype=np.int64)
    f32 = np.array([1.5, -2.0, 0.25], dtype=np.float32)
    f64 = np.array([0.5, 3.0, -1.25], dtype=np.float64)
    return [
        PromotionCase("int64_mul_float", lambda m, T: T(ints) * 2.5, "float32"),
        PromotionCase("float_rmul_int64", lambda m, T: 2.5 * T(ints), "float32"),
        PromotionCase("int64_add_float", lambda m, T: T(ints) + 1.5, "float32"),
        PromotionCase("int64_mul_int", lambda m, T: T(ints) * 3, "int64"),
        PromotionCase(
            "int64_pow_float", lambda m, T: T(np.abs(ints)) ** 2.5, "float32"
        ),
        PromotionCase(
            "float64_0d_mul_float32_vec",
            lambda m, T: T(np.array(2.5)) * T(f32),
            "float32",
        ),
        PromotionCase(
            "float32_vec_mul_float64_0d",
            lambda m, T: T(f32) * T(np.array(2.5)),
            "float32",
        ),
        PromotionCase(
            "float32_0d_mul_float64_vec",
            lambda m, T: T(np.array(2.5, np.float32)) * T(f64),
            "float64",
        ),
        PromotionCase(
            "float32_vec_mul_float64_vec", lambda m, T: T(f32) * T(f64), "float64"
        ),
        PromotionCase(
            "float32_vec_add_int64_vec",
            lambda m, T: m.add(T(f32), T(ints), alpha=2),
            "float32",
        ),
        PromotionCase(
            "int64_0d_mul_float32_vec", lambda m, T: T(np.array(3)) * T(f32), "float32"
        ),
        PromotionCase(
            "float32_sub_complex_number", lambda m, T: T(f32) - 1j, "complex64"
        ),
        PromotionCase(
            "float64_mul_complex_number", lambda m, T: T(f64) * (1 + 2j), "complex128"
        ),
    ]


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.name) for c in _promotion_cases()]
)
def test_type_promotion(case: PromotionCase) -> None:
    out = case.fn(gradgen, gradgen.tensor)
    assert out.dtype == getattr(gradgen, case.expected_dtype)
    # Values against numpy in complex128 (numpy's own promotion is not PyTorch's).
    expected = case.fn(NUMPY_OPS, lambda a: np.asarray(a, dtype=np.complex128))
    np.testing.assert_allclose(out.numpy().astype(np.complex128), expected, rtol=1e-6)


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.name) for c in _promotion_cases()]
)
def test_type_promotion_matches_torch(case: PromotionCase) -> None:
    t_out = oracle("result", lambda t: case.fn(t, lambda a: t.tensor(a)))
    assert t_out.dtype.name == case.expected_dtype  # the table above is PyTorch's
    out = case.fn(gradgen, gradgen.tensor)
    np.testing.assert_allclose(out.numpy(), t_out, rtol=1e-6)


def test_float32_leaf_times_float64_leaf_gets_float32_grad() -> None:
    a_np = np.array([1.5, -2.0, 0.25], dtype=np.float32)
    b_np = np.array([0.5, 3.0, -1.25])
    v_np = np.array([1.0, -2.0, 0.5])
    a = gradgen.tensor(a_np, requires_grad=True)
    b = gradgen.tensor(b_np, requires_grad=True)
    out = a * b
    assert out.dtype == gradgen.float64
    out.backward(gradgen.tensor(v_np))
    assert a.grad.dtype == gradgen.float32
    assert b.grad.dtype == gradgen.float64
    np.testing.assert_allclose(
        a.grad.numpy(), (v_np * b_np).astype(np.float32), rtol=1e-6
    )
    np.testing.assert_allclose(
        b.grad.numpy(), v_np * a_np.astype(np.float64), rtol=1e-12
    )


def test_int64_tensor_times_float32_leaf_grad() -> None:
    ints = np.array([1, 2, -3])
    x = gradgen.tensor(np.array([0.5, 1.0, 2.0], dtype=np.float32), requires_grad=True)
    out = gradgen.tensor(ints) * x
    assert out.dtype == gradgen.float32
    out.backward(gradgen.tensor(np.array([1.0, 2.0, 3.0], dtype=np.float32)))
    assert x.grad.dtype == gradgen.float32
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 4.0, -9.0])


def test_float64_0d_times_float32_vector_gradients() -> None:
    s_np = np.array(2.5)
    f_np = np.array([1.5, -2.0, 0.25, 4.0, -1.0], dtype=np.float32)
    v_np = np.array([1.0, -2.0, 0.5, 0.25, 3.0], dtype=np.float32)
    s = gradgen.tensor(s_np, requires_grad=True)
    f = gradgen.tensor(f_np, requires_grad=True)
    out = s * f
    assert out.dtype == gradgen.float32
    out.backward(gradgen.tensor(v_np))
    assert s.grad.dtype == gradgen.float64 and tuple(s.grad.shape) == ()
    assert f.grad.dtype == gradgen.float32
    np.testing.assert_allclose(
        s.grad.item(), float(np.dot(v_np.astype(np.float64), f_np)), rtol=1e-6
    )
    np.testing.assert_allclose(f.grad.numpy(), v_np * 2.5, rtol=1e-6)

"""Complex gradients (hand-derived and PyTorch) and mixed-dtype gradients (see
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
    MODES,
    NUMPY_OPS,
    _as_numpy,
    _rng,
    reverse_grads,
    torch_vjp,
)

# ---------------------------------------------------------------------------------------
# 5. complex128: PyTorch's conjugate-Wirtinger convention
# ---------------------------------------------------------------------------------------


class ComplexCase(NamedTuple):
    name: str
    kinds: str  # one letter per input: "c" complex128, "r" float64
    fn: Callable[..., Any]  # fn(ops, *inputs)
    expected: Callable[..., list[np.ndarray]]  # expected(v, *inputs) -> gradients
    v_kind: str = "c"  # "c": complex upstream gradient; "r": real; "1": ones (real)


def _complex_cases() -> list[ComplexCase]:
    conj = np.conj
    alpha = 2 - 1j
    return [
        ComplexCase(
            "real_abs2_ones",
            "c",
            lambda o, x: o.real(x * o.conj(x)),
            lambda v, x: [2 * x],
            v_kind="1",
        ),
        ComplexCase(
            "real_abs2",
            "c",
            lambda o, x: o.real(x * o.conj(x)),
            lambda v, x: [2 * v * x],
            v_kind="r",
        ),
        ComplexCase(
            "mul",
            "cc",
            lambda o, x, y: x * y,
            lambda v, x, y: [v * conj(y), v * conj(x)],
        ),
        ComplexCase("pow_2", "c", lambda o, x: x**2, lambda v, x: [v * conj(2 * x)]),
        ComplexCase(
            "pow_function_3",
            "c",
            lambda o, x: o.pow(x, 3),
            lambda v, x: [v * conj(3 * x**2)],
        ),
        ComplexCase(
            "pow_-1", "c", lambda o, x: x**-1, lambda v, x: [v * conj(-(x**-2))]
        ),
        ComplexCase(
            "mul_complex_number",
            "c",
            lambda o, x: x * (1 + 2j),
            lambda v, x: [v * (1 - 2j)],
        ),
        ComplexCase(
            "add_complex_alpha",
            "cc",
            lambda o, x, y: o.add(x, y, alpha=alpha),
            lambda v, x, y: [v, v * conj(alpha)],
        ),
        ComplexCase(
            "sub_complex_alpha",
            "cc",
            lambda o, x, y: o.sub(x, y, alpha=alpha),
            lambda v, x, y: [v, -v * conj(alpha)],
        ),
        ComplexCase(
            "sub_real_alpha",
            "cc",
            lambda o, x, y: o.sub(x, y, alpha=2.5),
            lambda v, x, y: [v, -2.5 * v],
        ),
        ComplexCase("conj", "c", lambda o, x: o.conj(x), lambda v, x: [conj(v)]),
        ComplexCase("neg", "c", lambda o, x: o.neg(x), lambda v, x: [-v]),
        ComplexCase("clone", "c", lambda o, x: o.clone(x), lambda v, x: [v]),
        ComplexCase(
            "real", "c", lambda o, x: o.real(x), lambda v, x: [v + 0j], v_kind="r"
        ),
        ComplexCase(
            "real_leaf_times_complex_real_loss",
            "rc",
            lambda o, r, c: o.real(r * c),
            lambda v, r, c: [np.real(c), r + 0j],
            v_kind="1",
        ),
        ComplexCase(
            "real_leaf_times_complex",
            "rc",
            lambda o, r, c: r * c,
            lambda v, r, c: [np.real(v * conj(c)), v * r],
        ),
        ComplexCase(
            "real_leaf_plus_complex",
            "rc",
            lambda o, r, c: r + c,
            lambda v, r, c: [np.real(v), v],
        ),
        ComplexCase(
            "complex_minus_real_leaf_alpha",
            "cr",
            lambda o, c, r: o.sub(c, r, alpha=-3),
            lambda v, c, r: [v, np.real(3 * v)],
        ),
        ComplexCase(
            "real_of_square_of_composition",
            "cc",
            lambda o, x, y: o.real((x * y - x) ** 2),
            lambda v, x, y: [
                v * conj(2 * (x * y - x) * (y - 1)),
                v * conj(2 * (x * y - x) * x),
            ],
            v_kind="r",
        ),
        ComplexCase(
            "permute",
            "c",
            lambda o, x: o.permute(x, (1, 0)),
            lambda v, x: [v.T],
        ),
    ]


COMPLEX_CASES = _complex_cases()
_COMPLEX_SHAPE = (2, 3)


def _complex_inputs(case: ComplexCase) -> list[np.ndarray]:
    rng = _rng("complex", case.name)
    arrays = []
    for kind in case.kinds:
        real = rng.standard_normal(_COMPLEX_SHAPE)
        if kind == "c":
            arrays.append(real + 1j * rng.standard_normal(_COMPLEX_SHAPE))
        else:
            arrays.append(real)
    return arrays


def _complex_v(case: ComplexCase, shape: tuple[int, ...]) -> np.ndarray:
    rng = _rng("complex-v", case.name)
    if case.v_kind == "1":
        return np.ones(shape)
    if case.v_kind == "r":
        return rng.standard_normal(shape)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@pytest.mark.parametrize(
    ("case", "mode"),
    [
        pytest.param(c, mode, id=f"{c.name}-{mode}")
        for c in COMPLEX_CASES
        for mode in MODES
    ],
)
def test_complex_gradients_hand_derived(case: ComplexCase, mode: str) -> None:
    arrays = _complex_inputs(case)
    leaves = [gradgen.tensor(a, requires_grad=True) for a in arrays]
    out = case.fn(GRADGEN_OPS, *leaves)
    expected_out = np.asarray(case.fn(NUMPY_OPS, *arrays))
    np.testing.assert_allclose(_as_numpy(out), expected_out, rtol=1e-12, atol=1e-12)
    v_np = _complex_v(case, expected_out.shape)
    grads = reverse_grads(out, leaves, gradgen.tensor(v_np), mode)
    for index, (got, want, kind) in enumerate(
        zip(grads, case.expected(v_np, *arrays), case.kinds)
    ):
        assert got.dtype == (
            gradgen.complex128 if kind == "c" else gradgen.float64
        ), f"input {index}"
        np.testing.assert_allclose(
            _as_numpy(got), want, rtol=1e-12, atol=1e-12, err_msg=f"input {index}"
        )


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in COMPLEX_CASES])
def test_complex_gradients_match_torch(case: ComplexCase) -> None:
    arrays = _complex_inputs(case)
    theirs = torch_vjp(arrays, case.fn, lambda shape: _complex_v(case, shape))
    t_grads = theirs["grads"]
    v_np = _complex_v(case, theirs["out"].shape)
    # The hand-derived formulas are PyTorch's convention ...
    expected = case.expected(v_np, *arrays)
    assert len(t_grads) == len(arrays)
    for t_grad, want in zip(t_grads, expected):
        np.testing.assert_allclose(t_grad, want, rtol=1e-12, atol=1e-12)
    # ... and gradgen agrees with torch, dtype included.
    leaves = [gradgen.tensor(a, requires_grad=True) for a in arrays]
    out = case.fn(GRADGEN_OPS, *leaves)
    out.backward(gradgen.tensor(v_np))
    for leaf, t_grad in zip(leaves, t_grads):
        assert str(leaf.grad.dtype).split(".")[-1] == t_grad.dtype.name
        np.testing.assert_allclose(_as_numpy(leaf.grad), t_grad, rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_complex_second_derivative_of_square() -> None:
    # g1 = dL/dx of sum(v * x^2) in PyTorch's convention = v * conj(2x) = 2 v conj(x).
    # L2 = sum(w * real(g1)) = sum(w * (v conj(x) + conj(v) x)) for real w, so
    # dL2/dconj(x) = w v and PyTorch's gradient of a real loss is 2 dL2/dconj(x) = 2 w v.
    x_np = np.array([1 + 2j, -0.5 + 0.25j])
    v_np = np.array([0.5 - 1j, 2 + 0.5j])
    w_np = np.array([1.5, -2.0])
    x = gradgen.tensor(x_np, requires_grad=True)
    (x**2).backward(gradgen.tensor(v_np), create_graph=True)
    g1 = x.grad
    np.testing.assert_allclose(_as_numpy(g1), v_np * np.conj(2 * x_np), rtol=1e-12)
    x.grad = None
    gradgen.real(g1).backward(gradgen.tensor(w_np))
    np.testing.assert_allclose(_as_numpy(x.grad), 2 * w_np * v_np, rtol=1e-12)


def test_complex_second_derivative_of_square_torch_agrees() -> None:
    x_np = np.array([1 + 2j, -0.5 + 0.25j])
    v_np = np.array([0.5 - 1j, 2 + 0.5j])
    w_np = np.array([1.5, -2.0])

    def second(t: Any) -> Any:
        tx = t.tensor(x_np, requires_grad=True)
        (tg1,) = t.autograd.grad(tx**2, tx, t.tensor(v_np), create_graph=True)
        (tg2,) = t.autograd.grad(t.real(tg1), tx, t.tensor(w_np))
        return tg2

    np.testing.assert_allclose(oracle("g2", second), 2 * w_np * v_np, rtol=1e-12)


class MixedCase(NamedTuple):
    name: str
    dtypes: tuple[str, ...]  # numpy dtype names of the leaves
    fn: Callable[..., Any]  # fn(ops, *inputs)
    out_dtype: str
    grad_dtypes: tuple[str, ...]


_MIXED_CASES = [
    MixedCase(
        "float32_times_complex64",
        ("float32", "complex64"),
        lambda o, a, b: a * b,
        "complex64",
        ("float32", "complex64"),
    ),
    MixedCase(
        "float32_times_complex128",
        ("float32", "complex128"),
        lambda o, a, b: a * b,
        "complex128",
        ("float32", "complex128"),
    ),
    MixedCase(
        "float32_times_complex_number",
        ("float32",),
        lambda o, a: a * (1 + 2j),
        "complex64",
        ("float32",),
    ),
    MixedCase(
        "complex64_sub_float64_alpha",
        ("complex64", "float64"),
        lambda o, a, b: o.sub(a, b, alpha=2),
        "complex128",
        ("complex64", "float64"),
    ),
    MixedCase(
        "complex64_square",
        ("complex64",),
        lambda o, a: a**2,
        "complex64",
        ("complex64",),
    ),
    MixedCase(
        "complex128_pow_complex",
        ("complex128",),
        lambda o, a: a ** (2 + 1j),
        "complex128",
        ("complex128",),
    ),
    MixedCase(
        "complex128_sqrt",
        ("complex128",),
        lambda o, a: a**0.5,
        "complex128",
        ("complex128",),
    ),
    MixedCase(
        "real_of_float32",
        ("float32",),
        lambda o, a: o.real(a) * 2,
        "float32",
        ("float32",),
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in _MIXED_CASES])
def test_mixed_dtype_gradients_match_torch(case: MixedCase) -> None:
    rng = _rng("mixed-dtype", case.name)
    arrays = []
    for name in case.dtypes:
        data = rng.uniform(0.5, 2.0, 3) + (
            1j * rng.uniform(-1, 1, 3) if name.startswith("complex") else 0
        )
        arrays.append(np.asarray(data, dtype=name))
    leaves = [gradgen.tensor(a, requires_grad=True) for a in arrays]
    out = case.fn(GRADGEN_OPS, *leaves)
    assert out.dtype == getattr(gradgen, case.out_dtype)
    v_np = rng.standard_normal(3) + (
        1j * rng.standard_normal(3) if out.is_complex() else 0
    )
    v_np = np.asarray(v_np, dtype=case.out_dtype)
    out.backward(gradgen.tensor(v_np))
    theirs = torch_vjp(arrays, case.fn, lambda shape: v_np)
    assert theirs["out"].dtype.name == case.out_dtype
    tol = 1e-5 if "complex64" in case.dtypes or "float32" in case.dtypes else 1e-12
    assert len(theirs["grads"]) == len(leaves) == len(case.grad_dtypes)
    for leaf, t_grad, want_dtype in zip(leaves, theirs["grads"], case.grad_dtypes):
        assert leaf.grad.dtype == getattr(gradgen, want_dtype)
        assert t_grad.dtype.name == want_dtype
        np.testing.assert_allclose(_as_numpy(leaf.grad), t_grad, rtol=tol, atol=tol)

"""Gradient correctness of the generated operators.

Every expected value here is independent of gradgen:

* first-order gradients are compared with a central-difference vector-Jacobian product
  computed with numpy alone (``numerical_jacobian`` / ``numerical_vjp``), on a function
  that is evaluated by a numpy re-implementation of each operator (``NUMPY_OPS``), never
  by gradgen itself;
* second and third derivatives, dtypes and complex gradients are compared with
  hand-derived formulas;
* and, where torch is installed, everything is also compared with PyTorch directly.
  Comparisons against torch are skipped (with a visible reason) when torch cannot be
  imported, unless ``GRADGEN_REQUIRE_TORCH=1`` is set, in which case they fail.

Reverse mode is reached two ways, as a test parameter ``mode``: ``"grad"`` is
``gradgen.autograd.grad(out, inputs, grad_outputs=v)`` and ``"backward"`` is
``out.backward(v)`` followed by reading each leaf's ``.grad``. The upstream gradient ``v``
is always random (non-uniform), so a transposed or mis-permuted gradient cannot pass.

Convention for bugs found by these tests: mark the test
``xfail(strict=True, raises=<the exception>, reason=<the bug>)`` rather than weakening it,
so the marker fails (XPASS strict) as soon as the bug is fixed. None is open at present.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import gradgen

from gradient_checks import (
    GRADGEN_OPS,
    MODES,
    NUMERIC_ATOL,
    NUMERIC_RTOL,
    NUMPY_OPS,
    _as_numpy,
    _rng,
    numerical_jacobian,
    numerical_vjp,
    reverse_grads,
    torch_vjp,
)


def test_numerical_jacobian_of_a_known_linear_map() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((4, 3))
    x = rng.standard_normal(3)
    jacobian = numerical_jacobian(lambda a: matrix @ a, [x], 0)
    np.testing.assert_allclose(jacobian, matrix, rtol=1e-8, atol=1e-8)


def test_numerical_vjp_of_a_known_nonlinear_map() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    v = rng.standard_normal((2, 3))
    gx, gy = numerical_vjp(lambda a, b: a * a * b, [x, y], v)
    np.testing.assert_allclose(gx, v * 2 * x * y, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(gy, v * x * x, rtol=1e-7, atol=1e-7)


# ---------------------------------------------------------------------------------------
# 1-2. First-order gradients against the numerical VJP, per operator (float64)
# ---------------------------------------------------------------------------------------


class Case(NamedTuple):
    name: str
    shapes: tuple[tuple[int, ...], ...]
    fn: Callable[..., Any]  # fn(ops, *inputs)
    positive: bool = False


_BROADCAST_SHAPES = [
    ("same", (3, 4), (3, 4)),
    ("col_row", (3, 1), (1, 4)),
    ("3d_vec", (2, 3, 4), (4,)),
    ("0d_vec", (), (5,)),
    ("vec_0d", (5,), ()),
]

_PERMS_3D = [*itertools.permutations((0, 1, 2)), (-1, 0, 1), (0, -1, -2), (-3, -1, 1)]


def _first_order_cases() -> list[Case]:
    cases: list[Case] = []
    for label, sa, sb in _BROADCAST_SHAPES:
        cases += [
            Case(f"add_{label}", (sa, sb), lambda o, a, b: o.add(a, b)),
            Case(f"sub_{label}", (sa, sb), lambda o, a, b: o.sub(a, b)),
            Case(f"mul_{label}", (sa, sb), lambda o, a, b: o.mul(a, b)),
            Case(f"operators_{label}", (sa, sb), lambda o, a, b: a * b - a + b),
        ]
    for alpha in (2.5, -3, 0.5):
        for label, sa, sb in _BROADCAST_SHAPES[:3]:
            cases += [
                Case(
                    f"add_alpha{alpha}_{label}",
                    (sa, sb),
                    lambda o, a, b, alpha=alpha: o.add(a, b, alpha=alpha),
                ),
                Case(
                    f"sub_alpha{alpha}_{label}",
                    (sa, sb),
                    lambda o, a, b, alpha=alpha: o.sub(a, b, alpha=alpha),
                ),
            ]
    # Python numbers on either side (wrapped numbers never get a gradient).
    cases += [
        Case("mul_number", ((3, 4),), lambda o, a: a * 2.5),
        Case("rmul_number", ((3, 4),), lambda o, a: -3 * a),
        Case("mul_function_number", ((3, 4),), lambda o, a: o.mul(a, 2.5)),
        Case("add_number", ((3, 4),), lambda o, a: a + 2.5),
        Case("radd_number", ((3, 4),), lambda o, a: 2 + a),
        Case("add_number_alpha", ((3, 4),), lambda o, a: o.add(a, 1.5, alpha=-3)),
        Case("sub_number", ((3, 4),), lambda o, a: a - 2.5),
        Case("rsub_number", ((3, 4),), lambda o, a: 2.5 - a),
        Case("unary_minus", ((3, 4),), lambda o, a: -a),
        Case("mul_0d_0d", ((), ()), lambda o, a, b: a * b),
    ]
    for exponent in (0, 1, 2, 3, 2.5, -1, 0.5, -2.5):
        cases += [
            Case(
                f"pow_{exponent}",
                ((3, 4),),
                lambda o, a, e=exponent: o.pow(a, e),
                positive=True,
            ),
            Case(
                f"pow_operator_{exponent}",
                ((2, 3),),
                lambda o, a, e=exponent: a**e,
                positive=True,
            ),
        ]
    cases += [
        Case("pow_3_signed", ((3, 4),), lambda o, a: a**3),
        Case("pow_2_0d", ((),), lambda o, a: a**2),
    ]
    for dims in _PERMS_3D:
        cases += [
            Case(f"permute{dims}", ((2, 3, 4),), lambda o, a, d=dims: o.permute(a, d)),
            Case(
                f"permute_method{dims}",
                ((2, 3, 4),),
                lambda o, a, d=dims: o.permute_method(a, d),
            ),
        ]
    cases += [
        Case("permute_2d_transpose", ((3, 4),), lambda o, a: o.permute(a, (1, 0))),
        Case(
            "permute_twice",
            ((2, 3, 4),),
            lambda o, a: o.permute(o.permute(a, (2, 0, 1)), (2, 0, 1)),
        ),
        Case("neg", ((3, 4),), lambda o, a: o.neg(a)),
        Case("neg_method", ((2, 3, 4),), lambda o, a: o.neg_method(a)),
        Case("neg_0d", ((),), lambda o, a: o.neg(a)),
        Case("clone", ((3, 4),), lambda o, a: o.clone(a)),
        Case("clone_0d", ((),), lambda o, a: o.clone(a)),
        Case("expand_col", ((3, 1),), lambda o, a: o.expand(a, (3, 4))),
        Case("expand_minus1", ((3, 1),), lambda o, a: o.expand(a, (-1, 4))),
        Case("expand_new_leading", ((3, 1),), lambda o, a: o.expand(a, (2, 3, 4))),
        Case(
            "expand_new_leading_minus1", ((3, 1),), lambda o, a: o.expand(a, (2, -1, 4))
        ),
        Case("expand_0d", ((),), lambda o, a: o.expand(a, (2, 3))),
        Case("expand_same", ((3, 4),), lambda o, a: o.expand(a, (3, 4))),
        Case(
            "expand_tuple_form", ((3, 1),), lambda o, a: o.expand_tuple(a, (2, -1, 4))
        ),
        Case(
            "sum_to_size_tuple_form",
            ((2, 3, 4),),
            lambda o, a: o.sum_to_size_tuple(a, (3, 1)),
        ),
        Case(
            "expand_then_mul", ((3, 1), (3, 4)), lambda o, a, b: o.expand(a, (3, 4)) * b
        ),
        Case(
            "sum_to_size_3d_to_2d", ((2, 3, 4),), lambda o, a: o.sum_to_size(a, (3, 1))
        ),
        Case("sum_to_size_row", ((2, 3, 4),), lambda o, a: o.sum_to_size(a, (1, 4))),
        Case(
            "sum_to_size_keep_rank",
            ((2, 3, 4),),
            lambda o, a: o.sum_to_size(a, (2, 1, 4)),
        ),
        Case("sum_to_size_vec", ((2, 3, 4),), lambda o, a: o.sum_to_size(a, (4,))),
        Case(
            "sum_to_size_identity",
            ((2, 3, 4),),
            lambda o, a: o.sum_to_size(a, (2, 3, 4)),
        ),
        Case("sum_to_size_0d", ((3, 4),), lambda o, a: o.sum_to_size(a, ())),
        # compositions
        Case(
            "square_of_diff_same",
            ((3, 4), (3, 4), (3, 4)),
            lambda o, a, b, c: (a * b - c) ** 2,
        ),
        Case(
            "square_of_diff_bcast",
            ((3, 1), (1, 4), (4,)),
            lambda o, a, b, c: (a * b - c) ** 2,
        ),
        Case("leaf_twice_mul", ((3, 4),), lambda o, a: a * a),
        Case("leaf_twice_add", ((3, 4),), lambda o, a: a + a),
        Case("leaf_twice_sub_alpha", ((3, 4),), lambda o, a: o.sub(a, a, alpha=2.5)),
        Case("leaf_thrice", ((3, 4),), lambda o, a: a * a * a - a),
        Case(
            "diamond",
            ((3, 4),),
            lambda o, x: (lambda u: (u * 2.5) * (u - x) + o.pow(u, 2))(x * x + 1),
        ),
        Case(
            "diamond_two_inputs",
            ((3, 4), (3, 4)),
            lambda o, x, y: (lambda u: o.neg(u * y) + o.clone(u) * u)(
                o.sub(x, y, alpha=-3)
            ),
        ),
        Case(
            "deep_chain",
            ((2, 3),),
            lambda o, x: o.clone(
                o.neg(o.add(o.mul(x, 0.5), o.pow(x, 2), alpha=0.25)) * x
            ),
        ),
        Case(
            "permute_in_composition",
            ((2, 3, 4), (4, 2, 3)),
            lambda o, a, b: o.permute(a, (2, 0, 1)) * b
            - o.permute(o.permute_method(o.neg(b), (1, 2, 0)), (2, 0, 1)),
        ),
        Case(
            "expand_sum_to_size_roundtrip",
            ((3, 1),),
            lambda o, a: o.sum_to_size(
                o.expand(a, (2, 3, 4)) * o.expand(a, (2, 3, 4)), (3, 1)
            ),
        ),
    ]
    return cases


FIRST_ORDER_CASES = _first_order_cases()
assert len({c.name for c in FIRST_ORDER_CASES}) == len(FIRST_ORDER_CASES)


def _case_inputs(case: Case) -> list[np.ndarray]:
    rng = _rng("inputs", case.name)
    arrays = []
    for shape in case.shapes:
        if case.positive:
            arrays.append(rng.uniform(0.5, 2.0, size=shape))
        else:
            arrays.append(rng.standard_normal(shape))
    return [np.asarray(a, dtype=np.float64) for a in arrays]


def _first_order_params() -> list[Any]:
    return [
        pytest.param(case, mode, id=f"{case.name}-{mode}")
        for case in FIRST_ORDER_CASES
        for mode in MODES
    ]


@pytest.mark.parametrize(("case", "mode"), _first_order_params())
def test_first_order_matches_numerical_vjp(case: Case, mode: str) -> None:
    arrays = _case_inputs(case)
    reference = lambda *xs: case.fn(NUMPY_OPS, *xs)  # noqa: E731
    expected_out = np.asarray(reference(*arrays))
    v_np = _rng("v", case.name).standard_normal(expected_out.shape)
    expected_grads = numerical_vjp(reference, arrays, v_np)

    leaves = [gradgen.tensor(a, requires_grad=True) for a in arrays]
    out = case.fn(GRADGEN_OPS, *leaves)
    assert out.dtype == gradgen.float64
    assert tuple(out.shape) == expected_out.shape
    np.testing.assert_allclose(_as_numpy(out), expected_out, rtol=1e-12, atol=1e-12)

    v = gradgen.tensor(v_np.copy())
    grads = reverse_grads(out, leaves, v, mode)
    assert len(grads) == len(leaves)
    for index, (got, want, leaf) in enumerate(zip(grads, expected_grads, leaves)):
        assert got is not None, f"no gradient for input {index}"
        assert got.dtype == gradgen.float64
        assert tuple(got.shape) == tuple(leaf.shape), f"input {index}"
        np.testing.assert_allclose(
            _as_numpy(got),
            want,
            rtol=NUMERIC_RTOL,
            atol=NUMERIC_ATOL,
            err_msg=f"input {index}",
        )
        if mode == "backward":
            # `.grad` never aliases the upstream gradient the caller holds (PyTorch
            # copies it; autograd.grad may return it as it is, as PyTorch does).
            assert not np.shares_memory(_as_numpy(got), v.numpy())
    # ... and the caller's upstream gradient is left as it was.
    np.testing.assert_array_equal(v.numpy(), v_np)


def _torch_params() -> list[Any]:
    return [pytest.param(case, id=case.name) for case in FIRST_ORDER_CASES]


@pytest.mark.parametrize("case", _torch_params())
def test_first_order_matches_torch(case: Case) -> None:
    arrays = _case_inputs(case)
    cotangent = lambda shape: _rng("v", case.name).standard_normal(shape)  # noqa: E731
    theirs = torch_vjp(arrays, case.fn, cotangent)

    leaves = [gradgen.tensor(a, requires_grad=True) for a in arrays]
    out = case.fn(GRADGEN_OPS, *leaves)
    np.testing.assert_allclose(_as_numpy(out), theirs["out"], rtol=1e-12, atol=1e-12)
    v = gradgen.tensor(cotangent(tuple(out.shape)))
    grads = reverse_grads(out, leaves, v, "backward")
    assert len(grads) == len(theirs["grads"])
    for got, want in zip(grads, theirs["grads"]):
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(_as_numpy(got), want, rtol=1e-10, atol=1e-10)


def test_backward_accumulates_into_grad_across_calls() -> None:
    x_np = _rng("acc").standard_normal((3, 4))
    v1, v2 = _rng("acc-v").standard_normal((2, 3, 4))
    x = gradgen.tensor(x_np, requires_grad=True)
    (x * x).backward(gradgen.tensor(v1))
    (x * 3).backward(gradgen.tensor(v2))
    np.testing.assert_allclose(_as_numpy(x.grad), v1 * 2 * x_np + v2 * 3, rtol=1e-12)

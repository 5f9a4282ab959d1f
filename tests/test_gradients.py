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
import warnings
import zlib
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import pytest

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


# ---------------------------------------------------------------------------------------
# 3. Second and third order (create_graph=True), against hand math
# ---------------------------------------------------------------------------------------


def _derivative(
    out: Any, inputs: Sequence[Any], v: Any, mode: str, create_graph: bool
) -> tuple[Any, ...]:
    with warnings.catch_warnings():
        # backward(create_graph=True) warns about a reference cycle, as PyTorch does.
        warnings.simplefilter("ignore", UserWarning)
        return reverse_grads(out, inputs, v, mode, create_graph=create_graph)


class HigherCase(NamedTuple):
    name: str
    fn: Callable[[Any], Any]  # of one positive input x, shape (4,)
    second: Callable[
        [np.ndarray, np.ndarray, np.ndarray], np.ndarray
    ]  # (x, v, w) -> d2


_HIGHER_CASES = [
    HigherCase("cube", lambda x: x**3, lambda x, v, w: 6 * x * v * w),
    HigherCase("cube_by_mul", lambda x: x * x * x, lambda x, v, w: 6 * x * v * w),
    HigherCase(
        "pow_2.5",
        lambda x: gradgen.pow(x, 2.5),
        lambda x, v, w: 2.5 * 1.5 * x**0.5 * v * w,
    ),
    HigherCase("pow_-1", lambda x: x**-1, lambda x, v, w: 2 * x**-3 * v * w),
    HigherCase("pow_2", lambda x: x**2, lambda x, v, w: 2 * v * w),
    HigherCase("pow_1", lambda x: x**1, lambda x, v, w: 0 * x),
    HigherCase("poly", lambda x: 3 * x**2 - x + 7, lambda x, v, w: 6 * v * w),
    HigherCase(
        "sub_alpha_square",
        lambda x: gradgen.sub(x * x, x**3, alpha=-2),
        lambda x, v, w: (2 + 12 * x) * v * w,
    ),
]


@pytest.mark.parametrize(
    ("case", "mode"),
    [
        pytest.param(case, mode, id=f"{case.name}-{mode}")
        for case in _HIGHER_CASES
        for mode in MODES
    ],
)
def test_second_derivative(case: HigherCase, mode: str) -> None:
    rng = _rng("second", case.name)
    x_np = rng.uniform(0.5, 2.0, 4)
    v_np, w_np = rng.standard_normal((2, 4))
    x = gradgen.tensor(x_np, requires_grad=True)
    (g1,) = _derivative(case.fn(x), [x], gradgen.tensor(v_np), mode, create_graph=True)
    assert g1.requires_grad
    (g2,) = _derivative(g1, [x], gradgen.tensor(w_np), mode, create_graph=False)
    np.testing.assert_allclose(
        _as_numpy(g2), case.second(x_np, v_np, w_np), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("mode", MODES)
def test_third_derivative_of_cube_is_six(mode: str) -> None:
    x_np = np.array([0.5, -1.0, 2.0, 3.0])
    v_np, w_np, u_np = _rng("third").standard_normal((3, 4))
    x = gradgen.tensor(x_np, requires_grad=True)
    (g1,) = _derivative(x**3, [x], gradgen.tensor(v_np), mode, create_graph=True)
    np.testing.assert_allclose(_as_numpy(g1), 3 * x_np**2 * v_np, rtol=1e-12)
    (g2,) = _derivative(g1, [x], gradgen.tensor(w_np), mode, create_graph=True)
    np.testing.assert_allclose(_as_numpy(g2), 6 * x_np * v_np * w_np, rtol=1e-12)
    (g3,) = _derivative(g2, [x], gradgen.tensor(u_np), mode, create_graph=False)
    np.testing.assert_allclose(_as_numpy(g3), 6 * v_np * w_np * u_np, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_third_derivative_of_scalar_cube_is_exactly_six(mode: str) -> None:
    x = gradgen.tensor(np.array(1.75), requires_grad=True)
    one = gradgen.tensor(np.array(1.0))
    (g1,) = _derivative(x**3, [x], one, mode, create_graph=True)
    (g2,) = _derivative(g1, [x], one, mode, create_graph=True)
    (g3,) = _derivative(g2, [x], one, mode, create_graph=False)
    assert g1.item() == pytest.approx(3 * 1.75**2, rel=1e-14)
    assert g2.item() == pytest.approx(6 * 1.75, rel=1e-14)
    assert g3.item() == pytest.approx(6.0, rel=1e-14)


@pytest.mark.parametrize("mode", MODES)
def test_mixed_second_derivative_of_product_is_one(mode: str) -> None:
    x = gradgen.tensor(np.array(1.5), requires_grad=True)
    y = gradgen.tensor(np.array(-0.75), requires_grad=True)
    one = gradgen.tensor(np.array(1.0))
    (gx,) = _derivative(x * y, [x], one, mode, create_graph=True)
    assert gx.item() == pytest.approx(-0.75)
    (gxy,) = _derivative(gx, [y], one, mode, create_graph=False)
    assert gxy.item() == pytest.approx(1.0)


@pytest.mark.parametrize("mode", MODES)
def test_mixed_second_derivatives_of_x_squared_y(mode: str) -> None:
    rng = _rng("mixed")
    x_np, y_np, v_np, w_np = rng.standard_normal((4, 3))
    x = gradgen.tensor(x_np, requires_grad=True)
    y = gradgen.tensor(y_np, requires_grad=True)
    # z = x^2 y; dz/dx . v = 2 x y v
    gx, gy = _derivative(
        x**2 * y, [x, y], gradgen.tensor(v_np), mode, create_graph=True
    )
    np.testing.assert_allclose(_as_numpy(gx), 2 * x_np * y_np * v_np, rtol=1e-12)
    np.testing.assert_allclose(_as_numpy(gy), x_np**2 * v_np, rtol=1e-12)
    gxx, gxy = _derivative(gx, [x, y], gradgen.tensor(w_np), mode, create_graph=False)
    np.testing.assert_allclose(_as_numpy(gxx), 2 * y_np * v_np * w_np, rtol=1e-12)
    np.testing.assert_allclose(_as_numpy(gxy), 2 * x_np * v_np * w_np, rtol=1e-12)


@pytest.mark.parametrize("mode", [pytest.param(m) for m in MODES])
def test_second_derivative_through_broadcasting(mode: str) -> None:
    rng = _rng("second-bcast")
    a_np = rng.uniform(0.5, 2.0, (3, 1))
    b_np = rng.standard_normal((1, 4))
    v_np, w_np = rng.standard_normal((2, 3, 4))
    a = gradgen.tensor(a_np, requires_grad=True)
    b = gradgen.tensor(b_np, requires_grad=True)
    # z = a^2 b; dz/da . v = sum_j 2 a b_j v_ij; d/db of <w_i, that> = 2 a_i v_ij w_i
    (ga,) = _derivative(a**2 * b, [a], gradgen.tensor(v_np), mode, create_graph=True)
    np.testing.assert_allclose(
        _as_numpy(ga), (2 * a_np * b_np * v_np).sum(1, keepdims=True), rtol=1e-12
    )
    w_small = w_np[:, :1]
    (gb,) = _derivative(ga, [b], gradgen.tensor(w_small), mode, create_graph=False)
    np.testing.assert_allclose(
        _as_numpy(gb), (2 * a_np * v_np * w_small).sum(0, keepdims=True), rtol=1e-12
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


# ---------------------------------------------------------------------------------------
# 6. Random compositions against torch (float64, 1e-10)
# ---------------------------------------------------------------------------------------


class Program(NamedTuple):
    shapes: tuple[tuple[int, ...], ...]
    steps: tuple[tuple[Any, ...], ...]
    features: frozenset[str]  # "broadcast", "permute"


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(a, b))


def make_program(seed: int, family: str) -> Program:
    """A random composition. family "elementwise": one shape, no shape ops; "shapes":
    shapes that broadcast against (3, 3, 3), with permutations."""
    rng = np.random.default_rng(seed)
    if family == "elementwise":
        n_inputs = int(rng.integers(1, 4))
        shapes = [(2, 3)] * n_inputs
        kinds = ["add", "sub", "mul", "pow_int", "pow_pos", "neg", "clone", "number"]
    else:
        n_inputs = int(rng.integers(2, 4))
        pool = [(3, 3, 3), (3, 1, 3), (3,), (1, 3, 1), ()]
        shapes = [(3, 3, 3)] + [
            pool[int(i)] for i in rng.integers(1, len(pool), n_inputs - 1)
        ]
        kinds = ["add", "sub", "mul", "pow_int", "neg", "permute", "permute", "number"]
    value_shapes = list(shapes)
    steps: list[tuple[Any, ...]] = []
    features: set[str] = set()
    n_steps = int(rng.integers(4, 8))
    for k in range(max(n_steps, n_inputs)):
        # The first steps use every input, so every input gets a gradient.
        first = (
            k
            if k < n_inputs
            else int(rng.integers(max(0, len(value_shapes) - 4), len(value_shapes)))
        )
        kind = kinds[int(rng.integers(len(kinds)))]
        if kind == "permute" and len(value_shapes[first]) != 3:
            kind = "mul"
        if k == 0 and n_inputs > 1 and kind not in ("add", "sub", "mul"):
            kind = "mul"
        if kind in ("add", "sub", "mul"):
            second = int(rng.integers(len(value_shapes)))
            alpha = [1, 2.5, -3, 0.5][int(rng.integers(4))] if kind != "mul" else None
            step = (kind, first, second, alpha)
            shape = _broadcast(value_shapes[first], value_shapes[second])
            if shape != value_shapes[first] or shape != value_shapes[second]:
                features.add("broadcast")
        elif kind == "pow_int":
            step = (kind, first, [1, 2, 3][int(rng.integers(3))])
            shape = value_shapes[first]
        elif kind == "pow_pos":
            step = (kind, first, [2.5, -1, 0.5, -1.5][int(rng.integers(4))])
            shape = value_shapes[first]
        elif kind == "permute":
            perm = list(rng.permutation(3))
            if rng.integers(2):
                perm = [d - 3 for d in perm]
            step = (kind, first, tuple(int(d) for d in perm))
            shape = tuple(value_shapes[first][d] for d in perm)
            features.add("permute")
        elif kind == "number":
            step = (
                kind,
                first,
                [2.5, -0.5, 3][int(rng.integers(3))],
                bool(rng.integers(2)),
            )
            shape = value_shapes[first]
        else:  # neg, clone
            step = (kind, first)
            shape = value_shapes[first]
        steps.append(step)
        value_shapes.append(shape)
    return Program(tuple(shapes), tuple(steps), frozenset(features))


def run_program(program: Program, ops: Any, inputs: Sequence[Any]) -> Any:
    values = list(inputs)
    for step in program.steps:
        kind, first = step[0], values[step[1]]
        if kind == "add":
            value = ops.add(first, values[step[2]], alpha=step[3])
        elif kind == "sub":
            value = ops.sub(first, values[step[2]], alpha=step[3])
        elif kind == "mul":
            value = ops.mul(first, values[step[2]])
        elif kind == "pow_int":
            value = ops.pow(first, step[2])
        elif kind == "pow_pos":
            value = ops.pow(first * first + 0.5, step[2])
        elif kind == "permute":
            value = ops.permute(first, step[2])
        elif kind == "number":
            value = first * step[2] if step[3] else step[2] - first
        elif kind == "neg":
            value = ops.neg(first)
        else:
            value = ops.clone(first)
        values.append(value)
    return values[-1]


_PROGRAMS = [
    (seed, "elementwise", make_program(seed, "elementwise")) for seed in range(24)
] + [(seed, "shapes", make_program(1000 + seed, "shapes")) for seed in range(10)]


@pytest.mark.parametrize(
    "program",
    [pytest.param(p, id=f"{family}-{seed}") for seed, family, p in _PROGRAMS],
)
def test_random_composition_matches_torch(program: Program) -> None:
    seed = zlib.crc32(repr(program.steps).encode())
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1.5, 1.5, s) for s in program.shapes]
    state = rng.bit_generator.state  # the cotangent is drawn next

    def cotangent(shape: tuple[int, ...]) -> np.ndarray:
        draw = np.random.default_rng()
        draw.bit_generator.state = state
        return draw.standard_normal(shape)

    theirs = torch_vjp(
        arrays, lambda ops, *xs: run_program(program, ops, list(xs)), cotangent
    )

    leaves = [gradgen.tensor(a, requires_grad=True) for a in arrays]
    out = run_program(program, GRADGEN_OPS, leaves)
    assert out.dtype == gradgen.float64
    np.testing.assert_allclose(_as_numpy(out), theirs["out"], rtol=1e-10, atol=1e-10)
    v = gradgen.tensor(cotangent(tuple(out.shape)))
    grads = reverse_grads(out, leaves, v, "backward")
    assert len(grads) == len(theirs["grads"])
    for index, (got, want) in enumerate(zip(grads, theirs["grads"])):
        assert (got is None) == (want is None), f"input {index}"
        if want is not None:
            np.testing.assert_allclose(
                _as_numpy(got),
                want,
                rtol=1e-10,
                atol=1e-10,
                err_msg=f"input {index}",
            )


def test_random_programs_cover_the_operators() -> None:
    """The random batch exercises every step kind, broadcasting and permutations."""
    kinds = {step[0] for _, _, p in _PROGRAMS for step in p.steps}
    assert kinds >= {
        "add",
        "sub",
        "mul",
        "pow_int",
        "pow_pos",
        "neg",
        "clone",
        "number",
        "permute",
    }
    features = [p.features for _, _, p in _PROGRAMS]
    assert sum("broadcast" in f for f in features) >= 5
    assert sum("permute" in f for f in features) >= 5

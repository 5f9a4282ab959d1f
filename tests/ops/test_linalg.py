"""Linear algebra (matmul, mm, bmm, dot, vdot, mv, outer, ger, addmm, linear) against
PyTorch, beyond the operator table.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from gradgen.autograd import gradcheck, gradgradcheck
from torch_oracle import numbered, oracle, outcome
from ops.linalg_loss_checks import TOLERANCE, _arrays, _check_against_torch


def _names(node: Any, depth: int = 0) -> list[str]:
    """The graph under `node` as indented class names (AccumulateGrad unprefixed)."""
    if node is None:
        return []
    lines = ["  " * depth + node.name().replace("torch::autograd::", "")]
    for child, _ in node.next_functions:
        lines += _names(child, depth + 1)
    return lines


# -- matmul ----------------------------------------------------------------------------

RANK_CASES = [
    ((3,), (3,)),  # dot
    ((2, 3), (3,)),  # mv
    ((3,), (3, 4)),  # unsqueeze, mm, squeeze
    ((2, 3), (3, 4)),  # mm
    ((5, 2, 3), (3,)),  # folded mv
    ((5, 2, 3), (3, 4)),  # 3-d / 2-d: folded mm
    ((3,), (5, 3, 4)),  # 1-d / 3-d
    ((2, 3), (5, 3, 4)),  # 2-d / 3-d broadcast
    ((2, 5, 2, 3), (5, 3, 4)),  # batch broadcast
    ((2, 1, 2, 3), (1, 5, 3, 4)),  # 4-d / 4-d batch broadcast
    ((5, 2, 3), (5, 3, 4)),  # bmm
    ((1, 2, 3), (5, 3, 4)),  # batch 1 squeezed
    ((2, 3, 4), (4,)),
]
GRAD_PATTERNS = [(True, True), (True, False), (False, True)]


def _matmul_params() -> list[Any]:
    params = []
    for case in RANK_CASES:
        for pattern in GRAD_PATTERNS:
            # float32 (dtype kept, values and gradients) with both operands requiring grad
            for dtype in (
                ("float64", "float32") if pattern == (True, True) else ("float64",)
            ):
                params.append(pytest.param(case, pattern, dtype))
    return params


@pytest.mark.parametrize("case, pattern, dtype", _matmul_params())
def test_matmul_rank_cases_match_torch(case, pattern, dtype) -> None:
    arrays = _arrays(0, *case, dtype=dtype)
    _check_against_torch(
        gradgen.matmul, lambda torch: torch.matmul, arrays, list(pattern)
    )


@pytest.mark.parametrize("case", RANK_CASES)
@pytest.mark.parametrize("pattern", GRAD_PATTERNS)
def test_matmul_graph_follows_torch(case, pattern) -> None:
    """The same nodes as torch's _matmul_impl records, except SqueezeBackward4:
    PyTorch squeezes the 1-d @ 2-d result in place (squeeze_), gradgen has no
    squeeze_ and records squeeze.dim's SqueezeBackward1."""
    arrays, flags = _arrays(1, *case), list(pattern)

    def names(lib: Any) -> list[str]:
        inputs = [lib.tensor(a, requires_grad=f) for a, f in zip(arrays, flags)]
        return _names(lib.matmul(*inputs).grad_fn)

    expected = [
        n.replace("SqueezeBackward4", "SqueezeBackward1")
        for n in oracle("names", names)
    ]
    assert names(gradgen) == expected


def _second_order_params() -> list[Any]:
    return [pytest.param(case) for case in RANK_CASES]


@pytest.mark.parametrize("case", _second_order_params())
def test_matmul_gradcheck_and_gradgradcheck(case) -> None:
    inputs = [gradgen.tensor(a, requires_grad=True) for a in _arrays(2, *case)]
    assert gradcheck(gradgen.matmul, inputs)
    assert gradgradcheck(gradgen.matmul, inputs)


def test_matmul_complex_batched_gradcheck() -> None:
    rng = np.random.default_rng(3)
    arrays = [rng.normal(size=s) + 1j * rng.normal(size=s) for s in ((4, 2, 3), (3, 2))]
    inputs = [gradgen.tensor(a, requires_grad=True) for a in arrays]
    assert gradcheck(gradgen.matmul, inputs)
    _check_against_torch(gradgen.matmul, lambda torch: torch.matmul, arrays)


def test_matmul_method_and_int_dtype() -> None:
    a = np.arange(24).reshape(2, 3, 4)
    b = np.arange(8).reshape(4, 2)
    out = gradgen.tensor(a).matmul(gradgen.tensor(b))
    expected = oracle("result", lambda torch: torch.tensor(a).matmul(torch.tensor(b)))
    assert out.dtype == gradgen.int64 and expected.dtype == np.int64
    assert out.tolist() == expected.tolist()


# -- mm, bmm, dot, vdot, mv, outer, ger, addmm -------------------------------------------

PRODUCTS = [
    ("mm", ((2, 3), (3, 4))),
    ("bmm", ((2, 2, 3), (2, 3, 4))),
    ("dot", ((3,), (3,))),
    ("vdot", ((3,), (3,))),
    ("mv", ((2, 3), (3,))),
    ("outer", ((3,), (2,))),
    ("ger", ((3,), (2,))),
]


@pytest.mark.parametrize("name, shapes", PRODUCTS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_products_match_torch(name, shapes, dtype) -> None:
    arrays = _arrays(4, *shapes, dtype=dtype)
    _check_against_torch(
        getattr(gradgen, name), lambda torch: getattr(torch, name), arrays
    )
    # the method variant too
    ours = [gradgen.tensor(a) for a in arrays]
    expected = oracle(
        "method",
        lambda torch: getattr(torch.tensor(arrays[0]), name)(torch.tensor(arrays[1])),
    )
    np.testing.assert_allclose(
        getattr(ours[0], name)(ours[1]).numpy(), expected, rtol=TOLERANCE[dtype]
    )


@pytest.mark.parametrize("name, shapes", PRODUCTS)
def test_products_of_integers_stay_integers(name, shapes) -> None:
    rng = np.random.default_rng(5)
    for dtype in ("int64", "int32"):
        arrays = [rng.integers(-5, 5, s).astype(dtype) for s in shapes]
        out = getattr(gradgen, name)(*[gradgen.tensor(a) for a in arrays])
        expected = oracle(
            dtype,
            lambda torch: getattr(torch, name)(*[torch.tensor(a) for a in arrays]),
        )
        assert out.dtype.name == expected.dtype.name
        assert out.tolist() == expected.tolist()


@pytest.mark.parametrize(
    "name, shapes", [p for p in PRODUCTS if p[0] not in ("outer", "ger")]
)
def test_complex_products_conjugate_as_torch(name, shapes) -> None:
    rng = np.random.default_rng(6)
    arrays = [rng.normal(size=s) + 1j * rng.normal(size=s) for s in shapes]
    _check_against_torch(
        getattr(gradgen, name), lambda torch: getattr(torch, name), arrays
    )


ADDMM_CASES = [
    (dtype, beta, alpha, self_shape)
    for self_shape in [(4,), (1, 4), (2, 4), ()]
    for beta, alpha in [(1, 1), (0.5, -2.0), (0, 1.5), (2, 0)]
    for dtype in (
        ["float64", "float32"] if (beta, alpha) == (0.5, -2.0) else ["float64"]
    )
]


@pytest.mark.parametrize("dtype, beta, alpha, self_shape", ADDMM_CASES)
def test_addmm_matches_torch(dtype, beta, alpha, self_shape) -> None:
    arrays = _arrays(8, self_shape, (2, 3), (3, 4), dtype=dtype)
    _check_against_torch(
        lambda s, a, b: gradgen.addmm(s, a, b, beta=beta, alpha=alpha),
        lambda torch: lambda s, a, b: torch.addmm(s, a, b, beta=beta, alpha=alpha),
        arrays,
    )


def test_addmm_beta_zero_ignores_nan_and_alpha_zero_ignores_inf() -> None:
    nan_self = np.full(4, np.nan)
    inf_mat = np.full((2, 3), np.inf)
    for s, m1, beta, alpha in (
        (nan_self, np.ones((2, 3)), 0, 1),
        (np.ones(4), inf_mat, 1, 0),
    ):
        args = (s, m1, np.ones((3, 4)))
        out = gradgen.addmm(*[gradgen.tensor(a) for a in args], beta=beta, alpha=alpha)
        expected = oracle(
            numbered("result"),
            lambda torch: torch.addmm(
                *[torch.tensor(a) for a in args], beta=beta, alpha=alpha
            ),
        )
        assert out.tolist() == expected.tolist()


def test_grad_fn_names() -> None:
    for name, shapes in PRODUCTS + [("addmm", ((4,), (2, 3), (3, 4)))]:
        arrays = _arrays(9, *shapes)

        def node(lib: Any) -> str:
            return getattr(lib, name)(
                *[lib.tensor(a, requires_grad=True) for a in arrays]
            ).grad_fn.name()

        assert node(gradgen) == oracle(name, node)


ERROR_CASES: list[tuple[str, tuple[Any, ...]]] = [
    ("mm", (((2,), "float64"), ((2, 2), "float64"))),
    ("mm", (((2, 2), "float64"), ((2,), "float64"))),
    ("mm", (((2, 3), "float64"), ((4, 2), "float64"))),
    ("mm", (((2, 2), "float32"), ((2, 2), "float64"))),
    ("mm", (((2, 2), "int64"), ((2, 2), "complex128"))),
    ("mm", (((2, 2), "bool"), ((2, 2), "bool"))),
    ("bmm", (((2, 3), "float64"), ((2, 3, 2), "float64"))),
    ("bmm", (((2, 2, 3), "float64"), ((3, 3, 2), "float64"))),
    ("bmm", (((2, 2, 3), "float64"), ((2, 3, 2), "float32"))),
    ("dot", (((2, 2), "float64"), ((2, 2), "float64"))),
    ("dot", (((3,), "float32"), ((3,), "float64"))),
    ("dot", (((3,), "float64"), ((4,), "float64"))),
    ("vdot", (((3,), "int32"), ((3,), "int64"))),
    ("mv", (((3,), "float64"), ((3,), "float64"))),
    ("mv", (((2, 3), "float64"), ((4,), "float64"))),
    ("mv", (((2, 3), "float64"), ((3,), "float32"))),
    ("outer", (((3, 1), "float64"), ((2,), "float64"))),
    ("outer", (((3,), "float64"), ((2, 1), "float64"))),
    ("matmul", (((), "float64"), ((2,), "float64"))),
    ("matmul", (((2,), "float64"), ((), "float64"))),
    ("matmul", (((2, 3), "float64"), ((4, 5), "float64"))),
    ("matmul", (((2, 2, 3), "float64"), ((3, 3, 5), "float64"))),
    ("matmul", (((2, 2, 3), "float64"), ((4,), "float64"))),
    ("matmul", (((4,), "float64"), ((2, 3, 5), "float64"))),
    ("matmul", (((2, 2, 2, 3), "float64"), ((3, 2, 3, 5), "float64"))),
    ("matmul", (((2, 3), "float32"), ((3,), "float64"))),
    ("addmm", (((4,), "float64"), ((2, 3), "float32"), ((3, 4), "float32"))),
    ("addmm", (((4,), "float32"), ((2, 3), "float64"), ((3, 4), "float32"))),
    ("addmm", (((3,), "float64"), ((2, 3), "float64"), ((3, 4), "float64"))),
    ("addmm", (((4,), "float64"), ((3,), "float64"), ((3, 4), "float64"))),
    ("addmm", (((4,), "float64"), ((2, 3), "float64"), ((2, 4), "float64"))),
    ("addmm", (((1, 1, 4), "float32"), ((2, 3), "float32"), ((3, 4), "float32"))),
]


@pytest.mark.parametrize("name, specs", ERROR_CASES)
def test_errors_match_torch(name, specs) -> None:
    arrays = [np.ones(shape, dtype=dtype) for shape, dtype in specs]
    theirs = oracle(
        "error",
        lambda torch: outcome(
            lambda: getattr(torch, name)(*[torch.tensor(a) for a in arrays])
        ),
    )
    assert isinstance(theirs, Exception)
    with pytest.raises(type(theirs)) as ours:
        getattr(gradgen, name)(*[gradgen.tensor(a) for a in arrays])
    assert str(ours.value) == str(theirs)


# -- linear ------------------------------------------------------------------------------

LINEAR_CASES = [
    ((3,), (4,)),
    ((2, 3), (4,)),
    ((5, 2, 3), (4,)),
    ((2, 5, 2, 3), (4,)),
    ((3,), ()),
    ((5, 2, 3), ()),
    ((5, 2, 3), (2, 4)),
    ((3,), (1, 4)),
    ((5, 2, 3), None),
    ((3,), None),
]


@pytest.mark.parametrize("input_shape, bias_shape", LINEAR_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_linear_matches_torch(input_shape, bias_shape, dtype) -> None:
    shapes = [input_shape, (4, 3)] + ([] if bias_shape is None else [bias_shape])
    arrays = _arrays(10, *shapes, dtype=dtype)
    out, expected = _check_against_torch(
        GF.linear, lambda torch: torch.nn.functional.linear, arrays
    )
    # (SqueezeBackward4: see test_matmul_graph_follows_torch)
    assert out.grad_fn.name() == expected["grad_fn"].replace("Backward4", "Backward1")


def test_linear_transposed_input_and_bad_bias() -> None:
    array = _arrays(11, (3, 5, 2))[0]
    weight, bias = _arrays(12, (4, 3), (4,))
    _check_against_torch(
        lambda x, w, b: GF.linear(x.transpose(0, 2), w, b),
        lambda torch: lambda x, w, b: torch.nn.functional.linear(
            x.transpose(0, 2), w, b
        ),
        [array, weight, bias],
    )
    for x_shape, b_shape in (((3,), (2, 4)), ((2, 3), (3,))):
        theirs = oracle(
            str(x_shape),
            lambda torch: outcome(
                lambda: torch.nn.functional.linear(
                    torch.ones(x_shape), torch.ones(4, 3), torch.ones(b_shape)
                )
            ),
        )
        assert isinstance(theirs, RuntimeError)
        with pytest.raises(RuntimeError) as ours:
            GF.linear(gradgen.ones(x_shape), gradgen.ones(4, 3), gradgen.ones(b_shape))
        assert str(ours.value) == str(theirs)

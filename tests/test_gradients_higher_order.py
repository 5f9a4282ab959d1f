"""Second and third derivatives, by hand (see tests/test_gradients_first_order.py)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import pytest

import gradgen

from gradient_checks import MODES, _as_numpy, _rng, reverse_grads

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

"""Batching rules of masked_scatter(_) (batching_rules_scatter.py), pdist's
operators (trailing, kernels over a batch) and as_strided (batching_rules_strided.py):
each runs once for the batch (no fallback warning), equals the per-example loop to
the bit (as_strided: where torch.func's reading is the loop's), and gives
torch.func.vmap's values, gradients and errors (recorded in tests/golden/).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.func import batching, grad, vjp, vmap
from torch_oracle import oracle

from .common import assert_same, errors, plain

RNG = np.random.default_rng(11)
SELF = RNG.standard_normal((3, 4))
SOURCE = RNG.standard_normal((3, 5))
MASK = np.array(
    [[True, False, True, True], [False, False, False, False], [True, True, True, True]]
)
POINTS = RNG.standard_normal((3, 5, 4))
POWERS = (0.0, 1.0, 2.0, 3.0, 0.5, float("inf"))


def _batched(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """vmap(function)(*args) with the fallback's warning an error (warned or not
    before)."""
    batching._warned.clear()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="vmap: .* has no batching rule")
        return vmap(function, **kwargs)(*args)


def _loop(function: Callable[..., Any], *args: Any, in_dims: Any = 0) -> Any:
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    results = [
        function(*[a if d is None else a.select(d, i) for a, d in zip(args, dims)])
        for i in range(size)
    ]
    if isinstance(results[0], tuple):
        return tuple(gradgen.stack(list(c)) for c in zip(*results))
    return gradgen.stack(results)


def _equal(ours: Any, expected: Any) -> None:
    pairs = zip(ours, expected) if isinstance(ours, tuple) else [(ours, expected)]
    for a, b in pairs:
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


# -- masked_scatter ----------------------------------------------------------------------


def _scatter_cases(
    lib: Any,
) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...], Any]]:
    """name: (function, inputs, in_dims)."""
    s, m, src = (
        lib.tensor(SELF),
        lib.tensor(MASK),
        lib.tensor(SOURCE),
    )
    arange = lib.arange(4.0, dtype=lib.float64)
    return {
        "all batched": (lambda a, k, b: a.masked_scatter(k, b), (s, m, src), 0),
        "source unbatched": (lambda a, k: a.masked_scatter(k, arange), (s, m), 0),
        "mask unbatched": (lambda a, b: a.masked_scatter(m[0], b), (s, src), 0),
        "self unbatched": (
            lambda k, b: lib.zeros(4, dtype=lib.float64).masked_scatter(k, b),
            (m, src),
            0,
        ),
        "mask broadcast": (
            lambda a, k, b: a.reshape(2, 2).masked_scatter(k[:2], b),
            (s, m, src),
            0,
        ),
        "in place": (lambda a, k, b: a.clone().masked_scatter_(k, b), (s, m, src), 0),
        "in place, mask unbatched": (
            lambda a, b: a.clone().masked_scatter_(m[2], b),
            (s, src),
            0,
        ),
        "source along dim 1": (
            lambda a, k, b: a.masked_scatter(k, b),
            (s, m, src.t().contiguous()),
            (0, 0, 1),
        ),
    }


def _scatter_values(lib: Any) -> dict[str, Any]:
    return {
        name: plain(lib.func.vmap(f, in_dims=d)(*inputs))
        for name, (f, inputs, d) in _scatter_cases(lib).items()
    }


@pytest.mark.parametrize("name", list(_scatter_cases(gradgen)))
def test_masked_scatter_equals_the_loop(name: str) -> None:
    function, inputs, in_dims = _scatter_cases(gradgen)[name]
    _equal(
        _batched(function, *inputs, in_dims=in_dims),
        _loop(function, *inputs, in_dims=in_dims),
    )


def test_masked_scatter_matches_torch_func() -> None:
    assert_same(_scatter_values(gradgen), oracle("values", _scatter_values))


def _scatter_grads(lib: Any) -> Any:
    def loss(a: Any, k: Any, b: Any) -> Any:
        return (a.masked_scatter(k, b * b) ** 3).sum()

    s, m, src = lib.tensor(SELF), lib.tensor(MASK), lib.tensor(SOURCE)
    return lib.func.vmap(lib.func.grad(loss, argnums=(0, 2)))(s, m, src)


def test_masked_scatter_gradients() -> None:
    """Per-example gradients of self and source: the loop's bit for bit, torch's."""
    ours = _scatter_grads(gradgen)
    _equal(
        tuple(ours),
        _loop(
            grad(lambda a, k, b: (a.masked_scatter(k, b * b) ** 3).sum(), (0, 2)),
            gradgen.tensor(SELF),
            gradgen.tensor(MASK),
            gradgen.tensor(SOURCE),
        ),
    )
    assert_same(
        plain(ours), oracle("grads", lambda torch: plain(_scatter_grads(torch)))
    )


def _scatter_errors(lib: Any) -> dict[str, Any]:
    m, src = lib.tensor(MASK), lib.tensor(SOURCE)
    V = lib.func.vmap
    return errors(
        {
            "in place into unbatched": lambda: V(
                lambda b: lib.zeros(4, dtype=lib.float64).masked_scatter_(m[0], b)
            )(src),
            "source too short": lambda: V(
                lambda k, b: lib.zeros(4).masked_scatter(k, b)
            )(m, lib.zeros(3, 2)),
        }
    )


def test_masked_scatter_errors_match_torch_func() -> None:
    assert_same(_scatter_errors(gradgen), oracle("errors", _scatter_errors))


# -- pdist -------------------------------------------------------------------------------


def _distances(lib: Any) -> dict[str, Any]:
    x = lib.tensor(POINTS)
    found = {}
    for p in POWERS:
        found[f"pdist {p}"] = plain(lib.func.vmap(lambda a: lib.pdist(a, p))(x))
        loss = lib.func.grad(lambda a: (lib.pdist(a, p) ** 2).sum())
        found[f"grad {p}"] = plain(lib.func.vmap(loss)(x))
    return found


@pytest.mark.parametrize("p", POWERS)
def test_pdist_equals_the_loop(p: float) -> None:
    x = gradgen.tensor(POINTS)
    _equal(
        _batched(lambda a: gradgen.pdist(a, p), x),
        _loop(lambda a: gradgen.pdist(a, p), x),
    )
    loss = grad(lambda a: (gradgen.pdist(a, p) ** 2).sum())
    _equal(_batched(loss, x), _loop(loss, x))


def test_pdist_backward_with_batched_cotangents() -> None:
    """vjp's cotangents batched, the points not: _pdist_backward's batch is the
    gradient's alone (the kernel broadcasts the points)."""
    points = gradgen.tensor(POINTS[0])
    _, pullback = vjp(gradgen.pdist, points)
    cotangents = gradgen.tensor(RNG.standard_normal((3, 10)))
    _equal(_batched(pullback, cotangents)[0], _loop(pullback, cotangents)[0])


def test_pdist_matches_torch_func() -> None:
    assert_same(_distances(gradgen), oracle("pdist", _distances))


# -- as_strided --------------------------------------------------------------------------


def _strided_cases(lib: Any) -> dict[str, tuple[Callable[..., Any], Any, int]]:
    x = lib.arange(40.0, dtype=lib.float64).reshape(4, 10)
    return {
        "own offset": (lambda a: a.as_strided((2, 2), (1, 2)), x[:, :6], 0),
        "sliced": (lambda a: a[1:].as_strided((2,), (1,)), x[:, :4], 0),
        "offset": (lambda a: a.as_strided((2,), (1,), 12), x[1:, 2:5], 0),
        "column": (lambda a: a.as_strided((3,), (10,)), x, 1),
        "2-d examples": (lambda a: a.as_strided((2, 3), (3, 1)), x.reshape(2, 4, 5), 0),
        "empty": (lambda a: a.as_strided((0,), (1,)), x, 0),
        "outside": (lambda a: a.as_strided((5,), (3,)), x[:, :4], 0),
        "outside by offset": (lambda a: a.as_strided((2,), (1,), 3), x[:, :4], 0),
        "before": (lambda a: a.as_strided((2,), (1,), 0), x[:, 3:6], 0),
        "column outside": (lambda a: a.as_strided((5,), (10,)), x, 1),
    }


def _strided(lib: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, (f, x, d) in _strided_cases(lib).items():
        try:
            found[name] = plain(lib.func.vmap(f, in_dims=d)(x))
        except RuntimeError as error:
            found[name] = error
    y = lib.tensor(np.arange(24.0).reshape(4, 6), requires_grad=True)
    loss = lib.func.grad(lambda a: (a.as_strided((2, 2), (1, 2), 1) ** 2).sum())
    found["grad"] = plain(lib.func.vmap(loss)(y))
    return found


def test_as_strided_matches_torch_func() -> None:
    assert_same(_strided(gradgen), oracle("as_strided", _strided))


@pytest.mark.parametrize("name", ["own offset", "sliced", "column", "2-d examples"])
def test_as_strided_without_an_offset_equals_the_loop(name: str) -> None:
    function, x, in_dims = _strided_cases(gradgen)[name]
    _equal(_batched(function, x, in_dims=in_dims), _loop(function, x, in_dims=in_dims))

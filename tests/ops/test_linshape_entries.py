"""The products, factorisations and shape operators of issue 13's linshape slice
(addmv, addr, addbmm, baddbmm, renorm, the ATen norms, cholesky*, triangular_solve,
lu_unpack, geqrf, ormqr, householder_product, as_strided*, unfold, block_diag,
complex, polar, rot90, narrow_copy, unsafe_split*, segment_reduce): their checks,
values and graph nodes against PyTorch, beyond the operator table's lines."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle
from ops.nn_checks import _same_error


def _quiet(fn: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _f64(lib: Any, values: Any) -> Any:
    return lib.tensor(np.asarray(values, dtype=np.float64))


def _rand(lib: Any, seed: int, *shape: int) -> Any:
    return _f64(lib, np.random.default_rng(seed).uniform(-2, 2, shape))


# Each raises the same error type and message in gradgen and PyTorch.
ERRORS: dict[str, Callable[[Any], Any]] = {
    "addmv sizes": lambda lib: lib.addmv(
        _rand(lib, 0, 2), _rand(lib, 1, 3, 4), _rand(lib, 2, 4)
    ),
    "addmv ranks": lambda lib: lib.addmv(
        _rand(lib, 0, 3), _rand(lib, 1, 3, 4), _rand(lib, 2, 4, 1)
    ),
    "addmv dtypes": lambda lib: lib.addmv(
        _rand(lib, 0, 3), _rand(lib, 1, 3, 4), _rand(lib, 2, 4).float()
    ),
    "addr rank": lambda lib: lib.addr(
        _rand(lib, 0, 3, 4), _rand(lib, 1, 3, 1), _rand(lib, 2, 4)
    ),
    "addr integral beta": lambda lib: lib.addr(
        lib.ones(3, 4, dtype=lib.int64),
        lib.ones(3, dtype=lib.int64),
        lib.ones(4, dtype=lib.int64),
        beta=0.5,
    ),
    "addr bool beta": lambda lib: lib.addr(
        _rand(lib, 0, 3, 4), _rand(lib, 1, 3), _rand(lib, 2, 4), beta=True
    ),
    "addbmm batches": lambda lib: lib.addbmm(
        _rand(lib, 0, 2, 4), _rand(lib, 1, 3, 2, 3), _rand(lib, 2, 2, 3, 4)
    ),
    "addbmm sizes": lambda lib: lib.addbmm(
        _rand(lib, 0, 2, 4), _rand(lib, 1, 3, 2, 3), _rand(lib, 2, 3, 4, 4)
    ),
    "baddbmm self": lambda lib: lib.baddbmm(
        _rand(lib, 0, 3, 2, 5), _rand(lib, 1, 3, 2, 3), _rand(lib, 2, 3, 3, 4)
    ),
    "baddbmm dtypes": lambda lib: lib.baddbmm(
        _rand(lib, 0, 3, 2, 4),
        _rand(lib, 1, 3, 2, 3).float(),
        _rand(lib, 2, 3, 3, 4).float(),
    ),
    "renorm p": lambda lib: lib.renorm(_rand(lib, 0, 3, 4), 0, 0, 1),
    "renorm maxnorm": lambda lib: lib.renorm(_rand(lib, 0, 3, 4), 2, 0, -1),
    "renorm rank": lambda lib: lib.renorm(_rand(lib, 0, 3), 2, 0, 1),
    "cholesky square": lambda lib: _quiet(lambda: lib.cholesky(_rand(lib, 0, 3, 4))),
    "cholesky_inverse rank": lambda lib: lib.cholesky_inverse(_rand(lib, 0, 3)),
    "cholesky_solve sizes": lambda lib: lib.cholesky_solve(
        _rand(lib, 0, 4, 2), _rand(lib, 1, 3, 3)
    ),
    "cholesky_solve rank": lambda lib: lib.cholesky_solve(
        _rand(lib, 0, 3), _rand(lib, 1, 3, 3)
    ),
    "triangular_solve square": lambda lib: lib.triangular_solve(
        _rand(lib, 0, 3, 2), _rand(lib, 1, 3, 4)
    ),
    "triangular_solve dtypes": lambda lib: lib.triangular_solve(
        _rand(lib, 0, 3, 2).float(), _rand(lib, 1, 3, 3)
    ),
    "lu_unpack pivots": lambda lib: lib.lu_unpack(
        _rand(lib, 0, 3, 3), lib.ones(3, dtype=lib.int64)
    ),
    "geqrf rank": lambda lib: lib.geqrf(_rand(lib, 0, 3)),
    "ormqr tau": lambda lib: lib.ormqr(
        _rand(lib, 0, 4, 3), _rand(lib, 1, 2), _rand(lib, 2, 4, 2)
    ),
    "ormqr other": lambda lib: lib.ormqr(
        _rand(lib, 0, 4, 3), _rand(lib, 1, 3), _rand(lib, 2, 5, 2)
    ),
    "as_strided bounds": lambda lib: lib.as_strided(_rand(lib, 0, 4), (3, 3), (1, 1)),
    "as_strided negative": lambda lib: lib.as_strided(
        _rand(lib, 0, 4), (2, 2), (1, -1)
    ),
    "as_strided_scatter src": lambda lib: lib.as_strided_scatter(
        _rand(lib, 0, 4), _rand(lib, 1, 2, 3), (2, 2), (1, 1)
    ),
    "unfold size": lambda lib: _rand(lib, 0, 5).unfold(0, 6, 2),
    "unfold step": lambda lib: _rand(lib, 0, 5).unfold(0, 2, 0),
    "block_diag rank": lambda lib: lib.block_diag(_rand(lib, 0, 2, 3, 1)),
    "complex dtypes": lambda lib: lib.complex(
        _rand(lib, 0, 2).float(), _rand(lib, 1, 2)
    ),
    "polar integers": lambda lib: lib.polar(
        lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)
    ),
    "rot90 dims": lambda lib: lib.rot90(_rand(lib, 0, 2, 3), 1, [0, 0]),
    "rot90 rank": lambda lib: lib.rot90(_rand(lib, 0, 2), 1, [0, 1]),
    "narrow_copy bounds": lambda lib: lib.narrow_copy(_rand(lib, 0, 2, 3), 1, 2, 2),
    "narrow_copy start": lambda lib: lib.narrow_copy(_rand(lib, 0, 2, 3), 1, -5, 1),
    "segment_reduce reduce": lambda lib: lib.segment_reduce(
        _rand(lib, 0, 4), "foo", lengths=lib.tensor([1, 3])
    ),
    "segment_reduce lengths": lambda lib: lib.segment_reduce(
        _rand(lib, 0, 4), "sum", lengths=lib.tensor([1, 0, 2])
    ),
    "segment_reduce none": lambda lib: lib.segment_reduce(_rand(lib, 0, 4), "sum"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    call = ERRORS[name]
    _same_error(lambda: call(gradgen), lambda torch: lambda: call(torch))


def _values(lib: Any) -> dict[str, Any]:
    """Values the operator table's lines do not reach."""
    nan = _f64(lib, [float("nan")] * 3)
    LU = _rand(lib, 4, 2, 3, 4)
    pivots = lib.tensor([[2, 3, 3], [1, 3, 3]], dtype=lib.int32)
    P, L, U = lib.lu_unpack(LU, pivots, False)
    P2, _, _ = lib.lu_unpack(LU, pivots, True, False)
    a, tau = lib.geqrf(_rand(lib, 5, 2, 4, 3))
    base = _rand(lib, 6, 8)
    return {
        "addmv beta=0 ignores nan": lib.addmv(
            nan, _rand(lib, 1, 3, 4), _rand(lib, 2, 4), beta=0
        ),
        "addr promotes": lib.addr(
            _rand(lib, 0, 3, 4).float(), _rand(lib, 1, 3), _rand(lib, 2, 4)
        ),
        "addr bool": lib.addr(
            lib.tensor([[True, False]]), lib.tensor([False]), lib.tensor([True, True])
        ),
        "addbmm empty batch": lib.addbmm(
            _rand(lib, 0, 4),
            lib.zeros(0, 2, 3, dtype=lib.float64),
            lib.zeros(0, 3, 4, dtype=lib.float64),
        ),
        "lu_unpack data off": (P.numpy(), tuple(L.shape), tuple(U.shape)),
        "lu_unpack pivots off": tuple(P2.shape),
        "geqrf": (a.numpy(), tau.numpy()),
        "as_strided of a view": lib.as_strided(base[2:], (2, 2), (1, 2)),
        "as_strided with offset": base[1:].as_strided((3,), (2,), 1),
        "unfold 0-d": _f64(lib, 2.0).unfold(0, 1, 1),
        "block_diag mixed": lib.block_diag(
            lib.ones(2, 3, dtype=lib.float32), _f64(lib, [1.0, 2.0]), _f64(lib, 3.0)
        ),
        "block_diag none": tuple(lib.block_diag().shape),
        "complex broadcast": lib.view_as_real(
            lib.complex(_rand(lib, 0, 2, 1), _rand(lib, 1, 3))
        ),
        "segment_reduce empty": [
            lib.segment_reduce(
                _f64(lib, [1.0, 2, 3, 4]), r, lengths=lib.tensor([1, 0, 3])
            )
            for r in ("max", "min", "mean", "sum", "prod")
        ],
        "segment_reduce initial": lib.segment_reduce(
            _f64(lib, [1.0, 2, 3, 4]), "max", lengths=lib.tensor([1, 0, 3]), initial=2.5
        ),
        "segment_reduce offsets": lib.segment_reduce(
            _f64(lib, [1.0, 2, 3, 4]), "sum", offsets=lib.tensor([0, 1, 1, 4])
        ),
    }


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "detach"):
        return value.detach().numpy()
    return value


@pytest.mark.parametrize("key", sorted(_values(gradgen)))
def test_values_match_torch(key: str) -> None:
    ours = _plain(_values(gradgen)[key])
    theirs = oracle(key, lambda torch: _plain(_values(torch)[key]))
    _assert_same(ours, theirs)


def _assert_same(ours: Any, theirs: Any) -> None:
    """Equal values (nan where nan), dtypes and shapes, through lists and tuples."""
    if isinstance(ours, (list, tuple)):
        assert isinstance(theirs, (list, tuple)) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b)
        return
    if isinstance(ours, np.ndarray):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)
        return
    assert ours == theirs


def _grad_fns(lib: Any) -> dict[str, str]:
    a = _rand(lib, 0, 3, 3).requires_grad_()
    v = _rand(lib, 1, 3).requires_grad_()
    spd = a @ a.mT + 3.0 * lib.eye(3, dtype=lib.float64)
    ops = lib.ops.aten if lib.__name__ == "torch" else gradgen.generated.operators
    aten_norm = (
        ops.norm.Scalar(a, 2) if lib.__name__ == "torch" else ops.norm_Scalar.call(a, 2)
    )
    return {
        "addmv": lib.addmv(v, a, v).grad_fn.name(),
        "renorm": a.renorm(2, 0, 1.0).grad_fn.name(),
        "norm": lib.norm(a).grad_fn.name(),
        "aten norm": aten_norm.grad_fn.name(),
        "cholesky": _quiet(lambda: lib.cholesky(spd)).grad_fn.name(),
        "householder": lib.linalg.householder_product(a, v[:2]).grad_fn.name(),
        "unfold": a.unfold(0, 2, 1).grad_fn.name(),
        "block_diag": lib.block_diag(a, v).grad_fn.name(),
        "polar": lib.polar(v.abs(), v).grad_fn.name(),
        "unsafe_split": lib.unsafe_split(a, 2)[0].grad_fn.name(),
    }


@pytest.mark.parametrize("key", sorted(_grad_fns(gradgen)))
def test_graph_nodes_are_torchs(key: str) -> None:
    assert _grad_fns(gradgen)[key] == oracle(key, lambda torch: _grad_fns(torch)[key])


def test_as_strided_scatter_values_and_src_gradient_match_torch() -> None:
    """The values and src's gradient (torch 2.13's gradient of self is zero where the
    output depends on self; gradgen's is the identity there, zero where src went)."""

    def run(lib: Any) -> Any:
        x = _rand(lib, 0, 7).requires_grad_()
        src = _rand(lib, 1, 2, 2).requires_grad_()
        out = lib.as_strided_scatter(x * 1.0, src, (2, 2), (1, 2), 1)
        weights = _f64(lib, np.arange(7.0))
        (out * weights).sum().backward()
        return out.detach().numpy(), src.grad.numpy(), x.grad.numpy()

    value, src_grad, self_grad = run(gradgen)
    theirs = oracle("value and src grad", lambda torch: run(torch)[:2])
    np.testing.assert_allclose(value, theirs[0])
    np.testing.assert_allclose(src_grad, theirs[1])
    # positions 1..4 are written by src: offset 1, sizes (2, 2), strides (1, 2)
    np.testing.assert_allclose(self_grad, [0.0, 0, 0, 0, 0, 5, 6])


def test_geqrf_has_no_derivative() -> None:
    a = gradgen.tensor(np.eye(3), requires_grad=True)
    r, _ = gradgen.geqrf(a)
    with pytest.raises(NotImplementedError, match="geqrf"):
        r.sum().backward()


def test_householder_product_of_geqrf_is_qr() -> None:
    """Q from geqrf's reflectors is linalg.qr's Q (the same LAPACK conventions)."""
    x = np.random.default_rng(7).uniform(-2, 2, (2, 5, 3))
    a, tau = gradgen.geqrf(gradgen.tensor(x))
    q = gradgen.linalg.householder_product(a, tau)
    expected = np.linalg.qr(x)[0]
    np.testing.assert_allclose(q.numpy(), expected, atol=1e-12)

"""torch.linalg beyond the operator table: errors (PyTorch's types and messages),
the `_ex` functions' info, the named tuples, batches and broadcasting, single precision,
singular matrices, and the torch.* spellings."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_compare import compare
from torch_oracle import numbered, oracle, outcome

RNG = np.random.default_rng(13)
A3 = RNG.uniform(-2, 2, (3, 3))
B3 = RNG.uniform(-2, 2, (3, 2))
# Singular with an exact zero determinant in PyTorch's MKL on AVX2 and AVX-512 alike
# (rows [1, 2, 3], [2, 4, 6], [1, 0, 1] give -6.7e-16 on AVX-512: another gradient).
SINGULAR = np.array([[1.0, 0.0, 1.0], [2.0, 4.0, 6.0], [1.0, 2.0, 3.0]])


def _f64(lib: Any, values: Any) -> Any:
    return lib.tensor(np.asarray(values), dtype=lib.float64)


def _same_error(fn: Callable[[Any], Any]) -> None:
    """fn(gradgen) raises what fn(torch) raises: the same class name (torch's
    LinAlgError is torch._C._LinAlgError) and message."""
    theirs = oracle(numbered("error"), lambda t: outcome(lambda: fn(t)))
    assert isinstance(theirs, Exception), f"torch raised nothing: {theirs!r}"
    with pytest.raises(Exception) as caught:
        fn(gradgen)
    assert (type(caught.value).__name__, str(caught.value)) == (
        type(theirs).__name__,
        str(theirs),
    )


@pytest.mark.parametrize(
    "name", ["inv", "det", "slogdet", "cholesky", "matrix_exp", "inv_ex", "eigh", "eig"]
)
def test_square_matrix_errors(name: str) -> None:
    for values in (np.ones((2, 3)), np.ones(3)):
        _same_error(lambda lib: getattr(lib.linalg, name)(_f64(lib, values)))
    _same_error(lambda lib: getattr(lib.linalg, name)(lib.eye(3, dtype=lib.int64)))


@pytest.mark.parametrize("name", ["svd", "svdvals", "qr"])
def test_matrix_errors(name: str) -> None:
    _same_error(lambda lib: getattr(lib.linalg, name)(_f64(lib, np.ones(3))))
    _same_error(lambda lib: getattr(lib.linalg, name)(lib.eye(3, dtype=lib.int64)))


def test_singular_and_not_positive_definite_are_linalg_errors() -> None:
    batch = np.stack([np.eye(3), np.zeros((3, 3))])
    _same_error(lambda lib: lib.linalg.inv(_f64(lib, np.zeros((3, 3)))))
    _same_error(lambda lib: lib.linalg.inv(_f64(lib, batch)))
    _same_error(lambda lib: lib.linalg.cholesky(_f64(lib, -np.eye(3))))
    _same_error(
        lambda lib: lib.linalg.cholesky(_f64(lib, np.stack([np.eye(3), -np.eye(3)])))
    )
    _same_error(lambda lib: lib.linalg.solve(_f64(lib, SINGULAR), _f64(lib, B3)))
    _same_error(lambda lib: lib.inverse(_f64(lib, SINGULAR * 0)))
    with pytest.raises(gradgen.linalg.LinAlgError):
        gradgen.linalg.inv(_f64(gradgen, np.zeros((2, 2))))
    assert issubclass(gradgen.linalg.LinAlgError, RuntimeError)


def test_argument_errors() -> None:
    eye, vector = np.eye(3), np.ones(3)
    _same_error(
        lambda lib: lib.linalg.solve(_f64(lib, np.ones((2, 3))), _f64(lib, vector))
    )
    _same_error(lambda lib: lib.linalg.solve(_f64(lib, eye), _f64(lib, np.ones(4))))
    _same_error(
        lambda lib: lib.linalg.solve(_f64(lib, eye), lib.ones(3, dtype=lib.float32))
    )
    _same_error(
        lambda lib: lib.linalg.solve(
            _f64(lib, np.stack([eye, eye])), _f64(lib, np.ones((2, 3))), left=False
        )
    )
    _same_error(lambda lib: lib.linalg.qr(_f64(lib, eye), mode="bad"))
    _same_error(lambda lib: lib.linalg.eigh(_f64(lib, eye), UPLO="X"))
    _same_error(
        lambda lib: lib.linalg.solve_triangular(
            _f64(lib, eye), _f64(lib, vector), upper=True
        )
    )
    _same_error(lambda lib: lib.linalg.cross(_f64(lib, vector), _f64(lib, np.ones(4))))
    _same_error(lambda lib: lib.linalg.matrix_power(_f64(lib, np.ones((2, 3))), 2))
    _same_error(lambda lib: lib.linalg.multi_dot([_f64(lib, eye)]))
    _same_error(lambda lib: lib.linalg.norm(_f64(lib, np.ones((2, 2, 2))), 2))
    _same_error(lambda lib: lib.linalg.matrix_norm(_f64(lib, eye), 3))


def _info_answer(lib: Any, name: str, values: np.ndarray) -> dict[str, Any]:
    result = getattr(lib.linalg, name)(_f64(lib, values))
    return {
        "type": type(result).__name__,
        "value": result[0].numpy(),
        "info": result[1].numpy(),
        "info_dtype": str(result[1].dtype).split(".")[-1],
    }


@pytest.mark.parametrize(
    "name, values",
    [
        ("inv_ex", np.zeros((3, 3))),
        ("inv_ex", np.stack([np.eye(3), SINGULAR])),
        ("cholesky_ex", -np.eye(3)),
        ("cholesky_ex", np.stack([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]])),
    ],
)
def test_ex_functions_report_info_instead_of_raising(
    name: str, values: np.ndarray
) -> None:
    ours = _info_answer(gradgen, name, values)
    theirs = oracle(numbered("info"), lambda t: _info_answer(t, name, values))
    assert ours["type"] == theirs["type"]
    assert ours["info_dtype"] == theirs["info_dtype"]
    np.testing.assert_array_equal(ours["info"], theirs["info"])
    finite = np.isfinite(theirs["value"])
    np.testing.assert_array_equal(np.isfinite(ours["value"]), finite)
    np.testing.assert_allclose(ours["value"][finite], theirs["value"][finite])


def test_solve_ex_info() -> None:
    result, info = gradgen.linalg.solve_ex(_f64(gradgen, SINGULAR), _f64(gradgen, B3))
    assert info.item() == oracle(
        "info",
        lambda t: t.linalg.solve_ex(_f64(t, SINGULAR), _f64(t, B3)).info.item(),
    )
    assert info.item() > 0


NAMED: list[tuple[str, Callable[[Any], Any]]] = [
    ("linalg.slogdet", lambda lib: lib.linalg.slogdet(_f64(lib, A3))),
    ("slogdet", lambda lib: lib.slogdet(_f64(lib, A3))),
    ("linalg.svd", lambda lib: lib.linalg.svd(_f64(lib, A3))),
    ("svd", lambda lib: lib.svd(_f64(lib, A3))),
    ("linalg.eigh", lambda lib: lib.linalg.eigh(_f64(lib, A3 + A3.T))),
    ("linalg.eig", lambda lib: lib.linalg.eig(_f64(lib, A3))),
    ("linalg.qr", lambda lib: lib.linalg.qr(_f64(lib, A3))),
    ("linalg.inv_ex", lambda lib: lib.linalg.inv_ex(_f64(lib, A3))),
    ("linalg.cholesky_ex", lambda lib: lib.linalg.cholesky_ex(_f64(lib, np.eye(3)))),
    ("linalg.solve_ex", lambda lib: lib.linalg.solve_ex(_f64(lib, A3), _f64(lib, B3))),
    ("_linalg_det", lambda lib: lib._linalg_det(_f64(lib, A3))),
]
FIELDS = {
    "linalg.slogdet": ("sign", "logabsdet"),
    "slogdet": ("sign", "logabsdet"),
    "linalg.svd": ("U", "S", "Vh"),
    "svd": ("U", "S", "V"),
    "linalg.eigh": ("eigenvalues", "eigenvectors"),
    "linalg.eig": ("eigenvalues", "eigenvectors"),
    "linalg.qr": ("Q", "R"),
    "linalg.inv_ex": ("inverse", "info"),
    "linalg.cholesky_ex": ("L", "info"),
    "linalg.solve_ex": ("result", "info"),
    "_linalg_det": ("result", "LU", "pivots"),
}


@pytest.mark.parametrize("name, fn", NAMED, ids=[n for n, _ in NAMED])
def test_named_tuples(name: str, fn: Callable[[Any], Any]) -> None:
    def answer(lib: Any) -> Any:
        result = fn(lib)
        fields = FIELDS[name]
        return type(result).__name__, [
            getattr(result, f).numpy() is not None for f in fields
        ]

    assert answer(gradgen) == oracle("answer", answer)
    assert gradgen.linalg.slogdet(_f64(gradgen, A3))._fields == FIELDS["linalg.slogdet"]


def test_batches_broadcast() -> None:
    rng = np.random.default_rng(101)
    A = rng.uniform(-2, 2, (2, 1, 3, 3))
    B = rng.uniform(-2, 2, (4, 3, 2))
    compare(lambda lib, a, b: lib.linalg.solve(a, b), A, B, create_graph=True)
    compare(lambda lib, a: lib.linalg.det(a), A[:, 0], create_graph=True)
    compare(lambda lib, a: lib.linalg.inv(a), A, create_graph=True)
    compare(
        lambda lib, a, b: lib.linalg.solve_triangular(
            a + 4 * lib.eye(3, dtype=lib.float64), b, upper=False
        ),
        A,
        B,
    )


def test_single_precision_keeps_its_dtype() -> None:
    for name in ("inv", "det", "matrix_exp", "svdvals", "eigvalsh", "pinv"):
        out = getattr(gradgen.linalg, name)(
            gradgen.tensor(A3 + A3.T, dtype=gradgen.float32)
        )
        want = oracle(
            numbered("dtype"),
            lambda t: str(
                getattr(t.linalg, name)(t.tensor(A3 + A3.T, dtype=t.float32)).dtype
            ),
        )
        assert str(out.dtype).replace("gradgen", "torch") == want


@pytest.mark.parametrize("grad_mode", [False, True])
def test_det_gradient_at_a_singular_matrix(grad_mode: bool) -> None:
    """The gradient of det at a singular matrix is its adjugate (computed by SVD);
    outside grad mode, by the perturbed LU."""
    compare(lambda lib, a: lib.linalg.det(a), SINGULAR, create_graph=grad_mode)
    batch = np.stack([SINGULAR, A3])
    compare(lambda lib, a: lib.linalg.det(a), batch, create_graph=grad_mode)


def test_phase_dependent_losses_are_refused() -> None:
    """A loss of complex singular vectors (eigenvectors) that depends on their phases."""
    rng = np.random.default_rng(102)
    values = A3 + 1j * rng.uniform(-2, 2, (3, 3))

    def svd_loss(lib: Any) -> Any:
        a = lib.tensor(values, requires_grad=True)
        lib.linalg.svd(a)[0].real.sum().backward()

    def eigh_loss(lib: Any) -> Any:
        a = lib.tensor(values + values.conj().T, requires_grad=True)
        lib.linalg.eigh(a)[1].real.sum().backward()

    _same_error(svd_loss)
    _same_error(eigh_loss)


def test_svdvals_and_eigvalsh_skip_the_vectors_without_grad() -> None:
    a = _f64(gradgen, A3)
    with gradgen.no_grad():
        s = gradgen.linalg.svdvals(a.requires_grad_())
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(A3, compute_uv=False))
    compare(lambda lib, a: lib.linalg.eigvalsh(a + a.mT), A3, create_graph=True)


def test_torch_svd_spellings() -> None:
    compare(lambda lib, a: lib.svd(a, some=False)[1], A3[:, :2])
    compare(lambda lib, a: lib.svd(a, compute_uv=False)[0] + a.sum(), A3[:, :2])

    def zeros(lib: Any) -> Any:
        U, S, V = lib.svd(_f64(lib, A3[:2]), compute_uv=False)
        return tuple(U.shape), tuple(V.shape), float(U.abs().sum() + V.abs().sum())

    assert zeros(gradgen) == oracle("zeros", zeros)


def test_logdet_of_a_negative_determinant_is_nan() -> None:
    flip = np.diag([1.0, -1.0, 2.0])
    compare(lambda lib, a: lib.logdet(a), flip)
    compare(lambda lib, a: lib.logdet(a) + a.sum(), flip * 1j + flip)


def test_matrix_power_edges() -> None:
    compare(lambda lib, a: lib.linalg.matrix_power(a, 0), A3)
    compare(lambda lib, a: lib.linalg.matrix_power(a, -3), A3, create_graph=True)
    compare(lambda lib, a: lib.matrix_power(a, 5), A3 / 2)


def test_cross_without_dim_warns_and_takes_the_first_dim_of_size_3() -> None:
    rng = np.random.default_rng(103)
    a, b = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (3, 4))
    with pytest.warns(
        UserWarning, match="Using torch.cross without specifying the dim"
    ):
        got = gradgen.cross(_f64(gradgen, a), _f64(gradgen, b))
    want = oracle("cross", lambda t: _quiet(lambda: t.cross(_f64(t, a), _f64(t, b))))
    np.testing.assert_allclose(got.numpy(), want)


def _quiet(fn: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def test_norms_and_condition_numbers() -> None:
    rng = np.random.default_rng(104)
    A = rng.uniform(-2, 2, (2, 3, 4))
    compare(lambda lib, a: lib.linalg.norm(a, dim=(0, 2)), A)
    compare(lambda lib, a: lib.linalg.norm(a[0], "nuc", keepdim=True), A)
    compare(lambda lib, a: lib.linalg.matrix_norm(a, float("inf"), keepdim=True), A)
    compare(lambda lib, a: lib.linalg.cond(a[:, :, :3], -2), A)
    compare(lambda lib, a: lib.linalg.vector_norm(a, 3, dim=(1, 2)), A)

    def ranks(lib: Any) -> Any:
        a = _f64(lib, SINGULAR)
        return (
            lib.linalg.matrix_rank(a).item(),
            lib.linalg.matrix_rank(a, atol=1.0, rtol=0.0).item(),
            lib.linalg.matrix_rank(a + a.mT, hermitian=True).item(),
        )

    assert ranks(gradgen) == oracle("ranks", ranks)


def test_lu_factorisation_matches_lapack() -> None:
    """The kernel's LU and pivots are LAPACK's (getrf's partial pivoting)."""
    rng = np.random.default_rng(105)
    from gradgen.numpy_kernels.linalg_decompositions import linalg_lu_factor

    A = rng.uniform(-2, 2, (2, 4, 4))
    LU, pivots, info = linalg_lu_factor(A)
    theirs = oracle(
        "lu", lambda t: [x.numpy() for x in t.linalg.lu_factor_ex(t.tensor(A))]
    )
    np.testing.assert_allclose(LU, theirs[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(pivots, theirs[1])
    np.testing.assert_array_equal(info, theirs[2])


def test_torch_cholesky_is_deprecated() -> None:
    with pytest.warns(UserWarning, match="^torch.cholesky is deprecated in favor of"):
        gradgen.cholesky(_f64(gradgen, np.eye(2)))
    _same_error(lambda lib: _quiet(lambda: lib.cholesky(_f64(lib, -np.eye(2)))))


def test_householder_product_checks_its_shapes() -> None:
    rng = np.random.default_rng(106)
    A, tau = rng.uniform(-1, 1, (4, 3)), rng.uniform(0, 1, 4)
    _same_error(
        lambda lib: lib.linalg.householder_product(_f64(lib, A), _f64(lib, tau))
    )
    compare(
        lambda lib, a, t: lib.linalg.householder_product(a, t),
        A,
        tau[:3],
        create_graph=True,
    )


def test_eig_of_complex_matrices() -> None:
    """Complex input: the eigenvalues and a phase-free function of the eigenvectors."""
    rng = np.random.default_rng(107)
    values = A3 + 1j * rng.uniform(-2, 2, (3, 3))

    def loss(lib: Any, a: Any) -> Any:
        L, V = lib.linalg.eig(a)
        return (V.abs() * L.unsqueeze(-2)).sum(-2) + lib.linalg.eigvals(a) * 2

    compare(loss, values)


def test_qr_modes() -> None:
    rng = np.random.default_rng(108)
    A = rng.uniform(-2, 2, (2, 3, 5))

    def shapes(lib: Any) -> Any:
        a = _f64(lib, A)
        return [
            tuple(t.shape)
            for mode in ("reduced", "complete", "r")
            for t in lib.linalg.qr(a, mode=mode)
        ]

    assert shapes(gradgen) == oracle("shapes", shapes)
    compare(lambda lib, a: lib.linalg.qr(a, mode="complete")[1].abs(), A)
    _same_error(
        lambda lib: lib.linalg.qr(
            lib.tensor(A.mT.copy(), requires_grad=True), mode="r"
        )[1]
        .sum()
        .backward()
    )

"""gradgen.fft against torch.fft: every transform under each `norm`, with n / s / dim,
real and complex inputs, float32 and float64; gradients for a seeded cotangent;
second derivatives numerically; the error texts; fftfreq / rfftfreq."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import gradcheck, gradgradcheck
from torch_oracle import oracle, outcome

RNG = np.random.default_rng(2024)
REAL = RNG.normal(size=(3, 4, 5))
COMPLEX = REAL + 1j * RNG.normal(size=(3, 4, 5))
NORMS = [None, "backward", "forward", "ortho"]

# name -> (input, keyword arguments): the transforms of real and of complex inputs.
CASES: dict[str, tuple[np.ndarray, dict[str, Any]]] = {
    "fft real": (REAL, {}),
    "fft complex n": (COMPLEX, {"n": 7, "dim": 1}),
    "fft cut": (COMPLEX, {"n": 3}),
    "ifft real": (REAL, {"dim": 0}),
    "ifft complex": (COMPLEX, {"n": 6}),
    "rfft": (REAL, {"n": 8}),
    "rfft odd": (REAL, {"dim": 1, "n": 3}),
    "irfft": (COMPLEX, {}),
    "irfft n": (COMPLEX, {"n": 9, "dim": 0}),
    "hfft": (COMPLEX, {"n": 7}),
    "ihfft": (REAL, {"dim": 1}),
    "fft2": (REAL, {}),
    "fft2 s": (COMPLEX, {"s": (3, 6), "dim": (0, 2)}),
    "ifft2": (COMPLEX, {}),
    "rfft2": (REAL, {"s": (5, 4)}),
    "irfft2": (COMPLEX, {}),
    "irfft2 s": (COMPLEX, {"s": (4, 7)}),
    "fftn": (REAL, {}),
    "fftn s": (COMPLEX, {"s": (2, -1)}),
    "ifftn": (COMPLEX, {"dim": (2, 0)}),
    "rfftn": (REAL, {}),
    "rfftn dim": (REAL, {"dim": (0, 1)}),
    "irfftn": (COMPLEX, {}),
    "irfftn s": (COMPLEX, {"s": (3, 2, 6)}),
}


def _function(case: str) -> str:
    return case.split()[0]


def _run(lib: Any, case: str, norm: str | None, dtype: str) -> dict[str, Any]:
    data, arguments = CASES[case]
    data = data.astype(dtype if data.dtype.kind == "f" else _complex(dtype))
    x = lib.tensor(data, requires_grad=True)
    out = getattr(lib.fft, _function(case))(x, norm=norm, **arguments)
    rng = np.random.default_rng(5)
    cotangent = rng.uniform(-1, 1, tuple(out.shape))
    if out.is_complex():
        cotangent = cotangent + 1j * rng.uniform(-1, 1, tuple(out.shape))
    (grad,) = lib.autograd.grad(out, x, lib.tensor(cotangent.astype(_dtype(out))))
    return {"out": _numpy(out), "grad": _numpy(grad)}


def _numpy(tensor: Any) -> np.ndarray:
    """The values (torch's conjugate views resolved first; gradgen has none)."""
    if hasattr(tensor, "resolve_conj"):
        tensor = tensor.resolve_conj()
    return tensor.detach().numpy()


def _complex(dtype: str) -> str:
    return "complex64" if dtype == "float32" else "complex128"


def _dtype(out: Any) -> str:
    return str(out.dtype).split(".")[-1]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_transform_and_gradient_match_torch(case: str, norm: str | None) -> None:
    ours = _run(gradgen, case, norm, "float64")
    expected = oracle("result", lambda torch: _run(torch, case, norm, "float64"))
    assert ours["out"].dtype == expected["out"].dtype
    np.testing.assert_allclose(ours["out"], expected["out"], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours["grad"], expected["grad"], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", ["fft real", "rfft", "irfft", "fftn s", "irfftn s"])
def test_single_precision_stays_single(case: str) -> None:
    ours = _run(gradgen, case, "ortho", "float32")
    expected = oracle("result", lambda torch: _run(torch, case, "ortho", "float32"))
    assert ours["out"].dtype == expected["out"].dtype
    np.testing.assert_allclose(ours["out"], expected["out"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours["grad"], expected["grad"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", ["rfft odd", "irfft n", "hfft", "ihfft", "irfftn s"])
def test_second_derivatives(case: str) -> None:
    data, arguments = CASES[case]
    x = gradgen.tensor(data[:2, :3], requires_grad=True)
    function = getattr(gradgen.fft, _function(case))

    def call(a: Any) -> Any:
        out = function(a, norm="ortho", **arguments)
        return out.abs() if out.is_complex() else out

    assert gradcheck(call, (x,))
    assert gradgradcheck(call, (x,))


def test_integer_input_is_transformed_in_the_default_dtype() -> None:
    ours = gradgen.fft.rfft(gradgen.tensor([1, 2, 3, 4]))
    expected = oracle(
        "result", lambda torch: torch.fft.rfft(torch.tensor([1, 2, 3, 4]))
    )
    assert ours.dtype == gradgen.complex64 and expected.dtype == np.complex64
    np.testing.assert_allclose(ours.numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("dim", [None, (0,), (-1, 1)])
def test_shifts_match_torch(dim: Any) -> None:
    for name in ("fftshift", "ifftshift"):
        ours = getattr(gradgen.fft, name)(gradgen.tensor(REAL), dim=dim)
        expected = oracle(
            name, lambda torch: getattr(torch.fft, name)(torch.tensor(REAL), dim=dim)
        )
        np.testing.assert_array_equal(ours.numpy(), expected)


@pytest.mark.parametrize("n, d", [(5, 1.0), (6, 0.3), (1, 2.0), (0, 1.0)])
def test_sample_frequencies_match_torch(n: int, d: float) -> None:
    for name in ("fftfreq", "rfftfreq"):
        ours = getattr(gradgen.fft, name)(n, d)
        expected = oracle(name, lambda torch: getattr(torch.fft, name)(n, d))
        assert ours.dtype == gradgen.float32
        np.testing.assert_allclose(ours.numpy(), expected, rtol=1e-6)
    ours = gradgen.fft.fftfreq(n, d, dtype=gradgen.float64, requires_grad=True)
    assert ours.dtype == gradgen.float64 and ours.requires_grad


def test_grad_fn_names_are_pytorchs() -> None:
    x = gradgen.tensor(REAL, requires_grad=True)
    names = [
        gradgen.fft.rfft(x).grad_fn.name(),
        gradgen.fft.fftn(x).grad_fn.name(),
        gradgen.fft.irfft(gradgen.fft.rfft(x)).grad_fn.name(),
    ]

    def run(torch: Any) -> list[str]:
        t = torch.tensor(REAL, requires_grad=True)
        return [
            torch.fft.rfft(t).grad_fn.name(),
            torch.fft.fftn(t).grad_fn.name(),
            torch.fft.irfft(torch.fft.rfft(t)).grad_fn.name(),
        ]

    assert names == oracle("names", run)


ERRORS = {
    "n zero": lambda lib: lib.fft.fft(lib.ones(4), n=0),
    "bad norm": lambda lib: lib.fft.fft(lib.ones(4), norm="bad"),
    "shape too long": lambda lib: lib.fft.fftn(lib.ones(4), s=[2, 2]),
    "dims repeated": lambda lib: lib.fft.fftn(lib.ones(4), dim=[0, 0]),
    "dim and s": lambda lib: lib.fft.fftn(lib.ones(4, 4), s=[2, 2], dim=[0]),
    "rfftn no axes": lambda lib: lib.fft.rfftn(lib.ones(4), dim=[]),
    "rfft complex": lambda lib: lib.fft.rfft(lib.ones(4, dtype=lib.complex64)),
    "ihfft complex": lambda lib: lib.fft.ihfft(lib.ones(4, dtype=lib.complex64)),
    "scalar": lambda lib: lib.fft.fft(lib.tensor(1.0)),
    "c2c of real": lambda lib: lib._fft_c2c(lib.ones(4), [0], 0, True),
    "r2c of complex": lambda lib: lib._fft_r2c(
        lib.ones(4, dtype=lib.complex64), [0], 0, True
    ),
    "negative frequencies": lambda lib: lib.fft.fftfreq(-1),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case: str) -> None:
    ours = outcome(lambda: ERRORS[case](gradgen))
    expected = oracle("error", lambda torch: outcome(lambda: ERRORS[case](torch)))
    assert isinstance(expected, Exception) and isinstance(ours, Exception)
    assert type(ours).__name__ == type(expected).__name__
    assert str(ours) == str(expected)

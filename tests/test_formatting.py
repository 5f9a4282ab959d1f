"""Tests for ``gradgen.formatting.format_tensor`` against PyTorch's own ``repr``.

The module is loaded straight from its file path so that these tests do not
depend on the rest of the ``gradgen`` package being importable.  PyTorch's reprs
are recorded in tests/golden/ (see torch_oracle.py): without torch the comparisons
use them, with torch they are also checked against live torch.  A set of
hand-written expectations needs no torch at all.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
import pytest

from torch_oracle import oracle

_MODULE_PATH = Path(__file__).resolve().parents[1] / "src" / "gradgen" / "formatting.py"


def _load_formatting() -> ModuleType:
    name = "_gradgen_formatting_under_test"
    spec = importlib.util.spec_from_file_location(name, _MODULE_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


formatting = _load_formatting()
format_tensor = formatting.format_tensor


class Case(NamedTuple):
    """A tensor to print: its values, dtype and how autograd should mark it."""

    make: Callable[[], Any]  # returns something np.asarray accepts
    dtype: str
    default: str = "float32"
    autograd: str | None = None  # None, "leaf" (requires_grad) or "mul" (grad_fn)


def _arange(n: int, shape: tuple[int, ...] | None = None, scale: float = 1.0):
    def make() -> np.ndarray:
        values = np.arange(n, dtype=np.float64) * scale
        return values.reshape(shape) if shape is not None else values

    return make


def _random(shape: tuple[int, ...], seed: int, scale: float = 1.0):
    def make() -> np.ndarray:
        return np.random.default_rng(seed).standard_normal(shape) * scale

    return make


def _const(value: Any) -> Callable[[], Any]:
    return lambda: value


TORCH_CASES: dict[str, Case] = {
    # 0-d
    "0d-int-valued-float": Case(_const(2.0), "float32"),
    "0d-negative-int-valued": Case(_const(-28.0), "float32"),
    "0d-fraction": Case(_const(1.5), "float32"),
    "0d-float64": Case(_const(0.1), "float64"),
    "0d-large": Case(_const(1e10), "float32"),
    "0d-small": Case(_const(1e-5), "float32"),
    "0d-nan": Case(_const(float("nan")), "float32"),
    "0d-neg-zero": Case(_const(-0.0), "float32"),
    "0d-int64": Case(_const(7), "int64"),
    "0d-int32": Case(_const(-7), "int32"),
    "0d-bool": Case(_const(True), "bool"),
    "0d-complex64": Case(_const(1 + 2j), "complex64"),
    "0d-complex128-neg-imag": Case(_const(-0.5j), "complex128"),
    # 1-d floats
    "1d-int-valued": Case(_const([1.0, 2.0, 3.0]), "float32"),
    "1d-mixed-width": Case(_const([1.0, -250.0, 3.0]), "float32"),
    "1d-fractions": Case(_const([1.5, -2.25, 100.125]), "float32"),
    "1d-float32-rounding": Case(_const([0.1, 0.2, 0.3]), "float32"),
    "1d-float64": Case(_const([1.0, 2.0]), "float64"),
    "1d-sci-ratio": Case(_const([1.0, 1500.0]), "float32"),
    "1d-ratio-just-1000": Case(_const([1.0, 1000.0]), "float32"),
    "1d-sci-large": Case(_const([1e10, 2.5]), "float32"),
    "1d-sci-small": Case(_const([1e-5, 2e-5]), "float64"),
    "1d-above-1e8": Case(_const([1e8, 2e8]), "float64"),
    "1d-nonfinite": Case(
        _const([float("nan"), float("inf"), float("-inf"), 1.5]), "float32"
    ),
    "1d-nonfinite-int-mode": Case(
        _const([float("nan"), -float("inf"), 2.0, -30.0]), "float32"
    ),
    "1d-nonfinite-sci": Case(_const([float("nan"), 1e-7, 3.0]), "float32"),
    "1d-only-nonfinite": Case(_const([float("nan"), float("inf")]), "float64"),
    "1d-zeros-and-neg-zero": Case(_const([0.0, -0.0, 0.0]), "float32"),
    "1d-neg-zero-with-fraction": Case(_const([-0.0, 0.5]), "float32"),
    "1d-neg-zero-sci": Case(_const([-0.0, 1e-9]), "float32"),
    "1d-wrap-fixed": Case(_random((30,), 1), "float32"),
    "1d-wrap-sci": Case(_random((25,), 2, 1e-6), "float64"),
    "1d-wrap-int": Case(_arange(60, scale=37.0), "int64"),
    # ints and bools
    "1d-int64-negative": Case(_const([-1, 20, 300]), "int64"),
    "1d-int32": Case(_const([1, 2, 3]), "int32"),
    "1d-bool": Case(_const([True, False, True]), "bool"),
    "2d-bool-wrap": Case(lambda: np.arange(40).reshape(2, 20) % 3 == 0, "bool"),
    # complex
    "1d-complex64": Case(_const([1 + 2j, -0.5j, 3.25 - 1j]), "complex64"),
    "1d-complex128-int-valued": Case(_const([1 + 2j, -3 - 4j]), "complex128"),
    "1d-complex-sci": Case(_const([1e-6 + 1j, 5 + 2e5j]), "complex64"),
    "1d-complex-nan": Case(_const([complex("nan+1j"), 2 + 0j]), "complex64"),
    "2d-complex-wrap": Case(
        lambda: _random((3, 9), 3)() + 1j * _random((3, 9), 4)(), "complex128"
    ),
    # n-d
    "2d-float": Case(_arange(6, (2, 3)), "float32"),
    "2d-fraction": Case(_random((3, 4), 5), "float32"),
    "2d-int32": Case(_arange(12, (3, 4), -5.0), "int32"),
    "2d-long-rows": Case(_random((3, 20), 6, 100.0), "float64"),
    "3d-float": Case(_arange(24, (2, 3, 4), 0.5), "float32"),
    "3d-int64": Case(_arange(24, (2, 3, 4)), "int64"),
    "4d-float": Case(_arange(16, (2, 2, 2, 2), 0.25), "float64"),
    "2d-single-column": Case(_arange(3, (3, 1)), "float32"),
    # empty tensors
    "empty-1d-float32": Case(_const(np.zeros(0)), "float32"),
    "empty-1d-float64": Case(_const(np.zeros(0)), "float64"),
    "empty-1d-int64": Case(_const(np.zeros(0)), "int64"),
    "empty-1d-bool": Case(_const(np.zeros(0)), "bool"),
    "empty-2d": Case(_const(np.zeros((0, 3))), "float32"),
    "empty-2d-trailing-zero": Case(_const(np.zeros((2, 0))), "int32"),
    "empty-3d-complex": Case(_const(np.zeros((1, 0, 2))), "complex64"),
    # summarization (> 1000 elements)
    "summarize-1d-int": Case(_arange(1001), "int64"),
    "summarize-1d-float": Case(_arange(2000, scale=0.5), "float32"),
    "summarize-2d-wide": Case(_arange(2000, (10, 200)), "float32"),
    "summarize-2d-tall": Case(_arange(2000, (1000, 2), 0.25), "float64"),
    "summarize-3d": Case(_arange(2000, (10, 10, 20)), "float32"),
    "summarize-random": Case(_random((40, 50), 7), "float32"),
    "summarize-complex": Case(
        lambda: _arange(1200)() + 1j * _arange(1200, scale=-0.5)(), "complex64"
    ),
    "summarize-bool": Case(lambda: np.arange(1500) % 2 == 0, "bool"),
    "summarize-short-rows": Case(_arange(1200, (200, 6)), "int32"),
    # default dtype float64
    "default64-float64-hidden": Case(_const([1.0, 2.5]), "float64", "float64"),
    "default64-float32-shown": Case(_const([1.0, 2.5]), "float32", "float64"),
    "default64-complex128-hidden": Case(_const([1j]), "complex128", "float64"),
    "default64-complex64-shown": Case(_const([1j]), "complex64", "float64"),
    "default64-empty-float32": Case(_const(np.zeros(0)), "float32", "float64"),
    # dtype / autograd suffixes, including wrapping onto a new line
    "suffix-requires-grad": Case(_const([1.0, 2.0]), "float64", autograd="leaf"),
    "suffix-grad-fn-0d": Case(_const(-28.0), "float32", autograd="mul"),
    "suffix-grad-fn-2d": Case(_random((2, 3), 8), "float32", autograd="mul"),
    "suffix-grad-fn-complex": Case(_const([1 + 1j]), "complex64", autograd="mul"),
    "suffix-dtype-fits-only-with-torch-spelling": Case(_const([100.5] * 5), "float64"),
    "suffix-dtype-wraps": Case(_const([100.5] * 6), "float64"),
    "suffix-grad-fn-wraps": Case(_const([1000.5] * 7), "float32", autograd="mul"),
    "suffix-both-wrap": Case(_const([100.5] * 6), "float64", autograd="leaf"),
    "suffix-summarized": Case(_arange(1001, scale=0.5), "float64", autograd="mul"),
}


def _data(case: Case) -> np.ndarray:
    """The values as the tensor holds them (numpy casts as torch does here)."""
    return np.asarray(case.make()).astype(case.dtype)


def _torch_reference(torch: Any, case: Case) -> tuple[str | None, str]:
    """Build the torch tensor (under the case's default dtype); return its autograd
    suffix and its repr (spelled gradgen.)."""
    saved = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, case.default))
    try:
        values = np.asarray(case.make())
        tensor = torch.from_numpy(values.copy()).to(getattr(torch, case.dtype))
        np.testing.assert_array_equal(tensor.numpy(), _data(case))
        if case.autograd is not None:
            tensor.requires_grad_()
            if case.autograd == "mul":
                tensor = tensor * 1
        if tensor.grad_fn is not None:
            suffix: str | None = f"grad_fn=<{type(tensor.grad_fn).__name__}>"
        elif tensor.requires_grad:
            suffix = "requires_grad=True"
        else:
            suffix = None
        return suffix, repr(tensor).replace("torch.", "gradgen.")
    finally:
        torch.set_default_dtype(saved)


def test_enough_torch_cases() -> None:
    assert len(TORCH_CASES) >= 40


@pytest.mark.parametrize("case", TORCH_CASES.values(), ids=TORCH_CASES.keys())
def test_matches_torch_repr(case: Case) -> None:
    suffix, expected = oracle("suffix and repr", lambda t: _torch_reference(t, case))
    actual = format_tensor(
        _data(case),
        dtype_name=case.dtype,
        default_dtype_name=case.default,
        suffix=suffix,
    )
    assert actual == expected


def test_torch_repr_spelling_edge_case_really_is_an_edge() -> None:
    """``gradgen.float64`` is 2 characters longer than ``torch.float64``; the
    line-fit decision must follow torch's spelling to reproduce its layout."""
    text = format_tensor(
        np.full(5, 100.5), dtype_name="float64", default_dtype_name="float32"
    )
    assert "\n" not in text
    # torch's fit test counts 59 + len('dtype=torch.float64') + 2 = 80 columns, so
    # the suffix stays on the line (it would wrap if measured as gradgen.float64).
    assert len(text) == 81


def test_fuzz_against_torch() -> None:
    """Many random tensors of assorted shapes, magnitudes and dtypes."""
    rng = np.random.default_rng(1234)
    dtypes = ["float32", "float64", "int64", "int32", "bool"]
    dtypes += ["complex64", "complex128"]
    for trial in range(400):
        ndim = int(rng.integers(0, 4))
        shape = tuple(int(rng.choice([0, 1, 2, 3, 7, 12, 35])) for _ in range(ndim))
        dtype = dtypes[int(rng.integers(len(dtypes)))]
        default = "float64" if rng.random() < 0.3 else "float32"
        scale = 10.0 ** int(rng.integers(-9, 11))
        values = rng.standard_normal(shape) * scale
        if rng.random() < 0.3:
            values = np.round(values)
        if rng.random() < 0.3:
            values = values * 10.0 ** rng.integers(-5, 5, size=shape)
        if values.size and rng.random() < 0.3:
            flat = values.reshape(-1)
            for special in (np.nan, np.inf, -np.inf, 0.0, -0.0):
                if rng.random() < 0.4:
                    flat[rng.integers(flat.size)] = special
        if dtype.startswith("complex"):
            values = values + 1j * rng.standard_normal(shape) * scale
        elif dtype.startswith("int"):
            values = np.nan_to_num(values, nan=0.0, posinf=0.0, neginf=0.0)
            values = np.clip(values, -(2.0**31), 2.0**31 - 1).astype(np.int64)
        elif dtype == "bool":
            values = values > 0
        case = Case(_const(values), dtype, default)
        suffix, expected = oracle(
            str(trial), lambda t: _torch_reference(t, case)  # noqa: B023
        )
        actual = format_tensor(
            _data(case), dtype_name=dtype, default_dtype_name=default, suffix=suffix
        )
        assert actual == expected, (trial, dtype, shape, default)


# Hand-written expectations: these run without torch.
_WIDE = np.arange(1001)

HAND_CASES: dict[str, tuple[Any, dict[str, Any], str]] = {
    "0d-int-valued": (
        np.float32(2.0),
        {"dtype_name": "float32"},
        "tensor(2.)",
    ),
    "0d-grad-fn": (
        np.array(-28.0, dtype=np.float32),
        {"dtype_name": "float32", "suffix": "grad_fn=<SubBackward0>"},
        "tensor(-28., grad_fn=<SubBackward0>)",
    ),
    "1d-float64-requires-grad": (
        np.array([1.0, 2.0]),
        {"dtype_name": "float64", "suffix": "requires_grad=True"},
        "tensor([1., 2.], dtype=gradgen.float64, requires_grad=True)",
    ),
    "1d-fixed-aligned": (
        np.array([1.5, -20.25, 3.0], dtype=np.float32),
        {"dtype_name": "float32"},
        "tensor([  1.5000, -20.2500,   3.0000])",
    ),
    "1d-sci": (
        np.array([1e10, 1e-5], dtype=np.float32),
        {"dtype_name": "float32"},
        "tensor([1.0000e+10, 1.0000e-05])",
    ),
    "1d-nonfinite": (
        np.array([np.nan, np.inf, -np.inf, 1.0], dtype=np.float32),
        {"dtype_name": "float32"},
        "tensor([nan, inf, -inf, 1.])",
    ),
    "1d-bool": (
        np.array([True, False]),
        {"dtype_name": "bool"},
        "tensor([ True, False])",
    ),
    "1d-int32": (
        np.array([1, -20, 300], dtype=np.int32),
        {"dtype_name": "int32"},
        "tensor([  1, -20, 300], dtype=gradgen.int32)",
    ),
    "1d-complex64": (
        np.array([1.25 + 2j, 1.5j], dtype=np.complex64),
        {"dtype_name": "complex64"},
        "tensor([1.2500+2.0000j, 0.0000+1.5000j])",
    ),
    "1d-complex64-default64": (
        np.array([1 + 2j], dtype=np.complex64),
        {"dtype_name": "complex64", "default_dtype_name": "float64"},
        "tensor([1.+2.j], dtype=gradgen.complex64)",
    ),
    "2d-int64": (
        np.arange(6).reshape(2, 3),
        {"dtype_name": "int64"},
        "tensor([[0, 1, 2],\n        [3, 4, 5]])",
    ),
    "3d-float": (
        np.arange(8, dtype=np.float32).reshape(2, 2, 2),
        {"dtype_name": "float32"},
        "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n"
        "         [6., 7.]]])",
    ),
    "empty-1d": (
        np.zeros(0, dtype=np.float32),
        {"dtype_name": "float32"},
        "tensor([])",
    ),
    "empty-2d-int64": (
        np.zeros((0, 3), dtype=np.int64),
        {"dtype_name": "int64"},
        "tensor([], size=(0, 3), dtype=gradgen.int64)",
    ),
    "summarized": (
        _WIDE,
        {"dtype_name": "int64"},
        "tensor([   0,    1,    2,  ...,  998,  999, 1000])",
    ),
    "wrapped-row": (
        np.arange(20, dtype=np.float64) + 0.5,
        {"dtype_name": "float64", "default_dtype_name": "float64"},
        "tensor([ 0.5000,  1.5000,  2.5000,  3.5000,  4.5000,  5.5000,  6.5000,"
        "  7.5000,\n         8.5000,  9.5000, 10.5000, 11.5000, 12.5000, 13.5000,"
        " 14.5000, 15.5000,\n        16.5000, 17.5000, 18.5000, 19.5000])",
    ),
}


@pytest.mark.parametrize(
    ("array", "kwargs", "expected"), HAND_CASES.values(), ids=HAND_CASES.keys()
)
def test_hand_written(array: Any, kwargs: dict[str, Any], expected: str) -> None:
    kwargs = {"default_dtype_name": "float32", **kwargs}
    assert format_tensor(array, **kwargs) == expected


def test_array_is_cast_to_dtype_name() -> None:
    # float64 data declared float32 prints the float32 value.
    assert (
        format_tensor(
            np.array([0.1, 1e-9]), dtype_name="float32", default_dtype_name="float32"
        )
        == "tensor([1.0000e-01, 1.0000e-09])"
    )
    assert (
        format_tensor(
            [1, 2], dtype_name="gradgen.float64", default_dtype_name="float64"
        )
        == "tensor([1., 2.])"
    )


def test_module_is_standalone() -> None:
    source = _MODULE_PATH.read_text()
    assert "import torch" not in source
    assert "from gradgen" not in source and "import gradgen" not in source
    assert formatting.__doc__

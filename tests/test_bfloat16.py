"""gradgen.bfloat16 (from the optional ml_dtypes package) against PyTorch: creation,
casting, repr, finfo, promotion, arithmetic, a gradient, checkpoints both ways; and the
error that names the package when it is missing."""

from __future__ import annotations

import io
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import dtypes
from torch_oracle import oracle, require_torch

needs_ml_dtypes = pytest.mark.skipif(
    not dtypes.HAS_BFLOAT16, reason="ml_dtypes is not installed (gradgen[bfloat16])"
)


def _name(t: Any) -> str:
    return str(t.dtype).split(".")[-1]


def _program(lib: Any) -> dict[str, Any]:
    x = lib.tensor([1.5, 2.25, -3.0, 1 / 3], dtype=lib.bfloat16)
    y = lib.ones(4).to(lib.bfloat16)
    return {
        "repr": repr(x).replace("torch.", "").replace("gradgen.", ""),
        "repr_sum": repr(x + y).replace("torch.", "").replace("gradgen.", ""),
        "values": x.float().numpy(),
        "product": (x * 2.5).float().numpy(),
        "exp": x.exp().float().numpy(),
        "dtypes": [
            _name(x * 2.5),
            _name(x + 1),
            _name(x + lib.ones(4, dtype=lib.float16)),
            _name(x + lib.ones(4)),
            _name(x + lib.ones(4, dtype=lib.int64)),
            _name(x + lib.ones(4, dtype=lib.float64)),
            _name(lib.tensor([1, 2]).bfloat16()),
            _name(lib.zeros(2, dtype=lib.bfloat16)),
        ],
        "floating": [x.is_floating_point(), lib.bfloat16.is_floating_point],
        "itemsize": lib.bfloat16.itemsize,
        "finfo": repr(lib.finfo(lib.bfloat16)),
        "eps": lib.finfo(lib.bfloat16).eps,
        "cast_back": lib.tensor([1.0, 1 / 3]).to(lib.bfloat16).to(lib.float64).numpy(),
        "reductions": [
            r.float().numpy() for r in (x.mean(), x.std(), x.var(), x.sum(), x.amax())
        ],
        "reduction_dtypes": [_name(x.mean()), _name(x.std())],
    }


@needs_ml_dtypes
def test_bfloat16_behaves_as_pytorchs() -> None:
    ours = _program(gradgen)
    theirs = oracle("program", _program)
    for key in ("values", "product", "exp", "cast_back", "reductions"):
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)
    for key in (
        "repr",
        "repr_sum",
        "dtypes",
        "floating",
        "itemsize",
        "finfo",
        "eps",
        "reduction_dtypes",
    ):
        assert ours[key] == theirs[key], key
    assert ours["dtypes"][2] == "float32"  # bfloat16 + float16: neither holds the other


def _gradient(lib: Any) -> Any:
    w = lib.tensor([1.0, 2.0, -0.5], dtype=lib.bfloat16, requires_grad=True)
    (w * w * 3).sum().backward()
    return [w.grad.float().numpy(), _name(w.grad)]


@needs_ml_dtypes
def test_a_gradient_in_bfloat16() -> None:
    ours = _gradient(gradgen)
    theirs = oracle("gradient", _gradient)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1] == theirs[1] == "bfloat16"


@needs_ml_dtypes
def test_checkpoints_round_trip_with_pytorch() -> None:
    torch = require_torch()
    buffer = io.BytesIO()
    gradgen.save({"w": gradgen.tensor([1.5, -2.0], dtype=gradgen.bfloat16)}, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)["w"]
    assert loaded.dtype == torch.bfloat16 and loaded.tolist() == [1.5, -2.0]
    buffer = io.BytesIO()
    torch.save({"w": torch.tensor([3.5, 0.25], dtype=torch.bfloat16)}, buffer)
    buffer.seek(0)
    back = gradgen.load(buffer)["w"]
    assert back.dtype is gradgen.bfloat16 and back.tolist() == [3.5, 0.25]


def test_without_ml_dtypes_the_error_names_the_package() -> None:
    script = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import gradgen\n"
        "assert not hasattr(gradgen, 'bfloat16')\n"
        "gradgen.bfloat16\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    assert (
        "AttributeError: gradgen.bfloat16 needs the optional package ml_dtypes"
        in result.stderr
    )
    assert "pip install ml_dtypes" in result.stderr

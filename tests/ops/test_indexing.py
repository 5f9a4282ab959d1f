"""Indexing and masking operators beyond the operator table."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import gradgen
from torch_compare import compare

# Kernels make inf and nan silently (test_kernels_make_inf_and_nan_silently checks it
# in a fresh interpreter); under pytest's own filters the warnings would only be noise.
pytestmark = pytest.mark.filterwarnings(
    "ignore:(divide by zero|invalid value|overflow) encountered:RuntimeWarning"
)


# -- indexing, masking and the rest -------------------------------------------------------


@pytest.mark.parametrize(
    "fn, arrays",
    [
        (lambda lib, x: x.roll((1, 1, -4), (1, 1, 0)), (np.arange(6.0).reshape(2, 3),)),
        (lambda lib, x: x.roll(-2), (np.arange(6.0).reshape(2, 3),)),
        (lambda lib, x: x.repeat(2, 3), (np.arange(6.0).reshape(2, 3),)),
        (lambda lib, x: x.repeat(0, 1), (np.arange(6.0).reshape(2, 3),)),
        (
            lambda lib, x: x.index_select(1, lib.tensor(2)),
            (np.arange(6.0).reshape(2, 3),),
        ),
        (
            lambda lib, x: x.index_select(0, lib.tensor([1, 1], dtype=lib.int32)),
            (np.arange(6.0).reshape(2, 3),),
        ),
        (
            lambda lib, x, s: x.index_add(1, lib.tensor([2, 2]), s, alpha=-2),
            (np.arange(6.0).reshape(2, 3), np.ones((2, 2))),
        ),
        (
            lambda lib, x: x.gather(1, lib.tensor([[2, 2, 0, 1]])),
            (np.arange(6.0).reshape(2, 3),),
        ),
        (
            lambda lib, x, s: x.scatter_add(1, lib.tensor([[0, 0], [2, 0]]), s[:, :2]),
            (np.arange(6.0).reshape(2, 3), np.ones((2, 3))),
        ),
        (
            lambda lib, x, v: x.masked_fill(lib.tensor([[True], [False]]), v),
            (np.arange(6.0).reshape(2, 3), np.array(7.0)),
        ),
        (
            lambda lib, x: x.masked_fill(lib.tensor([[True, False, True]] * 2), 0.0),
            (np.arange(3.0),),
        ),
        (
            lambda lib, x, v: x.masked_fill(lib.tensor([True, False]), v),
            (np.arange(2.0, dtype=np.float32), np.array(2.0)),
        ),
    ],
)
def test_indexing_and_masking_match_torch(fn, arrays) -> None:
    compare(fn, *arrays, create_graph=True)


def test_gather_backward_is_a_scatter_add_and_refuses_sparse_grad() -> None:
    x = gradgen.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    y = x.gather(1, gradgen.tensor([[2, 2, 0]]))
    (g,) = gradgen.autograd.grad(y.sum(), x)
    assert g.tolist() == [[1.0, 0.0, 2.0]]
    z = x.gather(1, gradgen.tensor([[1]]), sparse_grad=True)
    assert z.tolist() == [[2.0]]
    with pytest.raises(RuntimeError, match="gradgen has no sparse tensors"):
        z.sum().backward()


def test_to_returns_self_for_the_same_dtype() -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    assert x.to(gradgen.float32) is x
    copied = x.to(gradgen.float32, copy=True)
    assert copied is not x and copied.grad_fn.name() == "ToCopyBackward0"
    assert x.to(gradgen.float64).dtype == gradgen.float64


def test_kernels_make_inf_and_nan_silently() -> None:
    # In a fresh interpreter: pytest installs warning filters of its own.
    code = (
        "import gradgen; x = gradgen.tensor([[-float('inf')] * 2, [1e300, 1e300]], "
        "dtype=gradgen.float64); "
        "print(x.logsumexp(1).tolist(), x.softmax(1)[0].tolist(), x[1].prod().item(), "
        "x[1:].cumprod(1).tolist(), x[:1].log_softmax(1).tolist())"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "[-inf, 1e+300] [nan, nan] inf [[1e+300, inf]] [[nan, nan]]"
    )
    assert result.stderr == ""

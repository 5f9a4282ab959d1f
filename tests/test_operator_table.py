"""One line per operator: gradcheck and gradgradcheck on sample inputs, in float64.

Every operator in native_functions.yaml must have a line here (the first test fails
otherwise), so a new operator cannot land untested. A line gives a function of
`gradgen`-like `lib` (so the same line also runs against torch when it is
installed) and the shapes and dtype of its inputs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import gradgen
from gradgen.autograd import gradcheck, gradgradcheck

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Line:
    function: Callable[..., Any]
    shapes: tuple[tuple[int, ...], ...]
    complex: bool = False  # inputs are complex128 instead of float64
    positive: bool = False  # inputs in (0.5, 2) instead of (-2, 2)
    compare: bool = True  # compare against torch


TABLE: dict[str, Line] = {
    "add.Tensor": Line(lambda lib, a, b: lib.add(a, b, alpha=2.5), ((3, 1), (1, 4))),
    "sub.Tensor": Line(lambda lib, a, b: lib.sub(a, b, alpha=-0.5), ((2, 3, 4), (4,))),
    "mul.Tensor": Line(lambda lib, a, b: lib.mul(a, b), ((3, 1), (1, 4))),
    "pow.Tensor_Scalar": Line(lambda lib, a: lib.pow(a, 2.5), ((5,),), positive=True),
    "permute": Line(lambda lib, a: lib.permute(a, (2, 0, 1)), ((2, 3, 4),)),
    "neg": Line(lambda lib, a: lib.neg(a), ((3,),)),
    "conj": Line(lambda lib, a: lib.conj(a) * a, ((3,),), complex=True),
    "_conj": Line(
        lambda lib, a: lib._conj(a) * a, ((3,),), complex=True, compare=False
    ),
    "real": Line(lambda lib, a: lib.real(a * a), ((3,),), complex=True),
    "expand": Line(lambda lib, a: a.expand(2, -1, 4) * 1.0, ((3, 1),)),
    "sum_to_size": Line(lambda lib, a: (a * a).sum_to_size(3, 1), ((3, 4),)),
    "clone": Line(lambda lib, a: lib.clone(a) * a, ((3,),)),
    "_to_copy": Line(
        lambda lib, a: lib._to_copy(a, dtype=lib.complex128) * 1j,
        ((3,),),
        compare=False,
    ),
    "add_.Tensor": Line(
        lambda lib, a, b: (a * 1.0).add_(b * b, alpha=2.0), ((3,), (3,))
    ),
    "sub_.Tensor": Line(lambda lib, a, b: (a * 1.0).sub_(b * b), ((3,), (3,))),
    "mul_.Tensor": Line(lambda lib, a, b: (a * a).mul_(b), ((3,), (3,))),
    "view": Line(lambda lib, a: a.view(3, 4) * a.view(3, 4), ((2, 6),)),
    "reshape": Line(lambda lib, a: lib.reshape(a.t(), (4, 3)) * 2.0, ((3, 4),)),
    "squeeze": Line(lambda lib, a: lib.squeeze(a) * a.squeeze(), ((3, 1, 2),)),
    "squeeze.dim": Line(lambda lib, a: lib.squeeze(a, 1) * 3.0, ((3, 1, 2),)),
    "unsqueeze": Line(lambda lib, a: lib.unsqueeze(a, -1) * a.unsqueeze(0), ((3,),)),
    "transpose.int": Line(lambda lib, a: lib.transpose(a, 0, -1) * 2.0, ((2, 3, 4),)),
    "t": Line(lambda lib, a: lib.t(a) * a.t(), ((2, 3),)),
    "flatten.using_ints": Line(lambda lib, a: lib.flatten(a, 1) * 2.0, ((2, 3, 4),)),
    "contiguous": Line(lambda lib, a: a.t().contiguous() * a.t(), ((2, 3),)),
    "select.int": Line(lambda lib, a: lib.select(a, 1, -1) * a.select(0, 0), ((3, 3),)),
    "slice.Tensor": Line(
        lambda lib, a: a[1:5:2] * lib.slice(a, 0, None, -2, 2), ((6,),), compare=False
    ),
    "narrow": Line(
        lambda lib, a: lib.narrow(a, 0, 1, 2) * a.narrow(0, 2, 2), ((4, 2),)
    ),
    "cat": Line(lambda lib, a, b: lib.cat([a, b * b, a], 1), ((2, 3), (2, 1))),
    "stack": Line(lambda lib, a, b: lib.stack([a, b * b], -1), ((2, 3), (2, 3))),
    "split.Tensor": Line(lambda lib, a: lib.split(a, 2)[1] * 3.0, ((5, 2),)),
    "split.sizes": Line(
        lambda lib, a: a.split([1, 4])[0] * a.split([3, 2])[1][:1], ((5,),)
    ),
    "split_with_sizes": Line(
        lambda lib, a: lib.split_with_sizes(a, [2, 3])[1] * 2.0, ((5,),)
    ),
    "chunk": Line(lambda lib, a: lib.chunk(a, 3)[2] * 2.0, ((7,),)),
    "unbind.int": Line(lambda lib, a: lib.unbind(a, 1)[0] * a.unbind()[1], ((2, 2),)),
    "select_backward": Line(
        lambda lib, a: lib.select_backward(a, (3, 4), 0, 1) * 2.0,
        ((4,),),
        compare=False,
    ),
    "slice_backward": Line(
        lambda lib, a: lib.slice_backward(a, (6,), 0, 1, 5, 2) * 2.0,
        ((2,),),
        compare=False,
    ),
    "sum": Line(lambda lib, a: lib.sum(a) * a.sum(), ((3, 2),)),
    "sum.dim_IntList": Line(
        lambda lib, a: lib.sum(a, (0, -1), keepdim=True) * a.sum(1, keepdim=True),
        ((2, 3, 4),),
    ),
    "mean": Line(lambda lib, a: lib.mean(a) * a, ((3, 2),)),
    "mean.dim": Line(lambda lib, a: lib.mean(a, -1, True) * a.mean(0), ((3, 3),)),
}


# ---- batch A: unary elementwise ----
TABLE.update({})


# ---- batch B: binary, comparison and logical ----
TABLE.update({})


# ---- batch C: reductions, scans and indexing ----
# Provisional lines for exp, div.Tensor and eq.Tensor (owned by batches A/B; see
# native_functions.yaml): drop this update when merging with A and B.
TABLE.update(
    {
        "exp": Line(lambda lib, a: lib.exp(a) * a.exp(), ((3,),), complex=True),
        "div.Tensor": Line(
            lambda lib, a, b: lib.div(a, b) * a.div(2.0), ((2, 3), (3,)), positive=True
        ),
        "eq.Tensor": Line(lambda lib, a: a * lib.eq(a, a[0]) + a.eq(a[1]), ((3,),)),
    }
)
TABLE.update(
    {
        "prod": Line(lambda lib, a: lib.prod(a) * a, ((2, 3),), complex=True),
        "prod.dim_int": Line(
            lambda lib, a: lib.prod(a, 1, keepdim=True) * a.prod(-2), ((2, 3),)
        ),
        "max.dim": Line(
            lambda lib, a: lib.max(a, 1).values * a.max(0, keepdim=True)[0], ((3, 3),)
        ),
        "max": Line(lambda lib, a: lib.max(a) * a.max(), ((2, 3),)),
        "min.dim": Line(
            lambda lib, a: lib.min(a, -1, True).values * a.min(dim=0).values, ((3, 3),)
        ),
        "min": Line(lambda lib, a: lib.min(a) * a, ((2, 3),)),
        "amax": Line(
            lambda lib, a: lib.amax(a, (0, 2)) * a.amax(-1, keepdim=True), ((2, 3, 3),)
        ),
        "amin": Line(lambda lib, a: lib.amin(a) * a.amin(1), ((2, 3),)),
        "argmax": Line(
            lambda lib, a: a * lib.argmax(a, 1, keepdim=True) + a.argmax(), ((2, 3),)
        ),
        "argmin": Line(lambda lib, a: a * lib.argmin(a, 0) + a.argmin(), ((2, 3),)),
        "logsumexp": Line(
            lambda lib, a: lib.logsumexp(a, (0, 2), True) * a.logsumexp(0), ((2, 3, 3),)
        ),
        "var": Line(lambda lib, a: lib.var(a) * a.var(unbiased=False), ((2, 3),)),
        "var.dim": Line(lambda lib, a: lib.var(a, 1, False, True) * a, ((2, 3),)),
        "var.correction": Line(
            lambda lib, a: a.var((0, 1), correction=2, keepdim=True) + lib.var(a, 0),
            ((3, 2),),
            complex=True,
        ),
        "std": Line(lambda lib, a: lib.std(a) * a.std(False), ((2, 3),)),
        "std.dim": Line(lambda lib, a: lib.std(a, [0], keepdim=True) * a, ((2, 3),)),
        "std.correction": Line(
            lambda lib, a: a.std(1, correction=0) + lib.std(a, correction=1.5),
            ((2, 3),),
            complex=True,
        ),
        "cumsum": Line(lambda lib, a: lib.cumsum(a, 1) * a, ((2, 3),), complex=True),
        "cumprod": Line(
            lambda lib, a: lib.cumprod(a, 0) * 2.0, ((3, 2),), complex=True
        ),
        "softmax.int": Line(
            lambda lib, a: lib.softmax(a, 0) * a.softmax(-1, dtype=lib.float64),
            ((2, 3),),
        ),
        "_softmax": Line(lambda lib, a: lib._softmax(a, 1, False) * a, ((2, 3),)),
        "_softmax_backward_data": Line(
            lambda lib, g, y: lib._softmax_backward_data(
                g, lib.softmax(y, 1), 1, lib.float64
            ),
            ((2, 3), (2, 3)),
        ),
        "log_softmax.int": Line(
            lambda lib, a: lib.log_softmax(a, 1) * a.log_softmax(0), ((2, 3),)
        ),
        "_log_softmax": Line(
            lambda lib, a: lib._log_softmax(a, 0, False) * a, ((2, 3),)
        ),
        "_log_softmax_backward_data": Line(
            lambda lib, g, y: lib._log_softmax_backward_data(
                g, lib.log_softmax(y, 0), 0, lib.float64
            ),
            ((2, 3), (2, 3)),
        ),
        "flip": Line(lambda lib, a: lib.flip(a, (0, -1)) * a.flip(1), ((2, 3),)),
        "roll": Line(
            lambda lib, a: lib.roll(a, (1, -2), (0, 1)) * a.roll(2), ((2, 3),)
        ),
        # Leading new dims only: the double backward of a repeat along an existing dim
        # goes through reshape of an expanded gradient, which the core reshape cannot
        # do yet (see test_ops_c.py::test_repeat_double_backward_along_existing_dims).
        "repeat": Line(lambda lib, a: a.repeat(2, 1, 1) * a, ((2, 3),), complex=True),
        "index_select": Line(
            lambda lib, a: lib.index_select(a, 0, lib.tensor([2, 0, 2]))
            * a.index_select(1, lib.tensor([1, 1])),
            ((3, 2),),
        ),
        "index_select_backward": Line(
            lambda lib, g: lib.index_select_backward(
                g, (3, 2), 0, lib.tensor([2, 0, 2])
            )
            * 2.0,
            ((3, 2),),
            compare=False,  # not in torch's Python API
        ),
        "index_add": Line(
            lambda lib, a, s: lib.index_add(
                a, 1, lib.tensor([0, 2, 0]), s * s, alpha=1.5
            ),
            ((2, 3), (2, 3)),
        ),
        "gather": Line(
            lambda lib, a: lib.gather(a, 1, lib.tensor([[0, 0, 2], [1, 0, 1]])) * a,
            ((2, 3),),
        ),
        "gather_backward": Line(
            lambda lib, g: lib.gather_backward(
                g,
                lib.zeros(2, 3, dtype=lib.float64),
                1,
                lib.tensor([[0, 2], [1, 1]]),
                False,
            )
            * 2.0,
            ((2, 2),),
            compare=False,  # not in torch's Python API
        ),
        "scatter.src": Line(
            lambda lib, a, s: lib.scatter(a, 1, lib.tensor([[2, 0], [1, 2]]), s * s),
            ((2, 3), (2, 2)),
        ),
        "scatter.value": Line(
            lambda lib, a: a.scatter(0, lib.tensor([[1, 0, 1]]), 2.5) * a, ((2, 3),)
        ),
        "scatter_add": Line(
            lambda lib, a, s: lib.scatter_add(
                a, 0, lib.tensor([[1, 0, 1], [1, 1, 0]]), s
            )
            * a,
            ((2, 3), (2, 3)),
        ),
        "value_selecting_reduction_backward": Line(
            lambda lib, g: lib.value_selecting_reduction_backward(
                g, 1, lib.tensor([2, 0]), (2, 3), False
            )
            * 2.0,
            ((2,),),
            compare=False,  # not in torch's Python API
        ),
        "masked_fill.Scalar": Line(
            lambda lib, a: lib.masked_fill(a, lib.tensor([[True], [False]]), 2.5) * a,
            ((2, 3),),
        ),
        "masked_fill.Tensor": Line(
            lambda lib, a, v: a.masked_fill(lib.tensor([True, False, True]), v * v) * a,
            ((2, 3), ()),
        ),
        "expand_as": Line(lambda lib, a, b: a.expand_as(b) * b, ((3, 1), (2, 3, 4))),
        "view_as": Line(lambda lib, a, b: a.view_as(b) * b, ((2, 3), (3, 2))),
        "reshape_as": Line(lambda lib, a, b: a.reshape_as(b) * b, ((2, 3), (6,))),
        "to.dtype": Line(
            lambda lib, a: a.to(lib.complex128) * a + a.to(lib.float64), ((3,),)
        ),
    }
)


# ---- batch D: linear algebra and losses ----
TABLE.update({})


def declared_operators() -> set[str]:
    entries = yaml.safe_load((ROOT / "native_functions.yaml").read_text())
    return {entry["func"].split("(", 1)[0] for entry in entries}


def test_every_operator_has_a_line() -> None:
    declared = declared_operators()
    assert sorted(declared - TABLE.keys()) == [], "operators without a line in TABLE"
    assert (
        sorted(TABLE.keys() - declared) == []
    ), "lines for operators that do not exist"


def inputs(line: Line, lib: Any, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    made = []
    for shape in line.shapes:
        if line.positive:
            data = rng.uniform(0.5, 2.0, shape)
        else:
            data = rng.uniform(-2.0, 2.0, shape)
        if line.complex:
            data = data + 1j * rng.uniform(-2.0, 2.0, shape)
        made.append(lib.tensor(data, requires_grad=True))
    return made


@pytest.mark.parametrize("name", sorted(TABLE))
def test_gradcheck(name: str) -> None:
    line = TABLE[name]
    assert gradcheck(lambda *xs: line.function(gradgen, *xs), inputs(line, gradgen, 0))


@pytest.mark.parametrize("name", sorted(TABLE))
def test_gradgradcheck(name: str) -> None:
    line = TABLE[name]
    assert gradgradcheck(
        lambda *xs: line.function(gradgen, *xs), inputs(line, gradgen, 1)
    )


@pytest.mark.parametrize("name", sorted(n for n, line in TABLE.items() if line.compare))
def test_matches_torch(torch, name: str) -> None:  # type: ignore[no-untyped-def]
    line = TABLE[name]
    ours, theirs = inputs(line, gradgen, 2), inputs(line, torch, 2)
    out, expected = line.function(gradgen, *ours), line.function(torch, *theirs)
    np.testing.assert_allclose(
        out.detach().numpy(), expected.detach().numpy(), rtol=1e-12
    )
    rng = np.random.default_rng(3)
    shape = expected.shape
    cotangent = rng.uniform(-1, 1, shape) + (
        1j * rng.uniform(-1, 1, shape) if expected.is_complex() else 0
    )
    got = gradgen.autograd.grad(out, ours, gradgen.tensor(cotangent))
    want = torch.autograd.grad(expected, theirs, torch.tensor(cotangent))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)

"""Every line of the operator table, compiled: the value and the gradients (for a
seeded random cotangent) equal eager's to the last bit, or the line breaks the graph
and runs eagerly. The lines that compile are most of the table (counted below)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from operator_lines import table
from operator_lines.common import Line

TABLE = table()


def _inputs(line: Line) -> list[Any]:
    rng = np.random.default_rng(5)
    made = []
    for shape in line.shapes:
        low = 0.5 if line.positive else -2.0
        data = rng.uniform(low, 2.0, shape)
        if line.complex:
            data = data + 1j * rng.uniform(-2.0, 2.0, shape)
        made.append(gradgen.tensor(data, requires_grad=True))
    return made


def _run(line: Line, compiled: bool) -> tuple[np.ndarray, list[np.ndarray], Any]:
    primals = _inputs(line)

    def function(*xs: Any) -> Any:
        return line.function(gradgen, *xs)

    runner = gradgen.compile(function) if compiled else function
    gradgen.manual_seed(0)
    out = runner(*primals)
    rng = np.random.default_rng(3)
    shape = tuple(out.shape)
    cotangent = rng.uniform(-1, 1, shape) + (
        1j * rng.uniform(-1, 1, shape) if out.is_complex() else 0
    )
    grads = gradgen.autograd.grad(out, primals, gradgen.tensor(cotangent))
    return out.detach().numpy(), [g.numpy() for g in grads], runner


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return (
        a.dtype == b.dtype
        and a.shape == b.shape
        and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    )


@pytest.mark.parametrize("name", sorted(TABLE))
def test_compiled_line_equals_eager(name: str) -> None:
    line = TABLE[name]
    out, grads, _ = _run(line, compiled=False)
    got, got_grads, compiled = _run(line, compiled=True)
    if compiled.breaks:
        return  # ran eagerly: the reason is in compiled.breaks
    assert _same(got, out)
    assert len(got_grads) == len(grads)
    for g, e in zip(got_grads, grads):
        assert _same(g, e)


def test_most_lines_compile_without_a_break() -> None:
    compiled_lines = 0
    for name in sorted(TABLE):
        line = TABLE[name]
        compiled = gradgen.compile(lambda *xs: line.function(gradgen, *xs))
        gradgen.manual_seed(0)
        compiled(*_inputs(line))
        compiled_lines += not compiled.breaks
    assert compiled_lines >= 0.8 * len(TABLE), (compiled_lines, len(TABLE))

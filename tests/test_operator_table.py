"""One line per operator: gradcheck and gradgradcheck on sample inputs, in float64.

The lines live in tests/operator_lines/, one module per family of native_functions.yaml.
Every operator in native_functions.yaml must have a line (the first test fails
otherwise), so a new operator cannot land untested. A line gives a function of
`gradgen`-like `lib` (so the same line also runs against torch when it is
installed) and the shapes and dtype of its inputs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import gradgen
from gradgen.autograd import gradcheck, gradgradcheck
from gradgen.generated import functions as generated_functions
from gradgen.helpers.arrays import tensor_forms_only
from operator_lines import FAMILIES, table
from operator_lines.common import Line
from torch_oracle import oracle

ROOT = Path(__file__).resolve().parent.parent
TABLE = table()


def declared_operators() -> set[str]:
    entries = yaml.safe_load((ROOT / "native_functions.yaml").read_text())
    return {entry["func"].split("(", 1)[0] for entry in entries}


def test_line_modules_are_the_yaml_families() -> None:
    text = (ROOT / "native_functions.yaml").read_text()
    headers = re.findall(r"^# ==== family: (\w+) ====$", text, re.M)
    assert list(FAMILIES) == headers


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
    if not line.double_backward:
        with pytest.raises(NotImplementedError, match="not implemented"):
            gradgradcheck(
                lambda *xs: line.function(gradgen, *xs), inputs(line, gradgen, 1)
            )
        return
    assert gradgradcheck(
        lambda *xs: line.function(gradgen, *xs), inputs(line, gradgen, 1)
    )


@pytest.mark.parametrize("name", sorted(n for n, line in TABLE.items() if line.compare))
def test_matches_torch(name: str) -> None:
    """Value and gradients (for a seeded random cotangent) equal PyTorch's."""
    line = TABLE[name]

    def run(lib: Any) -> tuple[Any, list[Any]]:
        primals = inputs(line, lib, 2)
        out = line.function(lib, *primals)
        rng = np.random.default_rng(3)
        shape = tuple(out.shape)
        cotangent = rng.uniform(-1, 1, shape) + (
            1j * rng.uniform(-1, 1, shape) if out.is_complex() else 0
        )
        grads = lib.autograd.grad(out, primals, lib.tensor(cotangent))
        return out.detach().numpy(), [g.numpy() for g in grads]

    (out, got), (expected, want) = run(gradgen), oracle("value and grads", run)
    np.testing.assert_allclose(out, expected, rtol=line.rtol or 1e-12)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=line.rtol or 1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_forward_ad_matches_a_directional_difference(name: str) -> None:
    """The JVP generated from the `result:` formula, against (f(x+hv) - f(x-hv)) / 2h."""
    from gradgen.autograd import forward_ad

    line = TABLE[name]
    primals = inputs(line, gradgen, 4)
    if not line.forward:
        with forward_ad.dual_level():
            duals = [forward_ad.make_dual(p.detach(), p.detach()) for p in primals]
            with pytest.raises(RuntimeError, match="^Trying to use forward AD with"):
                line.function(gradgen, *duals)
        return
    rng = np.random.default_rng(5)
    directions = []
    for primal in primals:
        direction = rng.uniform(-1, 1, primal.shape)
        if line.complex:
            direction = direction + 1j * rng.uniform(-1, 1, primal.shape)
        directions.append(direction)
    with forward_ad.dual_level():
        duals = [
            forward_ad.make_dual(p.detach(), gradgen.tensor(d))
            for p, d in zip(primals, directions)
        ]
        out = line.function(gradgen, *duals)
        tangent = forward_ad.unpack_dual(out).tangent
    h = 1e-6

    def at(step: float) -> np.ndarray:
        shifted = [
            gradgen.tensor(p.detach().numpy() + step * d)
            for p, d in zip(primals, directions)
        ]
        with gradgen.no_grad():
            return line.function(gradgen, *shifted).numpy()

    expected = (at(h) - at(-h)) / (2 * h)
    assert tangent is not None
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(n for n, line in TABLE.items() if line.forward))
def test_forward_and_reverse_mode_agree(name: str) -> None:
    """<u, J v> from forward mode equals <J^T u, v> from reverse mode (real inner
    products of the real and imaginary parts, so complex functions are covered)."""
    from gradgen.autograd import forward_ad

    line = TABLE[name]
    primals = inputs(line, gradgen, 6)
    rng = np.random.default_rng(7)

    def draw(shape: tuple[int, ...], complex_: bool) -> np.ndarray:
        values = rng.uniform(-1, 1, shape)
        return values + 1j * rng.uniform(-1, 1, shape) if complex_ else values

    directions = [draw(tuple(p.shape), line.complex) for p in primals]
    with forward_ad.dual_level():
        duals = [
            forward_ad.make_dual(p.detach(), gradgen.tensor(d))
            for p, d in zip(primals, directions)
        ]
        tangent = forward_ad.unpack_dual(line.function(gradgen, *duals)).tangent.numpy()
    out = line.function(gradgen, *primals)
    u = draw(tuple(out.shape), out.is_complex())
    vjps = gradgen.autograd.grad(out, primals, gradgen.tensor(u), allow_unused=True)

    def real_inner(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.sum(np.real(a) * np.real(b) + np.imag(a) * np.imag(b)))

    forward = real_inner(u, tangent)
    reverse = sum(
        real_inner(g.numpy(), d) for g, d in zip(vjps, directions) if g is not None
    )
    assert forward == pytest.approx(reverse, rel=1e-9, abs=1e-9)


def _has_array_form(node: Any) -> bool:
    """Whether a Backward node of generated/functions.py has an array form."""
    cls = type(node)
    return (
        getattr(generated_functions, cls.__name__, None) is cls and cls._has_array_form
    )


def _graph_nodes(out: Any) -> list[Any]:
    seen: dict[int, Any] = {}
    stack = [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node
        stack.extend(next_node for next_node, _ in node.next_functions)
    return list(seen.values())


@pytest.mark.parametrize("name", sorted(TABLE))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_array_form_equals_tensor_form(name: str, dtype: str) -> None:
    """Where the graph of a line has a node with an array form, the gradients of
    both forms are equal to the last bit: same dtype, same shape, same values (NaN
    positions included)."""
    line = TABLE[name]

    def run() -> tuple[list[Any], bool]:
        gradgen.manual_seed(0)  # random lines (rrelu_with_noise) draw the same twice
        primals = inputs(line, gradgen, 8)
        if dtype == "float32":
            primals = [
                p.detach().to(gradgen.complex64 if line.complex else gradgen.float32)
                for p in primals
            ]
            for p in primals:
                p.requires_grad_(True)
        out = line.function(gradgen, *primals)
        rng = np.random.default_rng(9)
        shape = tuple(out.shape)
        cotangent = rng.uniform(-1, 1, shape) + (
            1j * rng.uniform(-1, 1, shape) if out.is_complex() else 0
        )
        used = any(_has_array_form(n) for n in _graph_nodes(out))
        grads = gradgen.autograd.grad(
            out, primals, gradgen.tensor(cotangent).to(out.dtype), allow_unused=True
        )
        return [None if g is None else g.numpy() for g in grads], used

    try:
        got, used = run()
    except (RuntimeError, TypeError, NotImplementedError):
        if dtype == "float64":
            raise
        return  # an operator without float32 support: float64 covers it
    if not used:
        return
    with tensor_forms_only():
        want, _ = run()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if g is None:
            continue
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g, w, equal_nan=True), f"{name}: the forms differ"

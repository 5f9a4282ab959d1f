"""Random compositions of operators against PyTorch (see
tests/test_gradients_first_order.py)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pytest

import gradgen

from gradient_checks import GRADGEN_OPS, _as_numpy, reverse_grads, torch_vjp

# ---------------------------------------------------------------------------------------
# 6. Random compositions against torch (float64, 1e-10)
# ---------------------------------------------------------------------------------------


class Program(NamedTuple):
    shapes: tuple[tuple[int, ...], ...]
    steps: tuple[tuple[Any, ...], ...]
    features: frozenset[str]  # "broadcast", "permute"


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(a, b))


def make_program(seed: int, family: str) -> Program:
    """A random composition. family "elementwise": one shape, no shape ops; "shapes":
    shapes that broadcast against (3, 3, 3), with permutations."""
    rng = np.random.default_rng(seed)
    if family == "elementwise":
        n_inputs = int(rng.integers(1, 4))
        shapes = [(2, 3)] * n_inputs
        kinds = ["add", "sub", "mul", "pow_int", "pow_pos", "neg", "clone", "number"]
    else:
        n_inputs = int(rng.integers(2, 4))
        pool = [(3, 3, 3), (3, 1, 3), (3,), (1, 3, 1), ()]
        shapes = [(3, 3, 3)] + [
            pool[int(i)] for i in rng.integers(1, len(pool), n_inputs - 1)
        ]
        kinds = ["add", "sub", "mul", "pow_int", "neg", "permute", "permute", "number"]
    value_shapes = list(shapes)
    steps: list[tuple[Any, ...]] = []
    features: set[str] = set()
    n_steps = int(rng.integers(4, 8))
    for k in range(max(n_steps, n_inputs)):
        # The first steps use every input, so every input gets a gradient.
        first = (
            k
            if k < n_inputs
            else int(rng.integers(max(0, len(value_shapes) - 4), len(value_shapes)))
        )
        kind = kinds[int(rng.integers(len(kinds)))]
        if kind == "permute" and len(value_shapes[first]) != 3:
            kind = "mul"
        if k == 0 and n_inputs > 1 and kind not in ("add", "sub", "mul"):
            kind = "mul"
        if kind in ("add", "sub", "mul"):
            second = int(rng.integers(len(value_shapes)))
            alpha = [1, 2.5, -3, 0.5][int(rng.integers(4))] if kind != "mul" else None
            step = (kind, first, second, alpha)
            shape = _broadcast(value_shapes[first], value_shapes[second])
            if shape != value_shapes[first] or shape != value_shapes[second]:
                features.add("broadcast")
        elif kind == "pow_int":
            step = (kind, first, [1, 2, 3][int(rng.integers(3))])
            shape = value_shapes[first]
        elif kind == "pow_pos":
            step = (kind, first, [2.5, -1, 0.5, -1.5][int(rng.integers(4))])
            shape = value_shapes[first]
        elif kind == "permute":
            perm = list(rng.permutation(3))
            if rng.integers(2):
                perm = [d - 3 for d in perm]
            step = (kind, first, tuple(int(d) for d in perm))
            shape = tuple(value_shapes[first][d] for d in perm)
            features.add("permute")
        elif kind == "number":
            step = (
                kind,
                first,
                [2.5, -0.5, 3][int(rng.integers(3))],
                bool(rng.integers(2)),
            )
            shape = value_shapes[first]
        else:  # neg, clone
            step = (kind, first)
            shape = value_shapes[first]
        steps.append(step)
        value_shapes.append(shape)
    return Program(tuple(shapes), tuple(steps), frozenset(features))


def run_program(program: Program, ops: Any, inputs: Sequence[Any]) -> Any:
    values = list(inputs)
    for step in program.steps:
        kind, first = step[0], values[step[1]]
        if kind == "add":
            value = ops.add(first, values[step[2]], alpha=step[3])
        elif kind == "sub":
            value = ops.sub(first, values[step[2]], alpha=step[3])
        elif kind == "mul":
            value = ops.mul(first, values[step[2]])
        elif kind == "pow_int":
            value = ops.pow(first, step[2])
        elif kind == "pow_pos":
            value = ops.pow(first * first + 0.5, step[2])
        elif kind == "permute":
            value = ops.permute(first, step[2])
        elif kind == "number":
            value = first * step[2] if step[3] else step[2] - first
        elif kind == "neg":
            value = ops.neg(first)
        else:
            value = ops.clone(first)
        values.append(value)
    return values[-1]


_PROGRAMS = [
    (seed, "elementwise", make_program(seed, "elementwise")) for seed in range(24)
] + [(seed, "shapes", make_program(1000 + seed, "shapes")) for seed in range(10)]


@pytest.mark.parametrize(
    "program",
    [pytest.param(p, id=f"{family}-{seed}") for seed, family, p in _PROGRAMS],
)
def test_random_composition_matches_torch(program: Program) -> None:
    seed = zlib.crc32(repr(program.steps).encode())
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1.5, 1.5, s) for s in program.shapes]
    state = rng.bit_generator.state  # the cotangent is drawn next

    def cotangent(shape: tuple[int, ...]) -> np.ndarray:
        draw = np.random.default_rng()
        draw.bit_generator.state = state
        return draw.standard_normal(shape)

    theirs = torch_vjp(
        arrays, lambda ops, *xs: run_program(program, ops, list(xs)), cotangent
    )

    leaves = [gradgen.tensor(a, requires_grad=True) for a in arrays]
    out = run_program(program, GRADGEN_OPS, leaves)
    assert out.dtype == gradgen.float64
    np.testing.assert_allclose(_as_numpy(out), theirs["out"], rtol=1e-10, atol=1e-10)
    v = gradgen.tensor(cotangent(tuple(out.shape)))
    grads = reverse_grads(out, leaves, v, "backward")
    assert len(grads) == len(theirs["grads"])
    for index, (got, want) in enumerate(zip(grads, theirs["grads"])):
        assert (got is None) == (want is None), f"input {index}"
        if want is not None:
            np.testing.assert_allclose(
                _as_numpy(got),
                want,
                rtol=1e-10,
                atol=1e-10,
                err_msg=f"input {index}",
            )


def test_random_programs_cover_the_operators() -> None:
    """The random batch exercises every step kind, broadcasting and permutations."""
    kinds = {step[0] for _, _, p in _PROGRAMS for step in p.steps}
    assert kinds >= {
        "add",
        "sub",
        "mul",
        "pow_int",
        "pow_pos",
        "neg",
        "clone",
        "number",
        "permute",
    }
    features = [p.features for _, _, p in _PROGRAMS]
    assert sum("broadcast" in f for f in features) >= 5
    assert sum("permute" in f for f in features) >= 5

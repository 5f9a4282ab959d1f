"""The operator table (tests/operator_lines/) run through vmap, for every operator
with a batching rule (gradgen.func.batching_rules.RULES):

- gradcheck and gradgradcheck with ``check_batched_grad=True`` (``fast_mode=True``
  keeps them cheap): the backward formulas of the operator's graph, run under vmap on
  a batch of grad_outputs, give what one pass per grad_output gives;
- the operator itself under vmap over a batch of inputs equals the per-example loop
  (the rule against the definition of vmap), with no fallback warning; a random
  operator's (whose lines draw deterministic values) with randomness='different'.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import gradcheck, gradgradcheck
from gradgen.func import vmap
from gradgen.func.batching_rules import DRAWING, RULES
from operator_lines import table

TABLE = table()
NAMES = sorted(name for name in TABLE if name in RULES)

# Operators whose line cannot run under vmap for a reason that is not the rule's:
# a line that draws random numbers or reads a Python value out of a tensor.
WRITES_INTO_A_FRESH_TENSOR = (
    "the line writes the batched input into a tensor it makes itself (in place), "
    "which vmap refuses, as PyTorch's does"
)
NOT_VMAPPABLE: dict[str, str] = {
    "igamma_": WRITES_INTO_A_FRESH_TENSOR,
    "igammac_": WRITES_INTO_A_FRESH_TENSOR,
}
# Operators whose vmap is not the per-example loop, by torch.func's definition.
NOT_THE_LOOP: dict[str, str] = {
    "as_strided": "an explicit storage_offset is example 0's and moves with the batch "
    "(torch.func's reading: the loop gives every example the same memory); "
    "tests/func/test_vmap_memory_rules.py checks it against torch.func.vmap",
}


def _inputs(name: str, seed: int, batch: int | None = None) -> list[Any]:
    line = TABLE[name]
    rng = np.random.default_rng(seed)
    made = []
    for shape in line.shapes:
        full = shape if batch is None else (batch, *shape)
        low = 0.5 if line.positive else -2.0
        data = rng.uniform(low, 2.0, full)
        if line.complex:
            data = data + 1j * rng.uniform(-2.0, 2.0, full)
        made.append(gradgen.tensor(data, requires_grad=True))
    return made


def test_the_table_covers_the_rules() -> None:
    """Every operator with a rule has a line (the table has every operator)."""
    assert len(NAMES) == len(RULES)


@pytest.mark.parametrize("name", NAMES)
def test_batched_grad(name: str) -> None:
    line = TABLE[name]
    assert gradcheck(
        lambda *xs: line.function(gradgen, *xs),
        _inputs(name, 0),
        check_batched_grad=True,
        fast_mode=True,
    )


@pytest.mark.parametrize("name", NAMES)
def test_batched_gradgrad(name: str) -> None:
    line = TABLE[name]
    if not line.double_backward:  # no second derivative, as PyTorch's: it says so
        with pytest.raises(NotImplementedError, match="is not implemented"):
            gradgradcheck(
                lambda *xs: line.function(gradgen, *xs),
                _inputs(name, 1),
                check_batched_grad=True,
                fast_mode=True,
            )
        return
    assert gradgradcheck(
        lambda *xs: line.function(gradgen, *xs),
        _inputs(name, 1),
        check_batched_grad=True,
        fast_mode=True,
    )


@pytest.mark.parametrize("name", NAMES)
def test_vmap_of_the_operator_equals_the_loop(name: str) -> None:
    line = TABLE[name]
    batch = _inputs(name, 2, batch=3)

    def f(*xs: Any) -> Any:
        return line.function(gradgen, *xs)

    if name in NOT_VMAPPABLE:  # refused, as PyTorch's vmap refuses it
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            vmap(f)(*batch)
        return
    randomness = "different" if name in DRAWING else "error"
    gradgen.manual_seed(0)
    looped = [f(*(x[i] for x in batch)) for i in range(3)]
    gradgen.manual_seed(0)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="vmap: .* has no batching rule")
        batched = vmap(f, randomness=randomness)(*batch)
    if name in NOT_THE_LOOP:
        return
    flat_looped = [looped] if isinstance(looped[0], gradgen.Tensor) else None
    if flat_looped is None:
        for position, column in enumerate(zip(*looped)):
            expected = np.stack([c.detach().numpy() for c in column])
            np.testing.assert_allclose(
                batched[position].detach().numpy(), expected, rtol=1e-10, atol=1e-12
            )
        return
    expected = np.stack([o.detach().numpy() for o in looped])
    np.testing.assert_allclose(
        batched.detach().numpy(), expected, rtol=1e-10, atol=1e-12
    )

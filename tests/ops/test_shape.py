"""Shape operators (expand_as, view_as, repeat) beyond the operator table."""

from __future__ import annotations

import numpy as np
import pytest

import gradgen
from gradgen.autograd import gradgradcheck
from ops.nn_checks import _same_error
from torch_oracle import numbered, oracle

# Kernels make inf and nan silently (test_kernels_make_inf_and_nan_silently checks it
# in a fresh interpreter); under pytest's own filters the warnings would only be noise.
pytestmark = pytest.mark.filterwarnings(
    "ignore:(divide by zero|invalid value|overflow) encountered:RuntimeWarning"
)


def test_expand_as_and_view_as_are_views() -> None:
    x = gradgen.tensor([[1.0], [2.0]])
    view = x.view_as(gradgen.zeros(2))
    assert view._base is x
    assert x.expand_as(gradgen.zeros(2, 3)).tolist() == [[1.0] * 3, [2.0] * 3]
    assert x.t().contiguous().reshape_as(gradgen.zeros(2)).tolist() == [1.0, 2.0]


def test_repeat_double_backward_along_existing_dims() -> None:
    x = gradgen.tensor(
        [[1.0, 2.0], [3.0, 4.0]], dtype=gradgen.float64, requires_grad=True
    )
    assert gradgradcheck(lambda t: t.repeat(2, 3), [x])


MOVES = [
    ((0, 1), (2, 0)),
    ([2], [0]),
    (0, -1),
    (-1, 1),
    ((), ()),
    ((0, 1, 2), (2, 1, 0)),
]


@pytest.mark.parametrize("name", ["movedim", "moveaxis"])
def test_movedim_orders_match_torch(name: str) -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    for source, destination in MOVES:
        ours = getattr(gradgen, name)(gradgen.tensor(x), source, destination)
        theirs = oracle(
            numbered("moved"),
            lambda torch: getattr(torch, name)(torch.tensor(x), source, destination),
        )
        assert ours.shape == tuple(theirs.shape)
        assert ours.tolist() == theirs.tolist()
        assert ours._base is not None  # a view, as PyTorch's


def test_movedim_errors_match_torch() -> None:
    x = np.zeros((2, 3, 4))
    for source, destination in (
        ((0, 1), (1, 1)),
        ((0, 0), (1, 2)),
        ((0,), (1, 2)),
        (5, 0),
        (0, -4),
    ):
        _same_error(
            lambda: gradgen.movedim(gradgen.tensor(x), source, destination),
            lambda torch: lambda: torch.movedim(torch.tensor(x), source, destination),
        )

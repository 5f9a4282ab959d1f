"""Shape operators (expand_as, view_as, repeat) beyond the operator table."""

from __future__ import annotations

import pytest

import gradgen
from gradgen.autograd import gradgradcheck

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

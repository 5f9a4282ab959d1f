"""The softmax family's double backward against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

from torch_compare import compare

# Kernels make inf and nan silently (test_kernels_make_inf_and_nan_silently checks it
# in a fresh interpreter); under pytest's own filters the warnings would only be noise.
pytestmark = pytest.mark.filterwarnings(
    "ignore:(divide by zero|invalid value|overflow) encountered:RuntimeWarning"
)


# -- softmax family -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: lib.softmax(x, 1),
        lambda lib, x: x.softmax(0),
        lambda lib, x: lib.log_softmax(x, -1),
        lambda lib, x: x.log_softmax(0),
        lambda lib, x: lib.logsumexp(x, 1, keepdim=True),
        lambda lib, x: lib._softmax_backward_data(x * x, lib.softmax(x, 1), 1, x.dtype),
        lambda lib, x: lib._log_softmax_backward_data(
            x * x, lib.log_softmax(x, 0), 0, x.dtype
        ),
    ],
)
def test_softmax_family_double_backward_matches_torch(fn) -> None:
    compare(fn, np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]), create_graph=True)

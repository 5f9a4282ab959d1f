"""Issue 14, W4 (the MLP training step): the kernels made faster keep their values to
the last bit, by hand: sum_to_size's fresh result, relu and threshold_backward with
-0.0, NaN and inf, and mean's backward."""

from __future__ import annotations

import numpy as np

from gradgen.numpy_kernels.shape import sum_to_size


def test_sum_to_size_over_leading_dimensions_returns_a_fresh_array() -> None:
    values = np.arange(12.0).reshape(3, 4)
    result = sum_to_size(values, (4,))
    np.testing.assert_array_equal(result, [12.0, 15.0, 18.0, 21.0])
    assert result.base is None and result.flags.writeable
    inner = sum_to_size(values, (3, 1))  # an inner dimension kept as 1
    np.testing.assert_array_equal(inner, [[6.0], [22.0], [38.0]])
    assert inner.shape == (3, 1)

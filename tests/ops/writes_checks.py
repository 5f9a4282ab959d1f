"""Shared data and comparison settings of the elementwise-writes, sort and norm tests."""

from __future__ import annotations

import functools

import numpy as np

from torch_compare import compare as _compare

# single-precision gradients: within 1e-5 of PyTorch's
compare = functools.partial(_compare, grad_rtol32=1e-5)

NAN = float("nan")
INF = float("inf")


M = np.array([[1.0, -2.0, 3.0, 0.5], [4.0, 5.0, -6.0, 2.5], [0.5, 7.0, 8.0, -1.0]])
INT = np.array([[1, -2, 3], [4, 0, -6], [7, 8, 9]], dtype=np.int64)

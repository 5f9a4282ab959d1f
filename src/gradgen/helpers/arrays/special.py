"""Array twins of the special functions a backward formula calls (their numpy
kernels, called as the dispatcher calls them)."""

from __future__ import annotations

import numpy as np

from ...numpy_kernels import (
    digamma as _digamma,
    erfinv as _erfinv,
    i1 as _i1,
    i1e as _i1e,
    int_to_float,
    lgamma as _lgamma,
    polygamma as _polygamma,
)
from ._common import as_array, kernel_result

__all__ = [
    "digamma",
    "polygamma",
    "lgamma",
    "erfinv",
    "special_i1",
    "special_i1e",
    "exp2",
]


def digamma(self: np.ndarray) -> np.ndarray:
    return kernel_result(_digamma(as_array(self)))


def polygamma(n: int, self: np.ndarray) -> np.ndarray:
    return kernel_result(_polygamma(n, as_array(self)))


def lgamma(self: np.ndarray) -> np.ndarray:
    return kernel_result(_lgamma(as_array(self)))


def erfinv(self: np.ndarray) -> np.ndarray:
    return kernel_result(_erfinv(as_array(self)))


def special_i1(self: np.ndarray) -> np.ndarray:
    return kernel_result(_i1(as_array(self)))


def special_i1e(self: np.ndarray) -> np.ndarray:
    return kernel_result(_i1e(as_array(self)))


def exp2(self: np.ndarray) -> np.ndarray:
    return kernel_result(np.exp2(int_to_float(as_array(self))))

"""Session 10's trim of vmap(grad) per-example gradients (perex5).

The per-example outer products (bmm of (b, n, 1) by (b, 1, m), vmap's weight
gradients) store their zero-padded left factor by columns: the same BLAS products
over the same values, so the bits must be those of the row-stored layout they
replace, and each element its one product."""

from __future__ import annotations

import numpy as np
import pytest

from gradgen.numpy_kernels.linalg import _outer_pairs, bmm

RNG = np.random.default_rng(55)


def _row_stored_pairs(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The previous layout: ``[[l0, 0], [0, l1]]`` stored by rows (2n x 2)."""
    batch, n = left.shape
    pairs = np.zeros((batch // 2, 2, n, 2), left.dtype)
    pairs[:, 0, :, 0] = left[0::2]
    pairs[:, 1, :, 1] = left[1::2]
    with np.errstate(all="ignore"):  # inf * 1
        product = np.matmul(
            pairs.reshape(batch // 2, 2 * n, 2), right.reshape(batch // 2, 2, -1)
        )
    return product.reshape(batch, n, right.shape[1])


def _row_stored_padded(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    batch, n = left.shape
    columns = np.zeros((batch, n, 2), left.dtype)
    columns[:, :, 0] = left
    rows = np.zeros((batch, 2, right.shape[1]), left.dtype)
    rows[:, 0, :] = right
    with np.errstate(all="ignore"):
        return np.matmul(columns, rows)


def _factors(dtype: str, batch: int, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    left = (RNG.standard_normal((batch, n)) * 3).astype(dtype)
    right = (RNG.standard_normal((batch, m)) * 3).astype(dtype)
    special = np.array([np.inf, -np.inf, np.nan, -0.0], dtype)
    left.flat[: min(4, left.size)] = special[: left.size]
    right.flat[:2] = [0.0, -0.0]
    return left, right


def _products(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):  # inf * 0
        return left[:, :, None] * right[:, None, :]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "batch, n, m", [(256, 128, 64), (256, 10, 128), (2, 1, 300), (6, 33, 17)]
)
def test_pairs_stored_by_columns_give_the_row_stored_bits(
    dtype: str, batch: int, n: int, m: int
) -> None:
    left, right = _factors(dtype, batch, n, m)
    product = _outer_pairs(left, right)
    assert product.shape == (batch, n, m) and product.dtype == dtype
    assert product.flags.c_contiguous
    assert product.tobytes() == _row_stored_pairs(left, right).tobytes()
    # Each element its one product (NaN where the product is; the sign of a zero
    # product is BLAS's, as before).
    np.testing.assert_array_equal(product, _products(left, right))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", [7, 8])
def test_padded_products_give_the_row_stored_bits(dtype: str, batch: int) -> None:
    # An odd batch, or a non-finite right factor (0 * inf would spoil the other
    # example of a pair): one example per product, padded by zeros.
    left, right = _factors(dtype, batch, 40, 24)
    right[batch - 1, 5] = np.inf
    product = bmm(left[:, :, None], right[:, None, :])
    assert product.shape == (batch, 40, 24)
    assert product.transpose(0, 2, 1).flags.c_contiguous  # the kernel's memory order
    expected = _row_stored_padded(left, right)
    assert np.ascontiguousarray(product).tobytes() == expected.tobytes()
    np.testing.assert_array_equal(product, _products(left, right))


def test_pairs_of_strided_factors() -> None:
    # vmap hands the factors on as views (a transposed gradient, a row of a batch).
    base = RNG.standard_normal((8, 90)).astype(np.float32)
    left = base[:, ::3]  # (8, 30), strided
    right = RNG.standard_normal((8, 2, 50)).astype(np.float32)[:, 1, :]
    product = _outer_pairs(left, right)
    assert product.tobytes() == _row_stored_pairs(left, right).tobytes()
    np.testing.assert_array_equal(product, _products(left, right))

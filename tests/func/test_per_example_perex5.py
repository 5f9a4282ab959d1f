"""Session 10's trim of vmap(grad) per-example gradients (perex5).

- The per-example outer products (bmm of (b, n, 1) by (b, 1, m), vmap's weight
  gradients) store their zero-padded left factor by columns: the same BLAS products
  over the same values, so the bits must be those of the row-stored layout they
  replace, and each element its one product.
- The one-node linear adds a bias repeated over the batch (vmap(grad)'s alias of
  a layer's) from its one row: the same additions.
- The one-node cross_entropy takes the class maximum of many rows of few classes
  as an elementwise maximum over a transposed copy: the bits of the row-wise
  reduction (log_softmax's kernel's), the ties of zeros and NaNs left to it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as F
from gradgen.func import grad_and_value, vmap
from gradgen.func.batching_composites import _class_max
from gradgen.func.batching_linear import linear_node
from gradgen.func.pytree import tree_leaves
from gradgen.numpy_kernels.linalg import _outer_pairs, bmm
from gradgen.tensor import Tensor

from .common import general_path

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


# -- cross_entropy's class maximum -------------------------------------------------------


def _logits(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    x = (RNG.standard_normal(shape) * 4).astype(dtype)
    rows = x.reshape(-1, shape[-1])
    rows[0, :3] = [-0.0, -1.0, -0.0]  # a zero maximum of two signs: the order decides
    rows[1, :] = -np.abs(rows[1, :])
    rows[1, 0], rows[1, -1] = -0.0, 0.0
    rows[2, 1] = np.inf
    rows[3, :] = -np.inf
    rows[5, 2] = np.nan
    return x


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(256, 10), (128, 1, 10), (400, 3), (40, 2, 32)])
@pytest.mark.parametrize("special", [False, True])
def test_class_max_has_the_row_wise_bits(
    dtype: str, shape: tuple[int, ...], special: bool
) -> None:
    x = _logits(dtype, shape) if special else RNG.standard_normal(shape).astype(dtype)
    with np.errstate(all="ignore"):
        got = _class_max(x, x.ndim - 1)
    expected = np.maximum.reduce(x, axis=x.ndim - 1, keepdims=True)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert got.tobytes() == expected.tobytes()


def test_class_max_nan_payloads_are_the_row_wise_ones() -> None:
    # Two NaNs of different payloads in a row: which one survives is the order's.
    x = RNG.standard_normal((256, 10)).astype(np.float32)
    bits = x.view(np.int32)
    bits[7, 2], bits[7, 6] = 0x7FC00001, 0x7FC00002
    bits[9, 0], bits[9, 9] = -0x00400003, 0x7FC00004  # a signalling NaN first
    with np.errstate(all="ignore"):  # as _record calls it
        got = _class_max(x, 1)
    assert got.tobytes() == np.maximum.reduce(x, axis=1, keepdims=True).tobytes()


def test_class_max_other_shapes_take_the_row_wise_reduction() -> None:
    x = RNG.standard_normal((64, 10, 3))  # classes not last
    assert _class_max(x, 1).tobytes() == np.max(x, axis=1, keepdims=True).tobytes()
    wide = RNG.standard_normal((256, 100))  # many classes
    assert (
        _class_max(wide, 1).tobytes() == np.max(wide, axis=1, keepdims=True).tobytes()
    )


@pytest.mark.parametrize("special", [False, True])
def test_per_example_cross_entropy_of_a_large_batch_has_the_general_bits(
    special: bool,
) -> None:
    # 256 examples of 10 classes: the transposed class maximum; values and gradients
    # bit for bit those of the operators (log_softmax's kernel reduces row by row).
    batch, classes = 256, 10
    weight = RNG.standard_normal((classes, 6)).astype(np.float32)
    bias = RNG.standard_normal(classes).astype(np.float32)
    x = RNG.standard_normal((batch, 6)).astype(np.float32)
    if special:
        x[0, :] = 0.0  # logits of example 0: the bias, a maximum of 0.0 and -0.0
        bias[:] = -np.abs(bias)
        bias[3], bias[5] = 0.0, -0.0
        x[1, 2] = np.nan
    target = np.eye(classes, dtype=np.float32)[RNG.integers(0, classes, batch)]

    def loss(w: Any, b: Any, x: Any, t: Any) -> Any:
        logits = F.linear(x.unsqueeze(0), w, b)
        return F.cross_entropy(logits, t.unsqueeze(0))

    arrays = [gradgen.tensor(a) for a in (weight, bias, x, target)]
    per_example = vmap(grad_and_value(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))
    fast = per_example(*arrays)
    with general_path():
        general = per_example(*arrays)
    for got, expected in zip(tree_leaves(fast), tree_leaves(general)):
        assert got.numpy().tobytes() == expected.numpy().tobytes()


# -- the one-node linear's repeated bias -------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_repeated_bias_adds_the_bits_of_its_copies(dtype: str) -> None:
    batch, rows, inputs, outputs = 6, 3, 5, 4
    x = gradgen.tensor(RNG.standard_normal((batch, rows, inputs)).astype(dtype))
    weight = RNG.standard_normal((outputs, inputs)).astype(dtype)
    weights = Tensor(np.broadcast_to(weight, (batch, outputs, inputs)))
    bias = RNG.standard_normal(outputs).astype(dtype)
    bias[0] = -0.0
    repeated = Tensor(np.broadcast_to(bias, (batch, outputs)))  # (as vmap's alias)
    copied = Tensor(np.ascontiguousarray(repeated._data))
    assert repeated._data.strides[0] == 0 and copied._data.strides[0] != 0
    with gradgen.no_grad():
        assert linear_node(repeated, x, weights, rows=True) is None  # no graph: none
    weights.requires_grad_()
    got = linear_node(repeated, x, weights, rows=True)
    expected = linear_node(copied, x, weights, rows=True)
    assert got is not None and expected is not None
    assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes()
    by_hand = x.numpy() @ weight.T + bias
    np.testing.assert_allclose(got.detach().numpy(), by_hand, rtol=1e-6)

"""`t[index]` and `t[index] = value` (gradgen.indexing, the index / index_put operators).

Values, shapes, gradients and error messages are compared with torch (recorded in
tests/golden/, see torch_oracle.py); gradients also by gradcheck. Hand-made expectations cover what torch is not
needed for (version counters, the no-grad fast path).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import gradcheck, gradgradcheck
from torch_oracle import oracle

# Indexes as functions of the library, so the same one builds torch or gradgen tensors.
READS: dict[str, Callable[[Any], Any]] = {
    "int": lambda L: 1,
    "negative int": lambda L: -1,
    "slice": lambda L: slice(1, None, 2),
    "list": lambda L: [2, 0, 2],
    "empty list": lambda L: [],
    "tensor": lambda L: L.tensor([[0, 1], [1, 0]]),
    "negative tensor": lambda L: L.tensor([-1, -3]),
    "mask 1-d": lambda L: L.tensor([True, False, True]),
    "mask 2-d": lambda L: L.arange(12).reshape(3, 4) % 3 == 0,
    "int then list": lambda L: (0, [1, 3]),
    "slice then list": lambda L: (slice(None), [1, 3]),
    "int, slice, list": lambda L: (1, slice(None), [0, 1]),
    "lists apart": lambda L: ([0, 2], slice(None), [1, 0]),
    "lists together": lambda L: (slice(None), [0, 2], [1, 0]),
    "ellipsis then tensor": lambda L: (Ellipsis, L.tensor([1, 0])),
    "None then list": lambda L: (None, [0, 2]),
    "mask then slice": lambda L: (L.tensor([True, False, True]), slice(1, 3)),
    "broadcast lists": lambda L: ([[0], [2]], slice(None), [0, 1]),
}


def _base(lib: Any, shape: tuple[int, ...] = (3, 4, 2)) -> Any:
    return lib.arange(float(np.prod(shape)), dtype=lib.float64).reshape(shape)


@pytest.mark.parametrize("name", sorted(READS))
def test_reading_matches_torch(name: str) -> None:
    expected = oracle("read", lambda torch: _base(torch)[READS[name](torch)])
    got = _base(gradgen)[READS[name](gradgen)]
    assert tuple(got.shape) == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("name", sorted(READS))
def test_reading_gradient_matches_torch(name: str) -> None:
    def gradient(lib: Any) -> np.ndarray:
        x = _base(lib).requires_grad_()
        y = x[READS[name](lib)]
        weights = lib.arange(float(y.numel()), dtype=lib.float64).reshape(y.shape) + 1
        (y * weights).sum().backward()
        return np.asarray(x.grad.tolist())

    np.testing.assert_array_equal(gradient(gradgen), oracle("gradient", gradient))


def test_advanced_reads_are_differentiable_twice() -> None:
    x = gradgen.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    index = gradgen.tensor([2, 0, 2])
    mask = gradgen.tensor([True, False, True, True])
    function = lambda t: t[index] ** 2 + t[:, mask].sum()  # noqa: E731
    assert gradcheck(function, (x,))
    assert gradgradcheck(function, (x,))


def test_a_read_records_index_backward_and_copies() -> None:
    x = gradgen.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x[[0, 0]]
    assert type(y.grad_fn).__name__ == "IndexBackward0"
    assert y._base is None  # a copy, not a view: writing to it leaves x alone
    with gradgen.no_grad():
        y[0] = 100.0
    assert x.tolist() == [1.0, 2.0, 3.0]


# -- writes --------------------------------------------------------------------------

WRITES: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "int, number": (lambda L: 1, lambda L: 5.0),
    "slice, row": (
        lambda L: (slice(None), 0),
        lambda L: L.tensor([1.0, 2.0, 3.0], dtype=L.float64),
    ),
    "mask, number": (lambda L: L.arange(12).reshape(3, 4) > 6, lambda L: -1.0),
    "list with repeats": (
        lambda L: [0, 2, 0],
        lambda L: L.tensor([[1.0], [2.0], [3.0]], dtype=L.float64),
    ),
    "int and list": (
        lambda L: (1, [0, 3]),
        lambda L: L.tensor([7.0, 8.0], dtype=L.float64),
    ),
    "ellipsis": (lambda L: Ellipsis, lambda L: 0.5),
    "broadcast value": (
        lambda L: slice(0, 2),
        lambda L: L.tensor([1.0, 2.0, 3.0, 4.0], dtype=L.float64),
    ),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_writing_without_grad_matches_torch(name: str) -> None:
    index, value = WRITES[name]

    def written(lib: Any) -> np.ndarray:
        x = lib.zeros(3, 4, dtype=lib.float64)
        x[index(lib)] = value(lib)
        return np.asarray(x.tolist())

    np.testing.assert_array_equal(written(gradgen), oracle("written", written))


@pytest.mark.parametrize("name", sorted(WRITES))
def test_writing_records_the_gradient_of_base_and_value(name: str) -> None:
    index, value = WRITES[name]

    def gradients(lib: Any) -> tuple[np.ndarray, np.ndarray | None]:
        x = lib.arange(12.0, dtype=lib.float64).reshape(3, 4).requires_grad_()
        v = value(lib)
        v = (
            v if isinstance(v, lib.Tensor) else lib.tensor(v, dtype=lib.float64)
        ).requires_grad_()
        y = x * 2.0
        y[index(lib)] = v * 3.0
        weights = lib.arange(12.0, dtype=lib.float64).reshape(3, 4) + 1
        (y * weights).sum().backward()
        return np.asarray(x.grad.tolist()), np.asarray(v.grad.tolist())

    (gx, gv), (tx, tv) = gradients(gradgen), oracle("gradients", gradients)
    np.testing.assert_array_equal(gx, tx)
    if name != "list with repeats":  # torch leaves which repeated write wins open
        np.testing.assert_array_equal(gv, tv)


def test_a_recorded_write_is_differentiable_twice() -> None:
    x = gradgen.tensor(np.linspace(-1, 1, 6), requires_grad=True)
    v = gradgen.tensor([0.5, -0.25], dtype=gradgen.float64, requires_grad=True)

    def function(x: gradgen.Tensor, v: gradgen.Tensor) -> gradgen.Tensor:
        y = x * x
        y[gradgen.tensor([4, 1])] = v**3
        y[2:4] = y[0:2].clone() * v.sum()
        return y

    assert gradcheck(function, (x, v))
    assert gradgradcheck(function, (x, v))


def test_a_write_is_an_in_place_change() -> None:
    x = gradgen.zeros(4)
    before = x._version
    x[1] = 2.0
    x[gradgen.tensor([0, 3])] = 1.0
    assert x._version == before + 2
    assert x.tolist() == [1.0, 2.0, 0.0, 1.0]
    y = gradgen.tensor([1.0, 2.0], requires_grad=True) * 1.0
    z = y * y  # saves y
    y[0] = 0.0
    assert type(y.grad_fn).__name__ == "CopySlices"  # a copy_ into the view y[0]
    y[gradgen.tensor([1])] = 0.0
    assert type(y.grad_fn).__name__ == "IndexPutBackward0"
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_a_write_through_a_view_changes_the_base() -> None:
    x = gradgen.zeros(2, 3)
    row = x[1]
    row[gradgen.tensor([0, 2])] = 7.0
    assert x.tolist() == [[0.0, 0.0, 0.0], [7.0, 0.0, 7.0]]
    assert x._version == row._version == 1


def test_numbers_and_basic_writes_take_the_tensor_dtype() -> None:
    def run(lib: Any) -> tuple[list[int], str]:
        x = lib.zeros(3, dtype=lib.int64)
        x[0] = 2.7
        x[lib.tensor([1])] = 5.9
        x[2:] = lib.tensor([3.5])
        values = x.tolist()
        with pytest.raises(RuntimeError) as error:  # index_put_ itself does not cast
            x[lib.tensor([1])] = lib.tensor([5.9])
        return values, str(error.value)

    ours, theirs = run(gradgen), oracle("values and error", run)
    assert ours[0] == theirs[0] == [2, 5, 3]
    assert ours[1] == theirs[1]


@pytest.mark.parametrize(
    "index",
    [lambda L: 0, lambda L: L.tensor([0]), lambda L: L.tensor([True, False, False])],
    ids=["basic", "tensor", "mask"],
)
def test_writing_into_a_leaf_that_requires_grad_is_refused(index: Any) -> None:
    def message(lib: Any) -> str:
        x = lib.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError) as error:
            x[index(lib)] = 1.0
        return str(error.value)

    assert message(gradgen) == oracle("message", message)
    x = gradgen.zeros(3, requires_grad=True)
    with gradgen.no_grad():
        x[index(gradgen)] = 1.0  # allowed without grad mode, as in PyTorch
    assert x.tolist()[0] == 1.0


ERRORS: dict[str, Callable[[Any, Any], Any]] = {
    "out of bounds": lambda L, x: x[L.tensor([5])],
    "negative out of bounds": lambda L, x: x[:, L.tensor([-5])],
    "mask of the wrong shape": lambda L, x: x[L.tensor([True, False])],
    "float index": lambda L, x: x[L.tensor([0.0])],
    "too many indices": lambda L, x: x[L.tensor([0]), L.tensor([0]), L.tensor([0])],
    "indices that do not broadcast": lambda L, x: x[
        L.tensor([0, 1]), L.tensor([0, 1, 2])
    ],
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_bad_reads_raise_torchs_error(name: str) -> None:
    def raised(lib: Any) -> tuple[str, str]:
        with pytest.raises((IndexError, RuntimeError)) as error:
            ERRORS[name](lib, lib.zeros(3, 4))
        return type(error.value).__name__, str(error.value).splitlines()[0]

    assert raised(gradgen) == oracle("error", raised)


def test_a_value_of_the_wrong_shape_is_refused() -> None:
    def raised(lib: Any) -> str:
        x = lib.zeros(3, 4)
        with pytest.raises(RuntimeError) as error:
            x[lib.tensor([0, 1])] = lib.ones(3)
        return str(error.value)

    assert raised(gradgen) == oracle("error", raised)


def test_index_put_requires_matching_dtypes() -> None:
    def raised(lib: Any) -> str:
        with pytest.raises(RuntimeError) as error:
            lib.zeros(3).index_put_((lib.tensor([0]),), lib.ones(1, dtype=lib.float64))
        return str(error.value)

    assert raised(gradgen) == oracle("error", raised)


def test_index_put_accumulates_repeated_indices() -> None:
    def result(lib: Any) -> list[float]:
        x = lib.zeros(3, dtype=lib.float64)
        x.index_put_(
            (lib.tensor([0, 0, 2]),),
            lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64),
            accumulate=True,
        )
        return x.tolist()

    assert result(gradgen) == oracle("result", result) == [3.0, 0.0, 3.0]


def test_writing_into_an_expanded_tensor_is_refused() -> None:
    expanded = gradgen.zeros(1, 3).expand(2, 3)
    message = "more than one element of the written-to tensor refers to a single memory location"
    with pytest.raises(RuntimeError, match=message):
        expanded[gradgen.tensor([0])] = 1.0
    with pytest.raises(RuntimeError, match=message):
        expanded[0] = 1.0

"""The cheaper backward of session 10 (engine.py, the nodes' apply_arrays, the array
twins' 0-d paths): every new path against hand math and against the tensor form, bit
for bit (gradgen.helpers.arrays.tensor_forms_only)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import engine
from gradgen.autograd.graph import saved_tensors_hooks
from gradgen.generated import functions
from gradgen.helpers import arrays
from gradgen.helpers.arrays import tensor_forms_only
from gradgen.tensor import Tensor

from engine_spies import accumulated_arrays

DTYPES = ["float16", "float32", "float64"]
# Values whose squares and products round, overflow, or are signed zeros and NaN.
SPECIAL = [0.1, -3.7, 1e-3, 0.0, -0.0, 250.0, float("inf"), float("nan")]


def leaf(value: Any, dtype: str = "float64") -> Tensor:
    return gradgen.tensor(value, dtype=getattr(gradgen, dtype), requires_grad=True)


def both_forms(run: Any) -> tuple[Any, Any]:
    """`run()` with the array forms, then with the tensor forms only."""
    got = run()
    with tensor_forms_only():
        want = run()
    return got, want


def assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


# -- W1: Q = 3 a^3 - b^2 on 0-d leaves -------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_seed_example_gives_the_hand_gradients(dtype: str) -> None:
    a, b = leaf(2.0, dtype), leaf(6.0, dtype)
    for _ in range(3):  # .grad reset each time, as the benchmark does
        a.grad = None
        b.grad = None
        (3 * a**3 - b**2).backward()
    assert a.grad is not None and b.grad is not None
    assert a.grad.dtype == a.dtype and a.grad.shape == ()
    assert a.grad.item() == 36.0  # 9 a^2
    assert b.grad.item() == -12.0  # -2 b


def test_a_second_backward_accumulates_into_the_same_0d_grad() -> None:
    a = leaf(2.0)
    (a**2).backward()
    first = a.grad
    assert first is not None and first.item() == 4.0
    (a**3).backward()
    assert a.grad is first  # added in place, as PyTorch
    assert first.item() == 16.0
    assert first._data.flags.writeable


def test_a_0d_grad_is_a_fresh_array_each_time() -> None:
    a = leaf(3.0)
    (a * 2.0).backward()
    grad = a.grad
    assert grad is not None and isinstance(grad._data, np.ndarray)
    a.grad = None
    (a * 2.0).backward()
    assert a.grad is not None and a.grad is not grad
    assert not np.shares_memory(a.grad._data, grad._data)


# -- pow_backward's and mul_tensor_backward's 0-d paths --------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("exponent", [2, 3, 2.0, 3.0, 4, 0.5, -1])
@pytest.mark.parametrize("value", SPECIAL)
def test_0d_pow_backward_equals_the_tensor_form(
    dtype: str, exponent: Any, value: float
) -> None:
    def run() -> np.ndarray:
        x = leaf(value, dtype)
        (gradgen.tensor(1.7, dtype=x.dtype) * x**exponent).backward()
        assert x.grad is not None
        return x.grad.numpy()

    with np.errstate(all="ignore"):
        got, want = both_forms(run)
    assert_same_bits(got, want)


@pytest.mark.parametrize("exponent, derivative", [(2, 2 * 1.5), (3, 3 * 1.5**2)])
def test_0d_pow_backward_by_hand(exponent: int, derivative: float) -> None:
    x = leaf(1.5)
    (x**exponent).backward()
    assert x.grad is not None and x.grad.item() == derivative


def test_0d_pow_backward_returns_a_numpy_scalar() -> None:
    x = np.asarray(1.5)
    grad = np.float64(2.0)
    for exponent in (2, 3):
        result = arrays.pow_backward(grad, x, exponent)
        assert type(result) is np.float64
        assert result == exponent * 1.5 ** (exponent - 1) * 2.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("value", SPECIAL)
def test_0d_products_equal_the_tensor_form(dtype: str, value: float) -> None:
    def run() -> tuple[np.ndarray, np.ndarray]:
        x, y = leaf(value, dtype), leaf(-1.3, dtype)
        (x * y * y).backward()
        assert x.grad is not None and y.grad is not None
        return x.grad.numpy(), y.grad.numpy()

    with np.errstate(all="ignore"):
        got, want = both_forms(run)
    for g, w in zip(got, want):
        assert_same_bits(g, w)


def test_mul_tensor_backward_takes_a_0d_array_as_its_scalar() -> None:
    grad = np.float64(0.5)
    other = np.asarray(3.0)
    result = arrays.mul_tensor_backward(grad, other, gradgen.float64)
    assert type(result) is np.float64 and result == 1.5
    vector = arrays.mul_tensor_backward(np.array([1.0, 2.0]), other, gradgen.float64)
    assert isinstance(vector, np.ndarray)
    np.testing.assert_array_equal(vector, [3.0, 6.0])


# -- apply_arrays: the formulas in the node itself -----------------------------------


def test_a_node_called_directly_runs_its_array_formulas() -> None:
    x, y = leaf([1.0, 2.0]), leaf([3.0, 5.0])
    node = (x * y).grad_fn
    assert type(node) is functions.MulBackward0
    with gradgen.no_grad():  # (grad mode on: the tensor form, recorded)
        grad_self, grad_other = node(gradgen.tensor([1.0, 10.0], dtype=gradgen.float64))
    assert grad_self.grad_fn is None
    np.testing.assert_array_equal(grad_self.numpy(), [3.0, 50.0])  # grad * other
    np.testing.assert_array_equal(grad_other.numpy(), [1.0, 20.0])  # grad * self


def test_apply_unpacks_a_hooked_saved_tensor_once() -> None:
    unpacked: list[int] = []

    def pack(tensor: Tensor) -> Tensor:
        return tensor

    def unpack(tensor: Tensor) -> Tensor:
        unpacked.append(1)
        return tensor

    x = leaf([1.0, 2.0])
    with saved_tensors_hooks(pack, unpack):
        y = x * x
    node = y.grad_fn
    assert node is not None
    with gradgen.no_grad():
        (grad,) = node(gradgen.tensor([1.0, 1.0], dtype=gradgen.float64))[:1]
    # apply unpacked self and other once each, and gave apply_arrays their arrays
    assert len(unpacked) == 2
    np.testing.assert_array_equal(grad.numpy(), [1.0, 2.0])


def test_apply_arrays_steps_aside_for_a_saved_subclass() -> None:
    class Marked(Tensor):
        pass

    x = leaf([1.0, 2.0])
    y = x * Marked(np.array([3.0, 4.0]))
    node = y.grad_fn
    assert node is not None
    assert node.apply_arrays([np.ones(2)]) is None
    y.sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])


def test_apply_arrays_reads_saved_values_from_the_node() -> None:
    x = leaf([1.0, 2.0])
    y = leaf([5.0, 7.0])
    node = gradgen.sub(x, y, alpha=2.5).grad_fn
    assert type(node) is functions.SubBackward0
    grads = node.apply_arrays([np.array([1.0, -2.0])])
    assert grads is not None
    np.testing.assert_array_equal(grads[0], [1.0, -2.0])
    np.testing.assert_array_equal(grads[1], [-2.5, 5.0])  # -grad * alpha


def test_apply_arrays_checks_saved_tensors_against_in_place_changes() -> None:
    x = leaf([1.0, 2.0])
    z = x * 1.0
    y = z * z
    z.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# -- the engine's walk and edges ------------------------------------------------------


def test_compute_dependencies_counts_every_edge() -> None:
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    h = x * w  # MulBackward0: edges to both leaves
    out = gradgen.addcmul(h, h, w, value=0.5)  # three edges: h twice, w
    task = engine.GraphTask(False)
    root = out.grad_fn
    assert root is not None and root._num_edges == 3
    engine.compute_dependencies(root, task)
    counts = {type(n).__name__: c for n, c in task.dependencies.items()}
    assert counts["MulBackward0"] == 2
    w_acc = w._get_grad_accumulator()
    x_acc = x._get_grad_accumulator()
    assert task.dependencies[w_acc] == 2  # from mul and from addcmul's third edge
    assert task.dependencies[x_acc] == 1


def test_a_node_with_three_edges_hands_each_gradient_on() -> None:
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    h = x * w
    gradgen.addcmul(h, h, w, value=0.5).sum().backward()
    # out = h + 0.5 h w, h = x w: d/dx = w (1 + w h ... ) by hand
    xv, wv = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    hv = xv * wv
    dh = 1 + 0.5 * wv  # from h itself and from the product h * w
    assert x.grad is not None and w.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), dh * wv, rtol=0, atol=0)
    np.testing.assert_allclose(w.grad.numpy(), dh * xv + 0.5 * hv, rtol=1e-15)


def test_a_node_with_more_than_two_edges_and_none_between() -> None:
    x = leaf([1.0, 2.0])
    z = leaf([4.0, 8.0])
    constant = gradgen.tensor([5.0, 6.0], dtype=gradgen.float64)
    # tensor1 needs no gradient: the middle edge is (None, 0)
    gradgen.addcmul(x, constant, z, value=2.0).sum().backward()
    assert x.grad is not None and z.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(z.grad.numpy(), [10.0, 12.0])


def test_a_gradient_of_another_dtype_is_cast_where_it_arrives() -> None:
    x = leaf([1.0, 2.0], "float32")
    y = x.to(gradgen.float64) * 2.0
    y.sum().backward()
    assert x.grad is not None and x.grad.dtype == gradgen.float32
    np.testing.assert_array_equal(x.grad.numpy(), np.array([2.0, 2.0], np.float32))


def test_the_w2_chain_gives_the_hand_gradients() -> None:
    x = leaf(np.linspace(0.1, 0.8, 8))
    c = leaf(np.linspace(0.9, 1.0, 8))
    y = x
    for _ in range(20):
        y = y * c + 0.5 - x
    y.sum().backward()
    # y_k = y_{k-1} c + 0.5 - x: dy_n/dx = c^n - sum_{k<n} c^k; dy_n/dc by recursion
    xv, cv = x.detach().numpy(), c.detach().numpy()
    value, d_x, d_c = xv.copy(), np.ones(8), np.zeros(8)
    for _ in range(20):
        d_c = d_c * cv + value
        d_x = d_x * cv - 1.0
        value = value * cv + 0.5 - xv
    assert x.grad is not None and c.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), d_x, rtol=1e-12)
    np.testing.assert_allclose(c.grad.numpy(), d_c, rtol=1e-12)


# -- _run_plain and where _run_loop takes over -----------------------------------------


def chain(x: Tensor) -> Tensor:
    return ((x * 2.0) * x).sum()  # d/dx = 4 x


def test_a_hook_in_the_middle_hands_over_and_sees_its_gradient() -> None:
    x = leaf([1.0, 3.0])
    seen: list[list[float]] = []
    h = x * 2.0
    h.register_hook(lambda g: seen.append(g.tolist()))  # type: ignore[func-returns-value]
    (h * x).sum().backward()
    assert seen == [[1.0, 3.0]]  # d/dh (h x) = x
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 12.0])


def test_a_custom_function_in_the_middle_hands_over() -> None:
    class Triple(gradgen.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: Tensor) -> Tensor:
            return t * 3.0

        @staticmethod
        def backward(ctx: Any, g: Tensor) -> Tensor:
            return g * 3.0

    x = leaf([1.0, 2.0])
    y = Triple.apply(x * x)
    (y * 2.0).sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), [12.0, 24.0])  # 2 * 3 * 2x


def test_a_subclass_gradient_hands_over_with_tensors() -> None:
    class Marked(Tensor):
        pass

    class MarkGrad(gradgen.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: Tensor) -> Tensor:
            return t * 1.0

        @staticmethod
        def backward(ctx: Any, g: Tensor) -> Tensor:
            return Marked(g._data * 5.0)

    x = leaf([1.0, 2.0])
    y = (MarkGrad.apply(x * 1.0) * 2.0).sum()
    y.backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), [10.0, 10.0])


def test_a_post_accumulate_hook_runs_once_after_the_sum() -> None:
    x = leaf([1.0, 2.0])
    seen: list[list[float]] = []
    x.register_post_accumulate_grad_hook(
        lambda t: seen.append(t.grad.tolist())  # type: ignore[union-attr,func-returns-value]
    )
    (x * x + x * 3.0).sum().backward()
    assert seen == [[5.0, 7.0]]  # 2x + 3, once every edge into x has arrived


def test_a_leaf_reached_at_once_takes_over_the_fresh_gradient() -> None:
    x = leaf(np.ones(4))
    w = gradgen.tensor(np.arange(4.0))
    with accumulated_arrays() as seen:
        (x * w).sum().backward()
    assert x.grad is not None
    assert seen == [id(x.grad._data)]  # no copy of the product
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 2.0, 3.0])


def test_two_leaves_of_one_node_each_get_their_gradient() -> None:
    x, y = leaf([2.0, 3.0]), leaf([5.0, 7.0])
    (x * y).sum().backward()
    assert x.grad is not None and y.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 7.0])
    np.testing.assert_array_equal(y.grad.numpy(), [2.0, 3.0])


def test_retain_graph_runs_twice_and_accumulates() -> None:
    x = leaf([1.0, 2.0])
    out = chain(x)
    out.backward(retain_graph=True)
    out.backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), [8.0, 16.0])
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()


def test_anomaly_mode_takes_the_general_loop() -> None:
    x = leaf([1.0, 2.0])
    with pytest.warns(UserWarning, match="Anomaly Detection"):
        with gradgen.autograd.detect_anomaly():
            chain(x).backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0])


def test_a_leaf_moved_into_the_graph_is_refused() -> None:
    x = leaf([1.0, 2.0])
    y = x * 2.0
    x._grad_fn = y.grad_fn  # as PyTorch's error for a leaf changed in place
    try:
        with pytest.raises(RuntimeError, match="moved into the graph interior"):
            y.sum().backward()
    finally:
        x._grad_fn = None


def test_compute_dependencies_prunes_below_min_topo_nr() -> None:
    x = leaf([1.0, 2.0])
    h = x * 2.0  # topological number 1 (its child, x's sink, has 0)
    out = (h * h) * 3.0
    root = out.grad_fn
    assert root is not None
    full = engine.GraphTask(False)
    engine.compute_dependencies(root, full)
    pruned = engine.GraphTask(False)
    engine.compute_dependencies(root, pruned, min_topo_nr=h.grad_fn._topological_nr + 1)  # type: ignore[union-attr]
    x_sink = x._get_grad_accumulator()
    assert full.dependencies[h.grad_fn] == 2  # type: ignore[index]
    assert full.dependencies[x_sink] == 1
    # h's node is counted (an edge leads into it) but not searched below
    assert pruned.dependencies[h.grad_fn] == 2  # type: ignore[index]
    assert x_sink not in pruned.dependencies
    (grad_h,) = gradgen.autograd.grad(out.sum(), [h])
    np.testing.assert_array_equal(grad_h.numpy(), [12.0, 24.0])  # 6 h


def test_compute_dependencies_walks_a_deep_chain() -> None:
    x = leaf(1.0)
    y = x
    for _ in range(20000):
        y = y * 1.0
    task = engine.GraphTask(False)
    engine.compute_dependencies(y.grad_fn, task)  # type: ignore[arg-type]
    assert len(task.dependencies) == 20000  # 19,999 muls below the root, and x's sink
    assert set(task.dependencies.values()) == {1}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("value", SPECIAL)
def test_0d_negated_gradients_equal_the_tensor_form(dtype: str, value: float) -> None:
    """SubBackward0 negates a numpy scalar gradient with the scalar's own `-`."""

    def run() -> tuple[np.ndarray, np.ndarray]:
        x, y = leaf(1.0, dtype), leaf(2.0, dtype)
        seed = gradgen.tensor(value, dtype=x.dtype)
        (x - y).backward(seed)
        assert x.grad is not None and y.grad is not None
        return x.grad.numpy(), y.grad.numpy()

    got, want = both_forms(run)
    for g, w in zip(got, want):
        assert_same_bits(g, w)
    assert np.signbit(got[1]) != np.signbit(got[0]) or np.isnan(value)


def test_neg_of_a_numpy_scalar_is_a_numpy_scalar() -> None:
    for scalar in (np.float16(1.5), np.float32(-0.0), np.float64(2.0)):
        result = arrays.neg(scalar)  # type: ignore[arg-type]
        assert type(result) is type(scalar)
        assert result.tobytes() == np.negative(scalar).tobytes()

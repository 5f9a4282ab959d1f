"""Issue 14, W3 and W4 (helper "lines"): the shortcuts in the array forms of the
backward formulas, in-place kernels, AccumulateGrad and no_grad give what the general
paths give, bit for bit, and stay out of the cases they must not take.

- expand of a numpy scalar (the engine's 0-d gradient) is the stride-0 read-only view
  np.broadcast_to makes;
- pow_backward skips `derivative * grad` when grad is a spread of ones (sum's seed);
- div of a spread divides the number once (mean's backward);
- mm_mat1_backward / mm_mat2_backward call np.matmul directly for real matrices;
- `into` (add_, sub_, mul_) passes `out` positionally;
- AccumulateGrad makes its reentrant mutex with the node;
- `no_grad()` has no __init__.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.graph import AccumulateGrad
from gradgen.helpers import arrays
from gradgen.helpers.arrays import tensor_forms_only
from gradgen.helpers.arrays.elementwise import _spread_of_one, pow_backward
from gradgen.helpers.arrays.linalg import mm_mat1_backward, mm_mat2_backward
from gradgen.numpy_kernels.elementwise import into
from torch_oracle import oracle

FLOATS = (np.float16, np.float32, np.float64)
# Values whose bits a shortcut could lose: signed zeros, infinities, NaN, subnormals.
SPECIAL = [0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 5e-324, -3e-310, 1e300]


def _bits(array: Any) -> bytes:
    values = np.ascontiguousarray(array)
    return values.dtype.str.encode() + repr(values.shape).encode() + values.tobytes()


def _grads_both_forms(
    function: Callable[..., Any], *values: np.ndarray, seed: Any = None
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The leaves' gradients from the array forms and from the tensor forms."""
    results = []
    for tensor_form in (False, True):
        leaves = [gradgen.tensor(v, requires_grad=True) for v in values]
        out = function(*leaves)
        if tensor_form:
            with tensor_forms_only():
                out.backward(seed)
        else:
            out.backward(seed)
        results.append([leaf.grad.numpy() for leaf in leaves])
    return results[0], results[1]


def _assert_same_bits(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert [_bits(g) for g in got] == [_bits(w) for w in want]


# -- expand of a numpy scalar --------------------------------------------------------


@pytest.mark.parametrize(
    "number",
    [
        np.float64(1.5),
        np.float32(-0.0),
        np.float16(3.0),
        np.complex128(1 - 2j),
        np.int64(-4),
        np.uint8(7),
        np.bool_(True),
        np.asarray(2.5),
    ],
)
def test_expand_of_a_numpy_scalar_is_broadcast_tos_view(number: Any) -> None:
    spread = arrays.expand(number, (3, 2))
    want = np.broadcast_to(np.asarray(number), (3, 2))
    assert spread.dtype == want.dtype and spread.shape == (3, 2)
    assert spread.strides == (0, 0) and not spread.flags.writeable
    assert _bits(spread) == _bits(want)
    assert arrays.expand(number, (0, 4)).shape == (0, 4)


def test_expand_of_a_scalar_keeps_the_general_paths_checks() -> None:
    with pytest.raises(RuntimeError, match="negative dimension -2"):
        arrays.expand(np.float64(1.0), (3, -2))
    # A 1-element array is not a number: the general path (and its broadcast rules).
    assert arrays.expand(np.ones(1), (4,)).tolist() == [1.0] * 4


def test_sum_backward_seeds_a_read_only_spread_of_the_scalar_seed() -> None:
    x = gradgen.tensor([1.0, -2.0, 3.0], requires_grad=True)
    (x * 1.0).sum().backward()
    assert x.grad is not None
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    # .grad is the leaf's own writeable array, not the read-only spread.
    grad = x.grad.numpy()
    assert grad.flags.writeable and grad.strides == (grad.itemsize,)


# -- pow_backward and a spread of ones ------------------------------------------------


def test_spread_of_one_recognises_only_a_stride_zero_read_only_view_of_one() -> None:
    assert _spread_of_one(arrays.expand(np.float64(1.0), (4,)))
    assert _spread_of_one(np.broadcast_to(np.float32(1.0), (2, 3)))
    assert not _spread_of_one(np.ones(4))  # a fresh array: writeable
    assert not _spread_of_one(arrays.expand(np.float64(2.0), (4,)))
    assert not _spread_of_one(arrays.expand(np.float64(-1.0), (4,)))
    assert not _spread_of_one(arrays.expand(np.float64(np.nan), (4,)))
    assert not _spread_of_one(arrays.expand(np.float64(1.0), (0,)))  # nothing in it
    ones = np.ones(3)
    ones.flags.writeable = False
    assert not _spread_of_one(ones[:])  # read-only, but strides are not 0


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("exponent", [2, 3, -1, 0.5, 2.0])
def test_pow_backward_with_sums_seed_equals_the_tensor_form(
    dtype: Any, exponent: Any
) -> None:
    with np.errstate(all="ignore"):
        values = np.array(SPECIAL, dtype=dtype)
        got, want = _grads_both_forms(lambda x: (x**exponent).sum(), values)
    _assert_same_bits(got, want)


def test_pow_backward_of_a_square_under_sum_is_two_x_by_hand() -> None:
    x = gradgen.tensor([1.5, -0.0, -3.0, np.inf], requires_grad=True)
    (x**2).sum().backward()
    assert x.grad is not None
    grad = x.grad.numpy()
    np.testing.assert_array_equal(grad, [3.0, -0.0, -6.0, np.inf])
    assert np.signbit(grad[1])


@pytest.mark.parametrize(
    "seed",
    [
        gradgen.tensor(3.0),  # a spread of 3: the multiply must run
        gradgen.tensor(-1.0),
        gradgen.tensor(np.nan),
    ],
)
def test_pow_backward_multiplies_by_any_other_seed(seed: Any) -> None:
    values = np.array([1.5, -2.0, 0.0, 4.0])
    got, want = _grads_both_forms(lambda x: (x**2).sum(), values, seed=seed)
    _assert_same_bits(got, want)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got[0], 2.0 * values * seed.item())


def test_pow_backward_of_a_full_gradient_of_ones_multiplies() -> None:
    # A writeable array of ones is not a spread: the general multiply (same bits).
    self = np.array([1.0, -2.0, 3.0])
    result = pow_backward(np.ones(3), self, 2)
    np.testing.assert_array_equal(result, [2.0, -4.0, 6.0])
    spread = pow_backward(arrays.expand(np.float64(1.0), (3,)), self, 2)
    assert _bits(spread) == _bits(result) and spread.flags.writeable


def test_w3s_gradients_equal_the_tensor_form_and_torch() -> None:
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(1000) for _ in range(3))
    a[:4] = [0.0, -0.0, np.inf, 1e-310]
    with np.errstate(all="ignore"):
        got, want = _grads_both_forms(lambda a, b, c: ((a * b - c) ** 2).sum(), a, b, c)
    _assert_same_bits(got, want)

    def torch_grads(torch: Any) -> list[Any]:
        leaves = [torch.tensor(v, requires_grad=True) for v in (a, b, c)]
        ((leaves[0] * leaves[1] - leaves[2]) ** 2).sum().backward()
        return [leaf.grad for leaf in leaves]

    for g, t in zip(got, oracle("w3", torch_grads)):
        np.testing.assert_array_equal(g, t)


# -- mean's backward: a spread divided once -------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3,), (64, 10), (2, 3, 7)])
def test_mean_backward_equals_the_tensor_form(dtype: Any, shape: Any) -> None:
    values = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    got, want = _grads_both_forms(lambda x: x.mean(), values)
    _assert_same_bits(got, want)
    assert got[0].flags.writeable and got[0].flags.c_contiguous


@pytest.mark.parametrize("dtype", FLOATS)
def test_w4s_loss_backward_equals_the_tensor_form(dtype: Any) -> None:
    rng = np.random.default_rng(4)
    out, target = rng.standard_normal((64, 10)), rng.standard_normal((64, 10))
    got, want = _grads_both_forms(
        lambda o, y: ((o - y) ** 2).mean(), out.astype(dtype), target.astype(dtype)
    )
    _assert_same_bits(got, want)


def test_div_of_a_spread_is_the_division_of_its_number_spread() -> None:
    for number in (np.float64(1.0), np.float32(3.0), np.float16(0.1), np.float64(-0.0)):
        for divisor in (640, 7, 0.3, -2):
            spread = arrays.expand(number, (4, 5))
            got = arrays.div(spread, divisor)
            want = np.true_divide(np.broadcast_to(number, (4, 5)), divisor)
            assert _bits(got) == _bits(want)
            assert got.strides == (0, 0) and not got.flags.writeable


def test_div_of_other_views_of_a_number_takes_the_general_path() -> None:
    number = np.float64(6.0)
    empty = arrays.expand(number, (0, 3))
    assert arrays.div(empty, 0).shape == (0, 3)  # no division by zero is made
    whole = np.frombuffer(np.float64(6.0), dtype=np.float64)  # stride 8, base a number
    got = arrays.div(whole, 4)
    assert got.tolist() == [1.5] and got.flags.writeable
    halves = np.ndarray((3,), np.float32, np.float64(6.0), 4, (0,))  # other dtype
    got = arrays.div(halves, 4)
    assert got.dtype == np.float32 and _bits(got) == _bits(np.array(halves) / 4)
    full = arrays.div(np.full((2,), 6.0), 4)  # a plain array: a fresh quotient
    assert full.tolist() == [1.5, 1.5] and full.flags.writeable


# -- mm's backward helpers ------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_mm_backward_helpers_equal_the_general_path(dtype: Any) -> None:
    rng = np.random.default_rng(0)
    grad = rng.standard_normal((4, 3)).astype(dtype)
    mat1 = rng.standard_normal((4, 5)).astype(dtype)
    mat2 = rng.standard_normal((5, 3)).astype(dtype)
    got1 = mm_mat1_backward(grad, mat2, (4, 5), (5, 1), None, 1)
    got2 = mm_mat2_backward(grad, mat1, (5, 3), (3, 1), None, 1)
    assert _bits(got1) == _bits(arrays.mm(grad, arrays.t(mat2)))
    assert _bits(got2) == _bits(arrays.mm(arrays.t(mat1), grad))


def test_mm_backward_helpers_keep_conj_and_alpha() -> None:
    grad = np.array([[1 + 1j, 2.0]])
    mat2 = np.array([[1j, 1.0], [2.0, -1j]])
    got = mm_mat1_backward(grad, mat2, (1, 2), (2, 1), None, 1)
    np.testing.assert_array_equal(got, grad @ mat2.conj().T)
    real = np.array([[1.0, 2.0]])
    scaled = mm_mat1_backward(real, np.eye(2), (1, 2), (2, 1), None, 3.0)
    np.testing.assert_array_equal(scaled, [[3.0, 6.0]])
    with pytest.raises(RuntimeError, match="same dtype"):  # the general path's check
        mm_mat2_backward(
            real.astype(np.float32), np.ones((1, 2)), (2, 2), (2, 1), None, 1
        )


def test_linear_layers_gradients_equal_the_tensor_form() -> None:
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal((6, 5)), rng.standard_normal((5, 4)), rng.random(4)
    got, want = _grads_both_forms(
        lambda x, w, b: gradgen.relu(gradgen.matmul(x, w) + b).sum(), x, w, b
    )
    _assert_same_bits(got, want)

    def torch_grads(torch: Any) -> list[Any]:
        leaves = [torch.tensor(v, requires_grad=True) for v in (x, w, b)]
        torch.relu(leaves[0] @ leaves[1] + leaves[2]).sum().backward()
        return [leaf.grad for leaf in leaves]

    for g, t in zip(got, oracle("linear", torch_grads)):
        np.testing.assert_allclose(g, t, rtol=1e-12)


# -- into: out positional ------------------------------------------------------------


def test_into_computes_in_place_or_returns_what_copy_into_must_refuse() -> None:
    out = np.array([1.0, 2.0])
    assert into(out, np.add, out, np.array([0.5, 0.5])) is out
    assert out.tolist() == [1.5, 2.5]
    ints = np.array([1, 2])
    fresh = into(ints, np.add, ints, np.array([0.5, 0.5]))  # float into int: refused
    assert (
        fresh is not ints and fresh.tolist() == [1.5, 2.5] and ints.tolist() == [1, 2]
    )
    wide = into(out, np.multiply, out, np.ones((2, 2)))  # shape grows: refused
    assert wide.shape == (2, 2) and out.tolist() == [1.5, 2.5]


def test_in_place_operators_keep_pytorchs_errors() -> None:
    ints = gradgen.tensor([1, 2])
    with pytest.raises(RuntimeError) as caught:
        ints.add_(gradgen.tensor([0.5, 0.5]))
    want = oracle(
        "cast",
        lambda torch: _error(
            lambda: torch.tensor([1, 2]).add_(torch.tensor([0.5, 0.5]))
        ),
    )
    assert str(caught.value) == str(want)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        gradgen.ones(2).mul_(gradgen.ones(2, 2))
    x = gradgen.tensor([4.0, 6.0])
    x.sub_(gradgen.tensor([1.0, 2.0]), alpha=2)
    assert x.tolist() == [2.0, 2.0]


def _error(function: Callable[[], Any]) -> BaseException:
    try:
        function()
    except Exception as error:  # noqa: BLE001  (the oracle records the error)
        return error
    raise AssertionError("no error")


# -- AccumulateGrad's mutex and no_grad ------------------------------------------------


def test_accumulate_grad_has_its_reentrant_mutex_from_the_start() -> None:
    x = gradgen.tensor([1.0], requires_grad=True)
    node = AccumulateGrad(x)
    mutex = node._mutex
    assert mutex is not None and node._lock() is mutex
    with mutex:
        with node._lock():  # reentrant: a post-accumulate hook may run backward
            pass
    assert AccumulateGrad(x)._mutex is not mutex  # one per node


def test_a_post_accumulate_hook_may_run_another_backward_under_the_mutex() -> None:
    x = gradgen.tensor([2.0], requires_grad=True)
    seen: list[float] = []

    def hook(leaf: Any) -> None:
        seen.append(leaf.grad.item())
        if len(seen) == 1:
            with gradgen.enable_grad():  # reaches this leaf again: same thread
                (leaf * 5.0).sum().backward()

    x.register_post_accumulate_grad_hook(hook)
    (x * 3.0).sum().backward()
    assert seen == [3.0, 8.0] and x.grad is not None and x.grad.item() == 8.0


def test_backward_from_threads_accumulates_every_gradient() -> None:
    x = gradgen.tensor(np.zeros(1000), requires_grad=True)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                (x * 1.0).sum().backward()
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and x.grad is not None
    assert x.grad.numpy().tolist() == [80.0] * 1000


def test_no_grad_objects_nest_restore_and_decorate() -> None:
    context = gradgen.no_grad()
    with context:
        with context:  # the same object nested: a saved mode per entry
            assert not gradgen.is_grad_enabled()
            with gradgen.enable_grad():
                assert gradgen.is_grad_enabled()
        assert not gradgen.is_grad_enabled()
    assert gradgen.is_grad_enabled()
    with pytest.raises(ValueError):
        with gradgen.no_grad():
            raise ValueError
    assert gradgen.is_grad_enabled()

    @gradgen.no_grad
    def bare() -> bool:
        return gradgen.is_grad_enabled()

    @gradgen.no_grad()
    def called() -> bool:
        return gradgen.is_grad_enabled()

    assert bare() is False and called() is False and gradgen.is_grad_enabled()
    assert isinstance(gradgen.no_grad(), gradgen.no_grad)


# -- plain SGD's loop ----------------------------------------------------------------


def _sgd_params(dtype: Any, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    params = []
    for shape in ((3, 4), (4,), ()):
        values = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        values = values if np.dtype(dtype).kind == "c" else values.real
        param = gradgen.tensor(np.asarray(values, dtype=dtype), requires_grad=True)
        param.grad = gradgen.tensor(np.asarray(values * 0.37 - 0.1, dtype=dtype))
        params.append(param)
    params[1].grad = None  # a parameter without a gradient is left alone
    return params


@pytest.mark.parametrize(
    "dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128]
)
@pytest.mark.parametrize("lr", [0.01, 3, gradgen.tensor(0.25)])
def test_plain_sgd_equals_the_general_update(dtype: Any, lr: Any) -> None:
    fast, general = _sgd_params(dtype, 0), _sgd_params(dtype, 0)
    before = [p._counter().version for p in fast]
    optimizer = gradgen.optim.SGD(fast, lr=lr)
    reference = gradgen.optim.SGD(general, lr=lr)
    for _ in range(3):
        optimizer.step()
        for group in reference.param_groups:  # the base class's per-parameter loop
            gradgen.optim.Optimizer._step_group(reference, group)
    assert [_bits(p.detach().numpy()) for p in fast] == [
        _bits(p.detach().numpy()) for p in general
    ]
    assert [p._counter().version - v for p, v in zip(fast, before)] == [3, 0, 3]
    assert not optimizer.state  # plain SGD keeps no state, as PyTorch's


def test_plain_sgd_by_hand_and_the_general_groups() -> None:
    w = gradgen.tensor([1.0, -2.0], requires_grad=True)
    w.grad = gradgen.tensor([0.5, 4.0])
    gradgen.optim.SGD([w], lr=0.5).step()
    assert w.tolist() == [0.75, -4.0]
    v = gradgen.tensor([1.0, -2.0], requires_grad=True)
    v.grad = gradgen.tensor([0.5, 4.0])
    groups = [
        {"params": [v], "momentum": 0.9},  # state: a momentum buffer
    ]
    optimizer = gradgen.optim.SGD(groups, lr=0.5, weight_decay=0.0)
    optimizer.step()
    assert v.tolist() == [0.75, -4.0] and v in optimizer.state
    u = gradgen.tensor([1.0], requires_grad=True)
    u.grad = gradgen.tensor([2.0])
    gradgen.optim.SGD([u], lr=0.5, maximize=True).step()
    assert u.tolist() == [2.0]
    z = gradgen.tensor([1.0], requires_grad=True)
    z.grad = gradgen.tensor([2.0])
    gradgen.optim.SGD([z], lr=0.5, weight_decay=1.0).step()
    assert z.tolist() == [-0.5]  # grad + 1.0 * z = 3.0


def test_plain_sgd_runs_the_step_hooks() -> None:
    w = gradgen.tensor([1.0], requires_grad=True)
    w.grad = gradgen.tensor([1.0])
    optimizer = gradgen.optim.SGD([w], lr=1.0)
    seen: list[str] = []
    optimizer.register_step_pre_hook(lambda *_: seen.append("pre"))
    optimizer.register_step_post_hook(lambda *_: seen.append("post"))
    optimizer.step()
    assert seen == ["pre", "post"] and w.tolist() == [0.0]

"""The recorded forward op's fast paths of session 10 ("fwd"):

- the bindings read wrap_number's float cache inline (`x * 2.0` skips tensor_argument);
- the inline kernels call numpy's ufuncs with `out=ARRAY_OUT`, so a 0-d result is a
  0-d array without `np.asarray` (and numpy < 2.3's scalar is still converted);
- `sub.Tensor` evaluates its helper's arithmetic inline for int, float and complex
  operands of one dtype; bool tensors still reach the kernel and PyTorch's error.

Values are checked against hand math or PyTorch (recorded goldens), and each step-aside
case against the kernel's answer.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradgen
from gradgen.tensor import WRAPPED_FLOATS
from gradgen.arguments import tensor_argument
from gradgen.generated import variable_type
from gradgen.variable_type_utils import ARRAY_OUT

from torch_oracle import oracle


def _leaf(values: object, dtype: gradgen.dtype = gradgen.float64) -> gradgen.Tensor:
    return gradgen.tensor(values, dtype=dtype, requires_grad=True)


def _error(call: object) -> tuple[str, str]:
    try:
        call()  # type: ignore[operator]
    except Exception as error:  # the class name and message, as torch_oracle encodes
        return type(error).__name__, str(error)
    raise AssertionError("no error")


# -- the bindings' wrapped-float cache -------------------------------------------------


def test_a_cached_float_is_the_same_wrapped_number_in_every_binding() -> None:
    x = _leaf([1.0, 2.0])
    first = tensor_argument(1.25, "mul", "other", 1, True)
    assert WRAPPED_FLOATS[1.25] is first
    assert first._is_wrapped_number and first.dtype is gradgen.float64
    y = x * 1.25
    assert y.grad_fn is not None and y.grad_fn.other_ is first  # type: ignore[attr-defined]
    z = gradgen.mul(x, 1.25)
    assert z.grad_fn.other_ is first  # type: ignore[union-attr]
    assert y.tolist() == z.tolist() == [1.25, 2.5]


@pytest.mark.parametrize("number", [0.0, -0.0, float("nan"), 3, True, 2.5j])
def test_numbers_the_float_cache_does_not_hold_take_tensor_argument(
    number: object,
) -> None:
    # 0.0 and -0.0 (one hash, two signs) and nan are never cached; an int, a bool and
    # a complex are not floats: each keeps its own wrapped dtype.
    x = _leaf([1.5, -2.0])
    y = x * number
    expected = np.array([1.5, -2.0]) * number
    np.testing.assert_array_equal(y._data, expected)
    assert y.dtype is (gradgen.complex128 if isinstance(number, complex) else x.dtype)
    assert all(type(key) is float for key in WRAPPED_FLOATS)
    if isinstance(number, float) and number == 0.0:
        assert str(y.tolist()) == str(expected.tolist())  # the sign of -0.0 kept


def test_a_float_subclass_and_a_numpy_float_are_not_the_cached_float() -> None:
    class MyFloat(float):
        pass

    x = _leaf(2.0, gradgen.float32)
    for number in (MyFloat(0.5), np.float64(0.5)):
        y = x * number
        assert y.item() == 1.0
    # a numpy float64 is a strongly typed scalar in numpy, but a wrapped number here,
    # as in PyTorch: float32 stays float32
    assert (x * np.float64(0.5)).dtype is gradgen.float32
    assert (x * MyFloat(0.5)).dtype is gradgen.float32


def test_a_wrong_argument_is_still_pytorchs_type_error() -> None:
    x = _leaf([1.0])
    expected = oracle(
        "fwd_s10.mul_str",
        lambda torch: _error(lambda: torch.ones(1).mul("a")),
    )
    assert _error(lambda: x.mul("a")) == tuple(expected)


# -- 0-d results as 0-d arrays -----------------------------------------------------------


@pytest.mark.parametrize("dtype", [gradgen.float64, gradgen.float32, gradgen.int64])
def test_zero_dim_results_are_arrays_of_the_dtype(dtype: gradgen.dtype) -> None:
    a = gradgen.tensor(7, dtype=dtype)
    b = gradgen.tensor(2, dtype=dtype)
    if dtype.is_floating_point:
        a.requires_grad_()
    for result, value in ((a * b, 14), (a + b, 9), (a - b, 5)):
        assert type(result._data) is np.ndarray and result._data.shape == ()
        assert result.dtype is dtype and result.item() == value


def test_a_zero_dim_chain_matches_hand_math_and_its_gradient() -> None:
    x = _leaf(1.0)
    y = x
    for _ in range(50):
        y = y * 1.0001
    expected = 1.0
    for _ in range(50):
        expected = expected * 1.0001
    assert y.item() == expected and type(y._data) is np.ndarray
    y.backward()
    assert x.grad is not None and x.grad.item() == pytest.approx(1.0001**50, rel=1e-14)


def test_numpy_before_2_3_returns_a_scalar_that_the_fast_path_converts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # numpy < 2.3 has no `out=...`: ARRAY_OUT is None, numpy returns a 0-d result as a
    # scalar, and the fast path wraps it as before.
    monkeypatch.setattr(variable_type, "ARRAY_OUT", None)
    x = _leaf(3.0)
    for result, value in ((x * 2.0, 6.0), (x + 0.5, 3.5), (x - x, 0.0)):
        assert type(result._data) is np.ndarray and result._data.shape == ()
        assert result.item() == value and result.grad_fn is not None
    (x * x).backward()
    assert x.grad is not None and x.grad.item() == 6.0


def test_array_out_follows_the_numpy_version() -> None:
    major, minor = (int(part) for part in np.__version__.split(".")[:2])
    assert (ARRAY_OUT is ...) == ((major, minor) >= (2, 3))


# -- sub.Tensor inline ----------------------------------------------------------------


def test_sub_is_inlined_only_for_int_float_and_complex() -> None:
    x = _leaf([1.0, 2.0])
    assert 'dtype_0.kind in "iufc"' in _source("fast_sub_Tensor")
    assert 'dtype_0.kind in "iufc"' not in _source("fast_mul_Tensor")
    y = x - gradgen.tensor([0.5, 4.0], dtype=gradgen.float64)
    assert y.tolist() == [0.5, -2.0]
    assert type(y.grad_fn).__name__ == "SubBackward0"


def _source(name: str) -> str:
    import inspect

    return inspect.getsource(getattr(variable_type, name))


_SUB_CASES = [
    (dtype, alpha)
    for dtype in (gradgen.float64, gradgen.float32, gradgen.complex128)
    for alpha in (1, 2, -0.5)
] + [(dtype, alpha) for dtype in (gradgen.int64, gradgen.int32) for alpha in (1, 2)]


@pytest.mark.parametrize(("dtype", "alpha"), _SUB_CASES)
def test_sub_values_and_gradients_with_alpha(
    dtype: gradgen.dtype, alpha: float
) -> None:
    a_values = np.array([3.0, -1.5, 2.25]).astype(dtype.numpy)
    b_values = np.array([0.5, 2.0, -4.0]).astype(dtype.numpy)
    grads = dtype.is_floating_point
    a = gradgen.tensor(a_values, dtype=dtype, requires_grad=grads)
    b = gradgen.tensor(b_values, dtype=dtype, requires_grad=grads)
    result = gradgen.sub(a, b, alpha=alpha)
    assert result.dtype is dtype
    np.testing.assert_array_equal(
        result._data, (a_values - alpha * b_values).astype(dtype.numpy)
    )
    if grads:
        result.sum().backward()
        assert a.grad is not None and b.grad is not None
        assert a.grad.tolist() == [1.0] * 3
        assert b.grad.tolist() == [-alpha] * 3


def test_sub_of_bool_tensors_is_still_pytorchs_error() -> None:
    flags = gradgen.tensor([True, False])
    expected = oracle(
        "fwd_s10.sub_bool",
        lambda torch: _error(
            lambda: torch.tensor([True, False]) - torch.tensor([True])
        ),
    )
    got = _error(lambda: flags - gradgen.tensor([True]))
    assert got == tuple(expected)


def test_sub_steps_aside_for_promotion_broadcast_errors_and_two_numbers() -> None:
    x = _leaf([1.0, 2.0], gradgen.float32)
    wide = x - gradgen.tensor([0.5, 0.25], dtype=gradgen.float64)  # promotion: kernel
    assert wide.dtype is gradgen.float64 and wide.tolist() == [0.5, 1.75]
    assert (x - 0.5).dtype is gradgen.float32  # a wrapped float64 number: the kernel
    expected = oracle(
        "fwd_s10.sub_broadcast",
        lambda torch: _error(lambda: torch.ones(2, requires_grad=True) - torch.ones(3)),
    )
    got = _error(lambda: x - gradgen.ones(3))
    assert got == tuple(expected)
    ints = gradgen.tensor([5, 7]) - gradgen.tensor([2, 9])
    assert ints.dtype is gradgen.int64 and ints.tolist() == [3, -2]


def test_sub_keeps_going_through_the_dispatcher_under_the_profiler_and_forward_ad() -> (
    None
):
    import gradgen.autograd.forward_ad as fwAD

    x = _leaf([1.0, 2.0])
    y = _leaf([0.5, 0.5])
    with gradgen.autograd.profiler.profile() as prof:
        x - y
    assert any("sub" in event.name for event in prof.function_events)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x.detach(), gradgen.tensor([1.0, 1.0]))
        out = dual - y.detach()
        assert fwAD.unpack_dual(out).tangent.tolist() == [1.0, 1.0]


# -- a tensor and a Python number inline (pow.Tensor_Scalar, add/sub/mul.Scalar) --------


def test_the_scalar_inline_kernels_and_their_guard() -> None:
    for name in ("fast_pow_Tensor_Scalar", "fast_mul_Scalar", "fast_add_Scalar"):
        source = _source(name)
        assert "array_0 = self._data" in source
        assert 'dtype_0.kind in "fc"' in source
    assert "else array_0**exponent" in _source("fast_pow_Tensor_Scalar")


@pytest.mark.parametrize("exponent", [3, 2, 0.5, -1, 2.5, 0])
@pytest.mark.parametrize("dtype", [gradgen.float64, gradgen.float32])
def test_pow_of_a_float_tensor_matches_pytorch_and_its_gradient(
    exponent: float, dtype: gradgen.dtype
) -> None:
    values = [0.5, 1.5, 4.0]
    expected = oracle(
        f"fwd_s10.pow_{exponent}_{dtype.name}",
        lambda torch: _pow_and_grad(
            torch,
            torch.tensor(values, dtype=getattr(torch, dtype.name), requires_grad=True),
            exponent,
        ),
    )
    x = _leaf(values, dtype)
    got = _pow_and_grad(gradgen, x, exponent)
    assert got[0].dtype == expected[0].dtype == dtype.numpy
    np.testing.assert_allclose(
        got[0], expected[0], rtol=1e-6 if dtype is gradgen.float32 else 1e-15
    )
    np.testing.assert_allclose(
        got[1], expected[1], rtol=1e-6 if dtype is gradgen.float32 else 1e-14
    )


def _pow_and_grad(
    lib: object, x: object, exponent: float
) -> tuple[np.ndarray, np.ndarray]:
    y = x**exponent  # type: ignore[operator]
    y.sum().backward()
    return (
        np.asarray(y.detach().numpy()),
        np.asarray(x.grad.numpy()),  # type: ignore[attr-defined]
    )


def test_zero_dim_pow_is_the_kernels_value_and_an_array() -> None:
    a = _leaf(1.5)
    cube = a**3
    assert type(cube._data) is np.ndarray and cube._data.shape == ()
    assert cube.item() == np.asarray(1.5) ** 3
    (3 * cube).backward()
    assert a.grad is not None and a.grad.item() == 9 * 1.5**2


def test_pow_steps_aside_where_the_dtype_or_the_check_matters() -> None:
    ints = gradgen.tensor([2, 3])
    assert (ints**2).dtype is gradgen.int64 and (ints**2).tolist() == [4, 9]
    assert (ints**0.5).dtype is gradgen.float32  # the default float dtype: the kernel
    expected = oracle(
        "fwd_s10.int_negative_power",
        lambda torch: _error(lambda: torch.tensor([2, 3]) ** -1),
    )
    assert _error(lambda: ints**-1) == tuple(expected)
    x = _leaf([1.0, 4.0], gradgen.float32)
    assert (x**2.5j).dtype is gradgen.complex64  # a complex exponent: the kernel
    assert (x ** np.float64(2.0)).dtype is gradgen.float32  # a numpy scalar: the kernel
    assert (x**True).tolist() == [1.0, 4.0]  # a bool exponent: the kernel
    assert (x * 2).dtype is gradgen.float32 and gradgen.mul(x, 2).tolist() == [
        2.0,
        8.0,
    ]


def test_scalar_add_and_sub_with_alpha_match_hand_math() -> None:
    from gradgen.generated import operators

    x = _leaf([1.0, -2.0])
    added = operators.add_Scalar.fast(x, 3, 2)
    subtracted = operators.sub_Scalar.fast(x, 0.5, 4)
    multiplied = operators.mul_Scalar.fast(x, -1.5)
    assert added.tolist() == [7.0, 4.0]
    assert subtracted.tolist() == [-1.0, -4.0]
    assert multiplied.tolist() == [-1.5, 3.0]
    (added.sum() + subtracted.sum() + multiplied.sum()).backward()
    assert x.grad is not None and x.grad.tolist() == [0.5, 0.5]


# -- array_tensor: Tensor(data) without __init__'s call --------------------------------


def test_array_tensor_sets_every_slot_as_the_constructor_does() -> None:
    from gradgen.tensor import Tensor, array_tensor

    data = np.arange(3.0)
    made, built = array_tensor(data), Tensor(data)
    assert type(made) is Tensor
    for slot in Tensor.__slots__:
        if slot == "__weakref__":
            continue
        # (a leaf's `_accumulator_mutex` stays unset until its first AccumulateGrad)
        assert getattr(made, slot, None) is getattr(built, slot, None) or (
            getattr(made, slot) == getattr(built, slot)
        ), slot
    assert made._data is data and not made.requires_grad and made.is_leaf


def test_cached_ints_floats_and_bools_never_meet() -> None:
    from gradgen.tensor import WRAPPED_INTS

    ints = gradgen.tensor([1, 2])
    for _ in range(2):  # the second time from the caches
        assert (ints * 1).dtype is gradgen.int64
        assert (ints * 1.0).dtype is gradgen.float32  # the default float dtype
        assert (ints * True).dtype is gradgen.int64
        assert (gradgen.tensor([True, False]) * True).dtype is gradgen.bool
        assert (gradgen.tensor([True, False]) * 1).dtype is gradgen.int64
    assert tensor_argument(1, "mul", "other", 1, True) is WRAPPED_INTS[1]
    assert tensor_argument(1, "mul", "other", 1, True).dtype is gradgen.int64
    assert tensor_argument(1.0, "mul", "other", 1, True).dtype is gradgen.float64
    assert tensor_argument(True, "mul", "other", 1, True).dtype is gradgen.bool
    assert all(type(key) is int for key in WRAPPED_INTS)
    x = _leaf(2.0)
    y = 3 * x**2
    y.backward()
    assert y.item() == 12.0 and x.grad is not None and x.grad.item() == 12.0


# -- a wrapped number cast to the tensor's dtype inline (`3 * x`, `x_f32 * 0.1`) -------


_WRAPPED_CASES = [
    ("float32", 0.1),
    ("float32", 3),
    ("float32", True),
    ("float64", 7),
    ("float16", 0.1),
    ("complex64", 0.1),
    ("complex64", 3),
]


@pytest.mark.parametrize(("dtype_name", "number"), _WRAPPED_CASES)
def test_a_wrapped_number_takes_the_tensors_dtype_as_in_pytorch(
    dtype_name: str, number: object
) -> None:
    values = [0.3, -1.7, 2.5]
    expected = oracle(
        f"fwd_s10.wrapped_{dtype_name}_{number!r}",
        lambda torch: _wrapped_results(
            torch, torch.tensor(values, dtype=getattr(torch, dtype_name)), number
        ),
    )
    got = _wrapped_results(
        gradgen, gradgen.tensor(values, dtype=getattr(gradgen, dtype_name)), number
    )
    for mine, theirs in zip(got, expected):
        assert mine.dtype == theirs.dtype
        # float16 and complex: PyTorch computes some of these in a wider type and rounds
        np.testing.assert_allclose(
            mine, theirs, rtol=1e-3 if dtype_name == "float16" else 1e-6
        )


def _wrapped_results(lib: object, x: object, number: object) -> list[np.ndarray]:
    results = [number * x, x * number, x + number, number + x]  # type: ignore[operator]
    if not isinstance(number, bool):  # PyTorch refuses `x - True` (gradgen does not)
        results.append(x - number)  # type: ignore[operator]
    return [np.asarray(r.numpy()) for r in results]


def test_the_inline_cast_gives_the_kernels_bits() -> None:
    # the kernel's promotion casts the wrapped number with astype: so does the fast path
    from gradgen.generated import operators

    # (float16 and 70000: inf, where PyTorch computes 0.3 * 70000 in float32 first)
    for dtype in (gradgen.float32, gradgen.float16, gradgen.complex64):
        x = gradgen.tensor([0.3, -1.7, 2.5], dtype=dtype, requires_grad=True)
        for number in (0.1, 3, True, 1e30, 70000):
            wrapped = tensor_argument(number, "mul", "other", 1, True)
            for first, second in ((x, wrapped), (wrapped, x)):
                fast = operators.mul_Tensor.fast(first, second)
                slow = operators.mul_Tensor.call(first, second)
                assert fast.dtype is slow.dtype is dtype
                np.testing.assert_array_equal(fast._data, slow._data)
                assert fast.grad_fn is not None and type(fast._data) is np.ndarray


def test_the_cast_with_grad_and_its_step_asides() -> None:
    a = _leaf(1.5)
    q = 3 * a**3 - a**2
    q.backward()
    assert q.item() == 3 * 1.5**3 - 1.5**2
    assert a.grad is not None and a.grad.item() == 9 * 1.5**2 - 2 * 1.5
    x = _leaf([1.0, 2.0], gradgen.float32)
    y = 2 * x + 0.5
    assert y.dtype is gradgen.float32 and y.tolist() == [2.5, 4.5]
    y.sum().backward()
    assert x.grad is not None and x.grad.dtype is gradgen.float32
    assert x.grad.tolist() == [2.0, 2.0]
    ints = gradgen.tensor([1, 2])
    assert (ints * 2.5).dtype is gradgen.float32  # a float into ints: the kernel
    assert (ints * 2.5).tolist() == [2.5, 5.0]
    assert (x * 2j).dtype is gradgen.complex64  # a complex into floats: the kernel
    assert (gradgen.tensor(2.0) * gradgen.tensor(3)).dtype is gradgen.float32

"""W1's forward, session 11 ("w1f"):

- `x ** n` with a Python int n that np.power takes: the exponent goes in as the 0-d
  array numpy makes of it in the tensor's dtype, made once
  (variable_type_utils.INT_OPERANDS), so the same number into the same loop;
- a wrapped number that meets a float or complex tensor in a fast path's inline kernel
  (`3 * x`) is cast to the tensor's dtype once per dtype (tensor.NumberCasts), not on
  every call;
- Tensor.__pow__ is a generated fused dunder (variable_type.dunder_pow_Tensor_Scalar):
  a Python int or float straight into pow.Tensor_Scalar's fast path, a tensor to
  pow.Tensor_Tensor's, other numbers through the fast path too, anything else to the
  method (and NotImplemented where it refuses, as PyTorch);
- the fast paths call Tensor._new_grad_accumulator when a leaf has no AccumulateGrad
  alive.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.generated import operators, variable_type
from gradgen.tensor import WRAPPED_INTS, NumberCasts, wrap_number
from gradgen.variable_type_utils import INT_OPERANDS
from torch_oracle import oracle

FLOATING = ["float16", "float32", "float64", "complex64", "complex128"]


def _data(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(11)
    values = rng.uniform(0.5, 2.0, shape)
    if dtype.startswith("complex"):
        values = values + 1j * rng.uniform(-1.0, 1.0, shape)
    return np.asarray(values, dtype=dtype)


def _leaf(values: Any, dtype: str = "float64") -> gradgen.Tensor:
    return gradgen.tensor(
        np.asarray(values, dtype=dtype), requires_grad=True
    )  # a fresh leaf


def _error(call: Callable[[], Any]) -> tuple[str, str]:
    try:
        call()
    except Exception as error:  # the class name and message, as torch_oracle encodes
        return type(error).__name__, str(error)
    raise AssertionError("no error")


# -- x ** n: the exponent as numpy's operand, made once ---------------------------------


@pytest.mark.parametrize("dtype", FLOATING)
@pytest.mark.parametrize("exponent", [-5, -2, 3, 4, 7, 15, 2**24 + 1, 2**53 + 1])
@pytest.mark.parametrize("shape", [(), (4,)])
def test_int_pow_keeps_numpys_bits_in_the_tensors_dtype(
    dtype: str, exponent: int, shape: tuple[int, ...]
) -> None:
    data = _data(dtype, shape)
    leaf = gradgen.tensor(data, requires_grad=True)
    with np.errstate(all="ignore"):
        expected = np.asarray(data**exponent)  # numpy's own `**`
    with warnings.catch_warnings(record=True) as caught:
        result = leaf**exponent  # silent, as before (and as PyTorch)
    assert not caught
    assert type(result._data) is np.ndarray and result._data.shape == shape
    assert result._data.dtype == data.dtype == expected.dtype
    assert result._data.tobytes() == expected.tobytes()
    assert result.grad_fn is not None and result.grad_fn.name() == "PowBackward0"


def test_int_pow_alternating_dtypes_never_takes_another_dtypes_operand() -> None:
    leaves = {d: gradgen.tensor(_data(d, (3,)), requires_grad=True) for d in FLOATING}
    for _ in range(3):
        for dtype, leaf in leaves.items():
            result = leaf**3
            assert result._data.dtype == np.dtype(dtype)
            assert result._data.tobytes() == (leaf._data**3).tobytes()


def test_int_operands_are_exact_read_only_arrays_of_the_dtype() -> None:
    f32, f64, c64 = np.dtype("float32"), np.dtype("float64"), np.dtype("complex64")
    three_32, three_64, three_c = INT_OPERANDS[3, f32], INT_OPERANDS[3, f64], None
    three_c = INT_OPERANDS[3, c64]
    for operand, dtype in ((three_32, f32), (three_64, f64), (three_c, c64)):
        assert type(operand) is np.ndarray and operand.shape == ()
        assert operand.dtype == dtype and operand.item() == 3
        assert not operand.flags.writeable
    assert INT_OPERANDS[3, f32] is three_32  # made once
    assert INT_OPERANDS[-7, f64].item() == -7.0
    # a number the dtype does not hold exactly stays the int, for numpy to convert
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for value, dtype in (
            (2**24 + 1, f32),
            (2**53 + 1, f64),
            (70000, np.dtype("float16")),  # inf in float16
            (10**400, f64),  # no float64 at all
        ):
            kept = INT_OPERANDS[value, dtype]
            assert type(kept) is int and kept == value


def test_int_operands_stay_bounded() -> None:
    f64 = np.dtype("float64")
    for value in range(1000, 1600):
        assert INT_OPERANDS[value, f64].item() == value
    assert len(INT_OPERANDS) <= 256


def test_an_exponent_too_large_for_the_dtype_is_numpys_as_before() -> None:
    x = _leaf(2.0)
    with pytest.raises(OverflowError):
        np.power(x._data, 10**400)  # numpy's refusal...
    with pytest.raises(OverflowError):
        x ** (10**400)  # ...is the operator's, as it was before the cache


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [-3, 3, 5])
def test_int_pow_values_and_gradients_match_pytorch(dtype: str, exponent: int) -> None:
    values = [0.5, 1.25, -2.0]
    x = _leaf(values, dtype)
    y = x**exponent
    y.sum().backward()
    expected = oracle(
        "s11.int_pow",
        lambda torch: _torch_pow(torch, values, dtype, exponent),
    )
    assert str(y.dtype) == expected["dtype"]
    tolerance = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(y._data, expected["value"], rtol=tolerance)
    assert x.grad is not None
    np.testing.assert_allclose(x.grad._data, expected["grad"], rtol=tolerance)


def _torch_pow(torch: Any, values: list[float], dtype: str, exponent: int) -> Any:
    x = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True)
    y = x**exponent
    y.sum().backward()
    return {
        "dtype": str(y.dtype).replace("torch.", "gradgen."),
        "value": y.detach().numpy(),
        "grad": x.grad.numpy(),
    }


# -- wrapped numbers: their casts made once per dtype ------------------------------------


def test_a_wrapped_numbers_casts_are_per_dtype_and_read_only() -> None:
    wrapped = wrap_number(3)
    assert WRAPPED_INTS[3] is wrapped and isinstance(wrapped._number_casts, NumberCasts)
    assert wrapped._number_casts.number is wrapped._data
    leaves = {d: gradgen.tensor(_data(d, (2,)), requires_grad=True) for d in FLOATING}
    for _ in range(2):  # the second time from the casts
        for dtype, leaf in leaves.items():
            for result in (3 * leaf, leaf * 3, leaf + 3, 3 + leaf, leaf - 3):
                assert result._data.dtype == np.dtype(dtype), dtype
    for dtype in FLOATING:
        cast = wrapped._number_casts[np.dtype(dtype)]
        assert cast.dtype == np.dtype(dtype) and cast.shape == () and cast.item() == 3
        assert not cast.flags.writeable
        assert wrapped._number_casts[np.dtype(dtype)] is cast
    assert wrapped._data.dtype == np.dtype("int64")  # the number itself unchanged


def test_a_wrapped_number_has_no_cast_where_promotion_is_the_kernels() -> None:
    # an integer or bool tensor, or a number of a higher category than the tensor's
    # (a complex number and a float tensor): None, and the kernel promotes
    for number, dtype in (
        (3, "int32"),
        (3, "int64"),
        (True, "bool"),
        (0.5, "int16"),
        (2 + 1j, "float32"),
        (2 + 1j, "float64"),
    ):
        assert wrap_number(number)._number_casts[np.dtype(dtype)] is None
    values = {"int32": [1, 2], "bool": [True, False], "float32": [0.5, 1.5]}
    for dtype, data in values.items():
        tensor = gradgen.tensor(np.asarray(data, dtype=dtype))
        for number, expected in ((3, None), (2 + 1j, "complex64")):
            result = tensor * number
            if expected is None:
                expected = {"int32": "int32", "bool": "int64"}.get(dtype, dtype)
            assert result._data.dtype == np.dtype(expected), (dtype, number)
    assert (gradgen.tensor([1, 2], dtype=gradgen.int32) * 3).tolist() == [3, 6]


def test_only_wrapped_numbers_have_casts() -> None:
    x = _leaf([1.0])
    for tensor in (x, x * 2, gradgen.tensor(3)):
        assert not hasattr(tensor, "_number_casts")
    for number in (True, 3, 0.5, 2 + 1j, float("nan"), -0.0, np.float32(0.5)):
        assert isinstance(wrap_number(number)._number_casts, NumberCasts)


NUMBERS: dict[str, Any] = {
    "int": 3,
    "bool": True,
    "float": 0.1,
    "negative_zero": -0.0,
    "large": 1e30,
    "nan": float("nan"),
    "complex": 2.5 - 1j,
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("name", list(NUMBERS))
def test_number_and_tensor_match_pytorch(dtype: str, name: str) -> None:
    number = NUMBERS[name]
    values = [0.5, -1.25, 3.0]
    got = _number_ops(gradgen, values, dtype, number)
    expected = oracle(
        "s11.number_ops", lambda torch: _number_ops(torch, values, dtype, number)
    )
    assert len(got) == len(expected)
    for (value, kind, grad), (value_t, kind_t, grad_t) in zip(got, expected):
        assert kind == kind_t
        assert value.dtype == value_t.dtype
        np.testing.assert_allclose(value, value_t, rtol=1e-6)
        assert np.array_equal(np.signbit(value.real), np.signbit(value_t.real))
        np.testing.assert_allclose(grad, grad_t, rtol=1e-6)


def _number_ops(lib: Any, values: list[float], dtype: str, number: Any) -> list[Any]:
    """Each of `n * x`, `x * n`, `x + n`, `n + x`, `x - n` (`x - True` is an error
    in PyTorch): its value, dtype and the leaf's gradient of its sum's real part."""
    cases: list[Callable[[Any], Any]] = [
        lambda x: number * x,
        lambda x: x * number,
        lambda x: x + number,
        lambda x: number + x,
    ]
    if not isinstance(number, bool):
        cases.append(lambda x: x - number)
    answers = []
    for case in cases:
        x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
        y = case(x)
        y.real.sum().backward() if y.is_complex() else y.sum().backward()
        answers.append(
            (
                y.detach().numpy(),
                str(y.dtype).split(".")[-1],
                x.grad.numpy(),
            )
        )
    return answers


def test_float16_casts_match_the_kernels_and_stay_silent() -> None:
    # (float16 and 70000 or 1e30, which float16 cannot hold: the fast path steps aside
    # and the kernel computes in float32 as PyTorch does, tests/test_float16_numbers.py;
    # either way the fast path must give the kernel's bits)
    x = gradgen.tensor([0.3, -1.7, 2.5], dtype=gradgen.float16, requires_grad=True)
    for number in (0.1, 3, True, 1e30, 70000):
        wrapped = wrap_number(number)
        for first, second in ((x, wrapped), (wrapped, x)):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                fast = operators.mul_Tensor.fast(first, second)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                slow = operators.mul_Tensor.call(first, second)
            assert fast.dtype is slow.dtype is gradgen.float16
            assert fast._data.tobytes() == slow._data.tobytes()


def test_the_fused_dunders_read_cached_ints_inline() -> None:
    x = _leaf([1.0, 2.0])
    wrapped = wrap_number(5)
    result = x * 5
    assert result.grad_fn is not None
    assert result.grad_fn._saved_other is wrapped  # the cached wrapped number
    assert result.tolist() == [5.0, 10.0]
    big = 2**70  # no int64: the binding's conversion, and its error, as before
    assert _error(lambda: x * big)[0] == _error(lambda: x.mul(big))[0]


# -- Tensor.__pow__: the fused dunder -----------------------------------------------------


def test_pow_operator_is_the_generated_dunder() -> None:
    assert gradgen.Tensor.__pow__ is variable_type.dunder_pow_Tensor_Scalar
    assert operators.DUNDERS["dunder_pow_Tensor_Scalar"] is gradgen.Tensor.__pow__


EXPONENTS: dict[str, Callable[[Any], Any]] = {
    "int": lambda lib: 3,
    "float": lambda lib: 2.5,
    "bool": lambda lib: True,
    "complex": lambda lib: 1 + 1j,
    "np_float64": lambda lib: np.float64(2.5),
    "np_int32": lambda lib: np.int32(3),
    "np_bool": lambda lib: np.bool_(True),
    "tensor": lambda lib: lib.tensor(2.0, requires_grad=True),
    "parameter": lambda lib: lib.nn.Parameter(lib.tensor(2.0)),
}


@pytest.mark.parametrize("name", list(EXPONENTS))
def test_pow_operator_overloads_match_pytorch(name: str) -> None:
    values = [1.5, 2.0]
    got = _pow_answer(gradgen, values, EXPONENTS[name])
    expected = oracle(
        "s11.pow_overload", lambda torch: _pow_answer(torch, values, EXPONENTS[name])
    )
    assert got["dtype"] == expected["dtype"] and got["node"] == expected["node"]
    np.testing.assert_allclose(got["value"], expected["value"], rtol=1e-6)
    np.testing.assert_allclose(got["grad"], expected["grad"], rtol=1e-6)


def _pow_answer(lib: Any, values: list[float], exponent: Any) -> dict[str, Any]:
    x = lib.tensor(values, requires_grad=True)
    y = x ** exponent(lib)
    (y.real if y.is_complex() else y).sum().backward()
    return {
        "dtype": str(y.dtype).split(".")[-1],
        "node": y.grad_fn.name(),
        "value": y.detach().numpy(),
        "grad": x.grad.numpy(),
    }


@pytest.mark.parametrize("other", ["a", [2], None])
def test_pow_operator_refuses_what_pytorch_refuses(other: Any) -> None:
    x = _leaf([1.5])
    expected = oracle(
        "s11.pow_refused", lambda torch: _error(lambda: torch.ones(1) ** other)
    )
    assert _error(lambda: x**other) == tuple(expected)
    # the method keeps its own error (the binding's, naming the overloads)
    assert _error(lambda: x.pow(other))[0] == "TypeError"


def test_pow_operator_leaves_a_refused_exponent_to_its_reflected_method() -> None:
    class Exponent:
        def __rpow__(self, base: Any) -> str:
            return "reflected"

    assert _leaf([1.5]) ** Exponent() == "reflected"


def test_pow_operator_steps_aside_for_modes() -> None:
    import gradgen.autograd.forward_ad as fwAD

    x = _leaf([1.5, 2.0])
    with gradgen.no_grad():
        y = x**3
    assert y.grad_fn is None and y.tolist() == [3.375, 8.0]
    with pytest.warns(UserWarning, match="Anomaly"), gradgen.autograd.detect_anomaly():
        z = x**3
    assert z.grad_fn is not None and z.grad_fn.metadata.get("traceback_")
    with fwAD.dual_level():
        dual = fwAD.make_dual(gradgen.tensor([1.5, 2.0]), gradgen.tensor([1.0, 1.0]))
        tangent = fwAD.unpack_dual(dual**3).tangent
    assert tangent is not None and tangent.tolist() == [3 * 1.5**2, 3 * 2.0**2]
    with gradgen.autograd.profiler.profile() as prof:
        x**3
    assert "aten::pow" in [event.name for event in prof.function_events]


# -- the leaf's AccumulateGrad --------------------------------------------------------------


def test_a_leafs_new_accumulator_is_the_live_one_when_there_is_one() -> None:
    x = _leaf([1.0, 2.0], "float32")
    first = x._new_grad_accumulator()
    assert x._new_grad_accumulator() is first  # checked again under the lock
    assert x._get_grad_accumulator() is first
    assert first.variable is x and first._input_metadata == (((2,), x._data.dtype),)
    y = x * 2
    assert y.grad_fn is not None and y.grad_fn._fn0 is first
    del first, y
    again = x._new_grad_accumulator()  # a new graph, a new node, the same mutex
    assert again.variable is x and again._mutex is x._accumulator_mutex


def test_threads_recording_on_one_leaf_share_its_accumulator() -> None:
    x = _leaf([1.0])
    results: list[Any] = []
    barrier = threading.Barrier(4)

    def record() -> None:
        barrier.wait()
        for _ in range(50):
            results.append((x**3).grad_fn)

    threads = [threading.Thread(target=record) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(node._fn0) for node in results}) == 1


# -- W1 itself -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_w1_matches_pytorch(dtype: str) -> None:
    got = _w1(gradgen, dtype)
    expected = oracle("s11.w1", lambda torch: _w1(torch, dtype))
    assert got == expected


def _w1(lib: Any, dtype: str) -> list[Any]:
    a = lib.tensor(2.0, dtype=getattr(lib, dtype), requires_grad=True)
    b = lib.tensor(6.0, dtype=getattr(lib, dtype), requires_grad=True)
    answers = []
    for _ in range(3):
        a.grad = None
        b.grad = None
        q = 3 * a**3 - b**2
        q.backward()
        answers.append(
            [str(q.dtype).split(".")[-1], q.item(), a.grad.item(), b.grad.item()]
        )
    return answers

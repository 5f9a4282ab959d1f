"""The everyday Tensor API PyTorch has in its Python bindings: to(), the dtype
shorthands, devices, .data, .T / .mT / .H / .mH, new_*, strides, inference_mode.
Expected values come from torch (recorded in tests/golden/, see torch_oracle.py) or
from the definitions."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import gradcheck
from torch_oracle import oracle


@pytest.mark.parametrize(
    "call",
    [
        lambda L, x: x.double(),
        lambda L, x: x.float(),
        lambda L, x: x.long(),
        lambda L, x: x.int(),
        lambda L, x: x.bool(),
        lambda L, x: x.cdouble(),
        lambda L, x: x.to(L.float64),
        lambda L, x: x.to("cpu"),
        lambda L, x: x.to("cpu", L.int64),
        lambda L, x: x.to(device="cpu", dtype=L.complex64),
        lambda L, x: x.to(L.zeros(1, dtype=L.int32)),
        lambda L, x: x.type_as(L.zeros(1, dtype=L.float64)),
    ],
    ids=[
        "double",
        "float",
        "long",
        "int",
        "bool",
        "cdouble",
        "to dtype",
        "to device",
        "to device dtype",
        "to keywords",
        "to other",
        "type_as",
    ],
)
def test_conversions_match_torch(call: Any) -> None:
    data = [[1.5, -2.0, 0.0], [3.25, 4.0, -0.5]]
    got = call(gradgen, gradgen.tensor(data))
    expected = oracle("converted", lambda torch: call(torch, torch.tensor(data)))
    assert str(got.dtype).split(".")[-1] == expected.dtype.name
    np.testing.assert_array_equal(np.asarray(got.tolist()), expected)


def test_to_returns_the_tensor_itself_unless_something_changes() -> None:
    x = gradgen.ones(3)
    assert x.to(gradgen.float32) is x
    assert x.to("cpu") is x
    assert x.to(gradgen.float32, copy=True) is not x
    assert x.float() is x


def test_to_is_differentiable() -> None:
    x = gradgen.tensor([1.0, 2.0], dtype=gradgen.float64, requires_grad=True)
    y = x.to(gradgen.complex128) * (1 + 2j)
    assert gradcheck(lambda t: t.to(gradgen.complex128).real * t.to("cpu"), (x,))
    y.real.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_other_devices_are_refused_and_cpu_accepted() -> None:
    x = gradgen.ones(2)
    assert x.device == gradgen.device("cpu") == "cpu"
    assert repr(x.device) == "device(type='cpu')"
    assert repr(gradgen.device("cuda", 1)) == "device(type='cuda', index=1)"
    assert str(gradgen.device("cuda:1")) == "cuda:1"
    assert x.cpu() is x and x.is_cuda is False
    assert gradgen.cuda.is_available() is False
    for bad in ("cuda", gradgen.device("mps"), "cuda:0"):
        with pytest.raises(RuntimeError, match="is not available"):
            x.to(bad)
    with pytest.raises(RuntimeError, match="Invalid device string"):
        gradgen.device("cuda:x")
    with pytest.raises(TypeError, match="invalid combination"):
        x.to(gradgen.float64, False, False, "extra")


def test_transposes_match_torch() -> None:
    data = np.arange(24.0).reshape(2, 3, 4)
    matrix = data[0] + 1j * data[1]
    for name, source in (("mT", data), ("mH", data), ("T", matrix), ("H", matrix)):
        got = getattr(gradgen.tensor(source), name)
        expected = oracle(name, lambda torch: getattr(torch.tensor(source), name))
        np.testing.assert_array_equal(got.numpy(), expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="deprecated"):
            gradgen.tensor(data).T
    with pytest.raises(RuntimeError, match="Got 1-D tensor"):
        gradgen.ones(3).mT


def test_transposes_are_differentiable_views() -> None:
    x = gradgen.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    assert type(x.T.grad_fn).__name__ == "PermuteBackward0"
    assert type(x.mT.grad_fn).__name__ == "TransposeBackward0"
    assert x.T._base is x
    assert gradcheck(lambda t: t.T * t.mT, (x,))


def test_data_shares_memory_but_not_history_or_version() -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.data
    assert d.requires_grad is False and d.grad_fn is None and d.is_leaf
    d[0] = 10.0
    assert y.tolist() == [10.0, 4.0]
    assert y._version == 0  # changes through .data go unnoticed (PyTorch's caveat)
    x.data = gradgen.tensor([5.0, 6.0, 7.0])
    assert x.tolist() == [5.0, 6.0, 7.0] and x.requires_grad


def test_new_factories_match_torch() -> None:
    def result(lib: Any) -> list[Any]:
        x = lib.ones(2, dtype=lib.float64)
        made = [
            x.new_zeros(2, 3),
            x.new_ones((1, 2)),
            x.new_full((2,), 7),
            x.new_empty(3) if lib is gradgen else x.new_empty(3).zero_(),
            x.new_tensor([1, 2]),
            x.new_zeros(2, dtype=lib.int64),
        ]
        return [(tuple(t.shape), str(t.dtype).split(".")[-1], t.tolist()) for t in made]

    assert result(gradgen) == oracle("made", result)
    y = gradgen.ones(2).new_zeros(3, requires_grad=True)
    assert y.requires_grad and y.is_leaf


def test_strides_and_contiguity_match_torch() -> None:
    def facts(lib: Any) -> tuple[Any, ...]:
        x = lib.zeros(2, 3, 4)
        return (
            x.stride(),
            x.stride(-1),
            x.transpose(0, 2).stride(),
            x.is_contiguous(),
            x.transpose(0, 1).is_contiguous(),
            x.element_size(),
            x.to(lib.float64).element_size(),
        )

    assert facts(gradgen) == oracle("facts", facts)


def test_inference_mode_records_nothing_and_restores() -> None:
    x = gradgen.ones(2, requires_grad=True)
    with gradgen.inference_mode():
        assert gradgen.is_inference_mode_enabled()
        assert not gradgen.is_grad_enabled()
        assert (x * 2).requires_grad is False
        with gradgen.inference_mode(False):
            assert (
                gradgen.is_grad_enabled()
            )  # False leaves it and enables grad, as PyTorch
    assert gradgen.is_grad_enabled() and not gradgen.is_inference_mode_enabled()

    @gradgen.inference_mode()
    def predict(t: gradgen.Tensor) -> gradgen.Tensor:
        return t * 3

    assert predict(x).grad_fn is None
    assert (x * 3).grad_fn is not None


def test_is_tensor() -> None:
    assert gradgen.is_tensor(gradgen.ones(1))
    assert not gradgen.is_tensor(np.ones(1))

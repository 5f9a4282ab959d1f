"""The Tensor API of ../shared/API.md that the seed operators need."""

from __future__ import annotations


import numpy as np
import pytest

import gradgen
from torch_oracle import oracle


@pytest.mark.parametrize(
    "data, dtype",
    [
        (2.5, gradgen.float32),
        (3, gradgen.int64),
        (True, gradgen.bool),
        (1 + 2j, gradgen.complex64),
        ([[1.0, 2.0]], gradgen.float32),
        ([1, 2], gradgen.int64),
        (np.array([1.0, 2.0]), gradgen.float64),
        (np.array([1, 2], dtype=np.int32), gradgen.int32),
    ],
)
def test_default_dtypes(data, dtype) -> None:
    assert gradgen.tensor(data).dtype == dtype


def test_default_dtype_can_be_changed() -> None:
    gradgen.set_default_dtype(gradgen.float64)
    try:
        assert gradgen.tensor(1.5).dtype == gradgen.float64
        assert gradgen.tensor(1j).dtype == gradgen.complex128
        assert gradgen.get_default_dtype() == gradgen.float64
    finally:
        gradgen.set_default_dtype(gradgen.float32)


@pytest.mark.parametrize(
    "make, expected",
    [
        (
            lambda: gradgen.tensor(2.0, requires_grad=True),
            "tensor(2., requires_grad=True)",
        ),
        (lambda: gradgen.tensor([1.0, 2.5]), "tensor([1.0000, 2.5000])"),
        (lambda: gradgen.tensor([1, 2]), "tensor([1, 2])"),
        (
            lambda: gradgen.tensor([1.0], dtype=gradgen.float64),
            "tensor([1.], dtype=gradgen.float64)",
        ),
        (
            lambda: gradgen.tensor(2.0, requires_grad=True) * 3,
            "tensor(6., grad_fn=<MulBackward0>)",
        ),
    ],
)
def test_repr(make, expected) -> None:
    assert repr(make()) == expected


def test_attributes_and_conversions() -> None:
    x = gradgen.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.shape == (2, 3) and isinstance(x.shape, tuple)
    assert repr(x.shape) == "gradgen.Size([2, 3])"
    assert x.size() == (2, 3) and x.size(1) == 3 and x.size(-1) == 3
    assert (x.ndim, x.dim(), x.numel(), len(x)) == (2, 2, 6, 2)
    assert x.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert gradgen.tensor(7.0).item() == 7.0
    assert np.asarray(x).shape == (2, 3)
    assert x.is_floating_point() and not x.is_complex()
    assert x.is_leaf and x.grad_fn is None and x.output_nr == 0 and x._version == 0
    with pytest.raises(
        RuntimeError, match="a Tensor with 6 elements cannot be converted to Scalar"
    ):
        x.item()


def test_requires_grad_rules() -> None:
    x = gradgen.tensor([1.0, 2.0])
    x.requires_grad = True
    assert x.requires_grad and x.is_leaf
    y = x * 2
    assert y.requires_grad and not y.is_leaf
    with pytest.raises(
        RuntimeError, match="you can only change requires_grad flags of leaf variables"
    ):
        y.requires_grad = False
    n = gradgen.tensor([1, 2])
    with pytest.raises(RuntimeError) as raised:
        n.requires_grad = True
    assert str(raised.value) == (
        "only Tensors of floating point and complex dtype can require gradients"
    )
    with pytest.raises(RuntimeError) as raised:
        n.requires_grad_()
    assert (
        str(raised.value)
        == "only Tensors of floating point dtype can require gradients"
    )


def test_detach_shares_data_and_version_but_not_history() -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert d.grad_fn is None and not d.requires_grad
    assert np.shares_memory(d.numpy(), y._data)
    assert d._version_counter is y._version_counter


def test_wrapped_number_on_either_side() -> None:
    x = gradgen.tensor(2.0, requires_grad=True)
    for y in (3 * x, x * 3):
        assert type(y.grad_fn).__name__ == "MulBackward0"
        assert y.grad_fn.next_functions[1] == (None, 0)
    z = 10 - x  # PyTorch's Tensor.__rsub__ is rsub(x, 10): rsub.Scalar
    assert z.item() == 8.0 and type(z.grad_fn).__name__ == "RsubBackward1"
    z.backward()
    assert x.grad.item() == -1.0


def test_permute_as_function_and_method() -> None:
    x = gradgen.tensor(np.arange(24.0).reshape(2, 3, 4))
    expected = np.transpose(np.arange(24.0).reshape(2, 3, 4), (2, 0, 1))
    for result in (
        gradgen.permute(x, (2, 0, 1)),
        x.permute(2, 0, 1),
        x.permute([2, 0, 1]),
    ):
        np.testing.assert_array_equal(result.numpy(), expected)
    assert x.permute(2, 0, 1)._base is x
    with pytest.raises(
        RuntimeError, match="number of dimensions in the tensor input does not match"
    ):
        x.permute(1, 0)


def test_wrong_argument_types_name_the_function_and_argument() -> None:
    x = gradgen.tensor([1.0])
    with pytest.raises(TypeError) as raised:
        gradgen.add(x, "one")
    assert (
        str(raised.value)
        == "add(): argument 'other' (position 2) must be Tensor, not str"
    )
    with pytest.raises(TypeError) as raised:
        gradgen.mul(2, x)
    assert (
        str(raised.value)
        == "mul(): argument 'input' (position 1) must be Tensor, not int"
    )


@pytest.mark.parametrize(
    "left, right",
    [
        (("float32", [1.0, 2.0]), 2.5),
        (("int64", [1, 2]), 2.5),
        (("int64", [1, 2]), 2),
        (("float32", [1.0, 2.0]), ("float64", 3.0)),  # 0-d does not promote a vector
        (("int32", [1, 2]), ("int64", [3, 4])),
        (("float32", [1.0]), ("complex128", [1j])),
        (("float64", [1.0]), ("complex64", [1j])),
        (("bool", [True]), 2),
        (("int64", 3), 2.5),
    ],
)
def test_type_promotion_matches_pytorch(left, right) -> None:
    def make(module, spec):
        if not isinstance(spec, tuple):
            return spec
        name, data = spec
        return module.tensor(data, dtype=getattr(module, name))

    ours = make(gradgen, left) * make(gradgen, right)
    theirs = oracle("product", lambda torch: make(torch, left) * make(torch, right))
    assert ours.dtype.name == theirs.dtype.name
    np.testing.assert_allclose(ours.numpy(), theirs)


def test_float32_stays_float32_through_backward() -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2.5) ** 2.5 - 1.5 * x
    assert y.dtype == gradgen.float32
    y.backward(gradient=gradgen.ones(2))
    assert x.grad.dtype == gradgen.float32


def test_factories() -> None:
    assert (
        gradgen.zeros(2, 3).shape == (2, 3)
        and gradgen.zeros(2, 3).dtype == gradgen.float32
    )
    assert gradgen.ones((2,), dtype=gradgen.float64).dtype == gradgen.float64
    assert (
        gradgen.full((2,), 7).tolist() == [7, 7]
        and gradgen.full((2,), 7).dtype == gradgen.int64
    )
    assert (
        gradgen.arange(3).tolist() == [0, 1, 2]
        and gradgen.arange(3).dtype == gradgen.int64
    )
    assert gradgen.arange(0.0, 1.0, 0.5).tolist() == [0.0, 0.5]
    gradgen.manual_seed(0)
    first = gradgen.randn(3).tolist()
    gradgen.manual_seed(0)
    assert gradgen.randn(3).tolist() == first
    assert gradgen.rand(2, requires_grad=True).requires_grad
    assert (
        gradgen.zeros_like(gradgen.ones(2, dtype=gradgen.float64)).dtype
        == gradgen.float64
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.array(["a"]),
        lambda: np.array([b"x"]),
        lambda: np.array([object()]),
        lambda: np.array([1], dtype="datetime64[s]"),
        lambda: np.array([1], dtype="timedelta64[s]"),
        lambda: np.zeros(1, dtype=[("a", "i4")]),
        lambda: np.array([1.0], dtype=np.longdouble),
        lambda: np.datetime64("2020"),
    ],
    ids=[
        "str",
        "bytes",
        "object",
        "datetime64",
        "timedelta64",
        "void",
        "longdouble",
        "scalar",
    ],
)
def test_a_numpy_dtype_torch_cannot_hold_is_a_type_error_as_in_pytorch(make) -> None:
    data = make()
    if data.dtype == np.float64:  # long double is double on this platform
        pytest.skip("numpy's longdouble is float64 here")

    def error(torch):
        with pytest.raises(TypeError) as theirs:
            torch.tensor(data)
        return str(theirs.value)

    with pytest.raises(TypeError) as ours:
        gradgen.tensor(data)
    assert str(ours.value) == oracle("error", error)
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy"):
        gradgen.tensor(data, dtype=gradgen.float32)  # torch checks before converting
    # the dtypes torch converts still convert (those gradgen lacks to the closest one)
    assert gradgen.tensor(np.array([1], dtype=np.uint16)).dtype == gradgen.int64
    assert gradgen.tensor(np.array([1], dtype=np.int8)).dtype == gradgen.int8
    assert gradgen.tensor(np.array([1.0], dtype=np.float32)).dtype == gradgen.float32


def test_result_type_fast_path_agrees_with_the_general_algorithm(monkeypatch) -> None:
    import itertools

    from gradgen import dtypes
    from gradgen.tensor import wrap_number

    operands: list[object] = []
    for d in dtypes.ALL_DTYPES:
        operands += [
            gradgen.Tensor(np.zeros(3, d.numpy)),
            gradgen.Tensor(np.zeros((), d.numpy)),
        ]
    numbers = [True, 2, 2.5, 1j]
    operands += numbers + [wrap_number(n) for n in numbers]
    fast_path = dtypes._same_dtype_result
    for count in (1, 2, 3):
        for combination in itertools.product(operands, repeat=count):
            fast = fast_path(combination)
            if fast is None:
                continue
            monkeypatch.setattr(dtypes, "_same_dtype_result", lambda operands: None)
            assert dtypes.result_type(*combination) is fast
            monkeypatch.setattr(dtypes, "_same_dtype_result", fast_path)


@pytest.mark.parametrize(
    "dim, ndim, expected", [(-1, 0, 0), (0, 0, 0), (-1, 3, 2), (-3, 3, 0), (2, 3, 2)]
)
def test_dimension_wrapping_as_pytorch(dim: int, ndim: int, expected: int) -> None:
    from gradgen.tensor import _wrap_dim

    assert _wrap_dim(dim, ndim) == expected


def test_dimension_out_of_range_message() -> None:
    with pytest.raises(IndexError) as raised:
        gradgen.tensor([1.0, 2.0]).size(2)
    assert str(raised.value) == (
        "Dimension out of range (expected to be in range of [-1, 0], but got 2)"
    )

"""Runtime safety (issue 11): PyTorch's answers for overflow, narrowing, bad sizes,
hooks, indexing and messages that used to leak numpy's internals; grad-mode contexts
as decorators; concurrent backward into one leaf.

Every case holds PyTorch 2.13's answer as data (exception type and message, or values
and dtype) and checks gradgen against it; where torch is importable the same data is
checked against live torch too (`test_case_matches_torch`), so the data cannot drift
from what PyTorch does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen

from torch_oracle import require_torch
from runtime_safety_checks import (
    GRAD_DTYPE,
    MUST_BE_INTS,
    OVERFLOW,
    Raises,
    Value,
    _backward_inputs,
    _grad_assign,
    _hook_result,
    _index_grad,
    _inplace,
    _no_grad_fn_after_long,
    _norm_grad,
    _outcome,
    _same,
    _setitem,
)

CASES: dict[str, tuple[Callable[[Any], Any], Raises | Value]] = {
    # -- integers beyond int64, narrowing in tensor() ----------------------------------
    "tensor(2**63)": (lambda lib: lib.tensor(2**63), Raises("ValueError", OVERFLOW)),
    "tensor([1, 2**63])": (
        lambda lib: lib.tensor([1, 2**63]),
        Raises("ValueError", OVERFLOW),
    ),
    "tensor([[1], [2**63]])": (
        lambda lib: lib.tensor([[1], [2**63]]),
        Raises("ValueError", OVERFLOW),
    ),
    "tensor([True, 2**63])": (
        lambda lib: lib.tensor([True, 2**63]),
        Raises("ValueError", OVERFLOW),
    ),
    "tensor(-2**63 - 1)": (
        lambda lib: lib.tensor(-(2**63) - 1),
        Raises("ValueError", OVERFLOW),
    ),
    "tensor(2**64)": (lambda lib: lib.tensor(2**64), Raises("ValueError", OVERFLOW)),
    "tensor(-2**63)": (lambda lib: lib.tensor(-(2**63)), Value(-(2**63), "int64")),
    "tensor([2**63, 1.5])": (
        lambda lib: lib.tensor([2**63, 1.5], dtype=lib.float64),
        Value([2.0**63, 1.5], "float64"),
    ),
    "tensor([2**63], float64)": (
        lambda lib: lib.tensor([2**63], dtype=lib.float64),
        Value([2.0**63], "float64"),
    ),
    "tensor(2**40, int32)": (
        lambda lib: lib.tensor(2**40, dtype=lib.int32),
        Raises(
            "RuntimeError", "value cannot be converted to type int32 without overflow"
        ),
    ),
    "tensor([1e20], int64)": (
        lambda lib: lib.tensor([1e20], dtype=lib.int64),
        Raises(
            "RuntimeError", "value cannot be converted to type int64 without overflow"
        ),
    ),
    "tensor(nan, int32)": (
        lambda lib: lib.tensor(float("nan"), dtype=lib.int32),
        Raises(
            "RuntimeError", "value cannot be converted to type int32 without overflow"
        ),
    ),
    "tensor([1j], float32)": (
        lambda lib: lib.tensor([1j, 2], dtype=lib.float32),
        Raises("TypeError", "must be real number, not complex"),
    ),
    "tensor([1+0j], float32)": (
        lambda lib: lib.tensor([1 + 0j], dtype=lib.float32),
        Raises("TypeError", "must be real number, not complex"),
    ),
    "tensor([1j], int32)": (
        lambda lib: lib.tensor([1j], dtype=lib.int32),
        Raises("TypeError", "'complex' object cannot be interpreted as an integer"),
    ),
    "tensor([1j], bool)": (
        lambda lib: lib.tensor([1j, 0j], dtype=lib.bool),
        Value([True, False], "bool"),
    ),
    "tensor(2.5, int64)": (
        lambda lib: lib.tensor(2.5, dtype=lib.int64),
        Value(2, "int64"),
    ),
    "tensor(1e300, float32)": (
        lambda lib: lib.tensor(1e300, dtype=lib.float32),
        Value(float("inf"), "float32"),
    ),
    "tensor ragged": (
        lambda lib: lib.tensor([[1, 2], [3]]),
        Raises("ValueError", "expected sequence of length 2 at dim 1 (got 1)"),
    ),
    "tensor(None)": (
        lambda lib: lib.tensor(None),
        Raises("RuntimeError", "Could not infer dtype of NoneType"),
    ),
    "tensor('a')": (
        lambda lib: lib.tensor("a"),
        Raises("TypeError", "new(): invalid data type 'str'"),
    ),
    "as_tensor([2**63])": (
        lambda lib: lib.as_tensor([2**63]),
        Raises("ValueError", OVERFLOW),
    ),
    # -- numbers written into tensors --------------------------------------------------
    "float t[0] = 1+2j": (
        _setitem("float32", 0, lambda lib: 1 + 2j),
        Raises(
            "RuntimeError", "value cannot be converted to type float without overflow"
        ),
    ),
    "float t[mask] = 1j": (
        _setitem(
            "float32", lambda lib: lib.tensor([True, False, True]), lambda lib: 1j
        ),
        Raises(
            "RuntimeError", "value cannot be converted to type float without overflow"
        ),
    ),
    "float t[[0]] = 1j": (
        _setitem("float32", lambda lib: [0], lambda lib: 1j),
        Raises(
            "RuntimeError", "value cannot be converted to type float without overflow"
        ),
    ),
    "float t[0] = 1+0j": (
        _setitem("float32", 0, lambda lib: 1 + 0j),
        Value([1.0, 0.0, 0.0], "float32"),
    ),
    "float t[0] = 2**63": (
        _setitem("float32", 0, lambda lib: 2**63),
        Raises("ValueError", OVERFLOW),
    ),
    "long t[0] = 2**63": (
        _setitem("int64", 0, lambda lib: 2**63),
        Raises("ValueError", OVERFLOW),
    ),
    "long t[0] = np.uint64(2**63)": (
        _setitem("int64", 0, lambda lib: np.uint64(2**63)),
        Raises("ValueError", OVERFLOW),
    ),
    "int t[0] = 2**40": (
        _setitem("int32", 0, lambda lib: 2**40),
        Raises(
            "RuntimeError", "value cannot be converted to type int without overflow"
        ),
    ),
    "long t[0] = inf": (
        _setitem("int64", 0, lambda lib: float("inf")),
        Raises(
            "RuntimeError", "value cannot be converted to type int64_t without overflow"
        ),
    ),
    "float t[0] = 1e300": (
        _setitem("float32", 0, lambda lib: 1e300),
        Raises(
            "RuntimeError", "value cannot be converted to type float without overflow"
        ),
    ),
    "cfloat t[0] = 1e300": (
        _setitem("complex64", 0, lambda lib: 1e300),
        Raises(
            "RuntimeError",
            "value cannot be converted to type c10::complex<float> without overflow",
        ),
    ),
    "bool t[0] = 1j": (
        _setitem("bool", 0, lambda lib: 1j),
        Value([True, False, False], "bool"),
    ),
    "long t[0] = 2.7": (
        _setitem("int64", 0, lambda lib: 2.7),
        Value([2, 0, 0], "int64"),
    ),
    "t[:] = list": (
        _setitem("float32", slice(None), lambda lib: [1, 2, 3]),
        Raises("TypeError", "can't assign a list to a torch.FloatTensor"),
    ),
    "t[0] = np.float32": (
        _setitem("float32", 0, lambda lib: np.float32(1)),
        Raises("TypeError", "can't assign a numpy.float32 to a torch.FloatTensor"),
    ),
    "t[0] = None": (
        _setitem("float32", 0, lambda lib: None),
        Raises("TypeError", "can't assign a NoneType to a torch.FloatTensor"),
    ),
    "t[0] = np.float64(2)": (
        _setitem("float32", 0, lambda lib: np.float64(2)),
        Value([2.0, 0.0, 0.0], "float32"),
    ),
    "fill_(1j)": (
        _inplace("float32", "fill_", lambda lib: 1j),
        Raises(
            "RuntimeError", "value cannot be converted to type float without overflow"
        ),
    ),
    "add_(1j)": (
        _inplace("float32", "add_", lambda lib: 1j),
        Raises(
            "RuntimeError",
            "result type ComplexFloat can't be cast to the desired output type Float",
        ),
    ),
    "add_(complex tensor)": (
        _inplace("float32", "add_", lambda lib: lib.tensor([1j, 1j])),
        Raises(
            "RuntimeError",
            "result type ComplexFloat can't be cast to the desired output type Float",
        ),
    ),
    "full(2**63)": (
        lambda lib: lib.full((2,), 2**63),
        Raises(
            "RuntimeError", "value cannot be converted to type int64_t without overflow"
        ),
    ),
    "full(2**40, int32)": (
        lambda lib: lib.full((2,), 2**40, dtype=lib.int32),
        Raises(
            "RuntimeError", "value cannot be converted to type int without overflow"
        ),
    ),
    "full(1e300, float32)": (
        lambda lib: lib.full((2,), 1e300, dtype=lib.float32),
        Raises(
            "RuntimeError", "value cannot be converted to type float without overflow"
        ),
    ),
    "full_like(1j)": (
        lambda lib: lib.full_like(lib.zeros(2), 1j),
        Raises(
            "RuntimeError", "value cannot be converted to type float without overflow"
        ),
    ),
    # -- sizes -------------------------------------------------------------------------
    "zeros(2.5)": (
        lambda lib: lib.zeros(2.5),
        Raises("TypeError", MUST_BE_INTS.format("zeros", "float")),
    ),
    "ones(2.0)": (
        lambda lib: lib.ones(2.0),
        Raises("TypeError", MUST_BE_INTS.format("ones", "float")),
    ),
    "rand(True)": (
        lambda lib: lib.rand(True),
        Raises("TypeError", MUST_BE_INTS.format("rand", "bool")),
    ),
    "zeros(np.float64)": (
        lambda lib: lib.zeros(np.float64(2)),
        Raises("TypeError", MUST_BE_INTS.format("zeros", "numpy.float64")),
    ),
    "zeros((2.5,))": (
        lambda lib: lib.zeros((2.5,)),
        Raises(
            "TypeError",
            "zeros(): argument 'size' (position 1) must be tuple of ints, but found element "
            "of type float at pos 0",
        ),
    ),
    "zeros(2, 2.5)": (
        lambda lib: lib.zeros(2, 2.5),
        Raises(
            "TypeError",
            "zeros(): argument 'size' failed to unpack the object at pos 2 with error "
            '"type must be tuple of ints,but got float"',
        ),
    ),
    "full((2.5,))": (
        lambda lib: lib.full((2.5,), 1.0),
        Raises(
            "TypeError",
            "full(): argument 'size' (position 1) must be tuple of ints, but found element "
            "of type float at pos 0",
        ),
    ),
    "zeros(-1)": (
        lambda lib: lib.zeros(-1),
        Raises("RuntimeError", "zeros: Dimension size must be non-negative."),
    ),
    "ones(2, -3)": (
        lambda lib: lib.ones(2, -3),
        Raises(
            "RuntimeError",
            "Trying to create tensor with negative dimension -3: [2, -3]",
        ),
    ),
    "randn(-1)": (
        lambda lib: lib.randn(-1),
        Raises(
            "RuntimeError", "Trying to create tensor with negative dimension -1: [-1]"
        ),
    ),
    "zeros((2, True))": (
        lambda lib: lib.zeros((2, True)),
        Value([[0.0], [0.0]], "float32"),
    ),
    "zeros(np.int32(2), 1)": (
        lambda lib: lib.zeros(np.int32(2), 1),
        Value([[0.0], [0.0]], "float32"),
    ),
    # -- arange ------------------------------------------------------------------------
    "arange(step=0)": (
        lambda lib: lib.arange(0, 10, 0),
        Raises("RuntimeError", "step must be nonzero"),
    ),
    "arange(step=0.)": (
        lambda lib: lib.arange(0.0, 1.0, 0.0),
        Raises("RuntimeError", "step must be nonzero"),
    ),
    "arange(0, inf)": (
        lambda lib: lib.arange(0, float("inf")),
        Raises("RuntimeError", "unsupported range: 0 -> inf"),
    ),
    "arange(1.5, nan)": (
        lambda lib: lib.arange(1.5, float("nan"), 0.5),
        Raises("RuntimeError", "unsupported range: 1.5 -> nan"),
    ),
    "arange(10, 0, 1)": (
        lambda lib: lib.arange(10, 0, 1),
        Raises(
            "RuntimeError", "upper bound and lower bound inconsistent with step sign"
        ),
    ),
    "arange(0, 1e20)": (
        lambda lib: lib.arange(0.0, 1e20),
        Raises("RuntimeError", "invalid size, possible overflow?"),
    ),
    "arange(2**63)": (
        lambda lib: lib.arange(0, 2**63),
        Raises(
            "RuntimeError", "value cannot be converted to type int64_t without overflow"
        ),
    ),
    "arange(1j)": (
        lambda lib: lib.arange(1j),
        Raises(
            "RuntimeError", "value cannot be converted to type double without overflow"
        ),
    ),
    "arange(3, 3, -1)": (lambda lib: lib.arange(3, 3, -1), Value([], "int64")),
    "arange(0, 1, 0.25)": (
        lambda lib: lib.arange(0, 1, 0.25),
        Value([0.0, 0.25, 0.5, 0.75], "float32"),
    ),
    # -- .grad assignment, backward(inputs=) -------------------------------------------
    "float leaf .grad = int64": (
        _grad_assign("float32", "int64"),
        Raises("RuntimeError", GRAD_DTYPE.format("long int", "Float")),
    ),
    "float leaf .grad = float64": (
        _grad_assign("float32", "float64"),
        Raises("RuntimeError", GRAD_DTYPE.format("double", "Float")),
    ),
    "double leaf .grad = cfloat": (
        _grad_assign("float64", "complex64"),
        Raises("RuntimeError", GRAD_DTYPE.format("c10::complex<float>", "Double")),
    ),
    "backward(inputs=[t without grad])": (
        _backward_inputs,
        Raises(
            "RuntimeError", "can't retain_grad on Tensor that has requires_grad=False"
        ),
    ),
    # -- hooks -------------------------------------------------------------------------
    "tensor hook returns str": (
        _hook_result("tensor", lambda g: "abc"),
        Raises("TypeError", "expected Variable, but hook returned 'str'"),
    ),
    "leaf hook returns ndarray": (
        _hook_result("leaf", lambda g: np.ones(2)),
        Raises("TypeError", "expected Variable, but hook returned 'numpy.ndarray'"),
    ),
    "tensor hook changes dtype": (
        _hook_result("tensor", lambda g: g.double()),
        Raises(
            "RuntimeError",
            "hook '<lambda>' has changed the type of value (was torch.FloatTensor got "
            "torch.DoubleTensor)",
        ),
    ),
    "node hook returns str": (
        _hook_result("post", lambda gi: "abc"),
        Raises("TypeError", "expected tuple, but hook returned 'str'"),
    ),
    "node hook returns list": (
        _hook_result("post", lambda gi: list(gi)),
        Raises("TypeError", "expected tuple, but hook returned 'list'"),
    ),
    "node prehook returns too many": (
        _hook_result("pre", lambda go: go + go),
        Raises(
            "RuntimeError",
            "hook '<lambda>' has returned an incorrect number of values (got 2, but "
            "expected 1)",
        ),
    ),
    "node prehook returns (str,)": (
        _hook_result("pre", lambda go: ("abc",)),
        Raises("TypeError", "expected Variable, but hook returned 'str'"),
    ),
    # -- numpy's messages replaced by PyTorch's ----------------------------------------
    "cat([])": (
        lambda lib: lib.cat([]),
        Raises("ValueError", "torch.cat(): expected a non-empty list of Tensors"),
    ),
    "stack([])": (
        lambda lib: lib.stack([]),
        Raises("RuntimeError", "stack expects a non-empty TensorList"),
    ),
    "cat sizes": (
        lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2, 4)]),
        Raises(
            "RuntimeError",
            "Sizes of tensors must match except in dimension 0. Expected size 3 but got "
            "size 4 for tensor number 1 in the list.",
        ),
    ),
    "cat ndim": (
        lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2)]),
        Raises(
            "RuntimeError", "Tensors must have same number of dimensions: got 2 and 1"
        ),
    ),
    "cat 0-d": (
        lambda lib: lib.cat([lib.tensor(1.0), lib.tensor(2.0)]),
        Raises(
            "RuntimeError",
            "zero-dimensional tensor (at position 0) cannot be concatenated",
        ),
    ),
    "cat dim": (
        lambda lib: lib.cat([lib.ones(2), lib.ones(2)], dim=3),
        Raises(
            "IndexError",
            "Dimension out of range (expected to be in range of [-1, 0], but got 3)",
        ),
    ),
    "cat legacy empty": (
        lambda lib: lib.cat([lib.zeros(0), lib.ones(1, 2)]),
        Value([[1.0, 1.0]], "float32"),
    ),
    "stack sizes": (
        lambda lib: lib.stack([lib.ones(2), lib.ones(3)]),
        Raises(
            "RuntimeError",
            "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1",
        ),
    ),
    "stack dim": (
        lambda lib: lib.stack([lib.ones(2), lib.ones(2)], dim=3),
        Raises(
            "IndexError",
            "Dimension out of range (expected to be in range of [-2, 1], but got 3)",
        ),
    ),
    "expand size": (
        lambda lib: lib.ones(2, 3).expand(3, 3),
        Raises(
            "RuntimeError",
            "The expanded size of the tensor (3) must match the existing size (2) at "
            "non-singleton dimension 0.  Target sizes: [3, 3].  Tensor sizes: [2, 3]",
        ),
    ),
    "expand -1 leading": (
        lambda lib: lib.ones(3).expand(-1, 3),
        Raises(
            "RuntimeError",
            "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0",
        ),
    ),
    "unbind 0-d": (
        lambda lib: lib.tensor(1.0).unbind(),
        Raises("IndexError", "Dimension specified as 0 but tensor has no dimensions"),
    ),
    "neg bool": (
        lambda lib: -lib.tensor([True]),
        Raises(
            "RuntimeError",
            "Negation, the `-` operator, on a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.",
        ),
    ),
    "sub bools": (
        lambda lib: lib.tensor([True]) - lib.tensor([False]),
        Raises(
            "RuntimeError",
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
            "`^` or `logical_xor()` operator instead.",
        ),
    ),
    "index out of range": (
        lambda lib: lib.ones(3)[5],
        Raises("IndexError", "index 5 is out of bounds for dimension 0 with size 3"),
    ),
    "setitem out of range": (
        _setitem("float32", -5, lambda lib: 1.0),
        Raises("IndexError", "index -5 is out of bounds for dimension 0 with size 3"),
    ),
    "index a 0-d tensor": (
        lambda lib: lib.tensor(1.0)[0],
        Raises(
            "IndexError",
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
            "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number",
        ),
    ),
    "index with a float": (
        lambda lib: lib.ones(3)[1.5],
        Raises(
            "IndexError",
            "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
            "Variables are valid indices (got float)",
        ),
    ),
    # -- valid input that used to be refused -------------------------------------------
    "int ** negative int tensor": (
        lambda lib: lib.tensor([2, 3, 1, -1, -1, 0])
        ** lib.tensor([-1, 2, -3, -3, -2, -1]),
        Value([0, 9, 1, -1, 1, 0], "int64"),
    ),
    "int ** 0-d negative tensor": (
        lambda lib: lib.tensor([2, 1]) ** lib.tensor(-1),
        Value([0, 1], "int64"),
    ),
    "int scalar ** negative int tensor": (
        lambda lib: 2 ** lib.tensor([-1, 2]),
        Value([0, 4], "int64"),
    ),
    "int32 ** negative int32": (
        lambda lib: lib.tensor([2], dtype=lib.int32)
        ** lib.tensor([-2], dtype=lib.int32),
        Value([0], "int32"),
    ),
    "int ** -1 (a Scalar)": (
        lambda lib: lib.tensor([2, 3]) ** -1,
        Raises("RuntimeError", "Integers to negative integer powers are not allowed."),
    ),
    "np.float64(2) + t": (
        lambda lib: np.float64(2) + lib.ones(2),
        Value([3.0, 3.0], "float32"),
    ),
    "np.int64(2) * t": (
        lambda lib: np.int64(2) * lib.ones(2),
        Value([2.0, 2.0], "float32"),
    ),
    "np.float64(2) - t": (
        lambda lib: np.float64(2) - lib.ones(2),
        Value([1.0, 1.0], "float32"),
    ),
    "np.float64 + t records": (
        lambda lib: (np.float64(2) + lib.ones(2, requires_grad=True)).grad_fn.name(),
        Value("AddBackward0"),
    ),
    "t[True]": (lambda lib: lib.arange(3)[True], Value([[0, 1, 2]], "int64")),
    "t[False]": (
        lambda lib: lib.arange(3)[False],
        Value(np.zeros((0, 3), np.int64).tolist(), "int64"),
    ),
    "t[True, 1]": (lambda lib: lib.arange(3)[True, 1], Value([1], "int64")),
    "t[None, True]": (
        lambda lib: lib.arange(2)[None, True],
        Value([[[0, 1]]], "int64"),
    ),
    "0-d t[True]": (lambda lib: lib.tensor(5)[True], Value([5], "int64")),
    "t[True] = 9": (_setitem("int64", True, lambda lib: 9), Value([9, 9, 9], "int64")),
    "t[False] = 9": (
        _setitem("int64", False, lambda lib: 9),
        Value([0, 0, 0], "int64"),
    ),
    "x[True] backward": (_index_grad, Value([1.0, 1.0], "float32")),
    "norm(x, dim=1)": (
        lambda lib: lib.norm(lib.tensor([[3.0, 4.0], [6.0, 8.0]]), dim=1),
        Value([5.0, 10.0], "float32"),
    ),
    "x.norm(dim=1, keepdim=True)": (
        lambda lib: lib.tensor([[3.0, 4.0], [6.0, 8.0]]).norm(dim=1, keepdim=True),
        Value([[5.0], [10.0]], "float32"),
    ),
    "norm(x, 'fro')": (
        lambda lib: lib.norm(lib.tensor([[3.0, 4.0], [0.0, 0.0]]), "fro"),
        Value(5.0, "float32"),
    ),
    "x.norm(1, dim=0)": (
        lambda lib: lib.tensor([[3.0, -4.0], [1.0, 0.0]]).norm(1, dim=0),
        Value([4.0, 4.0], "float32"),
    ),
    "norm(x, dim=1) backward": (_norm_grad, Value([[0.6, 0.8], [0.6, 0.8]], "float32")),
    "x.long() of a tensor requiring grad": (
        _no_grad_fn_after_long,
        Value([[1, 1], False, True]),
    ),
    "x.bool() of a tensor requiring grad": (
        lambda lib: lib.ones(2, requires_grad=True).bool().requires_grad,
        Value(False),
    ),
    # -- the legacy constructor --------------------------------------------------------
    "Tensor([1, 2])": (lambda lib: lib.Tensor([1, 2]), Value([1.0, 2.0], "float32")),
    "Tensor((2, 3))": (lambda lib: lib.Tensor((2, 3)), Value([2.0, 3.0], "float32")),
    "Tensor()": (lambda lib: lib.Tensor(), Value([], "float32")),
    "Tensor(2, 3) shape": (lambda lib: list(lib.Tensor(2, 3).shape), Value([2, 3])),
    "Tensor(Size) shape": (
        lambda lib: list(lib.Tensor(lib.Size([1, 2])).shape),
        Value([1, 2]),
    ),
    "Tensor(2.5)": (
        lambda lib: lib.Tensor(2.5),
        Raises("TypeError", "new(): data must be a sequence (got float)"),
    ),
    "Tensor(True)": (
        lambda lib: lib.Tensor(True),
        Raises("TypeError", "new(): data must be a sequence (got bool)"),
    ),
    "Tensor(-1)": (
        lambda lib: lib.Tensor(-1),
        Raises(
            "RuntimeError", "Trying to create tensor with negative dimension -1: [-1]"
        ),
    ),
    "Tensor([1j])": (
        lambda lib: lib.Tensor([1j]),
        Raises("TypeError", "must be real number, not complex"),
    ),
    "Tensor(2, 3.5)": (
        lambda lib: lib.Tensor(2, 3.5),
        Raises(
            "TypeError",
            "new(): argument 'size' failed to unpack the object at pos 2 with error "
            '"type must be tuple of ints,but got float"',
        ),
    ),
    "Tensor([1.]) trains": (
        lambda lib: (lambda x: ((x * 3).sum().backward(), x.grad)[1])(
            lib.Tensor([1.0, 2.0]).requires_grad_()
        ),
        Value([3.0, 3.0], "float32"),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_case(name: str) -> None:
    function, expected = CASES[name]
    got = _outcome(function, gradgen)
    assert _same(expected, got), f"{name}: expected {expected}, gradgen gave {got}"


@pytest.mark.parametrize("name", list(CASES))
def test_case_matches_torch(name: str) -> None:
    torch = require_torch()
    function, expected = CASES[name]
    got = _outcome(function, torch)
    if isinstance(got, Raises):
        # PyTorch appends where a C++ warning or error came from; the data keeps the text.
        got = Raises(got.error, got.message.split("\n")[0])
    assert _same(expected, got), f"{name}: the data says {expected}, torch gives {got}"

"""tensor_api.install: the hand-written Tensor methods that call operators are put on
Tensor (after the generated ones), each is declared in tensor.py for type checkers, and
Python's operators built from the table behave as PyTorch's (values by hand)."""

from __future__ import annotations

import ast
import operator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import dtypes, indexing, tensor_api, view_history
from gradgen.factories import legacy_data
from gradgen.tensor import HOOKS, Tensor

TENSOR_PY = Path(__file__).resolve().parent.parent / "src" / "gradgen" / "tensor.py"


def _declared_for_type_checkers() -> set[str]:
    """The names in the `if TYPE_CHECKING:` block at the end of class Tensor."""
    tree = ast.parse(TENSOR_PY.read_text(encoding="utf-8"))
    cls = next(
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor"
    )
    block = next(
        n
        for n in cls.body
        if isinstance(n, ast.If)
        and isinstance(n.test, ast.Name)
        and n.test.id == "TYPE_CHECKING"
    )
    names: set[str] = set()
    for node in block.body:
        if isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return names


def test_every_installed_method_is_declared_for_type_checkers() -> None:
    declared = _declared_for_type_checkers()
    installed = tensor_api.installed_names()
    if not dtypes.HAS_BFLOAT16:  # Tensor.bfloat16 needs the optional ml_dtypes
        declared = declared - {"bfloat16"}
    assert declared == installed, (
        f"installed but not declared in tensor.py: {sorted(installed - declared)}; "
        f"declared but not installed: {sorted(declared - installed)}"
    )


def test_install_put_every_method_on_tensor() -> None:
    for name in tensor_api.installed_names():
        assert name in Tensor.__dict__, name
    assert Tensor.__getitem__ is indexing.getitem
    assert Tensor.to is tensor_api.to
    assert isinstance(Tensor.__dict__["mT"], property)
    assert HOOKS.refresh_view is view_history.refresh_view
    assert HOOKS.legacy_data is legacy_data


def test_a_second_install_is_refused_with_the_clash_error() -> None:
    class Probe(Tensor):
        pass

    setattr(Probe, "to", lambda self: self)
    with pytest.raises(
        RuntimeError,
        match="generated Tensor method 'to' clashes with a hand-written one",
    ):
        tensor_api.install(Probe)


def _values(t: Tensor) -> Any:
    return t.tolist()


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda x: x + 1, [2.0, -1.0, 5.0]),
        (lambda x: 1 + x, [2.0, -1.0, 5.0]),
        (lambda x: x - 1, [0.0, -3.0, 3.0]),
        (lambda x: 1 - x, [0.0, 3.0, -3.0]),
        (lambda x: x * 3, [3.0, -6.0, 12.0]),
        (lambda x: 3 * x, [3.0, -6.0, 12.0]),
        (lambda x: x / 2, [0.5, -1.0, 2.0]),
        (lambda x: 4 / x, [4.0, -2.0, 1.0]),
        (lambda x: x**2, [1.0, 4.0, 16.0]),
        (lambda x: 2**x, [2.0, 0.25, 16.0]),
        (lambda x: x // 3, [0.0, -1.0, 1.0]),
        (lambda x: 7 // x, [7.0, -4.0, 1.0]),
        (lambda x: x % 3, [1.0, 1.0, 1.0]),
        (lambda x: -x, [-1.0, 2.0, -4.0]),
        (lambda x: abs(x), [1.0, 2.0, 4.0]),
        (lambda x: +x, [1.0, -2.0, 4.0]),
        (lambda x: x == 1, [True, False, False]),
        (lambda x: x != 1, [False, True, True]),
        (lambda x: x < 1, [False, True, False]),
        (lambda x: x <= 1, [True, True, False]),
        (lambda x: x > 1, [False, False, True]),
        (lambda x: x >= 1, [True, False, True]),
    ],
)
def test_python_operators_give_the_values_by_hand(call: Any, expected: Any) -> None:
    x = gradgen.tensor([1.0, -2.0, 4.0])
    assert _values(call(x)) == expected


def test_bitwise_operators_and_their_reflections() -> None:
    a = gradgen.tensor([0b1100, 0b1010])
    assert (a & 0b0110).tolist() == [0b0100, 0b0010]
    assert (0b0110 & a).tolist() == [0b0100, 0b0010]
    assert (a | 1).tolist() == [0b1101, 0b1011]
    assert (1 | a).tolist() == [0b1101, 0b1011]
    assert (a ^ 0b1111).tolist() == [0b0011, 0b0101]
    assert (0b1111 ^ a).tolist() == [0b0011, 0b0101]
    assert (~a).tolist() == [~0b1100, ~0b1010]
    with pytest.raises(TypeError, match=r"only implemented on integer and Boolean"):
        ~gradgen.tensor([1.0])


def test_in_place_operators_change_the_tensor_itself() -> None:
    x = gradgen.tensor([1.0, 2.0])
    y = x
    y += 1
    y -= 0.5
    y *= 4
    y /= 2
    assert y is x and x.tolist() == [3.0, 5.0]


def test_operands_that_are_not_numbers_give_python_errors_or_false() -> None:
    x = gradgen.tensor([1.0, 2.0])
    assert (x == None) is False  # noqa: E711  (NotImplemented both ways: identity)
    assert (x != "a") is True
    assert operator.eq(x, object()) is False
    for call in (
        lambda: x // "a",
        lambda: "a" // x,
        lambda: x % "a",
        lambda: x < "a",
        lambda: x & "a",
        lambda: x @ 2,
        lambda: 2 @ x,
        lambda: "a" / x,
    ):
        with pytest.raises(TypeError):
            call()


def test_the_operators_record_the_graph() -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    y = (2 - x) * (x**2) + 1 / x
    assert y.grad_fn is not None and y.grad_fn.name() == "AddBackward0"
    y.sum().backward()
    # d/dx [(2 - x) x^2 + 1/x] = 4x - 3x^2 - 1/x^2
    assert x.grad is not None
    assert np.allclose(x.grad.tolist(), [4 - 3 - 1, 8 - 12 - 0.25])


def test_matmul_both_ways() -> None:
    m = gradgen.tensor([[1.0, 2.0], [3.0, 4.0]])
    v = gradgen.tensor([1.0, 1.0])
    assert (m @ v).tolist() == [3.0, 7.0]
    assert (v @ m).tolist() == [4.0, 6.0]


def test_a_subclass_gets_the_same_operators() -> None:
    p = gradgen.nn.Parameter(gradgen.tensor([1.0, 2.0]))
    assert (p * 2).tolist() == [2.0, 4.0]
    assert (3 - p).tolist() == [2.0, 1.0]

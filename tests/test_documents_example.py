"""The example from the project's documents, exactly."""

from __future__ import annotations

import pytest

import gradgen
from gradgen.graph import AccumulateGrad


def leaves() -> tuple[gradgen.Tensor, gradgen.Tensor]:
    return gradgen.tensor(2.0, requires_grad=True), gradgen.tensor(
        6.0, requires_grad=True
    )


def test_q_backward_gives_36_and_minus_12_then_refuses_a_second_backward() -> None:
    a, b = leaves()
    Q = 3 * a**3 - b**2
    Q.backward(gradient=gradgen.tensor(1.0))
    assert a.grad.item() == 36.0  # d/da 3a^3 = 9a^2
    assert b.grad.item() == -12.0  # d/db -b^2 = -2b
    with pytest.raises(
        RuntimeError, match="Trying to backward through the graph a second time"
    ):
        Q.backward(gradient=gradgen.tensor(1.0))


def test_graph_of_x_minus_z() -> None:
    a, b = leaves()
    X = a**3
    Y = 3 * X
    Z = b**2
    Q = X - Z
    assert repr(Q) == "tensor(-28., grad_fn=<SubBackward0>)"
    assert [(type(n).__name__, i) for n, i in Q.grad_fn.next_functions] == [
        ("PowBackward0", 0),
        ("PowBackward0", 0),
    ]
    assert Q.grad_fn.next_functions[0][0] is X.grad_fn
    assert Q.grad_fn.next_functions[1][0] is Z.grad_fn
    ((accumulate, index),) = X.grad_fn.next_functions
    assert isinstance(accumulate, AccumulateGrad) and index == 0
    assert type(accumulate).__name__ == "AccumulateGrad"
    assert accumulate.variable is a
    (pow_node, pow_index), (none, none_index) = Y.grad_fn.next_functions
    assert (type(pow_node).__name__, pow_index) == ("PowBackward0", 0)
    assert (none, none_index) == (None, 0)
    assert Y.grad_fn.name() == "MulBackward0"
    Q.backward()
    assert a.grad.item() == 12.0  # d/da a^3 = 3a^2
    assert b.grad.item() == -12.0


def test_a_minus_b() -> None:
    a, b = leaves()
    Q = a - b
    assert [type(n).__name__ for n, _ in Q.grad_fn.next_functions] == [
        "AccumulateGrad",
        "AccumulateGrad",
    ]
    assert Q.grad_fn.next_functions[0][0].variable is a
    assert Q.grad_fn.next_functions[1][0].variable is b
    Q.backward()
    assert (a.grad.item(), b.grad.item()) == (1.0, -1.0)


def test_demo_prints_the_example(capsys: pytest.CaptureFixture[str]) -> None:
    from gradgen import demo

    demo.example()
    out = capsys.readouterr().out
    assert "Q = 3*a**3 - b**2 = tensor(-12., grad_fn=<SubBackward0>)" in out
    assert "dQ/da = 9*a**2 = tensor(36.)" in out
    assert "dQ/db = -2*b   = tensor(-12.)" in out
    assert "SubBackward0" in out and "AccumulateGrad" in out

"""gradcheck's fast mode and check_batched_grad (gradcheck and gradgradcheck) against
torch.autograd.gradcheck: what passes, what fails and the messages (recorded in
tests/golden/)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import GradcheckError, gradcheck, gradgradcheck
from gradgen.tensor import Tensor
from torch_oracle import oracle

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
W = np.array([0.5, 1.25, 2.0])


def _inputs(lib: Any) -> tuple[Any, Any]:
    return (
        lib.tensor(X, dtype=lib.float64, requires_grad=True),
        lib.tensor(W, dtype=lib.float64, requires_grad=True),
    )


FUNCTIONS = {
    "softmax": lambda a, b: (a.sin() * b).softmax(1),
    "matmul": lambda a, b: (a @ b).tanh(),
    "two outputs": lambda a, b: (a.exp().sum(0) * b, (a * a).mean()),
    "reduction": lambda a, b: a.logsumexp(1) + b.sum(),
    "one input used": lambda a, b: a.abs() + 1,
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize(
    "options",
    [
        {"fast_mode": True},
        {"fast_mode": True, "check_forward_ad": True},
        {"check_batched_grad": True},
        {"fast_mode": True, "check_batched_grad": True},
    ],
    ids=["fast", "fast forward", "batched", "fast batched"],
)
def test_correct_gradients_pass(name: str, options: dict[str, Any]) -> None:
    assert gradcheck(FUNCTIONS[name], _inputs(gradgen), **options)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_gradgradcheck_fast_and_batched(name: str) -> None:
    assert gradgradcheck(
        FUNCTIONS[name], _inputs(gradgen), fast_mode=True, check_batched_grad=True
    )


def _wrong_backward(lib: Any) -> Any:
    class Wrong(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (a,) = ctx.saved_tensors
            return grad * a * 2.1

    return Wrong


def _item_in_backward(lib: Any) -> Any:
    class Item(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a * 2

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2 if grad.sum().item() != 1234 else grad

    return Item


def _message(call: Any) -> str:
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the message is the answer
        return f"{type(error).__name__}: {error}"
    return "passed"


def _fast_failure(lib: Any) -> str:
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    return _message(
        lambda: lib.autograd.gradcheck(_wrong_backward(lib).apply, (x,), fast_mode=True)
    )


def test_fast_mode_failure_shows_the_slow_jacobians_as_torch() -> None:
    """The fast numbers differ (the random vectors are gradgen's own), the rest of the
    message is PyTorch's: the first line, and the slow-mode Jacobians and max diff."""
    ours = _fast_failure(gradgen)
    theirs = oracle("fast failure", _fast_failure).replace("torch.", "gradgen.")
    assert ours.splitlines()[0] == theirs.splitlines()[0]
    head = "\nThe above quantities"
    assert ours[ours.index(head) :] == theirs[theirs.index(head) :]


def test_fast_mode_note_when_the_slow_mode_would_pass() -> None:
    """A backward 5e-4 too large in magnitude on every element passes the slow check
    (rtol 1e-3), but v^T J u of a Jacobian with entries +-100 cancels to a small
    number while its error does not: the fast check fails and says so."""
    signs = gradgen.tensor(np.where(np.arange(40) % 2, 100.0, -100.0))

    class Off(gradgen.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a * signs

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * (signs + 0.05)

    x = gradgen.tensor(np.ones(40), requires_grad=True)
    assert gradcheck(Off.apply, (x,))
    with pytest.raises(GradcheckError, match="might've passed in slow_mode"):
        gradcheck(Off.apply, (x,), fast_mode=True)


def _batched_failures(lib: Any) -> dict[str, str]:
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    check = lib.autograd.gradcheck
    return {
        "item": _message(
            lambda: check(_item_in_backward(lib).apply, (x,), check_batched_grad=True)
        ),
        "gradgradcheck item": _message(
            lambda: lib.autograd.gradgradcheck(
                lambda a: _item_in_backward(lib).apply(a) * a,
                (x,),
                check_batched_grad=True,
            )
        ),
        "flags": _message(
            lambda: check(
                lambda a: a,
                (x,),
                check_batched_grad=True,
                check_backward_ad=False,
                check_forward_ad=True,
            )
        ),
        "gradgradcheck flags": _message(
            lambda: lib.autograd.gradgradcheck(
                lambda a: a * a,
                (x,),
                check_batched_grad=True,
                check_rev_over_rev=False,
                check_fwd_over_rev=True,
                check_undefined_grad=False,
            )
        ),
    }


def test_batched_grad_failures_match_torch() -> None:
    """The vmap error inside differs in wording (PyTorch's names its C++ operator):
    what gradcheck adds around it is PyTorch's."""
    ours = _batched_failures(gradgen)
    theirs = oracle("batched failures", _batched_failures)
    for key in ("item", "gradgradcheck item"):
        prefix = "GradcheckError: While computing batched gradients, got: "
        assert ours[key].startswith(prefix) and theirs[key].startswith(prefix)
        tail = "\n\ngradcheck or gradgradcheck failed"
        assert (
            ours[key][ours[key].index(tail) :] == theirs[key][theirs[key].index(tail) :]
        )
        assert ".item()" in ours[key]
    for key in ("flags", "gradgradcheck flags"):
        assert ours[key] == theirs[key]


def test_batched_grad_catches_a_backward_that_reads_one_example() -> None:
    """A backward that reads the array under its grad (gradgen's `_data`: inside vmap
    the first example's) gives every example the first one's gradient."""

    class FirstExample(gradgen.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a * 3

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return Tensor(grad._data * 3)

    x = gradgen.tensor(X, requires_grad=True)
    assert gradcheck(FirstExample.apply, (x,))
    with pytest.raises(GradcheckError) as caught:
        gradcheck(FirstExample.apply, (x,), check_batched_grad=True)
    message = str(caught.value)
    assert message.startswith("For output 0 and input 0:\n\ngradcheck or gradgradcheck")
    assert "\n\nGot:\n" in message and "\n\nExpected:\n" in message


def test_fast_mode_finds_no_gradient_where_there_is_one() -> None:
    x = gradgen.tensor(X, requires_grad=True)
    with pytest.raises(GradcheckError, match="Numerical gradient for function"):
        gradcheck(lambda a: Tensor(a._data * 2), (x,), fast_mode=True)

"""gradcheck(check_batched_forward_grad=True) against PyTorch: forward-mode AD run
under vmap on a batch of tangents must give the JVPs one by one; PyTorch's flags check
and its failure messages (recorded in tests/golden/)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from func.common import assert_same, errors
from gradgen.autograd._gradcheck_batched import check_batched_forward_grad
from gradgen.autograd.gradcheck import GradcheckError
from torch_oracle import oracle

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
W = np.linspace(0.2, 1.0, 12).reshape(3, 4)


def _functions(lib: Any) -> dict[str, Any]:
    F = lib.nn.functional
    return {
        "matmul tanh": lambda a, b: ((a @ b).tanh() * 2, a.sin().sum()),
        "softmax": lambda a, b: F.softmax(a @ b, -1),
        "layer norm": lambda a, b: F.layer_norm(a @ b, (4,)),
        "unreached output": lambda a, b: (a.exp(), lib.ones(2)),
        "one input": lambda a, b: (a * a).cumsum(1),
    }


def _checks(lib: Any) -> dict[str, Any]:
    x = lib.tensor(X, requires_grad=True)
    w = lib.tensor(W, requires_grad=True)
    return {
        name: lib.autograd.gradcheck(
            f, (x, w), check_forward_ad=True, check_batched_forward_grad=True
        )
        for name, f in _functions(lib).items()
    }


def test_batched_forward_grad_passes_where_torchs_does() -> None:
    theirs = oracle("checks", lambda torch: _checks(torch))
    assert _checks(gradgen) == theirs


def _error_calls(lib: Any) -> dict[str, Any]:
    x = lib.tensor(X, requires_grad=True)
    return {
        "needs forward ad": lambda: lib.autograd.gradcheck(
            lambda a: a, (x,), check_batched_forward_grad=True
        ),
    }


def test_flags_refused_as_torch() -> None:
    theirs = oracle("errors", lambda torch: errors(_error_calls(torch)))
    assert_same(errors(_error_calls(gradgen)), theirs)


def _random_inside(lib: Any) -> list[str]:
    x = lib.tensor(X, requires_grad=True)
    try:
        lib.autograd.gradcheck(
            lambda a: a * 2 + lib.rand(3) * 0,
            (x,),
            check_forward_ad=True,
            check_batched_forward_grad=True,
            check_backward_ad=False,
        )
    except Exception as error:  # noqa: BLE001 - the error is the answer
        text = str(error)
        return [
            type(error).__name__,
            text.split(":")[0],
            text.split("\n\n\n")[1].splitlines()[0],
        ]
    return []


def test_a_vmap_failure_is_reported_as_torchs() -> None:
    """The operator's own error is vmap's (gradgen's vmap words it as torch.func's,
    PyTorch's gradcheck uses its older vmap): the frame around it is compared."""
    theirs = oracle("random", lambda torch: _random_inside(torch))
    assert _random_inside(gradgen) == theirs


def test_a_batched_mismatch_names_output_and_input() -> None:
    """A function that changes with every call: vmap's one call cannot match the calls
    one tangent at a time (the batched step alone: gradcheck's Jacobian check would
    fail first). The message starts as PyTorch's template."""
    calls = [0]

    def drifting(a: Any) -> Any:
        calls[0] += 1
        return a * calls[0]

    x = gradgen.tensor(X, requires_grad=True)
    with pytest.raises(GradcheckError) as caught:
        check_batched_forward_grad(drifting, (x,))
    lines = str(caught.value).splitlines()
    assert lines[:4] == [  # PyTorch's template starts with a newline: two blank lines
        "For output 0 and input 0:",
        "",
        "",
        "gradcheck failed while testing batched gradient computation with forward-mode "
        "AD.",
    ]
    got = str(caught.value).split("Got:\n")[1].split("\n\nExpected:")[0]
    assert "dtype=gradgen.float64" in got and calls[0] == 3


def _forward_mismatch(lib: Any) -> list[str]:
    """`.item()` hides the sum from forward AD: the forward-mode Jacobian misses it.
    PyTorch prints the whole numerical Jacobian (input elements by output elements)."""
    x = lib.tensor(X, requires_grad=True)
    try:
        lib.autograd.gradcheck(
            lambda a: a * a.sum().item(),
            (x,),
            check_forward_ad=True,
            check_backward_ad=False,
        )
    except Exception as error:  # noqa: BLE001 - the error is the answer
        text = str(error).replace("torch.", "gradgen.")
        return [type(error).__name__, text.split("analytical:")[0]]
    return []


def test_forward_mode_mismatch_prints_torchs_jacobian() -> None:
    theirs = oracle("forward mismatch", lambda torch: _forward_mismatch(torch))
    assert _forward_mismatch(gradgen) == theirs

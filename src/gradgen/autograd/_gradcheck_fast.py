"""gradcheck's fast mode: one random direction per input instead of whole Jacobians.

For every differentiable input ``x_i`` a random unit vector ``u_i`` (non-negative, as
PyTorch draws it) and for every differentiable output ``o_j`` a random unit vector
``v_j``; the check compares one number per (input, output) pair:

- numerical: ``v_j . (f(x_i + eps u_i) - f(x_i - eps u_i)) / (2 eps)``, a central
  difference along ``u_i`` (two evaluations of `func` per input, not two per element);
- analytical: ``grad(o_j, x_i, grad_outputs=v_j) . u_i`` (one backward per output),
  or, for the forward-mode check, the whole ``J u_i`` from one JVP against the whole
  numerical ``J u_i``.

The tolerance scales as PyTorch's: ``atol * sum(u_i) * sum(v_j)`` (each entry of
``v^T J u`` may differ by atol). On a mismatch the full Jacobians of that pair are
computed the slow way and shown after the fast numbers, with a note when the slow
check would have passed. The vectors come from a numpy Generator with a fixed seed,
so the check is deterministic and leaves gradgen's random state alone.

Complex inputs or outputs take the slow path (gradcheck.py): the Wirtinger
bookkeeping of the fast one is not implemented.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import forward_ad
from ..grad_mode import no_grad
from ..tensor import Tensor
from ._gradcheck_inputs import (
    GradcheckError,
    _as_gradgen,
    _as_tuple,
    _autograd_grad,
    _check_func_outputs,
    _diff_inputs,
    _is_float_or_complex,
)
from ._gradcheck_jacobians import (
    _analytical_rows,
    _central_differences,
    _evaluate,
    _numerical_jacobian,
    _real_part,
)

_VECTOR_SEED = 0

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()


def uses_complex(inputs: tuple[Any, ...], outputs: tuple[Tensor, ...]) -> bool:
    """Whether the fast mode hands this call to the slow one (see the docstring)."""
    tensors = _diff_inputs(inputs) + [o for o in outputs if _is_float_or_complex(o)]
    return any(t._data.dtype.kind == "c" for t in tensors)


def _unit_vector(like: Tensor, generator: np.random.Generator) -> np.ndarray:
    """Uniform in [0, 1), normalised, with `like`'s dtype, flat."""
    vector = generator.random(like._data.size).astype(like._data.dtype)
    norm = np.linalg.norm(vector)
    return vector / norm if norm else vector


def _directional_differences(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    tensor: Tensor,
    u: np.ndarray,
    eps: float,
) -> list[np.ndarray]:
    """``(f(x + eps u) - f(x - eps u)) / (2 eps)`` of every float output, flat."""
    data = tensor._data
    original = data.copy()
    step = (eps * u).reshape(data.shape).astype(data.dtype)
    try:
        with no_grad():
            data[...] = original - step
        minus = _evaluate(func, inputs)
        with no_grad():
            data[...] = original + step
        plus = _evaluate(func, inputs)
    finally:
        with no_grad():
            data[...] = original
    return [((b - a) / (2 * eps)).reshape(-1) for a, b in zip(minus, plus)]


def _analytical_vj(
    output: Tensor, diff_inputs: list[Tensor], v: np.ndarray, nondet_tol: float
) -> list[np.ndarray]:
    """``v^T J`` for every input, twice (the backward must be reentrant)."""
    grad_output = Tensor(v.reshape(output._data.shape))
    runs = []
    for _ in range(2):
        grads = _autograd_grad(
            output, diff_inputs, grad_output, retain_graph=True, allow_unused=True
        )
        found = []
        for x, d_x in zip(diff_inputs, grads):
            if d_x is None:
                found.append(np.zeros(x._data.size, x._data.dtype))
                continue
            if d_x._data.shape != x._data.shape:
                raise GradcheckError("Analytical gradient has incorrect size")
            found.append(d_x._data.reshape(-1))
        runs.append(found)
    for a, b in zip(*runs):
        if a.size and np.abs(a - b).max() > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with "
                "same input and grad_output multiple times gives different values, "
                "although analytical gradient matches numerical gradient."
                f"The tolerance for nondeterminism was {nondet_tol}.\n\n"
                "If the backward is non-deterministic by design, pass a larger "
                "nondet_tol to gradcheck/gradgradcheck."
            )
    return runs[0]


def _slow_mode_message(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    output: Tensor,
    output_position: int,
    x: Tensor,
    eps: float,
    rtol: float,
    atol: float,
) -> str:
    """The full Jacobians of one (output, input) pair, for the error message."""
    reference = _evaluate(func, inputs)
    differences = _central_differences(func, inputs, x, reference, eps)
    numerical = _numerical_jacobian(
        differences, output_position, x._data.dtype, eps, _real_part
    )
    analytical = _analytical_rows(output, [x], 1).jacobians[0]
    max_diff = np.abs(numerical - analytical).max() if numerical.size else 0.0
    message = (
        "\nThe above quantities relating the numerical and analytical jacobians are "
        "computed \nin fast mode. See: https://github.com/pytorch/pytorch/issues/53876 "
        "for more background \nabout fast mode. Below, we recompute numerical and "
        "analytical jacobians in slow mode:\n\n"
        f"Numerical:\n {_as_gradgen(numerical)!r}\n"
        f"Analytical:\n{_as_gradgen(analytical)!r}\n\n"
        f"The max per-element difference (slow mode) is: {float(max_diff)}.\n"
    )
    if np.allclose(analytical, numerical, rtol=rtol, atol=atol):
        message += FAST_FAIL_SLOW_OK_MSG
    return message


def _mismatch(
    analytical: np.ndarray, numerical: np.ndarray, j: int, i: int, mode: str
) -> str:
    """PyTorch's message: a number (reverse mode's v^T J u) prints as a float."""

    def show(value: np.ndarray) -> str:
        return str(float(value)) if value.ndim == 0 else repr(_as_gradgen(value))

    return (
        f"Jacobian {mode}mismatch for output {j:d} with respect to input {i:d},\n"
        f"numerical:{show(numerical)}\nanalytical:{show(analytical)}\n"
    )


def check_fast(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    func_out: tuple[Tensor, ...],
    eps: float,
    atol: float,
    rtol: float,
    nondet_tol: float,
) -> None:
    """Reverse mode against central differences along random directions."""
    generator = np.random.default_rng(_VECTOR_SEED)
    diff_inputs = _diff_inputs(inputs)
    float_outputs = [o for o in func_out if _is_float_or_complex(o)]
    positions = [k for k, o in enumerate(float_outputs) if o.requires_grad]
    all_u = [_unit_vector(x, generator) for x in diff_inputs]
    all_v = [_unit_vector(float_outputs[k], generator) for k in positions]
    all_ju = [
        _directional_differences(func, inputs, x, u, eps)
        for x, u in zip(diff_inputs, all_u)
    ]
    if not positions:
        for ju in all_ju:
            for column in ju:
                if column.size and np.abs(column).max() > nondet_tol:
                    raise GradcheckError(
                        "Numerical gradient for function expected to be zero"
                    )
        return
    for j, (k, v) in enumerate(zip(positions, all_v)):
        output = float_outputs[k]
        vjs = _analytical_vj(output, diff_inputs, v, nondet_tol)
        for i, (x, u, ju, vj) in enumerate(zip(diff_inputs, all_u, all_ju, vjs)):
            analytical = np.asarray(vj @ u)
            numerical = np.asarray(v @ ju[k])
            tolerance = atol * u.sum() * v.sum()
            if not np.allclose(analytical, numerical, rtol=rtol, atol=tolerance):
                raise GradcheckError(
                    _mismatch(analytical, numerical, j, i, "")
                    + _slow_mode_message(func, inputs, output, k, x, eps, rtol, atol)
                )


def check_fast_forward(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    func_out: tuple[Tensor, ...],
    eps: float,
    atol: float,
    rtol: float,
) -> None:
    """Forward mode: one JVP along u_i against the central difference along u_i."""
    generator = np.random.default_rng(_VECTOR_SEED)
    diff_inputs = _diff_inputs(inputs)
    for i, x in enumerate(diff_inputs):
        u = _unit_vector(x, generator)
        numerical = _directional_differences(func, inputs, x, u, eps)
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(x, Tensor(u.reshape(x._data.shape)))
            args = tuple(dual if a is x else a for a in inputs)
            outputs = [
                o
                for o in _check_func_outputs(_as_tuple(func(*args)))
                if _is_float_or_complex(o)
            ]
            tangents = [forward_ad.unpack_dual(o).tangent for o in outputs]
        for j, (tangent, expected) in enumerate(zip(tangents, numerical)):
            got = (
                np.zeros_like(expected)
                if tangent is None
                else tangent._data.reshape(-1)
            )
            if not np.allclose(got, expected, rtol=rtol, atol=atol * u.sum()):
                raise GradcheckError(
                    _mismatch(got, expected, j, i, "computed with forward mode ")
                )

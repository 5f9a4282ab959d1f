"""The checks gradcheck runs after building the Jacobians, and their error messages:
reverse- and forward-mode Jacobians against the numerical one, backward multiplied
by grad_output (zero in, zero out), and undefined (``None``) output gradients.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..graph import Node
from ..tensor import Tensor
from ..variable_type_utils import collect_next_edges, set_history
from ._gradcheck_inputs import (
    GradcheckError,
    _as_gradgen,
    _as_tuple,
    _autograd_grad,
    _check_func_outputs,
    _diff_inputs,
    _differentiable_outputs,
    _is_float_or_complex,
)
from ._gradcheck_jacobians import (
    _analytical_rows,
    _Differences,
    _central_differences,
    _imag_part,
    _numerical_jacobian,
    _real_part,
)


def _check_analytical(
    output: Tensor,
    diff_inputs: list[Tensor],
    unit: complex,
    nondet_tol: float,
    check_grad_dtypes: bool,
) -> list[np.ndarray]:
    """The analytical Jacobians, computed twice; dtype, size and determinism checked."""
    first = _analytical_rows(output, diff_inputs, unit)
    second = _analytical_rows(output, diff_inputs, unit)
    if not first.types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not first.sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    for a, b in zip(first.jacobians, second.jacobians):
        if a.size and np.abs(a - b).max() > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with "
                "same input and grad_output multiple times gives different values, "
                "although analytical gradient matches numerical gradient."
                f"The tolerance for nondeterminism was {nondet_tol}.\n\n"
                "If the backward is non-deterministic by design, pass a larger "
                "nondet_tol to gradcheck/gradgradcheck."
            )
    return first.jacobians


def _allclose(
    analytical: np.ndarray, numerical: np.ndarray, rtol: float, atol: float
) -> bool:
    """``|a - n| <= atol + rtol * |n|`` everywhere, after type promotion (allclose)."""
    common = np.result_type(analytical, numerical)
    return bool(
        np.allclose(
            analytical.astype(common), numerical.astype(common), rtol=rtol, atol=atol
        )
    )


def _mismatch_message(
    analytical: np.ndarray,
    numerical: np.ndarray,
    output_index: int,
    input_index: int,
    prefix: str,
) -> str:
    return (
        prefix + f"Jacobian mismatch for output {output_index:d} with respect to input "
        f"{input_index:d},\n"
        f"numerical:{_as_gradgen(numerical)!r}\nanalytical:{_as_gradgen(analytical)!r}\n"
    )


# -- the checks ------------------------------------------------------------------------


def _check_jacobians(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    func_out: tuple[Tensor, ...],
    eps: float,
    atol: float,
    rtol: float,
    nondet_tol: float,
    check_grad_dtypes: bool,
) -> None:
    """Numerical against analytical Jacobians (PyTorch's slow mode)."""
    float_outputs = [o for o in func_out if _is_float_or_complex(o)]
    reference = [np.array(o._data, copy=True) for o in float_outputs]
    diff_inputs = _diff_inputs(inputs)
    differences = [
        _central_differences(func, inputs, x, reference, eps) for x in diff_inputs
    ]
    # The passes PyTorch makes: with a complex output, imag(outputs) then
    # real(outputs), each pass checking every output (real ones unchanged).
    any_complex = any(o.is_complex() for o in float_outputs)
    passes: list[tuple[str, Callable[[np.ndarray], np.ndarray], complex]] = (
        [("imaginary", _imag_part, 1j), ("real", _real_part, 1)]
        if any_complex
        else [("real", _real_part, 1)]
    )
    outputs = [o for o in float_outputs if o.requires_grad]
    if not outputs:
        _check_zero_jacobians(passes, differences, diff_inputs, reference, eps)
        return
    positions = [i for i, o in enumerate(float_outputs) if o.requires_grad]
    for part_name, part, unit in passes:
        for i, (position, output) in enumerate(zip(positions, outputs)):
            complex_output = output.is_complex()
            analytical = _check_analytical(
                output,
                diff_inputs,
                unit if complex_output else 1,
                nondet_tol,
                check_grad_dtypes,
            )
            prefix = (
                f"While considering the {part_name} part of complex outputs only, "
                if complex_output
                else ""
            )
            for j, (a, diffs, x) in enumerate(
                zip(analytical, differences, diff_inputs)
            ):
                n = _numerical_jacobian(
                    diffs,
                    position,
                    x._data.dtype,
                    eps,
                    part if complex_output else _real_part,
                )
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(_mismatch_message(a, n, i, j, prefix))


def _check_zero_jacobians(
    passes: list[tuple[str, Callable[[np.ndarray], np.ndarray], complex]],
    differences: list[_Differences],
    diff_inputs: list[Tensor],
    reference: list[np.ndarray],
    eps: float,
) -> None:
    """Nothing is differentiable: every numerical Jacobian must be zero."""
    for _, part, _ in passes:
        for diffs, x in zip(differences, diff_inputs):
            for k, ref in enumerate(reference):
                keep = part if ref.dtype.kind == "c" else _real_part
                jacobian = _numerical_jacobian(diffs, k, x._data.dtype, eps, keep)
                if np.count_nonzero(jacobian):
                    raise GradcheckError(
                        "Numerical gradient for function expected to be zero"
                    )


def _forward_columns(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    x: Tensor,
    unit: complex,
    expected: list[np.ndarray],
) -> list[np.ndarray]:
    """The forward-mode Jacobian of each float output with respect to `x` along `unit`
    per element (rows: x's elements, as PyTorch prints it)."""
    from . import forward_ad

    rows: list[list[np.ndarray]] = [[] for _ in expected]
    for column in range(x._data.size):
        tangent = np.zeros(x._data.shape, dtype=x._data.dtype)
        tangent.reshape(-1)[column] = unit
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(x, Tensor(tangent))
            args = tuple(dual if a is x else a for a in inputs)
            outputs = [
                o
                for o in _check_func_outputs(_as_tuple(func(*args)))
                if _is_float_or_complex(o)
            ]
            tangents = [forward_ad.unpack_dual(o).tangent for o in outputs]
        for i, (out_tangent, want) in enumerate(zip(tangents, expected)):
            rows[i].append(
                np.zeros_like(want[column])
                if out_tangent is None
                else out_tangent._data.reshape(-1)
            )
    return [
        np.stack(r) if r else np.zeros_like(want) for r, want in zip(rows, expected)
    ]


def _check_forward_jacobians(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    func_out: tuple[Tensor, ...],
    eps: float,
    atol: float,
    rtol: float,
) -> None:
    """Forward-mode Jacobians (a JVP per input element) against the central
    differences: the tangent of `e_j` (and of `1j * e_j` for a complex input) is the
    derivative of every output along that direction."""
    float_outputs = [o for o in func_out if _is_float_or_complex(o)]
    reference = [np.array(o._data, copy=True) for o in float_outputs]
    diff_inputs = _diff_inputs(inputs)
    for j, x in enumerate(diff_inputs):
        differences = _central_differences(func, inputs, x, reference, eps)
        directions: list[tuple[complex, list[np.ndarray]]] = [(1, differences.real)]
        if differences.imag is not None:
            directions.append((1j, differences.imag))
        for unit, numerical in directions:
            expected = [np.asarray(d) / (2 * eps) for d in numerical]
            analytical = _forward_columns(func, inputs, x, unit, expected)
            for i, (got, want) in enumerate(zip(analytical, expected)):
                if not _allclose(got.reshape(want.shape), want, rtol, atol):
                    raise GradcheckError(
                        f"Jacobian computed with forward mode mismatch for output {i} "
                        f"with respect to input {j},\n"
                        f"numerical:{_as_gradgen(want)!r}\n"
                        f"analytical:{_as_gradgen(got.reshape(want.shape))!r}\n"
                    )


def _check_backward_mul_by_grad_output(
    outputs: tuple[Tensor, ...], inputs: tuple[Any, ...]
) -> None:
    """Zero output gradients must give zero input gradients of the right type/size."""
    diff_inputs = _diff_inputs(inputs)
    if not outputs:
        return  # PyTorch's grad over no outputs gives only None here
    grads = _autograd_grad(
        outputs,
        diff_inputs,
        [Tensor(np.zeros_like(o._data)) for o in outputs],
        allow_unused=True,
    )
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if np.count_nonzero(gi._data):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi._data.dtype != di._data.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi._data.shape != di._data.shape:
            raise GradcheckError("grad is incorrect size")


class UndefinedGradBackward(Node):
    """Backward of `_undefined_grad`: passes an undefined (None) gradient on."""

    __slots__ = ()

    def apply(self, grads: Sequence[Tensor | None]) -> list[Tensor | None]:
        return [None] * self.num_outputs


def _undefined_grad(tensor: Tensor) -> Tensor:
    """`tensor` behind a node that turns any gradient into None (PyTorch's UndefinedGrad)."""
    result = tensor._shallow_copy()
    node = UndefinedGradBackward()
    node.set_next_edges(collect_next_edges(tensor))
    set_history(result, node)
    return result


def _warn_undefined_grad_compatibility() -> None:
    warnings.warn(
        "Backwards compatibility: New undefined gradient support checking "
        "feature is enabled by default, but it may break existing callers "
        "of this function. If this is true for you, you can call this "
        'function with "check_undefined_grad=False" to disable the feature',
        UserWarning,
        stacklevel=6,
    )


def _check_undefined_grad_support(
    outputs: list[Tensor], diff_inputs: list[Tensor]
) -> None:
    if not outputs:
        return
    try:
        grads = _autograd_grad(
            outputs,
            diff_inputs,
            [Tensor(np.zeros_like(o._data)) for o in outputs],
            allow_unused=True,
        )
    except RuntimeError as error:
        _warn_undefined_grad_compatibility()
        raise GradcheckError(
            "Expected backward function to handle undefined output grads. "
            'Please look at "Notes about undefined output gradients" in '
            '"tools/autograd/derivatives.yaml"'
        ) from error
    for gi in grads:
        if gi is not None and np.count_nonzero(gi._data):
            _warn_undefined_grad_compatibility()
            raise GradcheckError(
                "Expected all input grads to be undefined or zero when all output "
                'grads are undefined or zero. Please look at "Notes about undefined '
                'output gradients" in "tools/autograd/derivatives.yaml"'
            )


def _check_undefined_backward(
    func: Callable[..., Any], outputs: tuple[Tensor, ...], inputs: tuple[Any, ...]
) -> None:
    """Backward must accept undefined output gradients: all at once, then one by one."""
    diff_inputs = _diff_inputs(inputs)

    def fresh_outputs() -> tuple[Tensor, ...]:
        return _differentiable_outputs(_check_func_outputs(_as_tuple(func(*inputs))))

    _check_undefined_grad_support(
        [_undefined_grad(o) for o in fresh_outputs()], diff_inputs
    )
    if len(outputs) > 1:
        for undefined_index in range(len(outputs)):
            _check_undefined_grad_support(
                [
                    _undefined_grad(o) if k == undefined_index else o
                    for k, o in enumerate(fresh_outputs())
                ],
                diff_inputs,
            )

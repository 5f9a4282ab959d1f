"""The two Jacobians gradcheck compares: the numerical one by central differences, a
column per input element (complex inputs along their real and imaginary parts), and
the analytical one by reverse mode, a row per output element (see gradcheck.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..grad_mode import no_grad
from ..tensor import Tensor
from ._gradcheck_inputs import (
    _as_tuple,
    _autograd_grad,
    _check_func_outputs,
    _is_float_or_complex,
)

# -- numerical Jacobian ----------------------------------------------------------------


def _evaluate(func: Callable[..., Any], inputs: tuple[Any, ...]) -> list[np.ndarray]:
    """func's floating and complex outputs as copies (outputs may alias inputs)."""
    outputs = _check_func_outputs(_as_tuple(func(*inputs)))
    return [
        np.array(output._data, copy=True)
        for output in outputs
        if _is_float_or_complex(output)
    ]


def _check_neighbourhood(
    minus: list[np.ndarray],
    plus: list[np.ndarray],
    reference: list[np.ndarray],
    index: tuple[int, ...],
    eps: float,
) -> None:
    """The outputs at both perturbed points must match each other and the original."""
    if not len(minus) == len(plus) == len(reference):
        raise AssertionError(
            "Expected `func` to return the same number of outputs when inputs are "
            f"perturbed on index {index} by {eps}, but got {len(minus)}, {len(plus)} "
            f"and {len(reference)} outputs."
        )
    for a, b, ref in zip(minus, plus, reference):
        for first, second in ((a, b), (a, ref)):
            if first.shape != second.shape:
                raise AssertionError(
                    "Expected `func` to return outputs with the same shape when "
                    f"inputs are perturbed on index {index} by {eps}, but got: shapes "
                    f"{tuple(first.shape)} and {tuple(second.shape)}."
                )
            if first.dtype != second.dtype:
                raise AssertionError(
                    "Expected `func` to return outputs with the same dtype when "
                    f"inputs are perturbed on index {index} by {eps}, but got: dtypes "
                    f"{first.dtype} and {second.dtype}."
                )


class _Differences:
    """Raw central differences ``f(x + d) - f(x - d)`` of every output, per element.

    ``real[k]`` is for ``d = eps`` (a column of shape ``(in_numel, out_numel)`` per
    output); ``imag[k]`` is for ``d = eps * 1j`` and only exists for complex inputs.
    """

    def __init__(self, real: list[np.ndarray], imag: list[np.ndarray] | None) -> None:
        self.real = real
        self.imag = imag


def _central_differences(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    tensor: Tensor,
    reference: list[np.ndarray],
    eps: float,
) -> _Differences:
    data = tensor._data
    numel = data.size
    is_complex = data.dtype.kind == "c"
    real = [np.zeros((numel, ref.size), dtype=ref.dtype) for ref in reference]
    imag = (
        [np.zeros((numel, ref.size), dtype=ref.dtype) for ref in reference]
        if is_complex
        else None
    )
    directions: list[tuple[Any, list[np.ndarray]]] = [(eps, real)]
    if imag is not None:
        directions.append((eps * 1j, imag))
    for column, index in enumerate(np.ndindex(*data.shape)):
        original = data[index].copy()
        for delta, store in directions:
            try:
                with no_grad():
                    data[index] = original - delta
                minus = _evaluate(func, inputs)
                with no_grad():
                    data[index] = original + delta
                plus = _evaluate(func, inputs)
            finally:
                with no_grad():
                    data[index] = original
            _check_neighbourhood(minus, plus, reference, index, eps)
            for k, (a, b) in enumerate(zip(minus, plus)):
                store[k][column] = (b - a).reshape(-1)
    return _Differences(real, imag)


def _real_part(array: np.ndarray) -> np.ndarray:
    return array.real if array.dtype.kind == "c" else array


def _imag_part(array: np.ndarray) -> np.ndarray:
    return array.imag


def _numerical_jacobian(
    differences: _Differences,
    output_index: int,
    input_dtype: np.dtype,
    eps: float,
    part: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """The numerical Jacobian of ``part(output)``, in PyTorch's layout and dtype."""
    two_eps = 2 * eps
    ds_dx = part(differences.real[output_index]) / two_eps
    if differences.imag is None:  # R -> R
        return ds_dx
    # C -> R: the conjugate Wirtinger derivative, as PyTorch combines it.
    ds_dy = part(differences.imag[output_index]) / two_eps
    return (ds_dx + ds_dy * 1j).astype(input_dtype)


# -- analytical Jacobian ---------------------------------------------------------------


class _AnalyticalRows:
    """The analytical Jacobians of one output, plus what PyTorch checks about them."""

    def __init__(self, jacobians: list[np.ndarray]) -> None:
        self.jacobians = jacobians
        self.sizes_ok = True
        self.types_ok = True


def _analytical_rows(
    output: Tensor, diff_inputs: list[Tensor], unit: complex
) -> _AnalyticalRows:
    """Rows ``e_j^T J`` of every input's Jacobian, from ``grad(output, grad_outputs=e_j)``.

    `unit` is 1 for a real output or the real part of a complex one, and 1j for the
    imaginary part of a complex output.
    """
    out_numel = output._data.size
    result = _AnalyticalRows(
        [np.zeros((x._data.size, out_numel), dtype=x._data.dtype) for x in diff_inputs]
    )
    for row in range(out_numel):
        grad_output = np.zeros(output._data.shape, dtype=output._data.dtype)
        grad_output.reshape(-1)[row] = unit
        grads = _autograd_grad(
            output,
            diff_inputs,
            Tensor(grad_output),
            retain_graph=True,
            allow_unused=True,
        )
        for jacobian, x, d_x in zip(result.jacobians, diff_inputs, grads):
            if d_x is None:
                continue  # the column stays zero
            if d_x._data.shape != x._data.shape:
                result.sizes_ok = False
                continue
            if d_x._data.dtype != x._data.dtype:
                result.types_ok = False
            column = d_x._data.reshape(-1)
            if jacobian.dtype.kind != "c":
                column = _real_part(column)
            jacobian[:, row] = column
    return result

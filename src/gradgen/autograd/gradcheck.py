"""gradcheck and gradgradcheck: finite differences against gradgen's reverse mode.

This is the slow (full Jacobian) mode of ``torch.autograd.gradcheck``:

* the numerical Jacobian of every floating or complex output with respect to every
  input that requires grad is built column by column with central differences: each
  element of the input's numpy array is moved by ``-eps`` and ``+eps`` in place (and
  restored exactly), and ``func`` is evaluated at both points;
* the analytical Jacobian is built row by row with
  ``gradgen.autograd.grad(output, inputs, grad_outputs=unit vector, retain_graph=True,
  allow_unused=True)``, twice, to check that backward is deterministic;
* both are compared with ``|analytical - numerical| <= atol + rtol * |numerical|``.

Jacobians are laid out as PyTorch lays them out: one ``(input.numel(),
output.numel())`` matrix per (output, input) pair, with the input's dtype for the
analytical one. Complex numbers follow PyTorch's conjugate-Wirtinger convention:

* a complex input ``z = x + iy`` is perturbed along its real and its imaginary part and
  the numerical column is ``ds/dx + 1j * ds/dy`` for a real-valued ``s``;
* a complex output ``o`` is checked as two real functions, ``imag(o)`` first and then
  ``real(o)``; their analytical rows are ``grad(o, ..., grad_outputs=1j * e)`` and
  ``grad(o, ..., grad_outputs=e)``, which is what backpropagating through ``imag`` and
  ``real`` gives (so no ``imag`` operator is needed).

Only outputs that require grad are compared. When none does, the numerical Jacobian
of every floating or complex output must be zero, as in PyTorch. Integer outputs are
never differentiable and are ignored.

After the Jacobians, as PyTorch does, backward with zero output gradients must give
zero (or no) input gradients of the input's dtype and shape, and with
``check_undefined_grad`` backward must accept undefined (``None``) output gradients:
each differentiable output is routed through a node whose backward returns ``None``
(PyTorch's ``UndefinedGrad``), so the generated backward formulas really receive
``None`` and must return ``None`` or zeros.

``check_forward_ad`` (and gradgradcheck's ``check_fwd_over_rev``) compares a JVP per
input element, computed with gradgen.autograd.forward_ad, against the same central
differences.

Not implemented, and refused with ``NotImplementedError`` rather than ignored:
``fast_mode``, ``check_batched_grad`` and ``check_batched_forward_grad`` (need vmap)
and ``masked`` (needs sparse tensors).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..grad_mode import no_grad
from ..graph import Node
from ..tensor import Tensor
from ..variable_type_utils import collect_next_edges, set_history

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]

_TensorOrTensors = Tensor | Sequence[Tensor]

# The fixed seed of the random grad_outputs gradgradcheck makes when none are given.
_GRAD_OUTPUTS_SEED = 0


class GradcheckError(RuntimeError):
    """A gradient check failed (raised by gradcheck and gradgradcheck)."""


# -- small helpers ---------------------------------------------------------------------


def _autograd_grad(*args: Any, **kwargs: Any) -> tuple[Tensor | None, ...]:
    # Imported at call time: gradgen.autograd imports this module while initialising.
    from . import grad

    return grad(*args, **kwargs)


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if isinstance(value, tuple):
        return value
    if isinstance(value, list):
        return tuple(value)
    return (value,)


def _is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor)


def _is_float_or_complex(tensor: Tensor) -> bool:
    return tensor._data.dtype.kind in "fc"


def _check_func_outputs(outputs: tuple[Any, ...]) -> tuple[Tensor, ...]:
    for index, output in enumerate(outputs):
        if not _is_tensor(output):
            raise TypeError(
                "gradcheck: func must return a Tensor or a tuple of Tensors, but "
                f"output {index} is {type(output).__name__}"
            )
    return outputs


def _differentiable_outputs(outputs: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
    return tuple(output for output in outputs if output.requires_grad)


def _diff_inputs(inputs: tuple[Any, ...]) -> list[Tensor]:
    return [x for x in inputs if _is_tensor(x) and x.requires_grad]


def _as_gradgen(array: np.ndarray) -> Tensor:
    """A numpy Jacobian as a Tensor, so messages print it in PyTorch's format."""
    return Tensor(np.ascontiguousarray(array))


def _check_inputs(inputs: tuple[Any, ...]) -> None:
    """Warn on single precision; refuse overlapping or read-only data, or no grads."""
    any_requires_grad = False
    for index, value in enumerate(inputs):
        if not (_is_tensor(value) and value.requires_grad):
            continue
        if value._data.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{index} requires gradient and "
                "is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are "
                "not of double precision floating point or complex. ",
                UserWarning,
                stacklevel=4,
            )
        data = value._data
        if not all(
            stride != 0 or size <= 1 for stride, size in zip(data.strides, data.shape)
        ):
            raise RuntimeError(
                f"The {index}th input has a dimension with stride 0. gradcheck only "
                "supports inputs that are non-overlapping to be able to "
                "compute the numerical gradients correctly. You should call "
                ".contiguous on the input before passing it to gradcheck."
            )
        if not data.flags.writeable:
            raise RuntimeError(
                f"gradcheck: the data of input #{index} is a read-only numpy array; "
                "gradcheck perturbs it in place to compute numerical gradients. Pass "
                "a tensor that owns writable data (for example a clone)."
            )
        any_requires_grad = True
    if not any_requires_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, "
            "but none of them have requires_grad=True."
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
        # Nothing is differentiable: every numerical Jacobian must be zero.
        for _, part, _ in passes:
            for diffs, x in zip(differences, diff_inputs):
                for k, ref in enumerate(reference):
                    keep = part if ref.dtype.kind == "c" else _real_part
                    jacobian = _numerical_jacobian(diffs, k, x._data.dtype, eps, keep)
                    if np.count_nonzero(jacobian):
                        raise GradcheckError(
                            "Numerical gradient for function expected to be zero"
                        )
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


def _check_forward_jacobians(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    func_out: tuple[Tensor, ...],
    eps: float,
    atol: float,
    rtol: float,
) -> None:
    """Forward-mode Jacobian columns (a JVP per input element) against the central
    differences: the tangent of `e_j` (and of `1j * e_j` for a complex input) is the
    derivative of every output along that direction."""
    from . import forward_ad

    float_outputs = [o for o in func_out if _is_float_or_complex(o)]
    reference = [np.array(o._data, copy=True) for o in float_outputs]
    diff_inputs = _diff_inputs(inputs)
    for j, x in enumerate(diff_inputs):
        differences = _central_differences(func, inputs, x, reference, eps)
        directions: list[tuple[complex, list[np.ndarray]]] = [(1, differences.real)]
        if differences.imag is not None:
            directions.append((1j, differences.imag))
        for unit, numerical in directions:
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
                for i, (out_tangent, diffs) in enumerate(zip(tangents, numerical)):
                    expected = diffs[column] / (2 * eps)
                    got = (
                        np.zeros_like(expected)
                        if out_tangent is None
                        else out_tangent._data.reshape(-1)
                    )
                    if not _allclose(got, expected, rtol, atol):
                        raise GradcheckError(
                            f"Jacobian computed with forward mode mismatch for output {i} "
                            f"with respect to input {j},\n"
                            f"numerical:{_as_gradgen(expected)!r}\n"
                            f"analytical:{_as_gradgen(got)!r}\n"
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


def _refuse_unsupported(
    *,
    check_batched_grad: bool,
    check_batched_forward_grad: bool,
    fast_mode: bool,
    masked: bool | None,
) -> None:
    if check_batched_forward_grad:
        raise NotImplementedError(
            "gradcheck: check_batched_forward_grad=True is not supported: gradgen has no "
            "vmap to compute batched forward gradients"
        )
    if check_batched_grad:
        raise NotImplementedError(
            "gradcheck: check_batched_grad=True is not supported: gradgen has no vmap "
            "to compute batched gradients"
        )
    if fast_mode:
        raise NotImplementedError(
            "gradcheck: fast_mode=True is not supported: gradgen only implements the "
            "slow (full Jacobian) mode"
        )
    if masked:
        raise NotImplementedError(
            "gradcheck: masked=True is not supported: gradgen has no sparse tensors"
        )


# -- public API ------------------------------------------------------------------------


def gradcheck(
    func: Callable[..., _TensorOrTensors],
    inputs: _TensorOrTensors,
    *,
    eps: float = 1e-06,
    atol: float = 1e-05,
    rtol: float = 0.001,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the gradients of `func` at `inputs` against central finite differences.

    Differentiates with respect to every tensor in `inputs` that requires grad, and
    checks every output of `func` that requires grad. Returns True when every
    analytical Jacobian entry is within ``atol + rtol * |numerical|`` of the
    numerical one. On failure raises `GradcheckError` naming the output and input
    and showing both Jacobians, or returns False when `raise_exception` is False.

    As in PyTorch the defaults assume double precision: an input of lower precision
    that requires grad gets a warning and will likely fail. `check_forward_ad` also
    checks the forward-mode Jacobian. `check_batched_grad`,
    `check_batched_forward_grad`, `fast_mode` and `masked` are not implemented in
    gradgen and raise NotImplementedError when set.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True"
        )
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be "
            "True"
        )
    _refuse_unsupported(
        check_batched_grad=check_batched_grad,
        check_batched_forward_grad=check_batched_forward_grad,
        fast_mode=fast_mode,
        masked=masked,
    )
    try:
        if check_forward_ad:
            tupled = _as_tuple(inputs)
            _check_inputs(tupled)
            outputs = _check_func_outputs(_as_tuple(func(*tupled)))
            _check_forward_jacobians(func, tupled, outputs, eps, atol, rtol)
        if not check_backward_ad:
            return True
        return _gradcheck_helper(
            func,
            inputs,
            eps=eps,
            atol=atol,
            rtol=rtol,
            nondet_tol=nondet_tol,
            check_undefined_grad=check_undefined_grad,
            check_grad_dtypes=check_grad_dtypes,
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck_helper(
    func: Callable[..., Any],
    inputs: _TensorOrTensors,
    *,
    eps: float,
    atol: float,
    rtol: float,
    nondet_tol: float,
    check_undefined_grad: bool,
    check_grad_dtypes: bool,
) -> bool:
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = _check_func_outputs(_as_tuple(func(*tupled_inputs)))
    _check_jacobians(
        func,
        tupled_inputs,
        func_out,
        eps,
        atol,
        rtol,
        nondet_tol,
        check_grad_dtypes,
    )
    outputs = _differentiable_outputs(func_out)
    _check_backward_mul_by_grad_output(outputs, tupled_inputs)
    if check_undefined_grad:
        _check_undefined_backward(func, outputs, tupled_inputs)
    return True


def _random_grad_output(
    output: Tensor, generator: np.random.Generator, non_contiguous: bool
) -> Tensor:
    """Uniform in [-1, 1) with the output's dtype (double for a non-float output)."""
    dtype = output._data.dtype if _is_float_or_complex(output) else np.dtype("float64")
    shape = output._data.shape
    alloc_shape = shape
    if non_contiguous and output._data.size > 1:
        # Every other element of a wider array: a strided, non-contiguous view.
        alloc_shape = shape[:-1] + (shape[-1] * 2,)
    if dtype.kind == "c":
        real_dtype = np.finfo(dtype).dtype
        values = generator.uniform(-1.0, 1.0, alloc_shape).astype(
            real_dtype
        ) + 1j * generator.uniform(-1.0, 1.0, alloc_shape).astype(real_dtype)
        values = values.astype(dtype)
    else:
        values = generator.uniform(-1.0, 1.0, alloc_shape).astype(dtype)
    if alloc_shape != shape:
        values = values[..., ::2]
    return Tensor(values, requires_grad=True)


def gradgradcheck(
    func: Callable[..., _TensorOrTensors],
    inputs: _TensorOrTensors,
    grad_outputs: _TensorOrTensors | None = None,
    *,
    eps: float = 1e-06,
    atol: float = 1e-05,
    rtol: float = 0.001,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the gradients of `func`'s backward (second derivatives) numerically.

    Builds the function ``(*inputs, *grad_outputs) -> grad(func(*inputs), inputs,
    grad_outputs, create_graph=True)`` and runs `gradcheck` on it. When
    `grad_outputs` is None they are random, uniform in [-1, 1) with each
    differentiable output's dtype and requiring grad, drawn from a numpy Generator
    with a fixed seed, so the check is deterministic.
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True"
        )
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True"
        )
    _refuse_unsupported(
        check_batched_grad=check_batched_grad,
        check_batched_forward_grad=False,
        fast_mode=fast_mode,
        masked=masked,
    )
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        generator = np.random.default_rng(_GRAD_OUTPUTS_SEED)
        outputs = _differentiable_outputs(
            _check_func_outputs(_as_tuple(func(*tupled_inputs)))
        )
        tupled_grad_outputs = tuple(
            _random_grad_output(o, generator, gen_non_contig_grad_outputs)
            for o in outputs
        )
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_indices = {
        i for i, x in enumerate(tupled_inputs) if _is_tensor(x) and x.requires_grad
    }

    def first_derivatives(*args: Any) -> tuple[Tensor, ...]:
        input_args = args[: len(args) - num_outputs]
        given_grad_outputs = args[len(args) - num_outputs :]
        outputs = _differentiable_outputs(
            _check_func_outputs(_as_tuple(func(*input_args)))
        )
        diff_input_args = [
            x for i, x in enumerate(input_args) if i in diff_input_indices
        ]
        grads = _autograd_grad(
            outputs,
            diff_input_args,
            list(given_grad_outputs),
            create_graph=True,
            allow_unused=True,
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivatives,
        tupled_inputs + tupled_grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        fast_mode=fast_mode,
        masked=masked,
    )

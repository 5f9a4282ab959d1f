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

``fast_mode`` compares one number per (input, output) pair, ``v^T J u`` for random
``u`` and ``v``, instead of whole Jacobians (_gradcheck_fast.py; complex functions take
the slow path). ``check_batched_grad`` runs the backward pass under vmap on a batch of
grad_outputs and compares it with the pass per grad_output, and
``check_batched_forward_grad`` runs forward-mode AD under vmap on a batch of tangents
per input against one JVP per tangent (_gradcheck_batched.py; gradgradcheck has no such
flag, as in PyTorch).

Not implemented, and refused with ``NotImplementedError`` rather than ignored:
``masked`` (needs sparse tensors).

The pieces: _gradcheck_inputs.py (the function's inputs and outputs, GradcheckError),
_gradcheck_jacobians.py (numerical and analytical Jacobians), _gradcheck_checks.py (the
comparisons and their messages), _gradcheck_fast.py, _gradcheck_batched.py; this
module holds the two public functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..tensor import Tensor
from ._gradcheck_batched import (
    check_batched_forward_grad as check_batched_forward_grad_of,
)
from ._gradcheck_batched import check_batched_grad as check_batched_grad_of
from ._gradcheck_fast import check_fast, check_fast_forward, uses_complex
from ._gradcheck_checks import (
    _check_backward_mul_by_grad_output,
    _check_forward_jacobians,
    _check_jacobians,
    _check_undefined_backward,
)
from ._gradcheck_inputs import (
    GradcheckError,
    _TensorOrTensors,
    _as_tuple,
    _autograd_grad,
    _check_func_outputs,
    _check_inputs,
    _differentiable_outputs,
    _is_float_or_complex,
    _is_tensor,
)

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]

# The fixed seed of the random grad_outputs gradgradcheck makes when none are given.
_GRAD_OUTPUTS_SEED = 0


def _refuse_unsupported(*, masked: bool | None) -> None:
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
    checks the forward-mode Jacobian, `fast_mode` checks ``v^T J u`` for random
    vectors instead of whole Jacobians, `check_batched_grad` checks the backward pass
    under vmap and `check_batched_forward_grad` forward-mode AD under vmap. `masked`
    is not implemented in gradgen and raises NotImplementedError when set.
    """
    _check_gradcheck_flags(
        check_forward_ad,
        check_backward_ad,
        check_batched_grad,
        check_batched_forward_grad,
    )
    _refuse_unsupported(masked=masked)
    try:
        if check_forward_ad:
            _forward_check(func, inputs, eps, atol, rtol, fast_mode)
        if check_batched_forward_grad:
            tupled = _as_tuple(inputs)
            check_batched_forward_grad_of(func, tupled)
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
            check_batched_grad=check_batched_grad,
            fast_mode=fast_mode,
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _forward_check(
    func: Callable[..., Any],
    inputs: _TensorOrTensors,
    eps: float,
    atol: float,
    rtol: float,
    fast_mode: bool,
) -> None:
    """The forward-mode Jacobian (or, in fast mode, J u) against finite differences."""
    tupled = _as_tuple(inputs)
    _check_inputs(tupled)
    outputs = _check_func_outputs(_as_tuple(func(*tupled)))
    if fast_mode and not uses_complex(tupled, outputs):
        check_fast_forward(func, tupled, outputs, eps, atol, rtol)
    else:
        _check_forward_jacobians(func, tupled, outputs, eps, atol, rtol)


def _check_gradcheck_flags(
    check_forward_ad: bool,
    check_backward_ad: bool,
    check_batched_grad: bool,
    check_batched_forward_grad: bool,
) -> None:
    """gradcheck's flags that contradict each other, refused as PyTorch refuses them."""
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
    check_batched_grad: bool,
    fast_mode: bool,
) -> bool:
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = _check_func_outputs(_as_tuple(func(*tupled_inputs)))
    if fast_mode and not uses_complex(tupled_inputs, func_out):
        check_fast(func, tupled_inputs, func_out, eps, atol, rtol, nondet_tol)
    else:
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
    if check_batched_grad:
        for index, output in enumerate(outputs):
            check_batched_grad_of(tupled_inputs, output, index)
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
    _check_gradgradcheck_flags(
        check_fwd_over_rev, check_rev_over_rev, check_undefined_grad, check_batched_grad
    )
    _refuse_unsupported(masked=masked)
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        tupled_grad_outputs = _random_grad_outputs(
            func, tupled_inputs, gen_non_contig_grad_outputs
        )
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    first_derivatives = _first_derivatives(
        func, tupled_inputs, len(tupled_grad_outputs)
    )
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


def _check_gradgradcheck_flags(
    check_fwd_over_rev: bool,
    check_rev_over_rev: bool,
    check_undefined_grad: bool,
    check_batched_grad: bool,
) -> None:
    """gradgradcheck's flags that contradict each other, refused as PyTorch refuses
    them."""
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


def _random_grad_outputs(
    func: Callable[..., _TensorOrTensors],
    tupled_inputs: tuple[Any, ...],
    non_contiguous: bool,
) -> tuple[Tensor, ...]:
    """One random grad_output per differentiable output of `func` at the inputs, from
    a numpy Generator with a fixed seed (so the check is deterministic)."""
    generator = np.random.default_rng(_GRAD_OUTPUTS_SEED)
    outputs = _differentiable_outputs(
        _check_func_outputs(_as_tuple(func(*tupled_inputs)))
    )
    return tuple(_random_grad_output(o, generator, non_contiguous) for o in outputs)


def _first_derivatives(
    func: Callable[..., _TensorOrTensors],
    tupled_inputs: tuple[Any, ...],
    num_outputs: int,
) -> Callable[..., tuple[Tensor, ...]]:
    """``(*inputs, *grad_outputs) -> grad(func(*inputs), inputs, grad_outputs,
    create_graph=True)``: the function whose gradients gradgradcheck checks."""
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

    return first_derivatives

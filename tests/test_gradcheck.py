"""gradcheck / gradgradcheck (gradgen.autograd.gradcheck).

Every case builds the same function for a library ``lib`` (gradgen or torch) so that,
where torch is installed, gradgen's verdict and its error message can be compared
with PyTorch's own gradcheck on the very same function and inputs. PyTorch's verdicts
and messages are recorded in tests/golden/ (torch_oracle.oracle): without torch the
comparisons use them, with torch they are also checked against live torch.

The failing cases make a deliberately wrong gradient with a tensor hook on an
intermediate result, so the forward stays correct and only backward is wrong.
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle
from gradgen.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck

Builder = Callable[[Any], Callable[..., Any]]


def make(lib: Any, values: Any, requires_grad: bool = True) -> Any:
    """A float64 (or complex128) tensor of `lib` from numpy values."""
    array = np.asarray(values)
    if array.dtype.kind != "c":
        array = array.astype(np.float64)
    return lib.tensor(array, requires_grad=requires_grad)


def make_all(lib: Any, arrays: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(make(lib, a) for a in arrays)


def outcome(check: Callable[..., bool], *args: Any, **kwargs: Any) -> str:
    """The result or the exception of a check, in a library-neutral spelling."""
    try:
        return repr(check(*args, **kwargs))
    except Exception as error:  # noqa: BLE001 - the exception is the result here
        text = f"{type(error).__name__}: {error}"
        return text.replace("torch.", "gradgen.")


def torch_outcome(
    key: str, check: str, build: Builder, *arrays: Any, **kwargs: Any
) -> str:
    """PyTorch's `outcome` of torch.autograd.<check>(build(torch), *inputs, **kwargs),
    each of `arrays` made a tensor (a tuple of arrays: a tuple of tensors)."""

    def compute(lib: Any) -> str:
        inputs = [
            make_all(lib, a) if isinstance(a, tuple) else make(lib, a) for a in arrays
        ]
        return outcome(getattr(lib.autograd, check), build(lib), *inputs, **kwargs)

    answer: str = oracle(key, compute)
    return answer


rng = np.random.default_rng(20240611)
POSITIVE_2x3 = rng.uniform(0.5, 2.0, (2, 3))
POSITIVE_3 = rng.uniform(0.5, 2.0, 3)
SIGNED_2x3 = rng.uniform(-2.0, 2.0, (2, 3))
COMPLEX_3 = rng.uniform(0.2, 1.5, 3) + 1j * rng.uniform(0.2, 1.5, 3)
COMPLEX_3B = rng.uniform(-1.5, 1.5, 3) + 1j * rng.uniform(-1.5, 1.5, 3)


# ---------------------------------------------------------------------------------------
# Correct functions pass gradcheck and gradgradcheck, in gradgen as in torch
# ---------------------------------------------------------------------------------------

CORRECT: dict[str, tuple[Builder, tuple[Any, ...]]] = {
    "product": (lambda lib: lambda x, y: x * y, (SIGNED_2x3, POSITIVE_2x3)),
    "triple_product": (lambda lib: lambda x, y: x * y * x, (SIGNED_2x3, SIGNED_2x3)),
    "pow_2.5": (lambda lib: lambda x: x**2.5, (POSITIVE_2x3,)),
    "pow_-1": (lambda lib: lambda x: lib.pow(x, -1), (POSITIVE_2x3,)),
    "pow_mixed": (lambda lib: lambda x, y: x**2.5 * y**-1, (POSITIVE_2x3, POSITIVE_3)),
    "broadcast_mul": (lambda lib: lambda x, y: x * y, (SIGNED_2x3, POSITIVE_3)),
    "broadcast_add_sub_alpha": (
        lambda lib: lambda x, y: lib.sub(lib.add(x, y, alpha=2.5), y * x, alpha=-0.5),
        (SIGNED_2x3, SIGNED_2x3[0]),
    ),
    "permute": (
        lambda lib: lambda x, y: (x * y).permute(1, 0),
        (SIGNED_2x3, POSITIVE_3),
    ),
    "permute_3d": (
        lambda lib: lambda x: (x * x).permute(2, 0, 1),
        (rng.uniform(-1.0, 1.0, (2, 3, 2)),),
    ),
    "expand_sum_to_size": (
        lambda lib: lambda x: (x.expand(4, 3) * x).sum_to_size(1, 3) * x,
        (SIGNED_2x3[:1],),
    ),
    "neg_clone_numbers": (
        lambda lib: lambda x: -(lib.clone(x) * 3.0) + 2 - x**2,
        (SIGNED_2x3,),
    ),
    "several_outputs": (
        lambda lib: lambda x, y: (x * y, y**2, -x),
        (SIGNED_2x3, POSITIVE_2x3),
    ),
    "scalar_0d": (lambda lib: lambda x, y: x**3 * y, (1.25, POSITIVE_3)),
    "identity_output_aliases_input": (lambda lib: lambda x: x, (SIGNED_2x3,)),
    "permuted_input_view": (
        lambda lib: lambda x: x.permute(1, 0),
        (SIGNED_2x3,),
    ),
    "complex_product": (lambda lib: lambda x, y: x * y, (COMPLEX_3, COMPLEX_3B)),
    "complex_square": (lambda lib: lambda x: x**2, (COMPLEX_3,)),
    "complex_conj_real": (
        lambda lib: lambda x, y: lib.real(x.conj() * y),
        (COMPLEX_3, COMPLEX_3B),
    ),
    "complex_times_real": (
        lambda lib: lambda z, r: z * r,
        (COMPLEX_3, POSITIVE_3),
    ),
}


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_function_passes_gradcheck_and_gradgradcheck(name: str) -> None:
    build, arrays = CORRECT[name]
    inputs = make_all(gradgen, arrays)
    assert gradcheck(build(gradgen), inputs) is True
    assert gradgradcheck(build(gradgen), inputs) is True


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_function_passes_in_torch_too(name: str) -> None:
    build, arrays = CORRECT[name]
    assert torch_outcome("gradcheck", "gradcheck", build, arrays) == "True"
    assert torch_outcome("gradgradcheck", "gradgradcheck", build, arrays) == "True"


def test_inputs_may_be_a_tensor_a_list_or_hold_non_tensors() -> None:
    x = make(gradgen, SIGNED_2x3)
    assert gradcheck(lambda a: a * a, x)
    assert gradcheck(lambda a, b: a * b, [x, make(gradgen, POSITIVE_3)])
    constant = make(gradgen, POSITIVE_3, requires_grad=False)
    assert gradcheck(lambda a, n, c: a * n * c, (x, 3, constant))
    assert gradgradcheck(lambda a, n, c: a**n * c, (x, 3, constant))


def test_gradcheck_restores_the_inputs_exactly() -> None:
    x = make(gradgen, SIGNED_2x3)
    z = make(gradgen, COMPLEX_3)
    before_x, before_z = x._data.copy(), z._data.copy()
    version = x._version
    assert gradcheck(lambda a, b: (a * a, b * b), (x, z))
    np.testing.assert_array_equal(x._data, before_x)
    np.testing.assert_array_equal(z._data, before_z)
    assert x._version == version
    assert x.grad is None and z.grad is None  # grad() never touches .grad


def test_gradgradcheck_with_given_and_non_contiguous_grad_outputs() -> None:
    x = make(gradgen, POSITIVE_2x3)
    grad_output = make(gradgen, SIGNED_2x3)
    assert gradgradcheck(lambda a: a**2.5, x, grad_output)
    assert gradgradcheck(lambda a: a**2.5, x, (grad_output.detach(),))
    assert gradgradcheck(lambda a: (a**3, a * a), x, gen_non_contig_grad_outputs=True)


# ---------------------------------------------------------------------------------------
# A wrong gradient is caught: message, indices, values, raise_exception=False
# ---------------------------------------------------------------------------------------

HOOK_X = np.array([1.5, 2.25])
HOOK_Y = np.array([0.5, 1.25, 3.0])


def doubled_second_output(lib: Any) -> Callable[..., Any]:
    """Output 1 (y * y + 1) gets twice its true gradient from a hook."""

    def func(x: Any, y: Any) -> tuple[Any, Any]:
        square = y * y
        square.register_hook(lambda g: g * 2)
        return x * 2, square + 1

    return func


def test_wrong_gradient_raises_with_indices_and_values() -> None:
    inputs = make_all(gradgen, (HOOK_X, HOOK_Y))
    with pytest.raises(GradcheckError) as info:
        gradcheck(doubled_second_output(gradgen), inputs)
    assert isinstance(info.value, RuntimeError)
    message = str(info.value)
    assert message.startswith(
        "Jacobian mismatch for output 1 with respect to input 1,\nnumerical:tensor("
    )
    # The analytical Jacobian is exact: twice the true diagonal 2 * y.
    assert message.endswith(
        "analytical:tensor([[ 2.,  0.,  0.],\n"
        "        [ 0.,  5.,  0.],\n"
        "        [ 0.,  0., 12.]], dtype=gradgen.float64)\n"
    )
    numerical = re.search(r"numerical:tensor\((.*?)\], dtype", message, re.S)
    assert numerical is not None
    values = [float(v) for v in re.findall(r"-?\d+\.\d*", numerical.group(1))]
    np.testing.assert_allclose(
        np.reshape(values, (3, 3)), np.diag(2 * HOOK_Y), rtol=1e-6, atol=1e-6
    )


def test_wrong_gradient_message_is_torchs() -> None:
    ours = outcome(
        gradcheck, doubled_second_output(gradgen), make_all(gradgen, (HOOK_X, HOOK_Y))
    )
    theirs = torch_outcome(
        "outcome", "gradcheck", doubled_second_output, (HOOK_X, HOOK_Y)
    )
    assert ours == theirs


def test_wrong_gradient_with_raise_exception_false_returns_false() -> None:
    inputs = make_all(gradgen, (HOOK_X, HOOK_Y))
    assert (
        gradcheck(doubled_second_output(gradgen), inputs, raise_exception=False)
        is False
    )


def test_wrong_gradient_within_tolerance_passes() -> None:
    def slightly_off(x: Any) -> Any:
        square = x * x
        square.register_hook(lambda g: None if g is None else g * (1 + 1e-4))
        return square

    assert gradcheck(slightly_off, make(gradgen, HOOK_X))
    assert not gradcheck(
        slightly_off, make(gradgen, HOOK_X), rtol=1e-6, raise_exception=False
    )


def doubled_complex(lib: Any) -> Callable[..., Any]:
    def func(z: Any) -> Any:
        square = z * z
        square.register_hook(lambda g: g * 2)
        return square

    return func


def doubled_real_of_complex(lib: Any) -> Callable[..., Any]:
    def func(z: Any, w: Any) -> Any:
        product = lib.real(z * w)
        product.register_hook(lambda g: g * 2)
        return product

    return func


def test_wrong_complex_gradient_reports_the_imaginary_part_first() -> None:
    with pytest.raises(GradcheckError) as info:
        gradcheck(doubled_complex(gradgen), make(gradgen, COMPLEX_3))
    assert str(info.value).startswith(
        "While considering the imaginary part of complex outputs only, Jacobian "
        "mismatch for output 0 with respect to input 0,\nnumerical:tensor("
    )
    assert "dtype=gradgen.complex128)\nanalytical:tensor(" in str(info.value)


@pytest.mark.parametrize(
    "build, arrays",
    [
        (doubled_complex, (COMPLEX_3,)),
        (doubled_real_of_complex, (COMPLEX_3, COMPLEX_3 * 1j)),
    ],
    ids=["complex_output", "real_output_of_complex_inputs"],
)
def test_wrong_complex_gradient_message_is_torchs(build: Builder, arrays: Any) -> None:
    ours = outcome(gradcheck, build(gradgen), make_all(gradgen, arrays))
    theirs = torch_outcome("outcome", "gradcheck", build, arrays)
    assert ours == theirs
    assert "Jacobian mismatch for output 0 with respect to input 0" in ours


def detached_grad_output(lib: Any) -> Callable[..., Any]:
    """First derivative right, but its dependence on grad_output is cut."""

    def func(x: Any) -> Any:
        cube = x**3
        cube.register_hook(lambda g: None if g is None else g.detach())
        return cube

    return func


def test_gradgradcheck_catches_a_wrong_second_derivative() -> None:
    x = make(gradgen, HOOK_X)
    assert gradcheck(detached_grad_output(gradgen), x)
    with pytest.raises(
        GradcheckError,
        match=r"^Jacobian mismatch for output 0 with "
        r"respect to input 1,\nnumerical:",
    ):
        gradgradcheck(detached_grad_output(gradgen), x)
    assert (
        gradgradcheck(detached_grad_output(gradgen), x, raise_exception=False) is False
    )


def test_gradgradcheck_random_grad_outputs_are_deterministic() -> None:
    x = make(gradgen, HOOK_X)
    first = outcome(gradgradcheck, detached_grad_output(gradgen), x)
    second = outcome(gradgradcheck, detached_grad_output(gradgen), x)
    assert first.startswith("GradcheckError: Jacobian mismatch")
    assert first == second


def test_gradgradcheck_failure_message_is_torchs() -> None:
    grad_output = np.array([0.75, -0.5])
    ours = outcome(
        gradgradcheck,
        detached_grad_output(gradgen),
        make(gradgen, HOOK_X),
        (make(gradgen, grad_output),),
    )
    theirs = torch_outcome(
        "outcome", "gradgradcheck", detached_grad_output, HOOK_X, (grad_output,)
    )
    assert ours == theirs


def test_backward_not_multiplied_by_grad_output() -> None:
    def build(lib: Any) -> Callable[..., Any]:
        def func(x: Any) -> Any:
            square = x * x
            square.register_hook(lambda g: g if g.numpy().any() else g + 1)
            return square

        return func

    x = make(gradgen, HOOK_X)
    with pytest.raises(
        GradcheckError, match="^backward not multiplied by grad_output$"
    ):
        gradcheck(build(gradgen), x)
    assert outcome(gradcheck, build(gradgen), x) == torch_outcome(
        "outcome", "gradcheck", build, HOOK_X
    )


def test_non_deterministic_backward_is_reported() -> None:
    counter = itertools.count()

    def func(x: Any) -> Any:
        square = x * x
        square.register_hook(
            lambda g: None if g is None else g * (1 + 1e-9 * next(counter))
        )
        return square

    with pytest.raises(GradcheckError, match="^Backward is not reentrant"):
        gradcheck(func, make(gradgen, HOOK_X))
    assert gradcheck(func, make(gradgen, HOOK_X), nondet_tol=1e-6)


# ---------------------------------------------------------------------------------------
# Outputs that do not require grad
# ---------------------------------------------------------------------------------------


def test_no_differentiable_output_must_have_zero_numerical_gradient() -> None:
    x = make(gradgen, HOOK_X)
    with pytest.raises(
        GradcheckError, match="^Numerical gradient for function expected to be zero$"
    ):
        gradcheck(lambda a: a.detach() * 2, x)
    assert gradcheck(lambda a: (a * 0).detach(), x)
    # Only differentiable outputs are compared when there are some (as PyTorch).
    assert gradcheck(lambda a: (a.detach() * 2, a * 3), x)


def test_outputs_that_do_not_require_grad_agree_with_torch() -> None:
    builds: list[Builder] = [
        lambda lib: lambda a: a.detach() * 2,
        lambda lib: lambda a: (a * 0).detach(),
        lambda lib: lambda a: (a.detach() * 2, a * 3),
    ]
    for number, build in enumerate(builds):
        ours = outcome(gradcheck, build(gradgen), make(gradgen, HOOK_X))
        theirs = torch_outcome(str(number), "gradcheck", build, HOOK_X)
        assert ours == theirs


# ---------------------------------------------------------------------------------------
# Undefined output gradients
# ---------------------------------------------------------------------------------------

UNDEFINED_MESSAGE = (
    "^Expected (backward function to handle undefined output grads|all input grads "
    "to be undefined or zero when all output grads are undefined or zero)"
)


def test_backward_that_rejects_undefined_grads_fails_the_check() -> None:
    def func(x: Any) -> tuple[Any, Any]:
        square = x * x

        def refuse_none(grads: tuple[Any, ...]) -> None:
            if grads[0] is None:
                raise RuntimeError("this backward cannot take an undefined gradient")

        square.grad_fn.register_prehook(refuse_none)
        return square, x * 3

    x = make(gradgen, HOOK_X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(GradcheckError, match=UNDEFINED_MESSAGE) as info:
            gradcheck(func, x)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert any("check_undefined_grad=False" in str(w.message) for w in caught)
    assert gradcheck(func, x, check_undefined_grad=False)


def test_backward_that_turns_undefined_grads_into_values_fails_the_check() -> None:
    def func(x: Any) -> Any:
        square = x * x

        def fill_none(grads: tuple[Any, ...]) -> tuple[Any, ...]:
            ones = gradgen.ones(2, dtype=gradgen.float64)
            return tuple(ones if g is None else g for g in grads)

        square.grad_fn.register_prehook(fill_none)
        return square

    x = make(gradgen, HOOK_X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(GradcheckError, match=UNDEFINED_MESSAGE):
            gradcheck(func, x)
        assert gradcheck(func, x, raise_exception=False) is False
    assert gradcheck(func, x, check_undefined_grad=False)


# ---------------------------------------------------------------------------------------
# Inputs: precision warning and errors
# ---------------------------------------------------------------------------------------

FLOAT32_WARNING = (
    "Input #0 requires gradient and is not a double precision floating point or "
    "complex. This check will likely fail if all the inputs are not of double "
    "precision floating point or complex."
)


def test_single_precision_input_warns_and_likely_fails() -> None:
    x = gradgen.tensor(HOOK_X.astype(np.float32), requires_grad=True)
    with pytest.warns(UserWarning, match=re.escape(FLOAT32_WARNING)) as caught:
        result = gradcheck(lambda a: a * 2, x, raise_exception=False)
    assert result is False  # float32 finite differences are too coarse, as in torch
    assert [str(w.message).strip() for w in caught] == [FLOAT32_WARNING]

    def theirs(torch: Any) -> tuple[Any, list[str]]:
        t = torch.tensor(HOOK_X.astype(np.float32), requires_grad=True)
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            verdict = torch.autograd.gradcheck(
                lambda a: a * 2, t, raise_exception=False
            )
        return verdict, [str(w.message).strip() for w in warned]

    verdict, messages = oracle("verdict and warnings", theirs)
    assert verdict is False
    assert FLOAT32_WARNING in messages


def test_warning_names_the_input_index_and_ignores_inputs_without_grad() -> None:
    y = gradgen.tensor(HOOK_X.astype(np.float32))  # no grad: no warning
    x = gradgen.tensor(HOOK_X.astype(np.complex64), requires_grad=True)
    with pytest.warns(UserWarning, match=r"^Input #1 requires gradient") as caught:
        gradcheck(lambda b, a: a * b, (y, x), raise_exception=False)
    assert len(caught) == 1


def test_no_input_requiring_grad_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="at least one input tensor to require"):
        gradcheck(lambda a: a * 2, make(gradgen, HOOK_X, requires_grad=False))


def test_overlapping_input_is_refused() -> None:
    x = make(gradgen, [[1.0, 2.0]]).expand(3, 2)
    with pytest.raises(
        RuntimeError, match="The 0th input has a dimension with stride 0"
    ):
        gradcheck(lambda a: a * 2, x)


def test_non_tensor_output_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="output 1 is int"):
        gradcheck(lambda a: (a * 2, 3), make(gradgen, HOOK_X))


# ---------------------------------------------------------------------------------------
# Options gradgen does not implement are refused, never ignored
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option, pattern",
    [
        ({"masked": True}, "masked"),
    ],
)
def test_unsupported_gradcheck_options_raise(
    option: dict[str, Any], pattern: str
) -> None:
    with pytest.raises(NotImplementedError, match=pattern):
        gradcheck(
            lambda a: a * 2, make(gradgen, HOOK_X), raise_exception=False, **option
        )


@pytest.mark.parametrize(
    "option, pattern",
    [
        ({"masked": True}, "masked"),
    ],
)
def test_unsupported_gradgradcheck_options_raise(
    option: dict[str, Any], pattern: str
) -> None:
    with pytest.raises(NotImplementedError, match=pattern):
        gradgradcheck(lambda a: a * a, make(gradgen, HOOK_X), **option)


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_forward_mode_check_passes_on_correct_functions(name: str) -> None:
    build, arrays = CORRECT[name]
    inputs = make_all(gradgen, arrays)
    assert gradcheck(
        build(gradgen), inputs, check_forward_ad=True, check_backward_ad=False
    )
    assert gradcheck(build(gradgen), inputs, check_forward_ad=True)


def test_forward_over_reverse_check_passes() -> None:
    x = make(gradgen, HOOK_X)
    assert gradgradcheck(lambda a: a * a * a, x, check_fwd_over_rev=True)


def test_forward_mode_check_reports_a_wrong_tangent() -> None:
    # detach() drops the tangent of one factor: the JVP is x_t * x instead of 2 x x_t.
    x = make(gradgen, HOOK_X)
    with pytest.raises(GradcheckError) as raised:
        gradcheck(
            lambda a: a * a.detach(), x, check_forward_ad=True, check_backward_ad=False
        )
    assert str(raised.value).startswith(
        "Jacobian computed with forward mode mismatch for output 0 with respect to input 0,"
    )


def test_option_combinations_torch_rejects_are_rejected() -> None:
    x = make(gradgen, HOOK_X)
    with pytest.raises(AssertionError, match="at least one of check_forward_ad"):
        gradcheck(lambda a: a * 2, x, check_backward_ad=False)
    with pytest.raises(AssertionError, match="requires check_backward_ad"):
        gradcheck(
            lambda a: a * 2,
            x,
            check_batched_grad=True,
            check_backward_ad=False,
            check_forward_ad=True,
        )
    with pytest.raises(AssertionError, match="at least one of check_fwd_over_rev"):
        gradgradcheck(lambda a: a * a, x, check_rev_over_rev=False)


def test_options_that_are_off_or_none_are_accepted() -> None:
    x = make(gradgen, HOOK_X)
    assert gradcheck(
        lambda a: a * a,
        x,
        fast_mode=False,
        masked=None,
        check_batched_grad=False,
        check_forward_ad=False,
        check_grad_dtypes=True,
    )
    assert gradgradcheck(lambda a: a * a, x, masked=False, check_fwd_over_rev=False)

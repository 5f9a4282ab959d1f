"""Pointwise losses (regression losses, binary_cross_entropy_with_logits, kl_div) and
their backward operators against PyTorch.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import numbered, oracle
from ops.nn_checks import (
    MEAN,
    NONE,
    SUM,
    _arrays,
    _check_against_torch,
    _dtype_name,
    _nn,
    _same_error,
    _second_derivatives_match,
)

# torch.autograd.forward_ad's first use scripts a function with torch.jit (deprecated).
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)


REDUCTIONS = [NONE, MEAN, SUM]


# -- losses ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "name, args",
    [
        ("l1_loss", ()),
        ("smooth_l1_loss", (1.0,)),
        ("smooth_l1_loss", (0.25,)),
        ("smooth_l1_loss", (0.0,)),
        ("huber_loss", (1.0,)),
        ("huber_loss", (0.3,)),
    ],
)
def test_regression_losses_match_torch(name, args, reduction, dtype) -> None:
    x, y = _arrays(12, (4, 3), (4, 3), dtype=dtype)
    _check_against_torch(
        lambda a, b: getattr(gradgen, name)(a, b, reduction, *args),
        lambda torch: lambda a, b: _nn(torch, name)(a, b, reduction, *args),
        [x, y],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "name, args", [("smooth_l1_loss", (0.7,)), ("huber_loss", (0.7,)), ("l1_loss", ())]
)
def test_regression_losses_second_derivatives_match_torch(
    name, args, reduction
) -> None:
    x, y = _arrays(13, (3, 2), (3, 2))
    _second_derivatives_match(
        lambda a, b: getattr(gradgen, name)(a, b, reduction, *args) * (a * b).sum(),
        lambda torch: lambda a, b: _nn(torch, name)(a, b, reduction, *args)
        * (a * b).sum(),
        [x, y],
    )


def test_loss_backward_operators_match_torch() -> None:
    g, x, y = _arrays(14, (3, 4), (3, 4), (3, 4))
    for reduction in REDUCTIONS:
        grad = g if reduction == NONE else g[0, :1].reshape(())
        for name, extra in (
            ("smooth_l1_loss_backward", 0.6),
            ("smooth_l1_loss_backward", 0.0),
            ("huber_loss_backward", 0.6),
        ):
            ours = getattr(gradgen, name)(
                *(gradgen.tensor(a) for a in (grad, x, y)), reduction, extra
            )
            theirs = oracle(
                f"{name} {reduction} {extra}",
                lambda torch: getattr(torch.ops.aten, name)(
                    *(torch.tensor(a) for a in (grad, x, y)), reduction, extra
                ),
            )
            np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-12, err_msg=name)


def test_loss_backward_operators_second_derivatives_match_torch() -> None:
    g, x, y = _arrays(15, (3, 2), (3, 2), (3, 2))
    for reduction in REDUCTIONS:
        grad = g if reduction == NONE else g[0, :1].reshape(())
        for name in ("smooth_l1_loss_backward", "huber_loss_backward"):
            _second_derivatives_match(
                lambda gg, a, b: getattr(gradgen, name)(gg, a, b, reduction, 0.8) * a,
                lambda torch: lambda gg, a, b: getattr(torch.ops.aten, name)(
                    gg, a, b, reduction, 0.8
                )
                * a,
                [grad, x, y],
            )


def test_loss_errors_match_torch() -> None:
    x, y = np.ones(3), np.zeros(3)
    cases = [
        ("smooth_l1_loss", (x, y, MEAN, -1.0)),
        ("huber_loss", (x, y, MEAN, 0.0)),
        ("huber_loss", (x, y, MEAN, -2.0)),
        ("smooth_l1_loss", (np.ones(3, np.int64), np.ones(3, np.int64), MEAN, 1.0)),
        ("huber_loss", (np.ones(3, np.int64), np.ones(3, np.int64), MEAN, 1.0)),
        ("smooth_l1_loss", (x, np.ones(2), MEAN, 1.0)),
        ("huber_loss", (x, np.ones(2), MEAN, 1.0)),
        ("l1_loss", (x, np.ones(2), MEAN)),
    ]
    for name, args in cases:
        _same_error(
            lambda: getattr(gradgen, name)(
                *[gradgen.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
            ),
            lambda torch: lambda: _nn(torch, name)(
                *[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
            ),
        )
    with pytest.raises(RuntimeError, match="INTERNAL ASSERT FAILED"):
        gradgen.huber_loss(gradgen.tensor(x), gradgen.tensor(y), 3)


def test_losses_promote_and_broadcast_as_torch() -> None:
    x = np.array([1.0, -2.0, 0.5], np.float32)
    y = np.array([0.5], np.float64)
    for name, args in (
        ("smooth_l1_loss", (0.5,)),
        ("huber_loss", (0.5,)),
        ("l1_loss", ()),
    ):
        for a, b in ((x, y), (y, x)):
            ours = getattr(gradgen, name)(
                gradgen.tensor(a), gradgen.tensor(b), NONE, *args
            )

            def loss(torch: Any) -> Any:
                with warnings.catch_warnings():  # torch: "An output ... was resized"
                    warnings.simplefilter("ignore")
                    return _nn(torch, name)(
                        torch.tensor(a), torch.tensor(b), NONE, *args
                    )

            theirs = oracle(numbered(name), loss)
            assert _dtype_name(ours) == theirs.dtype.name
            assert ours.shape == theirs.shape
            np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-6)


BCE_CASES = [
    ("none", None, None),
    ("weight", (3,), None),
    ("pos_weight", None, (3,)),
    ("both", (4, 3), (1, 3)),
    ("scalars", (), ()),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case, weight_shape, pos_weight_shape", BCE_CASES)
def test_binary_cross_entropy_with_logits_matches_torch(
    case, weight_shape, pos_weight_shape, reduction, dtype
) -> None:
    rng = np.random.default_rng(16)
    x = (rng.normal(size=(4, 3)) * 4).astype(dtype)
    x[0, 0], x[0, 1] = 60.0, -60.0
    y = rng.uniform(0, 1, (4, 3)).astype(dtype)
    arrays = [x, y]
    flags = [True, True]
    for shape in (weight_shape, pos_weight_shape):
        if shape is not None:
            arrays.append(rng.uniform(0.5, 3, shape).astype(dtype))
            flags.append(False)

    def call(lib: Any, a: Any, b: Any, *rest: Any) -> Any:
        rest_iter = iter(rest)
        weight = next(rest_iter) if weight_shape is not None else None
        pos_weight = next(rest_iter) if pos_weight_shape is not None else None
        return lib.binary_cross_entropy_with_logits(a, b, weight, pos_weight, reduction)

    _check_against_torch(
        lambda *t: call(gradgen, *t),
        lambda torch: lambda *t: call(torch, *t),
        arrays,
        flags,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits_second_derivatives_match_torch(
    reduction,
) -> None:
    x, y = _arrays(17, (3, 2), (3, 2))
    w, p = np.array([0.5, 2.0]), np.array([3.0, 0.25])
    for weight, pos_weight in ((None, None), (w, p)):

        def ours(a: Any, b: Any) -> Any:
            return (
                gradgen.binary_cross_entropy_with_logits(
                    a,
                    b,
                    None if weight is None else gradgen.tensor(weight),
                    None if pos_weight is None else gradgen.tensor(pos_weight),
                    reduction,
                )
                * a.sum()
            )

        def theirs(torch: Any) -> Callable[..., Any]:
            def function(a: Any, b: Any) -> Any:
                return (
                    torch.binary_cross_entropy_with_logits(
                        a,
                        b,
                        None if weight is None else torch.tensor(weight),
                        None if pos_weight is None else torch.tensor(pos_weight),
                        reduction,
                    )
                    * a.sum()
                )

            return function

        _second_derivatives_match(ours, theirs, [x, y])


def test_binary_cross_entropy_with_logits_dtypes_and_errors_match_torch() -> None:
    x32, x64 = np.array([0.5, -1.0, 2.0], np.float32), np.array([0.5, -1.0, 2.0])
    for a, b, w in (
        (x32, x64, None),
        (x64, x32, None),
        (x32, x32, x64),
        (x64, x32, x64),
    ):
        weight = None if w is None else gradgen.tensor(w)
        ours = gradgen.binary_cross_entropy_with_logits(
            gradgen.tensor(a), gradgen.tensor(b * 0.1), weight, weight, MEAN
        )

        def loss(torch: Any) -> Any:
            weight_t = None if w is None else torch.tensor(w)
            return torch.binary_cross_entropy_with_logits(
                torch.tensor(a), torch.tensor(b * 0.1), weight_t, weight_t, MEAN
            )

        theirs = oracle(numbered("loss"), loss)
        assert _dtype_name(ours) == theirs.dtype.name
        np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-6)
    ones = np.ones(3)
    cases = [
        (np.ones(3, np.int64), np.ones(3, np.int64), None, None),
        (np.ones(3, np.complex128), np.ones(3, np.complex128), None, None),
        (ones, np.ones(3, np.int64), None, None),
        (ones, np.ones(3, bool), None, None),
        (ones, np.ones(1), None, None),
        (ones, ones, np.ones((2, 1)), None),
        (ones, ones, None, np.ones((2, 1))),
        (ones, ones, np.ones(2), None),
    ]
    for a, b, w, p in cases:
        _same_error(
            lambda: gradgen.binary_cross_entropy_with_logits(
                gradgen.tensor(a),
                gradgen.tensor(b),
                None if w is None else gradgen.tensor(w),
                None if p is None else gradgen.tensor(p),
                NONE,
            ),
            lambda torch: lambda: torch.binary_cross_entropy_with_logits(
                torch.tensor(a),
                torch.tensor(b),
                None if w is None else torch.tensor(w),
                None if p is None else torch.tensor(p),
                NONE,
            ),
        )
    with pytest.raises(
        RuntimeError, match="is not differentiable with respect to argument 'weight'"
    ):
        gradgen.binary_cross_entropy_with_logits(
            gradgen.tensor(ones, requires_grad=True),
            gradgen.tensor(ones),
            gradgen.tensor(ones, requires_grad=True),
        )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_matches_torch(log_target, reduction, dtype) -> None:
    rng = np.random.default_rng(18)
    x = np.log(rng.dirichlet(np.ones(4), 3)).astype(dtype)
    y = rng.dirichlet(np.ones(4), 3).astype(dtype)
    if log_target:
        y = np.log(y)
    _check_against_torch(
        lambda a, b: gradgen.kl_div(a, b, reduction, log_target=log_target),
        lambda torch: lambda a, b: torch.kl_div(a, b, reduction, log_target=log_target),
        [x, y],
    )
    _second_derivatives_match(
        lambda a, b: gradgen.kl_div(a, b, reduction, log_target=log_target) * a.sum(),
        lambda torch: lambda a, b: torch.kl_div(a, b, reduction, log_target=log_target)
        * a.sum(),
        [x.astype("float64"), y.astype("float64")],
    )


def test_kl_div_zero_and_negative_targets_and_errors_match_torch() -> None:
    x = np.array([-1.0, -2.0, -0.5])
    y = np.array([0.0, -1.0, 2.0])
    ours = gradgen.kl_div(
        gradgen.tensor(x, requires_grad=True),
        gradgen.tensor(y, requires_grad=True),
        NONE,
    )
    theirs = oracle(
        "kl_div",
        lambda torch: torch.kl_div(
            torch.tensor(x, requires_grad=True),
            torch.tensor(y, requires_grad=True),
            NONE,
        ),
    )
    np.testing.assert_allclose(ours.detach().numpy(), theirs, rtol=1e-12)
    for a, b in (
        (np.ones(2, np.int64), np.ones(2)),
        (np.ones(2), np.ones(2, np.int32)),
        (np.ones(2), np.ones(2, bool)),
        (np.ones(2, np.complex128), np.ones(2)),
    ):
        _same_error(
            lambda: gradgen.kl_div(gradgen.tensor(a), gradgen.tensor(b), MEAN),
            lambda torch: lambda: torch.kl_div(torch.tensor(a), torch.tensor(b), MEAN),
        )

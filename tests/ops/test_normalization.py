"""layer_norm, native_layer_norm and normalize against PyTorch."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from gradgen.autograd import forward_ad, gradcheck, gradgradcheck
from torch_oracle import oracle
from ops.nn_checks import (
    _arrays,
    _check_against_torch,
    _same_error,
    _second_derivatives_match,
)

# torch.autograd.forward_ad's first use scripts a function with torch.jit (deprecated).
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)


# -- layer norm --------------------------------------------------------------------------

LAYER_NORM_CASES = [
    ((2, 3, 4), (4,), True, True),
    ((2, 3, 4), (3, 4), True, True),
    ((2, 3, 4), (2, 3, 4), True, False),
    ((5,), (5,), False, False),
    ((3, 5), (5,), True, False),
    ((3, 5), (5,), False, True),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape, normalized, has_weight, has_bias", LAYER_NORM_CASES)
def test_layer_norm_matches_torch(
    shape, normalized, has_weight, has_bias, dtype
) -> None:
    x, w, b = _arrays(19, shape, normalized, normalized, dtype=dtype)
    arrays, flags = [x], [True]
    if has_weight:
        arrays.append(w)
        flags.append(True)
    if has_bias:
        arrays.append(b)
        flags.append(True)

    def call(lib: Any, a: Any, *rest: Any) -> Any:
        it = iter(rest)
        weight = next(it) if has_weight else None
        bias = next(it) if has_bias else None
        return lib.layer_norm(a, normalized, weight, bias, 1e-5)

    rtol = 1e-5 if dtype == "float32" else None
    _check_against_torch(
        lambda *t: call(gradgen, *t),
        lambda torch: lambda *t: call(torch, *t),
        arrays,
        flags,
        rtol=rtol,
    )


@pytest.mark.parametrize("shape, normalized, has_weight, has_bias", LAYER_NORM_CASES)
def test_native_layer_norm_statistics_match_torch(
    shape, normalized, has_weight, has_bias
) -> None:
    x, w, b = _arrays(20, shape, normalized, normalized)
    weight = w if has_weight else None
    bias = b if has_bias else None
    ours = gradgen.native_layer_norm(
        gradgen.tensor(x, requires_grad=True),
        normalized,
        None if weight is None else gradgen.tensor(weight),
        None if bias is None else gradgen.tensor(bias),
        1e-3,
    )

    def outputs(torch: Any) -> list[Any]:
        results = torch.native_layer_norm(
            torch.tensor(x, requires_grad=True),
            normalized,
            None if weight is None else torch.tensor(weight),
            None if bias is None else torch.tensor(bias),
            1e-3,
        )
        return [(t.grad_fn is None, t.requires_grad, t) for t in results]

    theirs = oracle("outputs", outputs)
    assert len(ours) == len(theirs)
    for o, (no_grad_fn, requires_grad, t) in zip(ours, theirs):
        assert o.shape == t.shape
        assert (o.grad_fn is None) == no_grad_fn and o.requires_grad == requires_grad
        np.testing.assert_allclose(o.detach().numpy(), t, rtol=1e-12, atol=1e-12)
    assert ours[0].grad_fn.name() == "NativeLayerNormBackward0"


# PyTorch's own double backward fails for a bias without a weight ("Expected a proper
# Tensor but got None ... for argument #1 'other'"); gradgradcheck covers that case.
@pytest.mark.parametrize(
    "shape, normalized, has_weight, has_bias",
    [case for case in LAYER_NORM_CASES if case[2] or not case[3]],
)
def test_layer_norm_second_derivatives_match_torch(
    shape, normalized, has_weight, has_bias
) -> None:
    x, w, b = _arrays(21, shape, normalized, normalized)
    arrays = [x] + ([w] if has_weight else []) + ([b] if has_bias else [])

    def call(lib: Any, a: Any, *rest: Any) -> Any:
        it = iter(rest)
        weight = next(it) if has_weight else None
        bias = next(it) if has_bias else None
        return lib.layer_norm(a, normalized, weight, bias, 1e-5) * a

    _second_derivatives_match(
        lambda *t: call(gradgen, *t), lambda torch: lambda *t: call(torch, *t), arrays
    )


@pytest.mark.parametrize("shape, normalized, has_weight, has_bias", LAYER_NORM_CASES)
def test_layer_norm_gradcheck_gradgradcheck_and_forward_mode(
    shape, normalized, has_weight, has_bias
) -> None:
    x, w, b = _arrays(22, shape, normalized, normalized)
    inputs = [gradgen.tensor(x, requires_grad=True)]
    if has_weight:
        inputs.append(gradgen.tensor(w, requires_grad=True))
    if has_bias:
        inputs.append(gradgen.tensor(b, requires_grad=True))

    def call(a: Any, *rest: Any) -> Any:
        it = iter(rest)
        weight = next(it) if has_weight else None
        bias = next(it) if has_bias else None
        return gradgen.layer_norm(a, normalized, weight, bias, 1e-5)

    assert gradcheck(call, inputs, check_forward_ad=True)
    assert gradgradcheck(call, inputs)


def test_layer_norm_forward_mode_matches_torch() -> None:
    x, w, b, tx, tw, tb = _arrays(23, (3, 4), (4,), (4,), (3, 4), (4,), (4,))
    with forward_ad.dual_level():
        duals = [
            forward_ad.make_dual(gradgen.tensor(p), gradgen.tensor(t))
            for p, t in ((x, tx), (w, tw), (b, tb))
        ]
        ours = forward_ad.unpack_dual(
            gradgen.layer_norm(duals[0], (4,), duals[1], duals[2])
        ).tangent

    def tangent(torch: Any) -> Any:
        fwAD = torch.autograd.forward_ad
        with fwAD.dual_level():
            duals_t = [
                fwAD.make_dual(torch.tensor(p), torch.tensor(t))
                for p, t in ((x, tx), (w, tw), (b, tb))
            ]
            return fwAD.unpack_dual(
                torch.layer_norm(duals_t[0], (4,), duals_t[1], duals_t[2])
            ).tangent

    theirs = oracle("tangent", tangent)
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-10, atol=1e-12)


def test_native_layer_norm_backward_matches_torch() -> None:
    g, x, w, b = _arrays(24, (2, 3, 4), (2, 3, 4), (3, 4), (3, 4))

    def theirs_of(torch: Any) -> list[Any]:
        _, mean_t, rstd_t = torch.native_layer_norm(
            torch.tensor(x), (3, 4), torch.tensor(w), torch.tensor(b), 1e-5
        )
        grads = torch.ops.aten.native_layer_norm_backward(
            torch.tensor(g),
            torch.tensor(x),
            (3, 4),
            mean_t,
            rstd_t,
            torch.tensor(w),
            torch.tensor(b),
            [True, True, True],
        )
        return [mean_t, rstd_t, list(grads)]

    mean, rstd, theirs = oracle("statistics and grads", theirs_of)
    ours = gradgen.native_layer_norm_backward(
        gradgen.tensor(g),
        gradgen.tensor(x),
        (3, 4),
        gradgen.tensor(mean),
        gradgen.tensor(rstd),
        gradgen.tensor(w),
        gradgen.tensor(b),
        [True, True, True],
    )
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t, rtol=1e-10, atol=1e-12)
    # A masked-out output is zeros here (PyTorch's is undefined).
    masked = gradgen.native_layer_norm_backward(
        gradgen.tensor(g),
        gradgen.tensor(x),
        (3, 4),
        gradgen.tensor(mean),
        gradgen.tensor(rstd),
        None,
        None,
        [True, False, False],
    )
    assert not np.any(masked[1].numpy()) and not np.any(masked[2].numpy())


def test_layer_norm_third_derivative_through_native_layer_norm_backward() -> None:
    """native_layer_norm_backward's own formula recomputes the statistics from its input
    under grad mode, so its derivatives (a third derivative of layer_norm) are right."""
    x, w = _arrays(25, (2, 4), (4,))

    def second(a: Any, weight: Any) -> Any:
        out = gradgen.layer_norm(a, (4,), weight)
        ga, gw = gradgen.autograd.grad(
            (out * out * a).sum(), (a, weight), create_graph=True
        )
        return ga * ga.sum() + gw.sum()

    inputs = [
        gradgen.tensor(x, requires_grad=True),
        gradgen.tensor(w, requires_grad=True),
    ]
    assert gradcheck(second, inputs)


def test_layer_norm_errors_match_torch() -> None:
    x = np.ones((2, 3, 4), np.float32)
    cases: list[tuple[Any, Any, Any, Any]] = [
        (x, [], None, None),
        (x, [3], None, None),
        (x, [2, 3, 4, 5], None, None),
        (x, [4], np.ones(3, np.float32), None),
        (x, [4], None, np.ones(3, np.float32)),
        (x.astype(np.int64), [4], None, None),
        (x.astype(np.complex64), [4], None, None),
        (x.astype(np.float64), [4], np.ones(4, np.float32), None),
        (x, [4], np.ones(4, np.float64), None),
        (x, [4], None, np.ones(4, np.float64)),
    ]
    for a, shape, w, b in cases:
        _same_error(
            lambda: gradgen.layer_norm(
                gradgen.tensor(a),
                shape,
                None if w is None else gradgen.tensor(w),
                None if b is None else gradgen.tensor(b),
            ),
            lambda torch: lambda: torch.layer_norm(
                torch.tensor(a),
                shape,
                None if w is None else torch.tensor(w),
                None if b is None else torch.tensor(b),
            ),
        )


def test_layer_norm_empty_inputs_match_torch() -> None:
    for shape, normalized in (((0, 4), (4,)), ((2, 0), (0,))):
        x = np.ones(shape)
        ours = gradgen.native_layer_norm(
            gradgen.tensor(x), normalized, None, None, 1e-5
        )
        theirs = oracle(
            str(shape),
            lambda torch: list(
                torch.native_layer_norm(torch.tensor(x), normalized, None, None, 1e-5)
            ),
        )
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert o.shape == t.shape
            np.testing.assert_allclose(o.numpy(), t)


# -- normalize ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "p, dim",
    [(2.0, 1), (2.0, 0), (1.0, -1), (3.0, 1), (0.5, 1), (math.inf, 1), (-math.inf, 0)],
)
def test_normalize_matches_torch(p, dim) -> None:
    (x,) = _arrays(36, (4, 3))
    _check_against_torch(
        lambda a: GF.normalize(a, p=p, dim=dim),
        lambda torch: lambda a: torch.nn.functional.normalize(a, p=p, dim=dim),
        [x],
    )


def test_normalize_zero_rows_tiny_eps_and_float32_match_torch() -> None:
    (x,) = _arrays(37, (3, 4))
    x[1] = 0.0
    _check_against_torch(
        lambda a: GF.normalize(a),
        lambda torch: lambda a: torch.nn.functional.normalize(a),
        [x],
    )
    _check_against_torch(
        lambda a: GF.normalize(a, eps=10.0),
        lambda torch: lambda a: torch.nn.functional.normalize(a, eps=10.0),
        [x],
    )
    (y,) = _arrays(38, (2, 3, 2), dtype="float32")
    _check_against_torch(
        lambda a: GF.normalize(a, dim=2),
        lambda torch: lambda a: torch.nn.functional.normalize(a, dim=2),
        [y],
    )
    inputs = [gradgen.tensor(_arrays(39, (3, 4))[0], requires_grad=True)]
    assert gradgradcheck(lambda a: GF.normalize(a), inputs)
    with pytest.raises(NotImplementedError, match="out="):
        GF.normalize(gradgen.ones(2, 2), out=gradgen.ones(2, 2))

"""batch_norm, instance_norm, group_norm and local_response_norm (the normalization
family's native_batch_norm and native_group_norm) against PyTorch and by hand: values,
gradients, second derivatives, forward mode, the running statistics in training and
evaluation, PyTorch's messages."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from gradgen.autograd import forward_ad, gradcheck, gradgradcheck
from torch_oracle import oracle, outcome
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

RUNNING_MEAN = [0.5, -0.25, 1.0]
RUNNING_VAR = [1.5, 0.75, 2.0]


def _functional(lib: Any) -> Any:
    return GF if lib is gradgen else lib.nn.functional


def _running(lib: Any, dtype: str = "float64") -> tuple[Any, Any]:
    kind = getattr(lib, dtype)
    return (
        lib.tensor(RUNNING_MEAN, dtype=kind),
        lib.tensor(RUNNING_VAR, dtype=kind),
    )


# -- batch norm --------------------------------------------------------------------------

# (input shape, training, affine)
BATCH_NORM_CASES = [
    ((4, 3), True, True),
    ((4, 3, 5), True, False),
    ((2, 3, 4, 3), True, True),
    ((2, 3, 2, 2, 3), True, True),
    ((4, 3), False, True),
    ((2, 3, 4, 3), False, False),
]


def _batch_norm(training: bool, affine: bool, dtype: str) -> Any:
    def call(lib: Any, x: Any, *parameters: Any) -> Any:
        weight, bias = parameters if affine else (None, None)
        mean, var = _running(lib, dtype)
        return _functional(lib).batch_norm(
            x, mean, var, weight, bias, training, 0.2, 1e-5
        )

    return call


def _batch_norm_arrays(case: tuple[Any, ...], dtype: str = "float64") -> list[Any]:
    shape, _, affine = case
    return _arrays(3, shape, *([(3,), (3,)] if affine else []), dtype=dtype)


@pytest.mark.parametrize("case", BATCH_NORM_CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_batch_norm_matches_torch(case: tuple[Any, ...], dtype: str) -> None:
    call = _batch_norm(case[1], case[2], dtype)
    out, _ = _check_against_torch(
        lambda *t: call(gradgen, *t),
        lambda torch: lambda *t: call(torch, *t),
        _batch_norm_arrays(case, dtype),
        rtol=2e-5 if dtype == "float32" else None,
    )
    assert out["grad_fn"] == "NativeBatchNormBackward0"


@pytest.mark.parametrize("case", BATCH_NORM_CASES[1::2], ids=str)
def test_batch_norm_second_derivatives_match_torch(case: tuple[Any, ...]) -> None:
    call = _batch_norm(case[1], case[2], "float64")
    _second_derivatives_match(
        lambda *t: call(gradgen, *t),
        lambda torch: lambda *t: call(torch, *t),
        _batch_norm_arrays(case),
    )


@pytest.mark.parametrize("case", BATCH_NORM_CASES[:5:2], ids=str)
def test_batch_norm_gradcheck_and_gradgradcheck(case: tuple[Any, ...]) -> None:
    call = _batch_norm(case[1], case[2], "float64")
    tensors = [gradgen.tensor(a, requires_grad=True) for a in _batch_norm_arrays(case)]
    assert gradcheck(lambda *t: call(gradgen, *t), tensors, check_forward_ad=True)
    assert gradgradcheck(lambda *t: call(gradgen, *t), tensors)


def _training_steps(lib: Any, dtype: str, momentum: float | None) -> dict[str, Any]:
    """Three training steps of batch_norm (momentum None: the cumulative average, as
    BatchNorm's factor 1 / steps), then the running statistics and an evaluation."""
    kind = getattr(lib, dtype)
    mean, var = lib.zeros(3, dtype=kind), lib.ones(3, dtype=kind)
    batches = _arrays(8, (5, 3, 4), (6, 3, 2), (4, 3, 3), dtype=dtype)
    for step, batch in enumerate(batches, start=1):
        factor = 1.0 / step if momentum is None else momentum
        F = _functional(lib)
        F.batch_norm(lib.tensor(batch), mean, var, None, None, True, factor, 1e-5)
    evaluated = _functional(lib).batch_norm(lib.tensor(batches[0]), mean, var)
    return {
        "running_mean": mean.numpy(),
        "running_var": var.numpy(),
        "evaluated": evaluated.numpy(),
    }


@pytest.mark.parametrize("momentum", [0.1, 0.7, None])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_running_statistics_after_steps_match_torch(
    momentum: float | None, dtype: str
) -> None:
    got = _training_steps(gradgen, dtype, momentum)
    expected = oracle("steps", lambda torch: _training_steps(torch, dtype, momentum))
    tolerance = 1e-12 if dtype == "float64" else 2e-6
    for key in ("running_mean", "running_var", "evaluated"):
        assert got[key].dtype == expected[key].dtype
        np.testing.assert_allclose(
            got[key], expected[key], rtol=tolerance, atol=tolerance
        )


def test_running_statistics_by_hand() -> None:
    """running <- (1 - momentum) * running + momentum * batch statistic, with the
    unbiased variance (n - 1) for running_var and the biased one to normalize."""
    x = np.array([[1.0, 10.0], [2.0, 20.0], [6.0, 60.0]])
    mean, var = gradgen.zeros(2, dtype=gradgen.float64), gradgen.ones(2)
    var = var.double()
    out = GF.batch_norm(gradgen.tensor(x), mean, var, training=True, momentum=0.25)
    np.testing.assert_allclose(mean.numpy(), 0.25 * x.mean(0))
    np.testing.assert_allclose(var.numpy(), 0.75 + 0.25 * x.var(0, ddof=1))
    expected = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


def test_evaluation_uses_the_running_statistics_by_hand() -> None:
    x, w, b = _arrays(4, (2, 3, 4), (3,), (3,))
    mean, var = np.array(RUNNING_MEAN), np.array(RUNNING_VAR)
    out = gradgen.batch_norm(
        *(gradgen.tensor(a) for a in (x, w, b, mean, var)), False, 0.1, 1e-3, False
    )
    view = (1, 3, 1)
    expected = (x - mean.reshape(view)) / np.sqrt(var.reshape(view) + 1e-3)
    expected = expected * w.reshape(view) + b.reshape(view)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


def test_native_batch_norm_outputs() -> None:
    """Training returns the batch mean and 1 / sqrt(biased var + eps) per channel and
    writes into the running statistics' own storage; evaluation returns empty
    save_mean and save_invstd (as PyTorch's CPU kernel) and changes nothing."""
    (x,) = _arrays(5, (4, 3, 2))
    mean, var = _running(gradgen)
    mean_storage = mean.numpy()
    out, save_mean, save_invstd = gradgen.native_batch_norm(
        gradgen.tensor(x), None, None, mean, var, True, 0.5, 1e-5
    )
    np.testing.assert_allclose(save_mean.numpy(), x.mean((0, 2)), rtol=1e-12)
    invstd = 1 / np.sqrt(x.var((0, 2)) + 1e-5)
    np.testing.assert_allclose(save_invstd.numpy(), invstd, rtol=1e-12)
    assert np.shares_memory(mean.numpy(), mean_storage)
    np.testing.assert_allclose(
        mean_storage, 0.5 * np.array(RUNNING_MEAN) + 0.5 * x.mean((0, 2))
    )
    before = var.numpy().copy()
    _, save_mean, save_invstd = gradgen.native_batch_norm(
        gradgen.tensor(x), None, None, mean, var, False, 0.5, 1e-5
    )
    assert tuple(save_mean.shape) == tuple(save_invstd.shape) == (0,)
    np.testing.assert_array_equal(var.numpy(), before)


def test_native_batch_norm_backward_skips_masked_outputs() -> None:
    g, x, w = (gradgen.tensor(a) for a in _arrays(6, (4, 3), (4, 3), (3,)))
    _, save_mean, save_invstd = gradgen.native_batch_norm(
        x, w, None, None, None, True, 0.1, 1e-5
    )
    grad_input, grad_weight, grad_bias = gradgen.native_batch_norm_backward(
        g, x, w, None, None, save_mean, save_invstd, True, 1e-5, [False, True, False]
    )
    assert not np.any(grad_input.numpy()) and not np.any(grad_bias.numpy())
    x_hat = (x.numpy() - x.numpy().mean(0)) / np.sqrt(x.numpy().var(0) + 1e-5)
    np.testing.assert_allclose(
        grad_weight.numpy(), (g.numpy() * x_hat).sum(0), rtol=1e-12
    )


def _tangent(lib: Any, call: Any, arrays: list[Any], directions: list[Any]) -> Any:
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        duals = [
            fw.make_dual(lib.tensor(a), lib.tensor(d))
            for a, d in zip(arrays, directions)
        ]
        return fw.unpack_dual(call(lib, *duals)).tangent.numpy()


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_forward_mode_matches_torch(training: bool) -> None:
    call = _batch_norm(training, True, "float64")
    arrays = _arrays(9, (3, 3, 4), (3,), (3,))
    directions = _arrays(10, (3, 3, 4), (3,), (3,))
    expected = oracle(
        "tangent", lambda torch: _tangent(torch, call, arrays, directions)
    )
    got = _tangent(gradgen, call, arrays, directions)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    with forward_ad.dual_level():
        assert forward_ad.unpack_dual(gradgen.ones(2)).tangent is None


# -- instance norm -------------------------------------------------------------------------


def _instance_norm(use_input_stats: bool, with_running: bool) -> Any:
    def call(lib: Any, x: Any, w: Any, b: Any) -> Any:
        mean, var = _running(lib) if with_running else (None, None)
        return _functional(lib).instance_norm(
            x, mean, var, w, b, use_input_stats, 0.3, 1e-5
        )

    return call


@pytest.mark.parametrize(
    "options", [(True, False), (True, True), (False, True)], ids=str
)
def test_instance_norm_matches_torch(options: tuple[bool, bool]) -> None:
    call = _instance_norm(*options)
    arrays = _arrays(12, (2, 3, 5), (3,), (3,))
    _check_against_torch(
        lambda *t: call(gradgen, *t), lambda torch: lambda *t: call(torch, *t), arrays
    )
    _second_derivatives_match(
        lambda *t: call(gradgen, *t), lambda torch: lambda *t: call(torch, *t), arrays
    )


def _instance_running(lib: Any) -> list[Any]:
    mean, var = _running(lib)
    x = lib.tensor(_arrays(13, (4, 3, 2, 3))[0])
    _functional(lib).instance_norm(x, mean, var, momentum=0.4)
    return [mean.numpy(), var.numpy()]


def test_instance_norm_running_statistics_match_torch() -> None:
    """The running statistics move by the mean over the samples of their updates."""
    expected = oracle("running", _instance_running)
    for got, want in zip(_instance_running(gradgen), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


# -- group norm ----------------------------------------------------------------------------

GROUP_NORM_CASES = [
    ((2, 4, 3), 2, True),
    ((3, 6), 3, True),
    ((2, 6, 2, 3), 6, False),
    ((1, 4, 2, 2, 2), 1, True),
]


def _group_norm(groups: int, affine: bool) -> Any:
    def call(lib: Any, x: Any, *parameters: Any) -> Any:
        weight, bias = parameters if affine else (None, None)
        return _functional(lib).group_norm(x, groups, weight, bias, 1e-4)

    return call


def _group_arrays(case: tuple[Any, ...], dtype: str = "float64") -> list[Any]:
    shape, _, affine = case
    channels = (shape[1],)
    return _arrays(14, shape, *([channels, channels] if affine else []), dtype=dtype)


@pytest.mark.parametrize("case", GROUP_NORM_CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_group_norm_matches_torch(case: tuple[Any, ...], dtype: str) -> None:
    call = _group_norm(case[1], case[2])
    out, _ = _check_against_torch(
        lambda *t: call(gradgen, *t),
        lambda torch: lambda *t: call(torch, *t),
        _group_arrays(case, dtype),
        rtol=2e-5 if dtype == "float32" else None,
    )
    assert out["grad_fn"] == "NativeGroupNormBackward0"


@pytest.mark.parametrize("case", GROUP_NORM_CASES[:3], ids=str)
def test_group_norm_second_derivatives_and_gradchecks(case: tuple[Any, ...]) -> None:
    call = _group_norm(case[1], case[2])
    arrays = _group_arrays(case)
    _second_derivatives_match(
        lambda *t: call(gradgen, *t), lambda torch: lambda *t: call(torch, *t), arrays
    )
    tensors = [gradgen.tensor(a, requires_grad=True) for a in arrays]
    assert gradcheck(lambda *t: call(gradgen, *t), tensors, check_forward_ad=True)
    assert gradgradcheck(lambda *t: call(gradgen, *t), tensors)


def _group_outputs(lib: Any, x: Any, w: Any, b: Any) -> Any:
    """All of native_group_norm's outputs: mean and rstd are differentiable too."""
    out, mean, rstd = lib.native_group_norm(x, w, b, 2, 6, 2, 3, 1e-5)
    return lib.cat([out.flatten(), mean.flatten() * 2, rstd.flatten()])


def test_native_group_norm_every_output_matches_torch() -> None:
    arrays = _arrays(15, (2, 6, 2), (6,), (6,))
    _check_against_torch(
        lambda *t: _group_outputs(gradgen, *t),
        lambda torch: lambda *t: _group_outputs(torch, *t),
        arrays,
    )
    directions = _arrays(16, (2, 6, 2), (6,), (6,))
    expected = oracle(
        "tangent", lambda torch: _tangent(torch, _group_outputs, arrays, directions)
    )
    got = _tangent(gradgen, _group_outputs, arrays, directions)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    tensors = [gradgen.tensor(a, requires_grad=True) for a in arrays]
    call = lambda *t: _group_outputs(gradgen, *t)  # noqa: E731
    assert gradcheck(call, tensors, check_forward_ad=True)
    assert gradgradcheck(call, tensors)


def test_group_norm_by_hand() -> None:
    """Two groups of two channels: each group has mean 0 and variance 1 after."""
    x = np.arange(16.0).reshape(2, 4, 2) ** 2
    out = gradgen.group_norm(gradgen.tensor(x), 2, eps=0.0).numpy()
    grouped = out.reshape(2, 2, 4)
    np.testing.assert_allclose(grouped.mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose(grouped.var(-1), 1, rtol=1e-12)


# -- local response norm -------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, size", [((2, 5, 4), 3), ((2, 6, 3, 2), 2), ((1, 4, 2, 2, 3), 5)], ids=str
)
def test_local_response_norm_matches_torch(shape: tuple[int, ...], size: int) -> None:
    def call(lib: Any, x: Any) -> Any:
        return _functional(lib).local_response_norm(x, size, 0.3, 0.6, 1.5)

    _check_against_torch(
        lambda x: call(gradgen, x),
        lambda torch: lambda x: call(torch, x),
        _arrays(17, shape),
    )


def test_local_response_norm_by_hand() -> None:
    """size 1: each value over (k + alpha * x**2) ** beta."""
    x = np.array([[[1.0, -2.0]], [[3.0, 0.5]]])
    out = GF.local_response_norm(gradgen.tensor(x), 1, alpha=0.5, beta=2.0, k=1.0)
    np.testing.assert_allclose(out.numpy(), x / (1 + 0.5 * x**2) ** 2, rtol=1e-12)


# -- PyTorch's messages --------------------------------------------------------------------

x435 = np.ones((4, 3, 5))
ERROR_CASES: list[tuple[str, Any]] = [
    (
        "running_mean size",
        lambda lib: lambda: lib.batch_norm(
            lib.tensor(x435),
            None,
            None,
            lib.zeros(4),
            lib.ones(3),
            True,
            0.1,
            1e-5,
            False,
        ),
    ),
    (
        "weight size",
        lambda lib: lambda: lib.batch_norm(
            lib.tensor(x435), lib.ones(4), None, None, None, True, 0.1, 1e-5, False
        ),
    ),
    (
        "evaluation without statistics",
        lambda lib: lambda: _functional(lib).batch_norm(lib.ones(2, 3), None, None),
    ),
    (
        "long input",
        lambda lib: lambda: lib.native_batch_norm(
            lib.ones(4, 3, dtype=lib.int64), None, None, None, None, True, 0.1, 1e-5
        ),
    ),
    (
        "one dimension",
        lambda lib: lambda: lib.native_batch_norm(
            lib.ones(3), None, None, None, None, True, 0.1, 1e-5
        ),
    ),
    ("groups divide", lambda lib: lambda: lib.group_norm(lib.tensor(x435), 2)),
    ("groups positive", lambda lib: lambda: lib.group_norm(lib.tensor(x435), 0)),
    (
        "group weight",
        lambda lib: lambda: lib.group_norm(lib.tensor(x435), 3, lib.ones(4)),
    ),
    (
        "group input dimensions",
        lambda lib: lambda: _functional(lib).group_norm(lib.ones(3), 1),
    ),
    (
        "instance without statistics",
        lambda lib: lambda: lib.instance_norm(
            lib.tensor(x435), None, None, None, None, False, 0.1, 1e-5, False
        ),
    ),
    (
        "local response dimensions",
        lambda lib: lambda: _functional(lib).local_response_norm(lib.ones(2, 3), 2),
    ),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_match_torch(case: tuple[str, Any]) -> None:
    _, make = case
    _same_error(make(gradgen), make)


SIZE_ERROR_CASES: list[tuple[str, Any]] = [
    (
        "one value per channel",
        lambda lib: lambda: _functional(lib).batch_norm(
            lib.ones(1, 3), None, None, training=True
        ),
    ),
    (
        "instance spatial size",
        lambda lib: lambda: _functional(lib).instance_norm(lib.ones(3, 1, 1)),
    ),
]


@pytest.mark.parametrize("case", SIZE_ERROR_CASES, ids=[c[0] for c in SIZE_ERROR_CASES])
def test_size_errors_match_torch(case: tuple[str, Any]) -> None:
    """Messages that show the input's size: gradgen.Size where PyTorch's torch.Size."""
    _, make = case
    expected = oracle("error", lambda torch: outcome(make(torch)))
    assert isinstance(expected, ValueError)
    with pytest.raises(ValueError) as got:
        make(gradgen)()
    assert str(got.value) == str(expected).replace("torch.Size", "gradgen.Size")

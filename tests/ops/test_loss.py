"""Losses (mse_loss, nll_loss, binary_cross_entropy, cross_entropy) and their
gradgen.nn.functional wrappers against PyTorch, beyond the operator table.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from gradgen.autograd import gradgradcheck
from torch_oracle import numbered, oracle, outcome
from ops.linalg_loss_checks import _arrays, _check_against_torch

NONE, MEAN, SUM = 0, 1, 2
REDUCTIONS = [NONE, MEAN, SUM]


# -- mse_loss --------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mse_loss_matches_torch(reduction, dtype) -> None:
    arrays = _arrays(13, (3, 4), (3, 4), dtype=dtype)
    out, expected = _check_against_torch(
        lambda a, b: gradgen.mse_loss(a, b, reduction),
        lambda torch: lambda a, b: torch.ops.aten.mse_loss(a, b, reduction),
        arrays,
    )
    assert out.grad_fn.name() == expected["grad_fn"] == "MseLossBackward0"


def test_mse_loss_default_is_mean_and_promotes() -> None:
    a, b = _arrays(14, (3,), (3,))
    out = gradgen.mse_loss(gradgen.tensor(a.astype("float32")), gradgen.tensor(b))
    expected = oracle(
        "result",
        lambda torch: torch.ops.aten.mse_loss(
            torch.tensor(a.astype("float32")), torch.tensor(b)
        ),
    )
    assert (
        out.dtype == gradgen.float64
        and out.shape == ()
        and expected.dtype == np.float64
    )
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    with pytest.raises(
        NotImplementedError, match="\"mse_cpu\" not implemented for 'Long'"
    ):
        gradgen.mse_loss(gradgen.tensor([1, 2]), gradgen.tensor([1, 2]))


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
def test_mse_loss_broadcasting_gradients_follow_aten() -> None:
    """ATen's mse_loss broadcasts but scales each input's gradient by its own numel
    (F.mse_loss broadcasts before calling it, so only direct calls see this)."""
    _check_against_torch(
        lambda a, b: gradgen.mse_loss(a, b, MEAN),
        lambda torch: lambda a, b: torch.ops.aten.mse_loss(a, b, MEAN),
        _arrays(15, (3, 1), (3,)),
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss_backward_double_backward(reduction) -> None:
    grad_shape = (3, 4) if reduction == NONE else ()
    arrays = _arrays(16, grad_shape, (3, 4), (3, 4))
    _check_against_torch(
        lambda g, a, b: gradgen.mse_loss_backward(g, a, b, reduction),
        lambda torch: lambda g, a, b: torch.ops.aten.mse_loss_backward(
            g, a, b, reduction
        ),
        arrays,
    )
    inputs = [gradgen.tensor(a, requires_grad=True) for a in arrays]
    assert gradgradcheck(
        lambda *xs: gradgen.mse_loss(xs[1], xs[2], reduction) * xs[0].sum(), inputs
    )


# -- nll_loss --------------------------------------------------------------------------

WEIGHT = np.array([0.5, 1.0, 2.0])
NLL_CASES = {
    "1d": ((3,), np.array(2)),
    "1d-ignored": ((3,), np.array(-100)),
    "2d": ((5, 3), np.array([0, 2, -100, 1, 2])),
    "3d": ((2, 3, 4), np.array([[0, 1, 2, -100], [2, 2, 0, 1]])),
    "4d": ((2, 3, 2, 2), np.array([[[0, 1], [2, -100]], [[2, 2], [0, 1]]])),
    "5d": ((2, 3, 1, 2, 2), np.array([[[[0, 1], [2, -100]]], [[[2, 2], [0, 1]]]])),
}


NLL_ND_CASES = [
    (case, reduction, dtype)
    for case in sorted(NLL_CASES)
    for reduction in REDUCTIONS
    for dtype in (["float64", "float32"] if reduction == MEAN else ["float64"])
]


@pytest.mark.parametrize("case, reduction, dtype", NLL_ND_CASES)
def test_nll_loss_nd_matches_torch(case, reduction, dtype) -> None:
    shape, target = NLL_CASES[case]
    x = _arrays(17, shape, dtype=dtype)[0]
    weight = WEIGHT.astype(dtype)
    out, expected = _check_against_torch(
        lambda a: gradgen.nll_loss_nd(
            a, gradgen.tensor(target), gradgen.tensor(weight), reduction
        ),
        lambda torch: lambda a: torch.ops.aten.nll_loss_nd(
            a, torch.tensor(target), torch.tensor(weight), reduction
        ),
        [x],
    )
    if not expected["grad_fn"].startswith("NllLoss"):  # see test_nll_loss_node_names
        assert out.grad_fn.name() == expected["grad_fn"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_forward_total_weight_and_ignore_index(reduction) -> None:
    x = _arrays(18, (4, 3))[0]
    target = np.array([0, 2, 1, 2])
    for ignore_index in (2, -100, 7):
        ours = gradgen.nll_loss_forward(
            gradgen.tensor(x),
            gradgen.tensor(target),
            gradgen.tensor(WEIGHT),
            reduction,
            ignore_index,
        )
        theirs = oracle(
            str(ignore_index),
            lambda torch: list(
                torch.ops.aten.nll_loss_forward(
                    torch.tensor(x),
                    torch.tensor(target),
                    torch.tensor(WEIGHT),
                    reduction,
                    ignore_index,
                )
            ),
        )
        assert ours._fields == ("output", "total_weight")
        for got, want in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_nll_loss_all_ignored_and_empty() -> None:
    for x, target in (
        (np.ones((2, 3)), np.array([-100, -100])),
        (np.ones((0, 3)), np.zeros(0, dtype=np.int64)),
    ):
        for reduction in REDUCTIONS:
            ours = gradgen.nll_loss_forward(
                gradgen.tensor(x), gradgen.tensor(target), None, reduction, -100
            )
            theirs = oracle(
                numbered("result"),
                lambda torch: list(
                    torch.ops.aten.nll_loss_forward(
                        torch.tensor(x), torch.tensor(target), None, reduction, -100
                    )
                ),
            )
            for got, want in zip(ours, theirs, strict=True):
                np.testing.assert_array_equal(got.numpy(), want)


def test_nll_loss_without_weight_forward() -> None:
    x = _arrays(19, (4, 3))[0]
    target = np.array([0, 2, -100, 1])
    for reduction in REDUCTIONS:
        out = gradgen.nll_loss(
            gradgen.tensor(x), gradgen.tensor(target), None, reduction
        )
        expected = oracle(
            str(reduction),
            lambda torch: torch.ops.aten.nll_loss(
                torch.tensor(x), torch.tensor(target), None, reduction
            ),
        )
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


def test_nll_loss_without_weight_backward() -> None:
    x = _arrays(20, (4, 3))[0]
    target = np.array([0, 2, -100, 1])
    _check_against_torch(
        lambda a: gradgen.nll_loss(a, gradgen.tensor(target)),
        lambda torch: lambda a: torch.ops.aten.nll_loss(a, torch.tensor(target)),
        [x],
    )


def test_nll_loss_node_names() -> None:
    for shape, target in (NLL_CASES["2d"], NLL_CASES["4d"]):
        x, w = _arrays(21, shape)[0], WEIGHT

        def node(lib: Any) -> str:
            loss = getattr(
                lib.ops.aten if lib.__name__ == "torch" else lib, "nll_loss_nd"
            )
            return loss(
                lib.tensor(x, requires_grad=True),
                lib.tensor(target),
                lib.tensor(w),
                MEAN,
            ).grad_fn.name()

        assert node(gradgen) == oracle(str(shape), node)


NLL_ERRORS = [
    (
        "nll_loss_forward",
        (np.ones((2, 3, 4)), np.zeros((2, 4), np.int64), None, 1, -100),
    ),
    ("nll_loss_forward", (np.ones((4, 3)), np.zeros((4, 1), np.int64), None, 1, -100)),
    ("nll_loss_forward", (np.ones((4, 3)), np.zeros(3, np.int64), None, 1, -100)),
    ("nll_loss_forward", (np.ones(3), np.zeros(2, np.int64), None, 1, -100)),
    ("nll_loss_forward", (np.ones((4, 3)), np.array([0, 3, 1, 1]), None, 0, -100)),
    ("nll_loss_forward", (np.ones((4, 3)), np.array([0, -1, 1, 1]), None, 1, -100)),
    ("nll_loss_forward", (np.ones((4, 3)), np.zeros(4, np.int32), None, 1, -100)),
    ("nll_loss_forward", (np.ones((4, 3)), np.zeros(4), None, 1, -100)),
    ("nll_loss_forward", (np.ones((4, 3)), np.zeros(4, np.int64), np.ones(2), 1, -100)),
    (
        "nll_loss_forward",
        (np.ones((4, 3)), np.zeros(4, np.int64), np.ones(3, np.float32), 1, -100),
    ),
    (
        "nll_loss_forward",
        (np.ones((4, 3), np.int64), np.zeros(4, np.int64), None, 1, -100),
    ),
    (
        "nll_loss2d_forward",
        (np.ones((2, 3, 2)), np.zeros((2, 2, 2), np.int64), None, 1, -100),
    ),
    (
        "nll_loss2d_forward",
        (np.ones((2, 3, 2, 2)), np.zeros((2, 2), np.int64), None, 1, -100),
    ),
    (
        "nll_loss2d_forward",
        (np.ones((2, 3, 2, 2)), np.zeros((2, 2, 3), np.int64), None, 1, -100),
    ),
    (
        "nll_loss2d_forward",
        (np.ones((2, 3, 2, 2)), np.zeros((2, 2, 2), np.int64), np.ones(2), 1, -100),
    ),
    (
        "nll_loss2d_forward",
        (np.ones((1, 3, 1, 2)), np.array([[[5, 0]]]), None, 0, -100),
    ),
    ("nll_loss_nd", (np.ones(()), np.zeros((), np.int64), None, 1, -100)),
    ("nll_loss_nd", (np.ones((4, 3, 2)), np.zeros((3, 2), np.int64), None, 1, -100)),
    ("nll_loss_nd", (np.ones((4, 3, 2)), np.zeros((4, 3), np.int64), None, 1, -100)),
    (
        "nll_loss_nd",
        (np.ones((4, 3, 2, 2, 2)), np.zeros((4, 2, 2, 3), np.int64), None, 1, -100),
    ),
]


@pytest.mark.parametrize("name, args", NLL_ERRORS)
def test_nll_loss_errors_match_torch(name, args) -> None:
    def call(lib: Any, namespace: Any) -> Any:
        converted = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        return getattr(namespace, name)(*converted)

    theirs = oracle("error", lambda torch: outcome(lambda: call(torch, torch.ops.aten)))
    assert isinstance(theirs, Exception)
    with pytest.raises(type(theirs)) as ours:
        call(gradgen, gradgen)
    assert str(ours.value) == str(theirs)


def test_nll_loss_weight_cannot_require_grad() -> None:
    args = (np.ones((2, 3)), np.array([0, 1]))
    theirs = oracle(
        "error",
        lambda torch: outcome(
            lambda: torch.ops.aten.nll_loss(
                torch.tensor(args[0], requires_grad=True),
                torch.tensor(args[1]),
                torch.ones(3, dtype=torch.float64, requires_grad=True),
            )
        ),
    )
    assert isinstance(theirs, RuntimeError)
    with pytest.raises(RuntimeError) as ours:
        gradgen.nll_loss(
            gradgen.tensor(args[0], requires_grad=True),
            gradgen.tensor(args[1]),
            gradgen.ones(3, dtype=gradgen.float64, requires_grad=True),
        )
    assert str(ours.value) == str(theirs)


# -- binary_cross_entropy --------------------------------------------------------------


def _bce_arrays(dtype: str = "float64") -> list[Any]:
    rng = np.random.default_rng(22)
    return [
        rng.uniform(0.05, 0.95, (2, 3)).astype(dtype),
        rng.uniform(0, 1, (2, 3)).astype(dtype),
    ]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("weight_shape", [(3,), (2, 3)])
def test_binary_cross_entropy_matches_torch(reduction, dtype, weight_shape) -> None:
    x, y = _bce_arrays(dtype)
    w = np.random.default_rng(23).uniform(0.5, 2, weight_shape).astype(dtype)
    out, expected = _check_against_torch(
        lambda a, b, c: gradgen.binary_cross_entropy(a, b, c, reduction),
        lambda torch: lambda a, b, c: torch.ops.aten.binary_cross_entropy(
            a, b, c, reduction
        ),
        [x, y, w],
        [True, False, False],
    )
    assert out.grad_fn.name() == expected["grad_fn"] == "BinaryCrossEntropyBackward0"


def test_binary_cross_entropy_clamps_log_at_minus_100() -> None:
    x, y = np.array([0.0, 1.0, 0.0, 1.0]), np.array([0.0, 1.0, 1.0, 0.0])
    _check_against_torch(
        lambda a, b, c: gradgen.binary_cross_entropy(a, b, c, NONE),
        lambda torch: lambda a, b, c: torch.ops.aten.binary_cross_entropy(
            a, b, c, NONE
        ),
        [x, y, np.ones(4)],
        [True, False, False],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_backward_matches_torch(reduction) -> None:
    x, y = _bce_arrays()
    grad = _arrays(24, (2, 3) if reduction == NONE else ())[0]
    _check_against_torch(
        lambda g, a, b, c: gradgen.binary_cross_entropy_backward(g, a, b, c, reduction),
        lambda torch: lambda g, a, b, c: torch.ops.aten.binary_cross_entropy_backward(
            g, a, b, c, reduction
        ),
        [grad, x, y, WEIGHT],
        [True, True, False, False],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_target_gradient(reduction) -> None:
    x, y = _bce_arrays()
    _check_against_torch(
        lambda a, b, c: gradgen.binary_cross_entropy(a, b, c, reduction),
        lambda torch: lambda a, b, c: torch.ops.aten.binary_cross_entropy(
            a, b, c, reduction
        ),
        [x, y, WEIGHT],
        [True, True, False],
    )
    inputs = [gradgen.tensor(a, requires_grad=True) for a in (x, y)]
    assert gradgradcheck(
        lambda a, b: gradgen.binary_cross_entropy(
            a, b, gradgen.tensor(WEIGHT), reduction
        ),
        inputs,
    )


def test_binary_cross_entropy_without_weight_backward() -> None:
    x, y = _bce_arrays()
    _check_against_torch(
        lambda a, b: gradgen.binary_cross_entropy(a, b),
        lambda torch: lambda a, b: torch.ops.aten.binary_cross_entropy(a, b),
        [x, y],
        [True, False],
    )


BCE_ERRORS = [
    (np.array([1.5]), np.array([0.5]), None),
    (np.array([-0.5]), np.array([0.5]), None),
    (np.array([np.nan]), np.array([0.5]), None),
    (np.array([0.5]), np.array([1.5]), None),
    (np.array([0.5], np.float32), np.array([0.5]), None),
    (np.ones(2, np.int64), np.ones(2, np.int64), None),
    (np.full((2, 3), 0.5), np.full((2, 3), 0.5), np.ones(2)),
    (np.full(3, 0.5), np.full(3, 0.5), np.ones((2, 3))),
]


@pytest.mark.parametrize("x, y, w", BCE_ERRORS)
def test_binary_cross_entropy_errors_match_torch(x, y, w) -> None:
    def call(lib: Any, namespace: Any) -> Any:
        weight = None if w is None else lib.tensor(w)
        return namespace.binary_cross_entropy(
            lib.tensor(x), lib.tensor(y), weight, MEAN
        )

    theirs = oracle("error", lambda torch: outcome(lambda: call(torch, torch.ops.aten)))
    assert isinstance(theirs, Exception)
    with pytest.raises(type(theirs)) as ours:
        call(gradgen, gradgen)
    assert str(ours.value) == str(theirs)


# -- cross_entropy (needs log_softmax from another batch) ------------------------------


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("case", ["2d", "1d", "3d", "probabilities"])
def test_cross_entropy_matches_torch(reduction, label_smoothing, case) -> None:
    rng = np.random.default_rng(25)
    if case == "probabilities":
        x, target = rng.normal(size=(4, 3)), rng.dirichlet(np.ones(3), 4)
    else:
        shape, target = NLL_CASES[case]
        x = rng.normal(size=shape)
    for weight in (WEIGHT, np.ones(3)):
        _check_against_torch(
            lambda a: GF.cross_entropy(
                a,
                gradgen.tensor(target),
                gradgen.tensor(weight),
                reduction=reduction,
                label_smoothing=label_smoothing,
            ),
            lambda torch: lambda a: torch.nn.functional.cross_entropy(
                a,
                torch.tensor(target),
                torch.tensor(weight),
                reduction=reduction,
                label_smoothing=label_smoothing,
            ),
            [x],
        )


def test_cross_entropy_errors_match_torch() -> None:
    cases = [
        (np.ones((2, 3)), np.array([[0, 1, 0], [1, 0, 0]]), {}),
        (np.ones((2, 3)), np.full((2, 3), 1 / 3), {"ignore_index": 1}),
        (np.ones((2, 3)), np.array([0, 1]), {"label_smoothing": 1.5}),
    ]
    for number, (x, target, kwargs) in enumerate(cases):
        theirs = oracle(
            str(number),
            lambda torch: outcome(
                lambda: torch.nn.functional.cross_entropy(
                    torch.tensor(x), torch.tensor(target), **kwargs
                )
            ),
        )
        assert isinstance(theirs, RuntimeError)
        with pytest.raises(RuntimeError) as ours:
            GF.cross_entropy(gradgen.tensor(x), gradgen.tensor(target), **kwargs)
        assert str(ours.value) == str(theirs)


# -- gradgen.nn.functional -------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_functional_losses_match_torch(reduction) -> None:
    a, b = _arrays(26, (4, 3), (4, 3))
    _check_against_torch(
        lambda x, y: GF.mse_loss(x, y, reduction=reduction),
        lambda torch: lambda x, y: torch.nn.functional.mse_loss(
            x, y, reduction=reduction
        ),
        [a, b],
    )
    _check_against_torch(
        lambda x, y, w: GF.mse_loss(x, y, reduction=reduction, weight=w),
        lambda torch: lambda x, y, w: torch.nn.functional.mse_loss(
            x, y, reduction=reduction, weight=w
        ),
        [a, b, np.abs(a) + 0.5],
    )
    target = np.array([0, 2, -100, 1])
    _check_against_torch(
        lambda x: GF.nll_loss(
            x, gradgen.tensor(target), gradgen.tensor(WEIGHT), reduction=reduction
        ),
        lambda torch: lambda x: torch.nn.functional.nll_loss(
            x, torch.tensor(target), torch.tensor(WEIGHT), reduction=reduction
        ),
        [a],
    )
    x, y = _bce_arrays()
    _check_against_torch(
        lambda p, q, w: GF.binary_cross_entropy(p, q, w, reduction=reduction),
        lambda torch: lambda p, q, w: torch.nn.functional.binary_cross_entropy(
            p, q, w, reduction=reduction
        ),
        [x, y, WEIGHT],
        [True, False, False],
    )


@pytest.mark.parametrize(
    "size_average, reduce", [(None, False), (False, None), (True, True), (False, False)]
)
def test_functional_legacy_flags_match_torch(size_average, reduce) -> None:
    a, b = _arrays(27, (4, 3), (4, 3))

    def run(lib: Any, mse_loss: Any) -> tuple[Any, list[str]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = mse_loss(
                lib.tensor(a), lib.tensor(b), size_average=size_average, reduce=reduce
            )
        return out.numpy(), [str(w.message) for w in caught]

    out, messages = run(gradgen, GF.mse_loss)
    expected, expected_messages = oracle(
        "result", lambda torch: run(torch, torch.nn.functional.mse_loss)
    )
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    assert messages == expected_messages


def test_functional_messages() -> None:
    with pytest.raises(ValueError, match="^bad is not a valid value for reduction$"):
        GF.nll_loss(gradgen.ones(2, 3), gradgen.tensor([0, 1]), reduction="bad")
    with pytest.raises(
        ValueError, match="^Weights and input must have the same size.$"
    ):
        GF.mse_loss(gradgen.ones(3), gradgen.ones(3), weight=gradgen.ones(4))
    with pytest.raises(
        ValueError,
        match=r"Using a target size \(gradgen.Size\(\[3, 1\]\)\) that is different to the input size \(gradgen.Size\(\[3\]\)\) is deprecated",
    ):
        GF.binary_cross_entropy(gradgen.full((3,), 0.5), gradgen.full((3, 1), 0.5))
    with pytest.warns(
        UserWarning,
        match=r"Using a target size \(gradgen.Size\(\[3\]\)\) that is different to the input size \(gradgen.Size\(\[3, 1\]\)\)",
    ):
        out = GF.mse_loss(gradgen.ones(3, 1), gradgen.zeros(3))
    assert out.item() == 1.0
    with pytest.raises(
        RuntimeError,
        match=r"^The size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton dimension 0$",
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            GF.mse_loss(gradgen.ones(3), gradgen.ones(4))


def test_functional_exports_the_activations_and_losses() -> None:
    activations = {"relu", "gelu", "silu", "sigmoid", "tanh", "softmax", "log_softmax"}
    losses = {"linear", "mse_loss", "nll_loss", "cross_entropy", "binary_cross_entropy"}
    assert losses | activations <= set(GF.__all__)  # other batches add more
    x = np.linspace(-2.0, 2.0, 12).reshape(3, 4)
    for name in sorted(activations):
        kwargs = {"dim": 1} if "softmax" in name else {}
        ours = getattr(GF, name)(gradgen.tensor(x), **kwargs).numpy()
        theirs = oracle(
            name,
            lambda torch: getattr(torch.nn.functional, name)(torch.tensor(x), **kwargs),
        )
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, err_msg=name)
    inplace = gradgen.tensor(x)
    GF.silu(inplace, inplace=True)
    np.testing.assert_allclose(
        inplace.numpy(),
        oracle(
            "silu(inplace=False)",
            lambda torch: torch.nn.functional.silu(torch.tensor(x)),
        ),
    )

"""The torch.nn.functional names added in session 7 (pdist, the in-place activations,
the channel-wise and alpha dropouts, gaussian_nll_loss, poisson_nll_loss,
multilabel_soft_margin_loss, bilinear, gumbel_softmax,
triplet_margin_with_distance_loss) and their nn modules, against PyTorch: values and
gradients of the deterministic ones, statistics and structure of the random ones
(counted by hand), and the same errors and warnings. PyTorch's answers are recorded in
tests/golden/ (see torch_oracle.py)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from gradgen import nn
from gradgen.autograd import gradcheck, gradgradcheck
from torch_oracle import oracle, outcome

RNG = np.random.default_rng(2026)
A = RNG.normal(size=(4, 5))
B = RNG.normal(size=(4, 5))
C = RNG.normal(size=(4, 5))
POSITIVE = RNG.uniform(0.2, 3.0, size=(4, 5))
COUNTS = np.array(
    [[0.0, 1.0, 2.0, 5.0, 3.0], [1.0, 0.0, 4.0, 7.0, 2.0]] * 2, dtype=np.float64
)
LABELS = (RNG.uniform(size=(4, 5)) > 0.5).astype(np.float64)
W5 = RNG.uniform(0.5, 2.0, size=(5,))
BILINEAR_W = RNG.normal(size=(3, 5, 2))
BILINEAR_B = RNG.normal(size=(3,))
X2 = RNG.normal(size=(4, 2))
UPSTREAM = np.linspace(-1.0, 2.0, 200)


def _run(lib: Any, build: Callable[[Any, list[Any]], Any], *arrays: np.ndarray) -> Any:
    """build(lib, leaves)'s output and the leaves' gradients after a backward of the
    output weighted by a fixed uneven upstream gradient, as numpy arrays."""
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = build(lib, leaves)
    flat = np.asarray(out.detach().numpy(), dtype=np.float64)
    weights = lib.tensor(UPSTREAM[: flat.size].reshape(flat.shape))
    (out * weights).sum().backward()
    grads = [
        None if t.grad is None else np.asarray(t.grad.numpy(), dtype=np.float64)
        for t in leaves
    ]
    return {"out": flat, "grads": grads}


def _compare(build: Callable[[Any, list[Any]], Any], *arrays: np.ndarray) -> None:
    theirs = oracle("run", lambda torch: _run(torch, build, *arrays))
    ours = _run(gradgen, build, *arrays)
    np.testing.assert_allclose(ours["out"], theirs["out"], rtol=1e-10, atol=1e-12)
    assert len(ours["grads"]) == len(theirs["grads"])
    for mine, reference in zip(ours["grads"], theirs["grads"]):
        if reference is None:
            assert mine is None
        else:
            np.testing.assert_allclose(mine, reference, rtol=1e-10, atol=1e-12)


# -- deterministic functions: values and gradients -------------------------------------

CASES: dict[str, tuple[Callable[[Any, list[Any]], Any], tuple[np.ndarray, ...]]] = {
    "pdist_p2": (lambda lib, t: lib.nn.functional.pdist(t[0]), (A,)),
    "pdist_p1": (lambda lib, t: lib.nn.functional.pdist(t[0], 1), (A,)),
    "pdist_p3": (lambda lib, t: lib.nn.functional.pdist(t[0], p=3), (A,)),
    "gaussian_hetero": (
        lambda lib, t: lib.nn.functional.gaussian_nll_loss(t[0], t[1], t[2]),
        (A, B, POSITIVE),
    ),
    "gaussian_homo_short": (
        lambda lib, t: lib.nn.functional.gaussian_nll_loss(
            t[0], t[1], t[2], full=True, reduction="sum"
        ),
        (A, B, POSITIVE[:, 0]),
    ),
    "gaussian_one_mismatch": (
        lambda lib, t: lib.nn.functional.gaussian_nll_loss(
            t[0], t[1], t[2], reduction="none"
        ),
        (A, B, POSITIVE[:, :1]),
    ),
    "gaussian_clamped_var": (
        lambda lib, t: lib.nn.functional.gaussian_nll_loss(
            t[0], t[1], t[2] * 1e-3, eps=1e-2, reduction="none"
        ),
        (A, B, POSITIVE),
    ),
    "gaussian_float_var": (
        lambda lib, t: lib.nn.functional.gaussian_nll_loss(t[0], t[1], 0.7),
        (A, B),
    ),
    "poisson_log_input": (
        lambda lib, t: lib.nn.functional.poisson_nll_loss(t[0], t[1]),
        (A, COUNTS),
    ),
    "poisson_full_none": (
        lambda lib, t: lib.nn.functional.poisson_nll_loss(
            t[0], t[1], log_input=False, full=True, reduction="none"
        ),
        (POSITIVE, COUNTS + 0.5),
    ),
    "poisson_legacy_sum": (
        lambda lib, t: lib.nn.functional.poisson_nll_loss(
            t[0], t[1], full=True, size_average=False
        ),
        (A, COUNTS + 0.5),
    ),
    "multilabel_soft_margin": (
        lambda lib, t: lib.nn.functional.multilabel_soft_margin_loss(t[0], t[1]),
        (A, LABELS),
    ),
    "multilabel_soft_margin_weight_none": (
        lambda lib, t: lib.nn.functional.multilabel_soft_margin_loss(
            t[0], t[1], weight=t[2], reduction="none"
        ),
        (A, LABELS, W5),
    ),
    "multilabel_soft_margin_sum": (
        lambda lib, t: lib.nn.functional.multilabel_soft_margin_loss(
            t[0], t[1], reduction="sum"
        ),
        (A, LABELS),
    ),
    "bilinear_bias": (
        lambda lib, t: lib.nn.functional.bilinear(t[0], t[1], t[2], t[3]),
        (A, X2, BILINEAR_W, BILINEAR_B),
    ),
    "bilinear_batched_no_bias": (
        lambda lib, t: lib.nn.functional.bilinear(
            t[0].reshape(2, 2, 5), t[1].reshape(2, 2, 2), t[2]
        ),
        (A, X2, BILINEAR_W),
    ),
    "triplet_distance_default": (
        lambda lib, t: lib.nn.functional.triplet_margin_with_distance_loss(
            t[0], t[1], t[2]
        ),
        (A, B, C),
    ),
    "triplet_distance_custom_swap": (
        lambda lib, t: lib.nn.functional.triplet_margin_with_distance_loss(
            t[0],
            t[1],
            t[2],
            distance_function=lambda x, y: 1
            - lib.nn.functional.cosine_similarity(x, y),
            margin=0.5,
            swap=True,
            reduction="none",
        ),
        (A, B, C),
    ),
    "triplet_distance_sum": (
        lambda lib, t: lib.nn.functional.triplet_margin_with_distance_loss(
            t[0], t[1], t[2], margin=2.0, reduction="sum"
        ),
        (A, B, C),
    ),
    "dropout1d_eval": (
        lambda lib, t: lib.nn.functional.dropout1d(t[0].reshape(2, 2, 5), 0.5, False),
        (A,),
    ),
    "dropout2d_p0": (
        lambda lib, t: lib.nn.functional.dropout2d(t[0].reshape(1, 2, 2, 5), 0.0),
        (A,),
    ),
    "dropout3d_p1": (
        lambda lib, t: lib.nn.functional.dropout3d(t[0].reshape(1, 2, 2, 5), 1.0),
        (A,),
    ),
    "alpha_dropout_p1": (
        lambda lib, t: lib.nn.functional.alpha_dropout(t[0], 1.0, True),
        (A,),
    ),
    "feature_alpha_dropout_eval": (
        lambda lib, t: lib.nn.functional.feature_alpha_dropout(t[0], 0.3),
        (A,),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name: str) -> None:
    build, arrays = CASES[name]
    _compare(build, *arrays)


INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "relu_": lambda F, x: F.relu_(x),
    "elu_": lambda F, x: F.elu_(x, 0.7),
    "leaky_relu_": lambda F, x: F.leaky_relu_(x, 0.2),
    "selu_": lambda F, x: F.selu_(x),
    "celu_": lambda F, x: F.celu_(x, 1.5),
    "hardtanh_": lambda F, x: F.hardtanh_(x, -0.5, 0.8),
    "hardtanh_reversed": lambda F, x: F.hardtanh_(x, 0.8, -0.5),
    "threshold_": lambda F, x: F.threshold_(x, 0.1, -2.0),
    "rrelu_eval": lambda F, x: F.rrelu_(x, 0.1, 0.3),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_activations_match_torch_and_write_into_the_input(name: str) -> None:
    call = INPLACE[name]

    def build(lib: Any, t: list[Any]) -> Any:
        x = t[0] * 1.0  # a non-leaf, which may be modified in place
        out = call(lib.nn.functional, x)
        assert out is x
        return out

    _compare(build, A)


# -- modules ---------------------------------------------------------------------------


def _module_run(lib: Any, name: str) -> Any:
    F_arrays = {
        "bilinear": (A, X2),
        "gaussian": (A, B, POSITIVE),
        "poisson": (A, COUNTS),
        "multilabel": (A, LABELS),
        "triplet": (A, B, C),
    }[name]
    leaves = [lib.tensor(a, requires_grad=True) for a in F_arrays]
    if name == "bilinear":
        module = lib.nn.Bilinear(5, 2, 3, dtype=lib.float64)
        with lib.no_grad():
            module.weight.copy_(lib.tensor(BILINEAR_W))
            assert module.bias is not None
            module.bias.copy_(lib.tensor(BILINEAR_B))
        out = module(*leaves)
    elif name == "gaussian":
        out = lib.nn.GaussianNLLLoss(full=True, reduction="sum")(*leaves)
    elif name == "poisson":
        out = lib.nn.PoissonNLLLoss(full=True)(*leaves)
    elif name == "multilabel":
        module = lib.nn.MultiLabelSoftMarginLoss(weight=lib.tensor(W5))
        out = module(*leaves)
    else:
        out = lib.nn.TripletMarginWithDistanceLoss(margin=1.5, swap=True)(*leaves)
    flat = np.asarray(out.detach().numpy(), dtype=np.float64)
    weights = lib.tensor(UPSTREAM[: flat.size].reshape(flat.shape))
    (out * weights).sum().backward()
    grads = [np.asarray(t.grad.numpy(), dtype=np.float64) for t in leaves]
    text = repr(module) if name == "bilinear" else ""
    return {"out": flat, "grads": grads, "repr": text}


@pytest.mark.parametrize(
    "name", ["bilinear", "gaussian", "poisson", "multilabel", "triplet"]
)
def test_modules_match_torch(name: str) -> None:
    theirs = oracle("module", lambda torch: _module_run(torch, name))
    ours = _module_run(gradgen, name)
    np.testing.assert_allclose(ours["out"], theirs["out"], rtol=1e-10, atol=1e-12)
    for mine, reference in zip(ours["grads"], theirs["grads"]):
        np.testing.assert_allclose(mine, reference, rtol=1e-10, atol=1e-12)
    assert ours["repr"] == theirs["repr"]


def test_bilinear_module_initialisation_bound() -> None:
    gradgen.manual_seed(0)
    module = nn.Bilinear(16, 3, 7)
    bound = 1 / math.sqrt(16)
    assert tuple(module.weight.shape) == (7, 16, 3)
    for p in (module.weight, module.bias):
        assert p is not None
        data = p.detach().numpy()
        assert data.min() >= -bound and data.max() <= bound
        assert data.max() - data.min() > bound  # spread over the interval
    assert nn.Bilinear(2, 3, 4, bias=False).bias is None


def test_dropout_module_reprs_match_torch() -> None:
    names = [
        "Dropout",
        "Dropout1d",
        "Dropout2d",
        "Dropout3d",
        "AlphaDropout",
        "FeatureAlphaDropout",
    ]
    theirs = oracle(
        "reprs",
        lambda torch: [repr(getattr(torch.nn, n)(0.25, inplace=True)) for n in names],
    )
    assert [repr(getattr(nn, n)(0.25, inplace=True)) for n in names] == theirs
    for name in names:
        module = getattr(nn, name)(0.3).eval()
        x = gradgen.tensor(A.reshape(1, 4, 5))
        np.testing.assert_array_equal(module(x).numpy(), x.numpy())  # eval(): identity


# -- random functions: statistics and structure ----------------------------------------


@pytest.mark.parametrize(
    "function, shape, channels",
    [
        ("dropout1d", (8, 50, 7), (8, 50)),
        ("dropout1d", (200, 7), (1, 200)),
        ("dropout2d", (8, 50, 3, 4), (8, 50)),
        ("dropout3d", (8, 50, 2, 3, 2), (8, 50)),
        ("dropout3d", (200, 2, 3, 2), (1, 200)),
    ],
)
def test_channel_dropout_zeroes_whole_channels_and_scales(
    function: str, shape: tuple[int, ...], channels: tuple[int, int]
) -> None:
    gradgen.manual_seed(7)
    p = 0.4
    x = gradgen.tensor(RNG.uniform(1.0, 2.0, size=shape), requires_grad=True)
    out = getattr(GF, function)(x, p)
    ratio = (out.detach().numpy() / x.detach().numpy()).reshape(*channels, -1)
    kept = ratio[..., 0] != 0
    # every channel is all zeros or all scaled by 1 / (1 - p)
    expected = np.broadcast_to(np.where(kept, 1 / (1 - p), 0.0)[..., None], ratio.shape)
    np.testing.assert_allclose(ratio, expected)
    fraction = 1 - kept.mean()
    assert abs(fraction - p) < 4 * math.sqrt(p * (1 - p) / kept.size)
    out.sum().backward()
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy().reshape(ratio.shape), ratio)


def test_channel_dropout_in_place_returns_its_input() -> None:
    gradgen.manual_seed(3)
    for function, shape in (("dropout1d", (3, 6)), ("dropout2d", (2, 3, 2, 2))):
        x = gradgen.ones(*shape)
        out = getattr(GF, function)(x, 0.5, inplace=True)
        assert out is x and tuple(x.shape) == shape
        assert set(np.unique(x.numpy())) <= {0.0, 2.0}


ALPHA = 1.7580993408473766


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_mean_and_variance(feature: bool) -> None:
    gradgen.manual_seed(11)
    p = 0.3
    data = RNG.normal(size=(400, 300, 1) if feature else (400, 300))
    x = gradgen.tensor(data, requires_grad=True)
    call = GF.feature_alpha_dropout if feature else GF.alpha_dropout
    out = call(x, p, training=True)
    y = out.detach().numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    a = 1 / math.sqrt((ALPHA**2 * p + 1) * (1 - p))
    dropped_value = ALPHA * a * (p - 1)
    kept = ~np.isclose(y, dropped_value, rtol=0, atol=1e-12)
    np.testing.assert_allclose(y[kept], data[kept] * a + ALPHA * a * p)
    assert abs((1 - kept.mean()) - p) < 0.01
    out.sum().backward()
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, a, 0.0))


def test_alpha_dropout_in_place_and_eval() -> None:
    x = gradgen.tensor(A)
    assert GF.alpha_dropout(x, 0.5) is x  # training defaults to False
    gradgen.manual_seed(5)
    y = gradgen.tensor(A.copy())
    assert GF.alpha_dropout(y, 0.5, True, inplace=True) is y
    assert not np.allclose(y.numpy(), A)


def test_gumbel_softmax_soft_and_hard() -> None:
    logits = gradgen.tensor(RNG.normal(size=(300, 6)), requires_grad=True)
    gradgen.manual_seed(9)
    soft = GF.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.detach().numpy().sum(-1), 1.0)
    weights = gradgen.tensor(RNG.normal(size=(300, 6)))
    (soft * weights).sum().backward()
    assert logits.grad is not None
    soft_grad = logits.grad.numpy().copy()
    logits.grad = None
    gradgen.manual_seed(9)  # the same noise: hard is the one-hot of soft's argmax
    hard = GF.gumbel_softmax(logits, tau=0.5, hard=True, dim=1)
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0}
    np.testing.assert_array_equal(h.sum(-1), 1.0)
    np.testing.assert_array_equal(h.argmax(-1), soft.detach().numpy().argmax(-1))
    (hard * weights).sum().backward()  # straight-through: soft's gradient
    np.testing.assert_allclose(logits.grad.numpy(), soft_grad)


def test_gumbel_softmax_samples_follow_the_softmax_of_the_logits() -> None:
    probabilities = np.array([0.1, 0.2, 0.7])
    logits = gradgen.tensor(np.tile(np.log(probabilities), (6000, 1)))
    gradgen.manual_seed(1)
    hard = GF.gumbel_softmax(logits, hard=True).numpy()
    np.testing.assert_allclose(hard.mean(0), probabilities, atol=0.02)


def test_gumbel_softmax_eps_warning_matches_torch() -> None:
    def call(lib: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.functional.gumbel_softmax(lib.zeros(2, 3), eps=1e-3)
        return [str(w.message) for w in caught]

    assert call(gradgen) == oracle("warnings", call)


def test_rrelu_in_place_training_slopes() -> None:
    gradgen.manual_seed(4)
    data = RNG.normal(size=(2000,))
    leaf = gradgen.tensor(data, requires_grad=True)
    x = leaf * 1.0
    out = GF.rrelu_(x, 0.1, 0.3, training=True)
    assert out is x
    y = x.detach().numpy()
    np.testing.assert_array_equal(y[data >= 0], data[data >= 0])
    slopes = y[data < 0] / data[data < 0]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert slopes.std() > 0.04  # drawn, not one slope
    out.sum().backward()  # the gradient is the slope drawn for each element
    assert leaf.grad is not None
    np.testing.assert_allclose(leaf.grad.numpy(), np.where(data >= 0, 1.0, y / data))


# -- errors and warnings ---------------------------------------------------------------

ERRORS: dict[str, Callable[[Any], Any]] = {
    "dropout1d_p": lambda lib: lib.nn.functional.dropout1d(lib.ones(2, 3), 1.5),
    "dropout2d_p": lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 3), -0.1),
    "alpha_p": lambda lib: lib.nn.functional.alpha_dropout(lib.ones(2, 3), 2.0),
    "feature_alpha_1d": lambda lib: lib.nn.functional.feature_alpha_dropout(
        lib.ones(3), 0.5, True
    ),
    "dropout1d_4d": lambda lib: lib.nn.functional.dropout1d(lib.ones(1, 2, 3, 4)),
    "module_p": lambda lib: lib.nn.Dropout2d(1.5),
    "pdist_3d": lambda lib: lib.nn.functional.pdist(lib.ones(2, 2, 2)),
    "gaussian_negative": lambda lib: lib.nn.functional.gaussian_nll_loss(
        lib.ones(2, 3), lib.ones(2, 3), -lib.ones(2, 3)
    ),
    "gaussian_negative_float": lambda lib: lib.nn.functional.gaussian_nll_loss(
        lib.ones(2, 3), lib.ones(2, 3), -1.0
    ),
    "gaussian_size": lambda lib: lib.nn.functional.gaussian_nll_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 2)
    ),
    "gaussian_reduction": lambda lib: lib.nn.functional.gaussian_nll_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), reduction="avg"
    ),
    "poisson_reduction": lambda lib: lib.nn.functional.poisson_nll_loss(
        lib.ones(2, 3), lib.ones(2, 3), reduction="avg"
    ),
    "multilabel_reduction": lambda lib: lib.nn.functional.multilabel_soft_margin_loss(
        lib.ones(2, 3), lib.ones(2, 3), reduction="avg"
    ),
    "bilinear_dims": lambda lib: lib.nn.functional.bilinear(
        lib.ones(2, 3), lib.ones(2, 2, 4), lib.ones(5, 3, 4)
    ),
    "bilinear_batch": lambda lib: lib.nn.functional.bilinear(
        lib.ones(2, 3), lib.ones(3, 4), lib.ones(5, 3, 4)
    ),
    "bilinear_input1": lambda lib: lib.nn.functional.bilinear(
        lib.ones(2, 2), lib.ones(2, 4), lib.ones(5, 3, 4)
    ),
    "bilinear_input2": lambda lib: lib.nn.functional.bilinear(
        lib.ones(2, 3), lib.ones(2, 6), lib.ones(5, 3, 4)
    ),
    "bilinear_bias": lambda lib: lib.nn.functional.bilinear(
        lib.ones(2, 3), lib.ones(2, 4), lib.ones(5, 3, 4), lib.ones(4)
    ),
    "bilinear_module": lambda lib: lib.nn.Bilinear(0, 2, 3),
    "triplet_reduction": lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), reduction="avg"
    ),
    "triplet_margin": lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), margin=0.0
    ),
    "triplet_dims": lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
        lib.ones(2, 3), lib.ones(3), lib.ones(2, 3)
    ),
    "triplet_module_margin": lambda lib: lib.nn.TripletMarginWithDistanceLoss(
        margin=-1.0
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    theirs = oracle("error", lambda torch: outcome(lambda: ERRORS[name](torch)))
    assert isinstance(theirs, Exception)
    with pytest.raises(type(theirs)) as raised:
        ERRORS[name](gradgen)
    assert str(raised.value) == str(theirs)


WARNINGS: dict[str, Callable[[Any], Any]] = {
    "dropout2d_3d": lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 3, 4), 0.0),
    "dropout2d_2d": lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 3), 0.0),
    "dropout3d_3d": lambda lib: lib.nn.functional.dropout3d(lib.ones(2, 3, 4), 0.0),
    "gumbel_quiet": lambda lib: lib.nn.functional.gumbel_softmax(lib.ones(2, 3)),
}


@pytest.mark.parametrize("name", sorted(WARNINGS))
def test_warnings_match_torch(name: str) -> None:
    def call(lib: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            WARNINGS[name](lib)
        return [str(w.message) for w in caught]

    assert call(gradgen) == oracle("warnings", call)


SECOND_ORDER: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = {
    "bilinear": (
        lambda x, y, w, b: GF.bilinear(x, y, w, b),
        (A, X2, BILINEAR_W, BILINEAR_B),
    ),
    "gaussian": (
        lambda x, t, v: GF.gaussian_nll_loss(x, t, v, full=True),
        (A, B, POSITIVE),
    ),
    "poisson": (
        lambda x, t: GF.poisson_nll_loss(x, t, log_input=False, full=True),
        (POSITIVE, COUNTS + 0.5),
    ),
    "multilabel": (
        lambda x, w: GF.multilabel_soft_margin_loss(x, gradgen.tensor(LABELS), w),
        (A, W5),
    ),
    "triplet": (
        lambda a, p, n: GF.triplet_margin_with_distance_loss(a, p, n, swap=True),
        (A, B, C),
    ),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_gradcheck_and_gradgradcheck(name: str) -> None:
    """Numeric first and second derivatives agree with the composites' (float64)."""
    function, arrays = SECOND_ORDER[name]
    inputs = tuple(gradgen.tensor(a, requires_grad=True) for a in arrays)
    assert gradcheck(function, inputs)
    assert gradgradcheck(function, inputs)


def test_pdist_gradcheck_and_no_double_backward_as_torch() -> None:
    """PyTorch's _pdist_backward has no derivative; gradgen's neither."""
    x = gradgen.tensor(A[:3], requires_grad=True)
    assert gradcheck(lambda t: GF.pdist(t, 3), (x,))
    with pytest.raises(NotImplementedError, match="'_pdist_backward' is not"):
        gradgradcheck(lambda t: GF.pdist(t, 3), (x,))

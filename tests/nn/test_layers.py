"""The simple layers (activation, loss, distance, flatten modules) against torch.nn:
the same inputs give the same outputs and input gradients, and the same repr and
state_dict; recorded in tests/golden/ (see torch_oracle.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle

RNG = np.random.default_rng(1234)
# Values away from the kinks of relu6 / hardswish / shrink functions (|x| in
# {0, 0.5, 3, 6}), where one-sided derivatives may legitimately differ.
BASE = np.array(
    [[-7.1, -3.4, -2.2, -0.9, -0.3, 0.2], [0.7, 1.3, 2.6, 3.3, 5.4, 6.8]],
    dtype=np.float64,
)
POSITIVE = RNG.uniform(0.1, 0.9, (3, 4))
TARGET01 = RNG.uniform(0.0, 1.0, (3, 4))
SIGNS = np.array([1.0, -1.0, 1.0])
SIGNS4 = np.array([1.0, -1.0, -1.0, 1.0])


class Case(NamedTuple):
    build: Callable[[Any], Any]  # lib -> module
    inputs: tuple[Any, ...]  # arrays (float ones take gradients) or fixed values
    differentiable: int = 1  # how many leading inputs take gradients


def _classes() -> np.ndarray:
    return np.array([0, 2, 1])


CASES: dict[str, Case] = {
    "Identity": Case(lambda lib: lib.nn.Identity(3, unused=True), (BASE,)),
    "Flatten": Case(lambda lib: lib.nn.Flatten(), (RNG.normal(size=(2, 3, 2)),)),
    "Flatten0": Case(lambda lib: lib.nn.Flatten(0, 1), (RNG.normal(size=(2, 3, 2)),)),
    "Unflatten": Case(lambda lib: lib.nn.Unflatten(1, (2, 3)), (BASE,)),
    "Unflatten-1": Case(lambda lib: lib.nn.Unflatten(-1, (3, -1)), (BASE,)),
    "ReLU6": Case(lambda lib: lib.nn.ReLU6(), (BASE,)),
    "Hardtanh": Case(lambda lib: lib.nn.Hardtanh(-2.0, 2.5), (BASE,)),
    "Hardsigmoid": Case(lambda lib: lib.nn.Hardsigmoid(), (BASE,)),
    "Hardswish": Case(lambda lib: lib.nn.Hardswish(), (BASE,)),
    "SiLU": Case(lambda lib: lib.nn.SiLU(), (BASE,)),
    "Mish": Case(lambda lib: lib.nn.Mish(), (BASE,)),
    "GELU": Case(lambda lib: lib.nn.GELU(), (BASE,)),
    "GELU-tanh": Case(lambda lib: lib.nn.GELU(approximate="tanh"), (BASE,)),
    "SELU": Case(lambda lib: lib.nn.SELU(), (BASE,)),
    "CELU": Case(lambda lib: lib.nn.CELU(alpha=1.5), (BASE,)),
    "ELU": Case(lambda lib: lib.nn.ELU(0.7), (BASE,)),
    "GLU": Case(lambda lib: lib.nn.GLU(), (BASE,)),
    "GLU0": Case(lambda lib: lib.nn.GLU(0), (BASE,)),
    "PReLU": Case(lambda lib: lib.nn.PReLU(dtype=lib.float64), (BASE,)),
    "PReLU-channels": Case(
        lambda lib: lib.nn.PReLU(2, init=0.1, dtype=lib.float64),
        (RNG.normal(size=(3, 2, 2)),),
    ),
    "Threshold": Case(lambda lib: lib.nn.Threshold(0.5, -4.0), (BASE,)),
    "LogSigmoid": Case(lambda lib: lib.nn.LogSigmoid(), (BASE,)),
    "Softsign": Case(lambda lib: lib.nn.Softsign(), (BASE,)),
    "Tanhshrink": Case(lambda lib: lib.nn.Tanhshrink(), (BASE,)),
    "Softshrink": Case(lambda lib: lib.nn.Softshrink(1.0), (BASE,)),
    "Hardshrink": Case(lambda lib: lib.nn.Hardshrink(1.0), (BASE,)),
    "Softplus": Case(lambda lib: lib.nn.Softplus(beta=2.0), (BASE,)),
    "LeakyReLU": Case(lambda lib: lib.nn.LeakyReLU(0.2), (BASE,)),
    "Softmax": Case(lambda lib: lib.nn.Softmax(dim=1), (BASE,)),
    "Softmin": Case(lambda lib: lib.nn.Softmin(dim=0), (BASE,)),
    "LogSoftmax": Case(lambda lib: lib.nn.LogSoftmax(dim=-1), (BASE,)),
    "CosineSimilarity": Case(
        lambda lib: lib.nn.CosineSimilarity(), (BASE, BASE[::-1].copy()), 2
    ),
    "CosineSimilarity-broadcast": Case(
        lambda lib: lib.nn.CosineSimilarity(dim=-1, eps=1e-6),
        (RNG.normal(size=(3, 4)), RNG.normal(size=(1, 4))),
        2,
    ),
    "PairwiseDistance": Case(
        lambda lib: lib.nn.PairwiseDistance(), (BASE, BASE[::-1].copy()), 2
    ),
    "PairwiseDistance-p1-keepdim": Case(
        lambda lib: lib.nn.PairwiseDistance(p=1.0, keepdim=True),
        (BASE, BASE * 0.5),
        2,
    ),
    "L1Loss": Case(lambda lib: lib.nn.L1Loss(), (POSITIVE, TARGET01), 2),
    "MSELoss-sum": Case(
        lambda lib: lib.nn.MSELoss(reduction="sum"), (POSITIVE, TARGET01), 2
    ),
    "SmoothL1Loss": Case(
        lambda lib: lib.nn.SmoothL1Loss(beta=0.3), (BASE, BASE * 0.5), 2
    ),
    "HuberLoss": Case(lambda lib: lib.nn.HuberLoss(delta=0.4), (BASE, BASE * 0.5), 2),
    "BCELoss": Case(lambda lib: lib.nn.BCELoss(), (POSITIVE, TARGET01), 1),
    "BCELoss-weight": Case(
        lambda lib: lib.nn.BCELoss(
            weight=lib.tensor([1.0, 2.0, 0.5, 1.0], dtype=lib.float64)
        ),
        (POSITIVE, TARGET01),
        1,
    ),
    "BCEWithLogitsLoss": Case(
        lambda lib: lib.nn.BCEWithLogitsLoss(
            pos_weight=lib.tensor([1.0, 2.0, 0.5, 3.0], dtype=lib.float64)
        ),
        (RNG.normal(size=(3, 4)), TARGET01),
        1,
    ),
    "NLLLoss": Case(
        lambda lib: lib.nn.NLLLoss(
            weight=lib.tensor([1.0, 0.5, 2.0], dtype=lib.float64)
        ),
        (np.log(POSITIVE[:, :3]), _classes()),
    ),
    "NLLLoss-ignore": Case(
        lambda lib: lib.nn.NLLLoss(ignore_index=2, reduction="sum"),
        (np.log(POSITIVE[:, :3]), _classes()),
    ),
    "CrossEntropyLoss": Case(
        lambda lib: lib.nn.CrossEntropyLoss(
            weight=lib.tensor([1.0, 0.5, 2.0], dtype=lib.float64),
            ignore_index=1,
            label_smoothing=0.1,
        ),
        (RNG.normal(size=(3, 3)), _classes()),
    ),
    "KLDivLoss": Case(
        lambda lib: lib.nn.KLDivLoss(reduction="batchmean"),
        (np.log(POSITIVE), TARGET01),
        1,
    ),
    "KLDivLoss-log": Case(
        lambda lib: lib.nn.KLDivLoss(reduction="sum", log_target=True),
        (np.log(POSITIVE), np.log(TARGET01)),
        2,
    ),
    "MarginRankingLoss": Case(
        lambda lib: lib.nn.MarginRankingLoss(margin=0.2),
        (RNG.normal(size=3), RNG.normal(size=3), SIGNS),
        2,
    ),
    "HingeEmbeddingLoss": Case(
        lambda lib: lib.nn.HingeEmbeddingLoss(margin=1.5),
        (RNG.normal(size=4), SIGNS4),
    ),
    "SoftMarginLoss": Case(
        lambda lib: lib.nn.SoftMarginLoss(reduction="none"),
        (RNG.normal(size=4), SIGNS4),
    ),
    "CosineEmbeddingLoss": Case(
        lambda lib: lib.nn.CosineEmbeddingLoss(margin=0.1),
        (RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4)), SIGNS),
        2,
    ),
    "TripletMarginLoss": Case(
        lambda lib: lib.nn.TripletMarginLoss(margin=2.0, swap=True),
        (RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))),
        3,
    ),
    "TripletMarginLoss-p1": Case(
        lambda lib: lib.nn.TripletMarginLoss(p=1.0, reduction="sum"),
        (RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))),
        3,
    ),
}


def _run(lib: Any, case: Case) -> Any:
    module = case.build(lib)
    tensors = []
    for index, value in enumerate(case.inputs):
        grad = index < case.differentiable
        tensors.append(lib.tensor(value, requires_grad=grad))
    output = module(*tensors)
    weights = RNG_WEIGHTS[: output.numel()].reshape(tuple(output.shape))
    (output * lib.tensor(weights)).sum().backward()
    return {
        "repr": repr(module),
        "state": {k: v.tolist() for k, v in module.state_dict().items()},
        "output": output.detach().numpy(),
        "grads": [t.grad.numpy() for t in tensors[: case.differentiable]],
        "param grads": [p.grad.numpy() for p in module.parameters()],
    }


RNG_WEIGHTS = np.linspace(-1.0, 2.0, 64)


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_matches_torch(name: str) -> None:
    case = CASES[name]
    ours = _run(gradgen, case)
    theirs = oracle("layer", lambda torch: _run(torch, case))
    assert ours["repr"] == theirs["repr"]
    assert list(ours["state"]) == list(theirs["state"])
    for key in ours["state"]:
        np.testing.assert_allclose(ours["state"][key], theirs["state"][key])
    np.testing.assert_allclose(ours["output"], theirs["output"], rtol=1e-6, atol=1e-9)
    assert len(ours["grads"]) == len(theirs["grads"])
    for mine, expected in zip(ours["grads"], theirs["grads"]):
        np.testing.assert_allclose(mine, expected, rtol=1e-6, atol=1e-9)
    for mine, expected in zip(ours["param grads"], theirs["param grads"]):
        np.testing.assert_allclose(mine, expected, rtol=1e-6, atol=1e-9)


def test_every_module_repr_matches_torch() -> None:
    def run(lib: Any) -> Any:
        nn = lib.nn
        modules = [
            nn.Threshold(0.1, 20.0, True),
            nn.Hardtanh(inplace=True),
            nn.ReLU6(inplace=True),
            nn.Hardsigmoid(inplace=True),
            nn.SiLU(inplace=True),
            nn.Mish(),
            nn.SELU(inplace=True),
            nn.CELU(2.0, True),
            nn.GLU(1),
            nn.PReLU(3),
            nn.Softmax(),
            nn.LogSoftmax(1),
            nn.Softshrink(1),
            nn.Hardshrink(),
            nn.ELU(inplace=True),
            nn.LeakyReLU(0.2, True),
            nn.Softplus(2.0, 10.0),
            nn.Flatten(0, 2),
            nn.Unflatten(1, (2, 2)),
            nn.Identity(),
            nn.CosineSimilarity(0),
            nn.PairwiseDistance(1.0),
            nn.Linear(3, 2, bias=False),
            nn.Dropout(0.2),
            nn.LayerNorm((2, 3), elementwise_affine=False),
            nn.Embedding(5, 2, padding_idx=0),
            nn.CrossEntropyLoss(label_smoothing=0.1),
            nn.TripletMarginLoss(),
            nn.BCEWithLogitsLoss(),
            nn.KLDivLoss(),
        ]
        return [repr(m) for m in modules]

    assert run(gradgen) == oracle("reprs", run)


def test_loss_weights_are_buffers() -> None:
    def run(lib: Any) -> Any:
        loss = lib.nn.CrossEntropyLoss(weight=lib.ones(3))
        loss.double()
        bce = lib.nn.BCEWithLogitsLoss(pos_weight=lib.ones(2))
        return [
            list(loss.state_dict()),
            str(loss.weight.dtype).split(".")[-1],
            list(bce.state_dict()),
            [n for n, _ in bce.named_buffers()],
            list(lib.nn.NLLLoss().state_dict()),
        ]

    assert run(gradgen) == oracle("buffers", run)


def test_layer_errors_match_torch() -> None:
    def run(lib: Any) -> Any:
        nn = lib.nn
        F = nn.functional
        out = []
        for call in (
            lambda: nn.GLU()(lib.ones(3)),
            lambda: nn.GLU()(lib.tensor(1.0)),
            lambda: F.prelu(lib.ones(2, 3), lib.ones(2)),
            lambda: nn.Softshrink(-1.0)(lib.ones(2)),
            lambda: nn.Hardtanh(1.0, 0.0),
            lambda: nn.TripletMarginLoss(margin=0.0),
            lambda: nn.MarginRankingLoss()(lib.ones(2), lib.ones(2, 1), lib.ones(2)),
            lambda: nn.Unflatten(1, 3),
            lambda: nn.Unflatten(1, (2, 1.5)),
            lambda: nn.CosineEmbeddingLoss()(lib.ones(3), lib.ones(3), lib.ones(3)),
            lambda: F.triplet_margin_loss(lib.ones(2, 2), lib.ones(2), lib.ones(2)),
        ):
            try:
                call()
                out.append(None)
            except Exception as error:  # noqa: BLE001 - the error is the answer
                out.append(f"{type(error).__name__}: {error}")
        return out

    theirs = [
        t if t is None else t.replace("torch.Size", "gradgen.Size")
        for t in oracle("errors", run)
    ]
    assert run(gradgen) == theirs


def test_softmin_without_dim_warns_like_softmax() -> None:
    x = gradgen.tensor(BASE)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        implicit = gradgen.nn.functional.softmin(x)
    np.testing.assert_allclose(
        implicit.numpy(), gradgen.nn.functional.softmin(x, 1).numpy()
    )


def test_inplace_activations_write_their_input() -> None:
    nn = gradgen.nn
    for inplace, plain in (
        (nn.Hardsigmoid(inplace=True), nn.Hardsigmoid()),
        (nn.Hardswish(inplace=True), nn.Hardswish()),
        (nn.SELU(inplace=True), nn.SELU()),
        (nn.CELU(0.5, inplace=True), nn.CELU(0.5)),
        (nn.Threshold(0.5, -4.0, inplace=True), nn.Threshold(0.5, -4.0)),
        (nn.ReLU6(inplace=True), nn.ReLU6()),
    ):
        x = gradgen.tensor(BASE)
        result = inplace(x)
        assert result is x, repr(inplace)
        np.testing.assert_allclose(x.numpy(), plain(gradgen.tensor(BASE)).numpy())

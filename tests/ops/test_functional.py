"""gradgen.nn.functional against PyTorch: signatures, losses, activations, messages,
grad_fn names.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from torch_oracle import oracle, outcome
from ops.nn_checks import MEAN, NONE, SUM, _arrays, _check_against_torch, _nn

# torch.autograd.forward_ad's first use scripts a function with torch.jit (deprecated).
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)


# -- gradgen.nn.functional ---------------------------------------------------------------

FUNCTIONS = [
    "leaky_relu",
    "elu",
    "hardtanh",
    "mish",
    "softsign",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "layer_norm",
    "embedding",
    "pad",
    "dropout",
    "normalize",
]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functional_signatures_match_torch(name) -> None:
    def parameters(function: Any) -> list[tuple[str, str, str]]:
        signature = inspect.signature(function)
        return [
            (p.name, repr(p.default), str(p.kind))
            for p in signature.parameters.values()
        ]

    theirs = oracle(
        "parameters", lambda torch: parameters(getattr(torch.nn.functional, name))
    )
    assert parameters(getattr(GF, name)) == theirs


def test_functional_builtin_signatures_match_torch_docs() -> None:
    """softplus, logsigmoid and one_hot are C functions in torch: their documented
    signatures."""
    assert str(inspect.signature(GF.softplus)).startswith(
        "(input: 'Tensor', beta: 'float' = 1, threshold: 'float' = 20)"
    )
    assert list(inspect.signature(GF.logsigmoid).parameters) == ["input"]
    assert str(inspect.signature(GF.one_hot)).startswith(
        "(tensor: 'Tensor', num_classes: 'int' = -1)"
    )


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_functional_losses_match_torch(reduction) -> None:
    a, b = _arrays(40, (4, 3), (4, 3))
    w = np.abs(a) + 0.5
    probabilities = (b + 2) / 4
    cases: list[tuple[str, dict[str, Any], list[Any], list[bool]]] = [
        ("l1_loss", {}, [a, b], [True, True]),
        ("l1_loss", {"weight": True}, [a, b, w], [True, True, True]),
        ("smooth_l1_loss", {"beta": 0.5}, [a, b], [True, True]),
        ("smooth_l1_loss", {"beta": 0.0}, [a, b], [True, True]),
        ("huber_loss", {"delta": 0.5}, [a, b], [True, True]),
        ("huber_loss", {"weight": True}, [a, b, w], [True, True, True]),
        ("binary_cross_entropy_with_logits", {}, [a, probabilities], [True, True]),
        (
            "binary_cross_entropy_with_logits",
            {"weight": True, "pos_weight": True},
            [a, probabilities, w, w[0]],
            [True, True, False, False],
        ),
        ("kl_div", {}, [np.log(probabilities), probabilities], [True, True]),
        ("kl_div", {"log_target": True}, [a, b], [True, True]),
    ]
    for name, options, arrays, flags in cases:

        def call(module: Any, *tensors: Any) -> Any:
            kwargs = {k: v for k, v in options.items() if v is not True}
            rest = list(tensors[2:])
            for key in ("weight", "pos_weight"):
                if options.get(key) is True:
                    kwargs[key] = rest.pop(0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return getattr(module, name)(
                    tensors[0], tensors[1], reduction=reduction, **kwargs
                )

        _check_against_torch(
            lambda *t: call(GF, *t),
            lambda torch: lambda *t: call(torch.nn.functional, *t),
            arrays,
            flags,
        )


def test_functional_kl_div_batchmean_and_warnings_match_torch() -> None:
    rng = np.random.default_rng(41)
    x, y = np.log(rng.dirichlet(np.ones(3), 4)), rng.dirichlet(np.ones(3), 4)
    _check_against_torch(
        lambda a, b: GF.kl_div(a, b, reduction="batchmean"),
        lambda torch: lambda a, b: torch.nn.functional.kl_div(
            a, b, reduction="batchmean"
        ),
        [x, y],
    )

    def messages(lib: Any, functional: Any) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            functional.kl_div(lib.tensor(x), lib.tensor(y))
        return [str(w.message) for w in caught]

    theirs = oracle("warnings", lambda torch: messages(torch, torch.nn.functional))
    assert messages(gradgen, GF) == theirs


@pytest.mark.parametrize(
    "size_average, reduce", [(None, False), (False, None), (True, True), (False, False)]
)
@pytest.mark.parametrize(
    "name", ["l1_loss", "smooth_l1_loss", "binary_cross_entropy_with_logits", "kl_div"]
)
def test_functional_legacy_flags_match_torch(name, size_average, reduce) -> None:
    a, b = _arrays(42, (4, 3), (4, 3))
    b = (b + 2) / 4

    def run(lib: Any, functional: Any) -> tuple[Any, list[str]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(functional, name)(
                lib.tensor(a), lib.tensor(b), size_average=size_average, reduce=reduce
            )
        return out.numpy(), [str(w.message) for w in caught]

    out, messages = run(gradgen, GF)
    expected, expected_messages = oracle(
        "result", lambda torch: run(torch, torch.nn.functional)
    )
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    assert messages == expected_messages


def test_functional_messages_match_torch() -> None:
    checks: list[tuple[Callable[[], Any], Callable[[Any], Any]]] = [
        (
            lambda: GF.l1_loss(
                gradgen.ones(3), gradgen.ones(3), weight=gradgen.ones(4)
            ),
            lambda torch: torch.nn.functional.l1_loss(
                torch.ones(3), torch.ones(3), weight=torch.ones(4)
            ),
        ),
        (
            lambda: GF.huber_loss(
                gradgen.ones(3), gradgen.ones(3), weight=gradgen.ones(4)
            ),
            lambda torch: torch.nn.functional.huber_loss(
                torch.ones(3), torch.ones(3), weight=torch.ones(4)
            ),
        ),
        (
            lambda: GF.l1_loss(
                gradgen.ones(3),
                gradgen.ones(3),
                weight=gradgen.ones(3),
                reduction="bad",
            ),
            lambda torch: torch.nn.functional.l1_loss(
                torch.ones(3), torch.ones(3), weight=torch.ones(3), reduction="bad"
            ),
        ),
        (
            lambda: GF.l1_loss(gradgen.ones(3), gradgen.ones(3), reduction="bad"),
            lambda torch: torch.nn.functional.l1_loss(
                torch.ones(3), torch.ones(3), reduction="bad"
            ),
        ),
        (
            lambda: GF.kl_div(gradgen.ones(3), gradgen.ones(3), reduction="bad"),
            lambda torch: torch.nn.functional.kl_div(
                torch.ones(3), torch.ones(3), reduction="bad"
            ),
        ),
        (
            lambda: GF.binary_cross_entropy_with_logits(
                gradgen.ones(3), gradgen.ones(3, 1)
            ),
            lambda torch: torch.nn.functional.binary_cross_entropy_with_logits(
                torch.ones(3), torch.ones(3, 1)
            ),
        ),
    ]
    for number, (ours, theirs) in enumerate(checks):
        expected = oracle(str(number), lambda torch: outcome(lambda: theirs(torch)))
        assert isinstance(expected, Exception)
        with pytest.raises(type(expected)) as got:
            ours()
        assert str(got.value).replace("gradgen.Size", "torch.Size") == str(expected)
    for name in ("l1_loss", "smooth_l1_loss", "huber_loss"):
        with pytest.warns(
            UserWarning,
            match=r"Using a target size \(gradgen.Size\(\[3\]\)\) that is different to the input size \(gradgen.Size\(\[3, 1\]\)\)",
        ):
            out = getattr(GF, name)(gradgen.ones(3, 1), gradgen.zeros(3))
        assert out.shape == ()


def test_functional_activations_match_torch() -> None:
    (x,) = _arrays(43, (3, 4))
    for name, kwargs in (
        ("leaky_relu", {"negative_slope": 0.2}),
        ("elu", {"alpha": 0.5}),
        ("softplus", {"beta": 2, "threshold": 1}),
        ("logsigmoid", {}),
        ("hardtanh", {"min_val": -0.5, "max_val": 0.5}),
        ("mish", {}),
        ("softsign", {}),
    ):
        _check_against_torch(
            lambda a: getattr(GF, name)(a, **kwargs),
            lambda torch: lambda a: getattr(torch.nn.functional, name)(a, **kwargs),
            [x],
        )
    for name in ("leaky_relu", "elu", "hardtanh", "mish"):

        def inplace(lib: Any, functional: Any) -> Any:
            tensor = lib.tensor(x)
            assert functional(tensor, inplace=True) is tensor
            return tensor.numpy()

        theirs = oracle(
            f"{name}(inplace=True)",
            lambda torch: inplace(torch, getattr(torch.nn.functional, name)),
        )
        ours = inplace(gradgen, getattr(GF, name))
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, err_msg=name)


def test_grad_fn_names_match_torch() -> None:
    x, y = _arrays(44, (2, 3), (2, 3))
    cases: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
        (lambda lib, a, b: _f(lib, "l1_loss")(a, b, MEAN), lambda lib, a, b: None),
        (lambda lib, a, b: _f(lib, "l1_loss")(a, b, SUM), lambda lib, a, b: None),
        (lambda lib, a, b: _f(lib, "l1_loss")(a, b, NONE), lambda lib, a, b: None),
        (lambda lib, a, b: _f(lib, "kl_div")(a, b, NONE), lambda lib, a, b: None),
        (
            lambda lib, a, b: _f(lib, "kl_div")(a, b, NONE, log_target=True),
            lambda lib, a, b: None,
        ),
        (lambda lib, a, b: _f(lib, "log_sigmoid")(a), lambda lib, a, b: None),
        (lambda lib, a, b: _f(lib, "dropout")(a, 1.0, True), lambda lib, a, b: None),
        (lambda lib, a, b: _f(lib, "layer_norm")(a, (3,)), lambda lib, a, b: None),
        (
            lambda lib, a, b: _f(lib, "constant_pad_nd")(a, (1, 1)),
            lambda lib, a, b: None,
        ),
        (
            lambda lib, a, b: _f(lib, "embedding")(a, lib.tensor([1, 0])),
            lambda lib, a, b: None,
        ),
    ]
    for number, (make, _) in enumerate(cases):

        def names(lib: Any) -> tuple[str, list[Any]]:
            out = make(
                lib,
                lib.tensor(x, requires_grad=True),
                lib.tensor(y, requires_grad=True),
            )
            following = [
                type(n).__name__ if n is not None else None
                for n, _ in out.grad_fn.next_functions
            ]
            return out.grad_fn.name(), following

        ours_name, ours_next = names(gradgen)
        theirs_name, theirs_next = oracle(str(number), names)
        assert ours_name == theirs_name
        # gradgen has no xlogy: kl_div writes xlogy(target, target) with where.
        assert ours_next == [
            {"XlogyBackward0": "WhereBackward0"}.get(n, n) for n in theirs_next
        ]


def _f(lib: Any, name: str) -> Callable[..., Any]:
    return getattr(lib, name) if lib is gradgen else _nn(lib, name)

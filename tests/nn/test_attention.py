"""scaled_dot_product_attention, multi_head_attention_forward and nn.MultiheadAttention
against PyTorch: the same inputs and weights give the same outputs, attention weights
and gradients (of the inputs and of every parameter), and the same errors; gradcheck
and gradgradcheck of the attention; dropout statistics counted by hand. PyTorch's
answers are recorded in tests/golden/ (see torch_oracle.py)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from gradgen import nn
from gradgen.autograd import gradcheck, gradgradcheck
from torch_oracle import oracle, outcome

RNG = np.random.default_rng(1313)


def _normal(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape)


def _upstream(shape: tuple[int, ...]) -> np.ndarray:
    """A fixed, uneven output gradient (so that every output counts differently)."""
    return np.linspace(-1.0, 2.0, math.prod(shape)).reshape(shape)


def _tensors(lib: Any, arrays: dict[str, Any]) -> dict[str, Any]:
    """Float arrays as tensors requiring grad, except masks (names starting "mask");
    other values as they are."""
    made = {}
    for name, value in arrays.items():
        if isinstance(value, np.ndarray):
            grad = value.dtype.kind == "f" and not name.startswith("mask")
            made[name] = lib.tensor(value, requires_grad=grad)
        else:
            made[name] = value
    return made


def _backward(lib: Any, outputs: list[Any]) -> None:
    total = None
    for out in outputs:
        term = (out * lib.tensor(_upstream(tuple(out.shape)))).sum()
        total = term if total is None else total + term
    assert total is not None
    total.backward()


def _assert_same(ours: Any, theirs: Any) -> None:
    assert type(ours) is type(theirs) or isinstance(theirs, dict)
    if isinstance(theirs, dict):
        assert sorted(ours) == sorted(theirs)
        for key in theirs:
            _assert_same(ours[key], theirs[key])
    elif isinstance(theirs, list):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


# -- scaled_dot_product_attention --------------------------------------------------------


class Sdpa(NamedTuple):
    shapes: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    kwargs: dict[str, Any] = {}
    mask: np.ndarray | None = None


_BOOL_MASK = RNG.random((4, 5)) > 0.3
_BOOL_MASK[:, 0] = True  # every query keeps a key
_FLOAT_MASK = RNG.normal(size=(2, 1, 4, 5))

SDPA: dict[str, Sdpa] = {
    "plain": Sdpa(((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6))),
    "3-D": Sdpa(((2, 4, 8), (2, 5, 8), (2, 5, 3))),
    "2-D": Sdpa(((4, 8), (5, 8), (5, 3))),
    "5-D": Sdpa(((2, 1, 2, 3, 4), (2, 1, 2, 5, 4), (2, 1, 2, 5, 2))),
    "bool mask broadcast": Sdpa(
        ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)), mask=_BOOL_MASK
    ),
    "float mask broadcast": Sdpa(
        ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)), mask=_FLOAT_MASK
    ),
    "causal": Sdpa(((2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 3)), {"is_causal": True}),
    "causal wide": Sdpa(
        ((1, 2, 3, 4), (1, 2, 6, 4), (1, 2, 6, 3)), {"is_causal": True}
    ),
    "scale": Sdpa(((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)), {"scale": 0.7}),
    "negative scale": Sdpa(((2, 2, 4, 8), (2, 2, 5, 8), (2, 2, 5, 6)), {"scale": -0.4}),
    "gqa": Sdpa(((2, 6, 4, 8), (2, 2, 5, 8), (2, 3, 5, 6)), {"enable_gqa": True}),
    "broadcast heads": Sdpa(((2, 3, 4, 8), (2, 1, 5, 8), (1, 3, 5, 6))),
    "dropout_p=0": Sdpa(((2, 4, 8), (2, 5, 8), (2, 5, 3)), {"dropout_p": 0.0}),
}


def _sdpa(lib: Any, case: Sdpa) -> dict[str, Any]:
    arrays = {name: RNG_FIXED[case_key(case)][i] for i, name in enumerate("qkv")}
    if case.mask is not None:
        arrays["mask"] = case.mask
    t = _tensors(lib, arrays)
    function = lib.nn.functional.scaled_dot_product_attention
    out = function(t["q"], t["k"], t["v"], t.get("mask"), **case.kwargs)
    _backward(lib, [out])
    grads = [t[name].grad.numpy() for name in "qkv"]
    return {"out": out.detach().numpy(), "grads": grads}


def case_key(case: Sdpa) -> str:
    return repr(case.shapes)


RNG_FIXED: dict[str, list[np.ndarray]] = {}
for _case in SDPA.values():
    RNG_FIXED.setdefault(case_key(_case), [_normal(*shape) for shape in _case.shapes])


@pytest.mark.parametrize("name", sorted(SDPA))
def test_sdpa_matches_torch(name: str) -> None:
    case = SDPA[name]
    _assert_same(_sdpa(gradgen, case), oracle("sdpa", lambda torch: _sdpa(torch, case)))


def test_sdpa_fully_masked_rows_are_zero_with_finite_gradients() -> None:
    """A query whose keys are all masked gets zeros (PyTorch's _safe_softmax), and no
    NaN reaches any gradient."""
    mask = np.ones((4, 5), bool)
    mask[1] = False
    float_mask = np.where(mask, 0.0, -np.inf)
    for key, value in (("bool", mask), ("float", float_mask)):
        case = Sdpa(((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)), mask=value)
        ours = _sdpa(gradgen, case)
        assert np.all(ours["out"][:, :, 1] == 0)
        assert all(np.isfinite(g).all() for g in ours["grads"])
        _assert_same(ours, oracle(key, lambda torch: _sdpa(torch, case)))


def test_sdpa_gradcheck_and_gradgradcheck() -> None:
    q, k, v = (gradgen.tensor(_normal(*s), requires_grad=True) for s in SDPA_SHAPES)
    mask = gradgen.tensor(_normal(3, 4), requires_grad=True)

    def attend(q: Any, k: Any, v: Any, mask: Any) -> Any:
        return GF.scaled_dot_product_attention(q, k, v, mask, scale=0.6)

    assert gradcheck(attend, [q, k, v, mask], check_forward_ad=True)
    assert gradgradcheck(attend, [q, k, v, mask])
    causal = lambda q, k, v: GF.scaled_dot_product_attention(  # noqa: E731
        q, k, v, is_causal=True
    )
    assert gradcheck(causal, [q, k, v])
    assert gradgradcheck(causal, [q, k, v])


SDPA_SHAPES = ((2, 3, 4), (2, 4, 4), (2, 4, 2))


@pytest.mark.filterwarnings("ignore:Dropout mask should only be used for testing")
def test_sdpa_math_returns_the_weights_and_takes_a_dropout_mask() -> None:
    """_scaled_dot_product_attention_math (torch._scaled_dot_product_attention_math):
    the output and the weights; a given dropout_mask replaces the random one."""
    q, k, v = (_normal(*s) for s in SDPA_SHAPES)
    keep = RNG.random((2, 3, 4)) > 0.4

    def run(lib: Any) -> dict[str, Any]:
        t = _tensors(lib, {"q": q, "k": k, "v": v})
        out, weights = lib._scaled_dot_product_attention_math(
            t["q"], t["k"], t["v"], dropout_p=0.4, dropout_mask=lib.tensor(keep)
        )
        _backward(lib, [out, weights])
        grads = [t[name].grad.numpy() for name in "qkv"]
        return {
            "out": out.detach().numpy(),
            "weights": weights.detach().numpy(),
            "grads": grads,
        }

    _assert_same(run(gradgen), oracle("math", run))


def test_sdpa_dropout_statistics_and_seed() -> None:
    """With dropout_p the weights are zeroed with probability p and the rest scaled by
    1/(1-p) (counted over many weights); the same seed gives the same result."""
    q = gradgen.tensor(_normal(8, 4, 64, 8))
    k = gradgen.tensor(_normal(8, 4, 64, 8))
    v = gradgen.tensor(_normal(8, 4, 64, 8))
    p = 0.3
    plain, weights = gradgen._scaled_dot_product_attention_math(q, k, v)
    gradgen.manual_seed(5)
    _, dropped = gradgen._scaled_dot_product_attention_math(q, k, v, dropout_p=p)
    zero = dropped.numpy() == 0
    assert abs(zero.mean() - p) < 0.01  # 131072 weights: sd of the mean ~ 0.0013
    np.testing.assert_allclose(
        dropped.numpy()[~zero], weights.numpy()[~zero] / (1 - p), rtol=1e-12
    )
    gradgen.manual_seed(5)
    first = GF.scaled_dot_product_attention(q, k, v, dropout_p=p)
    gradgen.manual_seed(5)
    second = GF.scaled_dot_product_attention(q, k, v, dropout_p=p)
    assert np.array_equal(first.numpy(), second.numpy())
    assert not np.allclose(first.numpy(), plain.numpy())


SDPA_ERRORS: dict[str, tuple[tuple[tuple[int, ...], ...], dict[str, Any], str]] = {
    # name: (q, k, v shapes), keyword arguments, dtypes of q/k/v and mask
    "causal with mask": (
        ((2, 4, 8), (2, 5, 8), (2, 5, 8)),
        {"is_causal": True, "mask": "bool"},
        "",
    ),
    "value length": (((2, 4, 8), (2, 5, 8), (2, 4, 8)), {}, ""),
    "key features": (((2, 4, 8), (2, 5, 7), (2, 5, 8)), {}, ""),
    "1-D": (((8,), (8,), (8,)), {}, ""),
    "dtypes": (((2, 4, 8), (2, 5, 8), (2, 5, 8)), {}, "key float32"),
    "int mask": (((2, 4, 8), (2, 5, 8), (2, 5, 8)), {"mask": "int64"}, ""),
    "float16 mask": (((2, 4, 8), (2, 5, 8), (2, 5, 8)), {"mask": "float16"}, ""),
    "mask shape": (((2, 4, 8), (2, 5, 8), (2, 5, 8)), {"mask": "bool 3x5"}, ""),
    "dropout above 1": (((2, 4, 8), (2, 5, 8), (2, 5, 8)), {"dropout_p": 1.5}, ""),
}


def _sdpa_error_call(lib: Any, name: str) -> Callable[[], Any]:
    shapes, kwargs, dtypes = SDPA_ERRORS[name]
    kwargs = dict(kwargs)
    tensors = [lib.tensor(np.ones(shape)) for shape in shapes]
    if dtypes == "key float32":
        tensors[1] = tensors[1].to(lib.float32)
    mask = kwargs.pop("mask", None)
    if mask is not None:
        rows, columns = (3, 5) if mask.endswith("3x5") else (4, 5)
        dtype = getattr(lib, mask.split()[0])
        kwargs["attn_mask"] = lib.ones(rows, columns, dtype=dtype)
    function = lib.nn.functional.scaled_dot_product_attention
    return lambda: function(*tensors, **kwargs)


@pytest.mark.parametrize("name", sorted(SDPA_ERRORS))
def test_sdpa_errors_match_torch(name: str) -> None:
    theirs = oracle("error", lambda torch: outcome(_sdpa_error_call(torch, name)))
    assert isinstance(theirs, Exception)
    with pytest.raises(type(theirs)) as raised:
        _sdpa_error_call(gradgen, name)()
    assert str(raised.value) == str(theirs)


def test_sdpa_gqa_head_count_error() -> None:
    """PyTorch's text is cut short after "heads in "; gradgen ends the sentence."""
    q = gradgen.ones(2, 4, 4, 8)
    k = gradgen.ones(2, 3, 5, 8)
    theirs = oracle(
        "error",
        lambda torch: outcome(
            lambda: torch.nn.functional.scaled_dot_product_attention(
                torch.ones(2, 4, 4, 8),
                torch.ones(2, 3, 5, 8),
                torch.ones(2, 3, 5, 8),
                enable_gqa=True,
            )
        ),
    )
    with pytest.raises(RuntimeError) as raised:
        GF.scaled_dot_product_attention(q, k, k, enable_gqa=True)
    assert str(raised.value).startswith(str(theirs))
    assert str(raised.value).endswith("heads in query")


# -- MultiheadAttention --------------------------------------------------------------------


def _state_for(module: Any, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        name: rng.uniform(-0.6, 0.6, tuple(value.shape))
        for name, value in module.state_dict().items()
    }


def _run_module(
    lib: Any,
    make: Callable[[Any], Any],
    state: dict[str, np.ndarray],
    arrays: dict[str, Any],
    call: Callable[[Any, dict[str, Any]], Any],
) -> dict[str, Any]:
    """Outputs, and the gradients of every parameter and float input, of
    call(module, inputs) for the module make(lib) holding `state`."""
    module = make(lib)
    module.load_state_dict({name: lib.tensor(value) for name, value in state.items()})
    inputs = _tensors(lib, arrays)
    result = call(module, inputs)
    outputs = [out for out in (result if isinstance(result, tuple) else (result,))]
    outputs = [out for out in outputs if out is not None]
    _backward(lib, outputs)
    grads = {
        name: param.grad.numpy()
        for name, param in module.named_parameters()
        if param.grad is not None
    }
    for name, value in inputs.items():
        if hasattr(value, "grad") and value.grad is not None:
            grads["input " + name] = value.grad.numpy()
    return {"outputs": [out.detach().numpy() for out in outputs], "grads": grads}


class Mha(NamedTuple):
    kwargs: dict[str, Any]  # constructor arguments after embed_dim=8, num_heads=2
    shapes: tuple[
        tuple[int, ...], tuple[int, ...], tuple[int, ...]
    ]  # query, key, value
    call: dict[str, Any] = {}  # forward keywords; masks as arrays
    self_attention: bool = False


_KPM = np.array(
    [[False, False, False, True, True], [False, False, False, False, False]]
)
_ATTN_BOOL = np.triu(np.ones((4, 5), bool), 2)
_ATTN_FLOAT = RNG.normal(size=(4, 5))

MHA: dict[str, Mha] = {
    "plain": Mha({}, ((4, 2, 8), (5, 2, 8), (5, 2, 8))),
    "self": Mha({}, ((5, 2, 8),) * 3, self_attention=True),
    "batch_first": Mha({"batch_first": True}, ((2, 4, 8), (2, 5, 8), (2, 5, 8))),
    "unbatched": Mha({}, ((4, 8), (5, 8), (5, 8))),
    "kdim vdim": Mha({"kdim": 3, "vdim": 5}, ((4, 2, 8), (5, 2, 3), (5, 2, 5))),
    "no bias": Mha({"bias": False}, ((4, 2, 8), (5, 2, 8), (5, 2, 8))),
    "bias_kv zero_attn": Mha(
        {"add_bias_kv": True, "add_zero_attn": True},
        ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
        {"key_padding_mask": _KPM, "attn_mask": _ATTN_BOOL},
    ),
    "key padding": Mha(
        {}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)), {"key_padding_mask": _KPM}
    ),
    "float mask heads": Mha(
        {},
        ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
        {"attn_mask": _ATTN_FLOAT, "average_attn_weights": False},
    ),
    "3-D mask no weights": Mha(
        {},
        ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
        {"attn_mask": RNG.normal(size=(4, 4, 5)), "need_weights": False},
    ),
    "masks no weights": Mha(
        {"batch_first": True},
        ((2, 4, 8), (2, 5, 8), (2, 5, 8)),
        {"key_padding_mask": _KPM, "attn_mask": _ATTN_BOOL, "need_weights": False},
    ),
    "causal": Mha(
        {},
        ((5, 2, 8),) * 3,
        {"attn_mask": np.triu(np.full((5, 5), -np.inf), 1), "is_causal": True},
        self_attention=True,
    ),
    "causal no weights": Mha(
        {},
        ((5, 2, 8),) * 3,
        {
            "attn_mask": np.triu(np.full((5, 5), -np.inf), 1),
            "is_causal": True,
            "need_weights": False,
        },
        self_attention=True,
    ),
}

MHA_INPUTS = {
    name: [_normal(*shape) for shape in case.shapes] for name, case in MHA.items()
}


def _mha_make(case: Mha) -> Callable[[Any], Any]:
    return lambda lib: lib.nn.MultiheadAttention(8, 2, dtype=lib.float64, **case.kwargs)


def _mha_call(case: Mha) -> Callable[[Any, dict[str, Any]], Any]:
    def call(module: Any, t: dict[str, Any]) -> Any:
        keywords = {
            key: t["mask " + key] if "mask " + key in t else value
            for key, value in case.call.items()
        }
        if case.self_attention:
            return module(t["query"], t["query"], t["query"], **keywords)
        return module(t["query"], t["key"], t["value"], **keywords)

    return call


def _mha_arrays(name: str) -> dict[str, Any]:
    case = MHA[name]
    arrays: dict[str, Any] = dict(zip(("query", "key", "value"), MHA_INPUTS[name]))
    if case.self_attention:
        arrays = {"query": arrays["query"]}
    for key, value in case.call.items():
        if isinstance(value, np.ndarray):
            arrays["mask " + key] = value
    return arrays


@pytest.mark.parametrize("name", sorted(MHA))
def test_multihead_attention_matches_torch(name: str) -> None:
    case = MHA[name]
    make, call = _mha_make(case), _mha_call(case)
    state = _state_for(make(gradgen), 11)
    arrays = _mha_arrays(name)
    ours = _run_module(gradgen, make, state, arrays, call)
    theirs = oracle("mha", lambda torch: _run_module(torch, make, state, arrays, call))
    _assert_same(ours, theirs)


def test_multihead_attention_parameters_and_initialisation() -> None:
    """PyTorch's parameter names and shapes; xavier_uniform_ projections (bound
    sqrt(6 / (fan_in + fan_out))), zero biases, xavier_normal_ bias_k / bias_v."""
    gradgen.manual_seed(0)
    module = nn.MultiheadAttention(64, 4, add_bias_kv=True)
    names = {name: tuple(p.shape) for name, p in module.named_parameters()}
    theirs = oracle(
        "names",
        lambda torch: {
            name: tuple(p.shape)
            for name, p in torch.nn.MultiheadAttention(
                64, 4, add_bias_kv=True
            ).named_parameters()
        },
    )
    assert names == theirs
    bound = math.sqrt(6 / (64 + 192))
    weight = module.in_proj_weight.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.95 * bound
    assert abs(weight.std() - bound / math.sqrt(3)) < 0.01
    assert not module.in_proj_bias.detach().numpy().any()
    assert not module.out_proj.bias.detach().numpy().any()
    assert type(module.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    separate = nn.MultiheadAttention(6, 3, kdim=4, vdim=2, bias=False)
    assert separate.in_proj_weight is None and separate.in_proj_bias is None
    assert tuple(separate.k_proj_weight.shape) == (6, 4)
    assert repr(separate) == oracle(
        "repr",
        lambda torch: repr(
            torch.nn.MultiheadAttention(6, 3, kdim=4, vdim=2, bias=False)
        ),
    )


def test_multihead_attention_dropout_in_training_only() -> None:
    module = nn.MultiheadAttention(8, 2, dropout=0.5, dtype=gradgen.float64)
    x = gradgen.tensor(_normal(4, 2, 8))
    module.eval()
    first, weights = module(x, x, x)
    second, _ = module(x, x, x)
    assert np.array_equal(first.detach().numpy(), second.detach().numpy())
    np.testing.assert_allclose(weights.detach().numpy().sum(-1), 1.0, rtol=1e-12)
    module.train()
    gradgen.manual_seed(3)
    _, dropped = module(x, x, x, average_attn_weights=False)
    zero = dropped.detach().numpy() == 0
    assert 0.4 < zero.mean() < 0.6  # 64 weights


def test_functional_multi_head_attention_forward_matches_torch() -> None:
    """F.multi_head_attention_forward with static_k / static_v (given per-head keys
    and values) and separate projection weights."""
    query = _normal(3, 2, 4)
    weights = [_normal(4, 4) for _ in range(3)]
    in_bias, out_weight, out_bias = _normal(12), _normal(4, 4), _normal(4)
    static_k, static_v = _normal(4, 5, 2), _normal(4, 5, 2)

    def run(lib: Any) -> dict[str, Any]:
        t = _tensors(
            lib,
            {
                "query": query,
                "q": weights[0],
                "k": weights[1],
                "v": weights[2],
                "in_bias": in_bias,
                "out_weight": out_weight,
                "out_bias": out_bias,
                "static_k": static_k,
                "static_v": static_v,
            },
        )
        out, attn = lib.nn.functional.multi_head_attention_forward(
            t["query"], t["query"], t["query"], 4, 2, None, t["in_bias"], None, None,
            False, 0.0, t["out_weight"], t["out_bias"], use_separate_proj_weight=True,
            q_proj_weight=t["q"], k_proj_weight=t["k"], v_proj_weight=t["v"],
            static_k=t["static_k"], static_v=t["static_v"],
        )  # fmt: skip
        _backward(lib, [out, attn])
        grads = {k: v.grad.numpy() for k, v in t.items() if v.grad is not None}
        return {
            "out": out.detach().numpy(),
            "attn": attn.detach().numpy(),
            "grads": grads,
        }

    _assert_same(run(gradgen), oracle("mha", run))


MHA_ERRORS: dict[
    str, tuple[dict[str, Any], tuple[tuple[int, ...], ...], dict[str, Any]]
] = {
    "4-D query": ({}, ((1, 4, 2, 8), (5, 2, 8), (5, 2, 8)), {}),
    "key rank": ({}, ((4, 2, 8), (5, 8), (5, 2, 8)), {}),
    "unbatched key rank": ({}, ((4, 8), (5, 2, 8), (5, 8)), {}),
    "padding rank": (
        {},
        ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
        {"key_padding_mask": (2, 5, 1)},
    ),
    "attn_mask rank": ({}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)), {"attn_mask": (5,)}),
    "2-D attn_mask shape": (
        {},
        ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
        {"attn_mask": (4, 4)},
    ),
    "3-D attn_mask shape": (
        {},
        ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
        {"attn_mask": (2, 4, 5)},
    ),
    "unbatched 3-D attn_mask": ({}, ((4, 8), (5, 8), (5, 8)), {"attn_mask": (3, 4, 5)}),
    "padding batch": (
        {},
        ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
        {"key_padding_mask": (3, 5)},
    ),
    "padding length": (
        {},
        ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
        {"key_padding_mask": (2, 4)},
    ),
    "embed dim": ({}, ((4, 2, 6), (5, 2, 6), (5, 2, 6)), {}),
    "key value shapes": ({}, ((4, 2, 8), (5, 2, 8), (6, 2, 8)), {}),
    "separate key value": (
        {"kdim": 3, "vdim": 3},
        ((4, 2, 8), (5, 2, 3), (6, 2, 3)),
        {},
    ),
    "separate weight shape": (
        {"kdim": 3, "vdim": 3},
        ((4, 2, 8), (5, 2, 4), (5, 2, 3)),
        {},
    ),
    "causal without mask": ({}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)), {"is_causal": True}),
    "int mask": ({}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)), {"attn_mask": "int"}),
}


def _mha_error_call(lib: Any, name: str) -> Callable[[], Any]:
    kwargs, shapes, call = MHA_ERRORS[name]
    module = lib.nn.MultiheadAttention(8, 2, dtype=lib.float64, **kwargs)
    tensors = [lib.tensor(np.ones(shape)) for shape in shapes]
    keywords: dict[str, Any] = {}
    for key, value in call.items():
        if value == "int":
            keywords[key] = lib.ones(4, 5, dtype=lib.int64)
        elif isinstance(value, tuple):
            keywords[key] = lib.zeros(*value, dtype=lib.bool)
        else:
            keywords[key] = value
    return lambda: module(*tensors, **keywords)


@pytest.mark.parametrize("name", sorted(MHA_ERRORS))
def test_multihead_attention_errors_match_torch(name: str) -> None:
    theirs = oracle("error", lambda torch: outcome(_mha_error_call(torch, name)))
    assert isinstance(theirs, Exception)
    with pytest.raises(type(theirs)) as raised:
        _mha_error_call(gradgen, name)()
    assert str(raised.value) == str(theirs).replace("torch.Size", "gradgen.Size")


def test_multihead_attention_constructor_errors_match_torch() -> None:
    for args in ((0, 2), (8, 0), (8, 3)):
        theirs = oracle(
            f"{args}", lambda torch: outcome(lambda: torch.nn.MultiheadAttention(*args))
        )
        with pytest.raises(type(theirs)) as raised:
            nn.MultiheadAttention(*args)
        assert str(raised.value) == str(theirs)


def test_mismatched_mask_dtypes_warn_as_torch() -> None:
    module = nn.MultiheadAttention(8, 2, dtype=gradgen.float64)
    x = gradgen.tensor(_normal(4, 2, 8))
    with pytest.warns(
        UserWarning,
        match="^Support for mismatched key_padding_mask and attn_mask is deprecated",
    ):
        module(
            x,
            x,
            x,
            key_padding_mask=gradgen.zeros(2, 4, dtype=gradgen.bool),
            attn_mask=gradgen.zeros(4, 4),
        )

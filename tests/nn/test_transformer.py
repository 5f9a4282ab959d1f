"""The transformer layers (TransformerEncoderLayer, TransformerDecoderLayer,
TransformerEncoder, TransformerDecoder, Transformer) against torch.nn: with the same
weights and inputs, the same outputs and gradients of the inputs and of every
parameter, in training mode without dropout and in eval mode with it; PyTorch's
parameter names, initialisation, masks and errors. Recorded in tests/golden/ (see
torch_oracle.py)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import gradgen
from gradgen import nn
from torch_oracle import oracle, outcome

# PyTorch's own warnings (float masks beside bool ones; its nested-tensor fast path
# turned off), which gradgen's layers give too (the first) or have no cause for.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Support for mismatched"),
    pytest.mark.filterwarnings("ignore:enable_nested_tensor is True"),
    pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors"),
]

RNG = np.random.default_rng(2613)


def _normal(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape)


def _upstream(shape: tuple[int, ...]) -> np.ndarray:
    return np.linspace(-1.0, 2.0, math.prod(shape)).reshape(shape)


def _state_for(module: Any, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        name: rng.uniform(-0.5, 0.5, tuple(value.shape))
        for name, value in module.state_dict().items()
    }


class Case(NamedTuple):
    make: Callable[[Any], Any]  # lib -> module (float64)
    inputs: tuple[tuple[int, ...], ...]  # float inputs (take gradients)
    keywords: dict[str, Any] = {}  # forward keywords: masks as numpy arrays
    eval: bool = False  # eval() before the call (dropout off)


def _gelu(lib: Any) -> Any:
    return lib.nn.functional.gelu


def _custom(x: Any) -> Any:
    return x * x.sigmoid()  # a callable activation (silu written out)


def _encoder_layer(**kwargs: Any) -> Callable[[Any], Any]:
    def make(lib: Any) -> Any:
        options = dict(dim_feedforward=16, dropout=0.0, dtype=lib.float64)
        options.update(kwargs)
        if options.get("activation") == "gelu function":
            options["activation"] = _gelu(lib)
        return lib.nn.TransformerEncoderLayer(8, 2, **options)

    return make


def _decoder_layer(**kwargs: Any) -> Callable[[Any], Any]:
    def make(lib: Any) -> Any:
        options = dict(dim_feedforward=16, dropout=0.0, dtype=lib.float64)
        options.update(kwargs)
        return lib.nn.TransformerDecoderLayer(8, 2, **options)

    return make


def _encoder(num_layers: int, norm: bool, **kwargs: Any) -> Callable[[Any], Any]:
    def make(lib: Any) -> Any:
        layer = _encoder_layer(**kwargs)(lib)
        final = lib.nn.LayerNorm(8, dtype=lib.float64) if norm else None
        return lib.nn.TransformerEncoder(
            layer, num_layers, final, enable_nested_tensor=False
        )

    return make


def _decoder(num_layers: int, **kwargs: Any) -> Callable[[Any], Any]:
    def make(lib: Any) -> Any:
        layer = _decoder_layer(**kwargs)(lib)
        return lib.nn.TransformerDecoder(
            layer, num_layers, lib.nn.LayerNorm(8, dtype=lib.float64)
        )

    return make


def _transformer(**kwargs: Any) -> Callable[[Any], Any]:
    def make(lib: Any) -> Any:
        options = dict(
            num_encoder_layers=2,
            num_decoder_layers=2,
            dim_feedforward=16,
            dropout=0.0,
            dtype=lib.float64,
        )
        options.update(kwargs)
        return lib.nn.Transformer(8, 2, **options)

    return make


_CAUSAL5 = np.triu(np.full((5, 5), -np.inf), 1)
_PADDING = np.array([[False, False, False, True, True], [False] * 5])
_PADDING4 = np.array([[False, False, True, True], [False] * 4])

CASES: dict[str, Case] = {
    "encoder layer": Case(_encoder_layer(), ((5, 2, 8),)),
    "encoder layer norm_first gelu": Case(
        _encoder_layer(norm_first=True, activation="gelu"), ((5, 2, 8),)
    ),
    "encoder layer batch_first gelu function": Case(
        _encoder_layer(batch_first=True, activation="gelu function"), ((2, 5, 8),)
    ),
    "encoder layer callable no bias": Case(
        _encoder_layer(activation=_custom, bias=False, layer_norm_eps=1e-3),
        ((5, 2, 8),),
    ),
    "encoder layer unbatched": Case(_encoder_layer(), ((5, 8),)),
    "encoder layer masks": Case(
        _encoder_layer(),
        ((5, 2, 8),),
        {"src_mask": _CAUSAL5, "src_key_padding_mask": _PADDING},
    ),
    "encoder layer causal": Case(
        _encoder_layer(batch_first=True),
        ((2, 5, 8),),
        {"src_mask": _CAUSAL5, "is_causal": True},
    ),
    "encoder layer eval with dropout": Case(
        _encoder_layer(dropout=0.3, batch_first=True),
        ((2, 5, 8),),
        {"src_key_padding_mask": _PADDING},
        eval=True,
    ),
    "decoder layer": Case(_decoder_layer(), ((4, 2, 8), (5, 2, 8))),
    "decoder layer norm_first batch_first": Case(
        _decoder_layer(norm_first=True, batch_first=True, activation="gelu"),
        ((2, 4, 8), (2, 5, 8)),
        {
            "tgt_mask": np.triu(np.full((4, 4), -np.inf), 1),
            "tgt_is_causal": True,
            "memory_key_padding_mask": _PADDING,
            "tgt_key_padding_mask": _PADDING4,
        },
    ),
    "decoder layer memory mask": Case(
        _decoder_layer(),
        ((4, 2, 8), (5, 2, 8)),
        {"memory_mask": _normal(4, 5)},
    ),
    "encoder": Case(_encoder(2, True), ((5, 2, 8),), {"mask": _CAUSAL5}),
    "encoder no norm eval": Case(
        _encoder(3, False, dropout=0.2),
        ((5, 2, 8),),
        {"src_key_padding_mask": _PADDING},
        eval=True,
    ),
    "decoder": Case(
        _decoder(2),
        ((4, 2, 8), (5, 2, 8)),
        {"tgt_mask": np.triu(np.full((4, 4), -np.inf), 1)},
    ),
    "transformer": Case(
        _transformer(),
        ((5, 2, 8), (4, 2, 8)),
        {
            "tgt_mask": np.triu(np.full((4, 4), -np.inf), 1),
            "src_key_padding_mask": _PADDING,
            "memory_key_padding_mask": _PADDING,
        },
    ),
    "transformer batch_first norm_first eval": Case(
        _transformer(batch_first=True, norm_first=True, dropout=0.5),
        ((2, 5, 8), (2, 4, 8)),
        {"tgt_mask": np.triu(np.full((4, 4), -np.inf), 1)},
        eval=True,
    ),
}


def _run(lib: Any, case: Case, state: dict[str, np.ndarray], arrays: list[Any]) -> Any:
    module = case.make(lib)
    module.load_state_dict({name: lib.tensor(value) for name, value in state.items()})
    if case.eval:
        module.eval()
    inputs = [lib.tensor(array, requires_grad=True) for array in arrays]
    keywords = {
        key: lib.tensor(value) if isinstance(value, np.ndarray) else value
        for key, value in case.keywords.items()
    }
    out = module(*inputs, **keywords)
    (out * lib.tensor(_upstream(tuple(out.shape)))).sum().backward()
    grads = {name: p.grad.numpy() for name, p in module.named_parameters()}
    grads.update({f"input {i}": x.grad.numpy() for i, x in enumerate(inputs)})
    return {"out": out.detach().numpy(), "grads": grads}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    case = CASES[name]
    state = _state_for(case.make(gradgen), 5)
    arrays = [_normal(*shape) for shape in case.inputs]
    ours = _run(gradgen, case, state, arrays)
    theirs = oracle("run", lambda torch: _run(torch, case, state, arrays))
    assert sorted(ours["grads"]) == sorted(theirs["grads"])
    np.testing.assert_allclose(ours["out"], theirs["out"], rtol=1e-9, atol=1e-12)
    for key, value in theirs["grads"].items():
        np.testing.assert_allclose(
            ours["grads"][key], value, rtol=1e-8, atol=1e-11, err_msg=key
        )


def test_eval_matches_torch_fast_path_without_grad() -> None:
    """Under no_grad in eval mode PyTorch takes its fused path
    (_transformer_encoder_layer_fwd); gradgen's reference path gives its numbers."""
    make = _encoder_layer(dropout=0.1, batch_first=True, dim_feedforward=32)
    state = _state_for(make(gradgen), 9)
    x = _normal(3, 6, 8)

    def run(lib: Any) -> Any:
        module = make(lib)
        module.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        module.eval()
        with lib.no_grad():
            return module(lib.tensor(x)).numpy()

    np.testing.assert_allclose(run(gradgen), oracle("fast", run), rtol=1e-9, atol=1e-12)


def test_encoder_inference_with_padding_matches_torch_nested_path() -> None:
    """In eval mode without gradients, PyTorch's TransformerEncoder runs on nested
    tensors when given a key padding mask: the padded positions come out as zeros (then
    through the final norm). gradgen gives the same numbers; with gradients, or a
    padding that is not at the end, both compute every position."""
    make = _encoder(2, True, dropout=0.1, batch_first=True)
    state = _state_for(make(gradgen), 13)
    x = _normal(2, 5, 8)
    paddings = {"end": _PADDING, "middle": np.array([[False, True] + [False] * 3] * 2)}

    def run(lib: Any) -> dict[str, Any]:
        encoder = make(lib)
        encoder.enable_nested_tensor = encoder.use_nested_tensor = True
        encoder.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        encoder.eval()
        answers = {}
        for key, padding in paddings.items():
            with lib.no_grad():
                answers[key] = encoder(
                    lib.tensor(x), src_key_padding_mask=lib.tensor(padding)
                ).numpy()
        answers["grad"] = (
            encoder(lib.tensor(x), src_key_padding_mask=lib.tensor(_PADDING))
            .detach()
            .numpy()
        )
        return answers

    ours, theirs = run(gradgen), oracle("nested", run)
    for key in theirs:
        np.testing.assert_allclose(
            ours[key], theirs[key], rtol=1e-9, atol=1e-12, err_msg=key
        )
    bias = state["norm.bias"]
    np.testing.assert_allclose(ours["end"][0, 3:], np.broadcast_to(bias, (2, 8)))
    assert not np.allclose(ours["grad"][0, 3:], ours["end"][0, 3:])


def test_encoder_warns_when_it_cannot_use_nested_tensors_as_torch() -> None:
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    theirs = oracle(
        "warning",
        lambda torch: _warning_text(
            lambda: torch.nn.TransformerEncoder(
                torch.nn.TransformerEncoderLayer(8, 2, 16), 2
            )
        ),
    )
    assert _warning_text(lambda: nn.TransformerEncoder(layer, 2)) == theirs
    odd = nn.TransformerEncoderLayer(9, 3, 16, batch_first=True)
    assert _warning_text(lambda: nn.TransformerEncoder(odd, 1)).endswith(
        "num_heads is odd"
    )
    assert (
        _warning_text(lambda: nn.TransformerEncoder(odd, 1, enable_nested_tensor=False))
        == ""
    )


def _warning_text(build: Callable[[], Any]) -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build()
    return "".join(str(w.message) for w in caught)


def test_parameter_names_shapes_and_repr_match_torch() -> None:
    module = nn.Transformer(8, 2, 1, 1, dim_feedforward=16)
    ours = [(name, tuple(p.shape)) for name, p in module.named_parameters()]
    theirs = oracle(
        "names",
        lambda torch: [
            (name, tuple(p.shape))
            for name, p in torch.nn.Transformer(
                8, 2, 1, 1, dim_feedforward=16
            ).named_parameters()
        ],
    )
    assert ours == theirs  # in PyTorch's order
    layer = nn.TransformerDecoderLayer(8, 2, 16, bias=False, norm_first=True)
    assert repr(layer) == oracle(
        "repr",
        lambda torch: repr(
            torch.nn.TransformerDecoderLayer(8, 2, 16, bias=False, norm_first=True)
        ),
    )


def test_initialisation() -> None:
    """Transformer re-initialises every matrix with xavier_uniform_ (bound
    sqrt(6 / (fan_in + fan_out))); the attention biases stay zero; the stacked layers
    start as copies of one layer, with parameters of their own."""
    gradgen.manual_seed(1)
    model = nn.Transformer(32, 4, 2, 1, dim_feedforward=64)
    linear1 = model.encoder.layers[0].linear1.weight.detach().numpy()
    bound = math.sqrt(6 / (32 + 64))
    assert np.abs(linear1).max() <= bound and np.abs(linear1).max() > 0.9 * bound
    attention = model.encoder.layers[0].self_attn
    assert not attention.in_proj_bias.detach().numpy().any()
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)
    first, second = encoder.layers[0], encoder.layers[1]
    assert first.linear1.weight is not second.linear1.weight
    assert np.array_equal(
        first.linear1.weight.detach().numpy(), second.linear1.weight.detach().numpy()
    )


def test_generate_square_subsequent_mask_matches_torch() -> None:
    ours = nn.Transformer.generate_square_subsequent_mask(4)
    assert ours.dtype == gradgen.float32
    theirs = oracle(
        "mask", lambda torch: torch.nn.Transformer.generate_square_subsequent_mask(4)
    )
    assert np.array_equal(ours.numpy(), theirs)
    double = nn.Transformer.generate_square_subsequent_mask(3, dtype=gradgen.float64)
    assert double.dtype == gradgen.float64
    assert np.array_equal(np.isinf(double.numpy()), np.triu(np.ones((3, 3), bool), 1))


def test_dropout_in_training_changes_the_output() -> None:
    gradgen.manual_seed(2)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = gradgen.tensor(_normal(5, 2, 8), dtype=gradgen.float32)
    first, second = layer(x), layer(x)
    assert not np.allclose(first.detach().numpy(), second.detach().numpy())
    layer.eval()
    assert np.array_equal(layer(x).detach().numpy(), layer(x).detach().numpy())


ERRORS: dict[str, Callable[[Any], Any]] = {
    "activation": lambda lib: lib.nn.TransformerEncoderLayer(8, 2, activation="tanh"),
    "batch": lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16)(
        lib.ones(5, 2, 8), lib.ones(4, 3, 8)
    ),
    "batch first": lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16, batch_first=True)(
        lib.ones(2, 5, 8), lib.ones(3, 4, 8)
    ),
    "features": lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16)(
        lib.ones(5, 2, 8), lib.ones(4, 2, 6)
    ),
    "mask dtype": lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16)(
        lib.ones(5, 2, 8), lib.ones(5, 5, dtype=lib.int64)
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    theirs = oracle("error", lambda torch: outcome(lambda: ERRORS[name](torch)))
    assert isinstance(theirs, Exception)
    with pytest.raises(type(theirs)) as raised:
        ERRORS[name](gradgen)
    assert str(raised.value) == str(theirs)

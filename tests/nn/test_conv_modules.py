"""The convolution and pooling layers and functionals (gradgen.nn.Conv*d,
ConvTranspose*d, *Pool*d, F.conv*/pool*/pad) against torch.nn: the same weights and
inputs give the same outputs and gradients, the same repr and the same errors; a small
CNN trained for a few SGD steps from torch's initial weights follows torch's losses
and ends at torch's weights. Recorded in tests/golden/ (see torch_oracle.py)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import gradgen
from gradgen import nn
from torch_oracle import oracle, outcome

RNG = np.random.default_rng(2026)


def _normal(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape)


def _upstream(shape: tuple[int, ...]) -> np.ndarray:
    """A fixed, uneven output gradient (so that every output counts differently)."""
    count = math.prod(shape)
    return np.linspace(-1.0, 2.0, count).reshape(shape)


# -- functionals ---------------------------------------------------------------------


class Call(NamedTuple):
    name: str  # the F function
    arrays: tuple[np.ndarray | None, ...]  # tensor arguments (take gradients)
    kwargs: dict[str, Any] = {}


FUNCTIONAL: dict[str, Call] = {
    "conv1d": Call(
        "conv1d",
        (_normal(2, 4, 9), _normal(6, 2, 3), _normal(6)),
        {"stride": 2, "padding": 1, "groups": 2},
    ),
    "conv1d-same": Call(
        "conv1d",
        (_normal(3, 7), _normal(2, 3, 4), None),
        {"padding": "same", "dilation": 2},
    ),
    "conv2d": Call(
        "conv2d",
        (_normal(2, 3, 6, 5), _normal(4, 3, 3, 2), _normal(4)),
        {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)},
    ),
    "conv2d-valid": Call(
        "conv2d", (_normal(1, 2, 5, 5), _normal(2, 2, 2, 2), None), {"padding": "valid"}
    ),
    "conv3d": Call(
        "conv3d",
        (_normal(1, 2, 4, 5, 4), _normal(2, 1, 2, 3, 2), _normal(2)),
        {"padding": 1, "groups": 2},
    ),
    "conv_transpose1d": Call(
        "conv_transpose1d",
        (_normal(2, 4, 5), _normal(4, 3, 3), _normal(3)),
        {"stride": 2, "padding": 1, "output_padding": 1},
    ),
    "conv_transpose2d": Call(
        "conv_transpose2d",
        (_normal(1, 4, 3, 4), _normal(4, 1, 2, 3), _normal(2)),
        {"stride": (2, 3), "groups": 2, "dilation": (2, 1)},
    ),
    "conv_transpose3d": Call(
        "conv_transpose3d",
        (_normal(1, 2, 2, 3, 2), _normal(2, 2, 2, 2, 2), None),
        {"stride": 2, "padding": (0, 1, 0)},
    ),
    "max_pool1d": Call(
        "max_pool1d",
        (_normal(2, 3, 9),),
        {"kernel_size": 3, "stride": 2, "padding": 1, "return_indices": True},
    ),
    "max_pool2d": Call(
        "max_pool2d",
        (_normal(2, 2, 7, 6),),
        {"kernel_size": (3, 2), "ceil_mode": True, "dilation": (1, 2)},
    ),
    "max_pool2d-indices": Call(
        "max_pool2d",
        (_normal(1, 2, 5, 5),),
        {"kernel_size": 2, "stride": 1, "return_indices": True},
    ),
    "max_pool3d": Call(
        "max_pool3d",
        (_normal(1, 2, 4, 5, 4),),
        {"kernel_size": 2, "padding": 1, "return_indices": True},
    ),
    "avg_pool1d": Call(
        "avg_pool1d",
        (_normal(2, 3, 8),),
        {
            "kernel_size": 3,
            "stride": 2,
            "padding": 1,
            "count_include_pad": False,
            "ceil_mode": True,
        },
    ),
    "avg_pool2d": Call(
        "avg_pool2d", (_normal(2, 2, 6, 7),), {"kernel_size": (2, 3), "padding": 1}
    ),
    "avg_pool2d-divisor": Call(
        "avg_pool2d", (_normal(1, 2, 4, 4),), {"kernel_size": 2, "divisor_override": 3}
    ),
    "avg_pool3d": Call(
        "avg_pool3d", (_normal(1, 2, 4, 4, 5),), {"kernel_size": 2, "stride": (1, 2, 2)}
    ),
    "adaptive_avg_pool1d": Call(
        "adaptive_avg_pool1d", (_normal(2, 3, 10),), {"output_size": 4}
    ),
    "adaptive_avg_pool2d": Call(
        "adaptive_avg_pool2d", (_normal(2, 2, 7, 5),), {"output_size": (3, None)}
    ),
    "adaptive_avg_pool3d": Call(
        "adaptive_avg_pool3d", (_normal(1, 2, 5, 4, 6),), {"output_size": (2, 3, None)}
    ),
    "adaptive_max_pool1d": Call(
        "adaptive_max_pool1d",
        (_normal(2, 3, 10),),
        {"output_size": 3, "return_indices": True},
    ),
    "adaptive_max_pool2d": Call(
        "adaptive_max_pool2d",
        (_normal(2, 2, 7, 5),),
        {"output_size": (None, 2), "return_indices": True},
    ),
    "adaptive_max_pool3d": Call(
        "adaptive_max_pool3d", (_normal(1, 2, 5, 4, 6),), {"output_size": 2}
    ),
    "lp_pool1d": Call(
        "lp_pool1d",
        (np.abs(_normal(2, 3, 7)) + 0.1,),
        {"norm_type": 1.5, "kernel_size": 3, "stride": 2},
    ),
    "lp_pool2d": Call(
        "lp_pool2d",
        (_normal(1, 2, 5, 6),),
        {"norm_type": 2, "kernel_size": (2, 3), "ceil_mode": True},
    ),
    "lp_pool3d": Call(
        "lp_pool3d", (_normal(1, 2, 4, 4, 4),), {"norm_type": 3, "kernel_size": 2}
    ),
    "pad-reflect": Call("pad", (_normal(2, 3, 5),), {"pad": (2, 3), "mode": "reflect"}),
    "pad-reflect-2d": Call(
        "pad", (_normal(1, 2, 4, 3),), {"pad": (2, -1, 1, 3), "mode": "reflect"}
    ),
    "pad-replicate-3d": Call(
        "pad",
        (_normal(1, 2, 3, 2, 4),),
        {"pad": (1, 2, 0, 1, 3, 1), "mode": "replicate"},
    ),
    "pad-replicate-crop": Call(
        "pad", (_normal(3, 5),), {"pad": (-1, 4), "mode": "replicate"}
    ),
    "pad-circular": Call(
        "pad", (_normal(2, 3, 4),), {"pad": (4, 2), "mode": "circular"}
    ),
    "pad-circular-2d": Call(
        "pad", (_normal(1, 1, 3, 4),), {"pad": (1, -2, 3, 2), "mode": "circular"}
    ),
}


def _call(lib: Any, call: Call) -> dict[str, Any]:
    """F.<name> on the arrays; the output, the indices if any, every gradient."""
    tensors = [
        None if a is None else lib.tensor(a, requires_grad=True) for a in call.arrays
    ]
    result = getattr(lib.nn.functional, call.name)(*tensors, **call.kwargs)
    output, indices = result if isinstance(result, tuple) else (result, None)
    grad = lib.tensor(_upstream(tuple(output.shape)))
    (output * grad).sum().backward()
    return {
        "output": output.detach().numpy(),
        "indices": None if indices is None else indices.numpy(),
        "grads": [None if t is None else t.grad.numpy() for t in tensors],
    }


@pytest.mark.parametrize("case", sorted(FUNCTIONAL))
def test_functional_matches_torch(case: str) -> None:
    call = FUNCTIONAL[case]
    ours = _call(gradgen, call)
    theirs = oracle("functional", lambda torch: _call(torch, call))
    np.testing.assert_allclose(ours["output"], theirs["output"], rtol=1e-10, atol=1e-12)
    if theirs["indices"] is None:
        assert ours["indices"] is None
    else:
        np.testing.assert_array_equal(ours["indices"], theirs["indices"])
    for mine, expected in zip(ours["grads"], theirs["grads"], strict=True):
        if expected is None:
            assert mine is None
        else:
            np.testing.assert_allclose(mine, expected, rtol=1e-10, atol=1e-12)


def test_pad_modes_pass_gradcheck() -> None:
    x = gradgen.tensor(_normal(1, 2, 3, 4), requires_grad=True)
    for mode, amounts in (
        ("reflect", (2, 1, -1, 2)),
        ("replicate", (3, 0, 2, 2)),
        ("circular", (4, -1, 1, 3)),
    ):
        assert gradgen.autograd.gradcheck(
            lambda t: nn.functional.pad(t, amounts, mode=mode), (x,)
        )


PAD_ERRORS = {
    "odd": ((1, 2, 3), (1,), "reflect"),
    "too-many-dims": ((3,), (1, 1), "replicate"),
    "2d-on-2d": ((2, 3), (1, 1, 1, 1), "circular"),
    "reflect-too-far": ((1, 2, 3), (3, 0), "reflect"),
    "circular-wraps": ((1, 2, 3), (0, 4), "circular"),
}


@pytest.mark.parametrize("case", sorted(PAD_ERRORS))
def test_pad_errors_match_torch(case: str) -> None:
    shape, amounts, mode = PAD_ERRORS[case]
    data = np.zeros(shape)

    def run(lib: Any) -> Any:
        return outcome(lambda: lib.nn.functional.pad(lib.tensor(data), amounts, mode))

    ours, theirs = run(gradgen), oracle("error", run)
    assert type(ours).__name__ == type(theirs).__name__
    if case == "reflect-too-far":  # torch names its C++ argument number first
        assert str(theirs).endswith(str(ours))
    else:
        assert str(ours) == str(theirs)


# -- layers: the same weights give the same numbers -----------------------------------


class Layer(NamedTuple):
    build: Callable[[Any], Any]  # lib -> module
    input: np.ndarray
    forward_kwargs: dict[str, Any] = {}


LAYERS: dict[str, Layer] = {
    "Conv1d": Layer(
        lambda lib: lib.nn.Conv1d(4, 6, 3, stride=2, groups=2), _normal(2, 4, 9)
    ),
    "Conv1d-circular": Layer(
        lambda lib: lib.nn.Conv1d(2, 3, 3, padding=2, padding_mode="circular"),
        _normal(2, 2, 6),
    ),
    "Conv1d-same-reflect": Layer(
        lambda lib: lib.nn.Conv1d(
            2, 2, 4, padding="same", padding_mode="reflect", dilation=2
        ),
        _normal(2, 10),
    ),
    "Conv2d": Layer(
        lambda lib: lib.nn.Conv2d(3, 4, (3, 2), padding=(1, 2), dilation=(2, 1)),
        _normal(2, 3, 6, 5),
    ),
    "Conv2d-replicate": Layer(
        lambda lib: lib.nn.Conv2d(
            2, 2, 3, stride=2, padding=1, bias=False, padding_mode="replicate"
        ),
        _normal(1, 2, 5, 6),
    ),
    "Conv2d-same": Layer(
        lambda lib: lib.nn.Conv2d(2, 3, (2, 3), padding="same"), _normal(1, 2, 4, 5)
    ),
    "Conv3d": Layer(
        lambda lib: lib.nn.Conv3d(2, 2, 2, padding=(1, 0, 1)), _normal(1, 2, 3, 4, 3)
    ),
    "Conv3d-reflect": Layer(
        lambda lib: lib.nn.Conv3d(1, 2, 3, padding=1, padding_mode="reflect"),
        _normal(1, 1, 3, 4, 3),
    ),
    "ConvTranspose1d": Layer(
        lambda lib: lib.nn.ConvTranspose1d(4, 2, 3, stride=2, groups=2, padding=1),
        _normal(2, 4, 5),
    ),
    "ConvTranspose2d": Layer(
        lambda lib: lib.nn.ConvTranspose2d(
            2, 3, (3, 2), stride=2, output_padding=1, dilation=(1, 2)
        ),
        _normal(1, 2, 3, 3),
    ),
    "ConvTranspose2d-output_size": Layer(
        lambda lib: lib.nn.ConvTranspose2d(2, 2, 3, stride=3, padding=1),
        _normal(1, 2, 3, 3),
        {"output_size": (1, 2, 9, 8)},
    ),
    "ConvTranspose3d": Layer(
        lambda lib: lib.nn.ConvTranspose3d(2, 2, 2, stride=2, bias=False),
        _normal(1, 2, 2, 2, 3),
        {"output_size": [4, 5, 6]},
    ),
    "MaxPool1d": Layer(
        lambda lib: lib.nn.MaxPool1d(3, 2, 1, return_indices=True), _normal(2, 3, 8)
    ),
    "MaxPool2d": Layer(lambda lib: lib.nn.MaxPool2d(2), _normal(2, 2, 5, 5)),
    "MaxPool3d": Layer(
        lambda lib: lib.nn.MaxPool3d((2, 1, 2), ceil_mode=True), _normal(1, 2, 3, 3, 5)
    ),
    "AvgPool1d": Layer(lambda lib: lib.nn.AvgPool1d(3, padding=1), _normal(2, 3, 7)),
    "AvgPool2d": Layer(
        lambda lib: lib.nn.AvgPool2d(3, 2, 1, count_include_pad=False),
        _normal(1, 2, 6, 5),
    ),
    "AvgPool3d": Layer(
        lambda lib: lib.nn.AvgPool3d(2, divisor_override=5), _normal(1, 1, 4, 4, 4)
    ),
    "AdaptiveAvgPool1d": Layer(
        lambda lib: lib.nn.AdaptiveAvgPool1d(3), _normal(2, 2, 7)
    ),
    "AdaptiveAvgPool2d": Layer(
        lambda lib: lib.nn.AdaptiveAvgPool2d((None, 2)), _normal(1, 2, 5, 7)
    ),
    "AdaptiveAvgPool3d": Layer(
        lambda lib: lib.nn.AdaptiveAvgPool3d(2), _normal(1, 2, 3, 5, 4)
    ),
    "AdaptiveMaxPool1d": Layer(
        lambda lib: lib.nn.AdaptiveMaxPool1d(4), _normal(2, 2, 9)
    ),
    "AdaptiveMaxPool2d": Layer(
        lambda lib: lib.nn.AdaptiveMaxPool2d((3, None), return_indices=True),
        _normal(1, 2, 7, 4),
    ),
    "LPPool2d": Layer(lambda lib: lib.nn.LPPool2d(2, 2, stride=1), _normal(1, 2, 4, 5)),
    "AdaptiveMaxPool3d": Layer(
        lambda lib: lib.nn.AdaptiveMaxPool3d((1, 2, 3)), _normal(1, 2, 3, 5, 4)
    ),
}


def _weights(shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """Fixed weights for a layer's state dict (the same for both libraries)."""
    generator = np.random.default_rng(7)
    return {name: generator.normal(size=shape) for name, shape in shapes.items()}


def _run_layer(lib: Any, layer: Layer) -> dict[str, Any]:
    module = layer.build(lib).double()
    shapes = {name: tuple(p.shape) for name, p in module.state_dict().items()}
    weights = _weights(shapes)
    module.load_state_dict({name: lib.tensor(v) for name, v in weights.items()})
    x = lib.tensor(layer.input, requires_grad=True)
    result = module(x, **layer.forward_kwargs)
    output, indices = result if isinstance(result, tuple) else (result, None)
    (output * lib.tensor(_upstream(tuple(output.shape)))).sum().backward()
    return {
        "repr": repr(module),
        "shapes": {name: list(shape) for name, shape in shapes.items()},
        "output": output.detach().numpy(),
        "indices": None if indices is None else indices.numpy(),
        "input grad": x.grad.numpy(),
        "param grads": {n: p.grad.numpy() for n, p in module.named_parameters()},
    }


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_matches_torch(name: str) -> None:
    layer = LAYERS[name]
    ours = _run_layer(gradgen, layer)
    theirs = oracle("layer", lambda torch: _run_layer(torch, layer))
    assert ours["repr"] == theirs["repr"]
    assert ours["shapes"] == theirs["shapes"]
    np.testing.assert_allclose(ours["output"], theirs["output"], rtol=1e-10, atol=1e-12)
    if theirs["indices"] is not None:
        np.testing.assert_array_equal(ours["indices"], theirs["indices"])
    np.testing.assert_allclose(
        ours["input grad"], theirs["input grad"], rtol=1e-10, atol=1e-12
    )
    assert sorted(ours["param grads"]) == sorted(theirs["param grads"])
    for key, mine in ours["param grads"].items():
        np.testing.assert_allclose(
            mine, theirs["param grads"][key], rtol=1e-10, atol=1e-12
        )


UNPOOL = {
    "1d": (1, _normal(2, 3, 9), {"kernel_size": 3, "stride": 2, "padding": 1}, {}),
    "2d": (2, _normal(1, 2, 5, 5), {"kernel_size": 2}, {"output_size": (1, 2, 5, 5)}),
    "3d": (3, _normal(1, 1, 4, 5, 4), {"kernel_size": (2, 3, 2), "stride": 2}, {}),
}


def _unpool(lib: Any, case: str) -> dict[str, Any]:
    """max_pool with indices, then MaxUnpool (the module) and F.max_unpool back."""
    dims, data, pool_args, unpool_kwargs = UNPOOL[case]
    x = lib.tensor(data)
    pool = getattr(lib.nn, f"MaxPool{dims}d")(**pool_args, return_indices=True)
    pooled, indices = pool(x)
    pooled.requires_grad_(True)
    module = getattr(lib.nn, f"MaxUnpool{dims}d")(**pool_args)
    output = module(pooled, indices, **unpool_kwargs)
    functional = getattr(lib.nn.functional, f"max_unpool{dims}d")
    again = functional(pooled, indices, **pool_args, **unpool_kwargs)
    (output * lib.tensor(_upstream(tuple(output.shape)))).sum().backward()
    return {
        "repr": repr(module),
        "output": output.detach().numpy(),
        "functional": again.detach().numpy(),
        "grad": pooled.grad.numpy(),
    }


@pytest.mark.parametrize("case", sorted(UNPOOL))
def test_max_unpool_matches_torch(case: str) -> None:
    ours = _unpool(gradgen, case)
    theirs = oracle("unpool", lambda torch: _unpool(torch, case))
    assert ours["repr"] == theirs["repr"]
    for key in ("output", "functional", "grad"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-12, atol=0)


def test_max_unpool_errors_match_torch() -> None:
    data = _normal(1, 1, 4, 4)

    def run(lib: Any) -> list[Any]:
        pooled, indices = lib.nn.functional.max_pool2d(
            lib.tensor(data), 2, return_indices=True
        )
        unpool = lib.nn.functional.max_unpool2d
        return [
            outcome(lambda: unpool(pooled, indices.double(), 2)),
            outcome(lambda: unpool(pooled, indices[..., :1], 2)),
            outcome(lambda: unpool(pooled, lib.tensor([[[[3, 40], [9, 11]]]]), 2)),
            outcome(lambda: unpool(pooled, indices, 2, output_size=(1, 2, 3))),
            outcome(lambda: unpool(pooled, indices, 2, output_size=(6, 4))),
        ]

    for ours, theirs in zip(run(gradgen), oracle("errors", run), strict=True):
        assert isinstance(theirs, Exception)
        assert type(ours).__name__ == type(theirs).__name__
        assert str(ours) == str(theirs)


def test_repr_matches_torch() -> None:
    def run(lib: Any) -> list[str]:
        nn_ = lib.nn
        modules = [
            nn_.Conv1d(2, 4, 3),
            nn_.Conv2d(
                4,
                8,
                (3, 5),
                stride=2,
                padding=(1, 2),
                dilation=2,
                groups=2,
                bias=False,
                padding_mode="reflect",
            ),
            nn_.Conv2d(3, 3, 3, padding="same", padding_mode="circular"),
            nn_.Conv3d(1, 1, 1, padding="valid"),
            nn_.ConvTranspose1d(2, 2, 2, output_padding=1, stride=2, groups=2),
            nn_.ConvTranspose2d(3, 6, (2, 3), padding=1, dilation=(1, 3)),
            nn_.ConvTranspose3d(2, 4, 3, bias=False),
            nn_.MaxPool1d(3),
            nn_.MaxPool2d((2, 3), stride=1, padding=1, dilation=2, ceil_mode=True),
            nn_.MaxPool3d(2, return_indices=True),
            nn_.AvgPool1d(3, 2, 1),
            nn_.AvgPool2d((2, 3), count_include_pad=False),
            nn_.AvgPool3d(2, stride=(1, 2, 1), divisor_override=2),
            nn_.AdaptiveAvgPool1d(5),
            nn_.AdaptiveAvgPool2d((None, 7)),
            nn_.AdaptiveAvgPool3d(1),
            nn_.AdaptiveMaxPool1d(3, return_indices=True),
            nn_.AdaptiveMaxPool2d(4),
            nn_.AdaptiveMaxPool3d((2, None, 1)),
            nn_.LPPool1d(1.5, 2, 1, True),
            nn_.LPPool2d(2, (2, 3)),
            nn_.LPPool3d(3, 2, stride=(1, 2, 1)),
            nn_.MaxUnpool1d(3, 2, 1),
            nn_.MaxUnpool2d((2, 3)),
            nn_.MaxUnpool3d(2, padding=(0, 1, 0)),
        ]
        return [repr(m) for m in modules]

    assert run(gradgen) == oracle("repr", run)


CONSTRUCTOR_ERRORS: dict[str, Callable[[Any], Any]] = {
    "groups-zero": lambda lib: lib.nn.Conv2d(2, 2, 3, groups=0),
    "in-groups": lambda lib: lib.nn.Conv1d(3, 4, 3, groups=2),
    "out-groups": lambda lib: lib.nn.Conv3d(4, 3, 3, groups=2),
    "transpose-groups": lambda lib: lib.nn.ConvTranspose2d(3, 4, 3, groups=2),
    "same-strided": lambda lib: lib.nn.Conv2d(2, 2, 3, stride=2, padding="same"),
    "transpose-mode": lambda lib: lib.nn.ConvTranspose1d(
        2, 2, 3, padding_mode="reflect"
    ),
}


@pytest.mark.parametrize("case", sorted(CONSTRUCTOR_ERRORS))
def test_constructor_errors_match_torch(case: str) -> None:
    build = CONSTRUCTOR_ERRORS[case]
    ours = outcome(lambda: build(gradgen))
    theirs = oracle("error", lambda torch: outcome(lambda: build(torch)))
    assert isinstance(theirs, Exception)
    assert type(ours).__name__ == type(theirs).__name__
    assert str(ours) == str(theirs)


def test_bad_padding_strings_name_the_choices() -> None:
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        nn.Conv2d(2, 2, 3, padding="full")
    with pytest.raises(ValueError, match="but got padding_mode='mirror'"):
        nn.Conv2d(2, 2, 3, padding_mode="mirror")


def test_output_size_out_of_range_matches_torch() -> None:
    def run(lib: Any) -> Any:
        layer = lib.nn.ConvTranspose2d(1, 1, 3, stride=2)
        x = lib.zeros(1, 1, 3, 3)
        return [
            outcome(lambda: layer(x, output_size=(9, 7))),
            outcome(lambda: layer(x, output_size=(1, 7, 7, 7, 7))),
        ]

    for ours, theirs in zip(run(gradgen), oracle("errors", run), strict=True):
        assert type(ours).__name__ == type(theirs).__name__
        assert str(ours).replace("gradgen.Size", "torch.Size") == str(theirs)


def test_default_initialisation_is_pytorchs() -> None:
    """kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)); the bias
    is drawn from the same range (fan_in = in/groups * prod(kernel), or for a
    transposed layer out/groups * prod(kernel))."""
    gradgen.manual_seed(0)
    for layer, fan_in in (
        (nn.Conv2d(6, 40, (3, 5), groups=2), 3 * 15),
        (nn.Conv1d(4, 300, 2), 8),
        (nn.ConvTranspose3d(8, 60, 2, groups=4), 15 * 8),
    ):
        bound = 1 / math.sqrt(fan_in)
        for values in (layer.weight.detach().numpy(), layer.bias.detach().numpy()):
            assert np.abs(values).max() <= bound
            assert np.abs(values).max() > 0.9 * bound  # spread over the whole range
            # U(-b, b) has standard deviation b / sqrt(3).
            assert abs(values.std() - bound / math.sqrt(3)) < 0.25 * bound


def test_dtype_argument() -> None:
    layer = nn.Conv2d(1, 2, 3, dtype=gradgen.float64, device="cpu")
    assert layer.weight.dtype == gradgen.float64
    assert layer.bias is not None and layer.bias.dtype == gradgen.float64


# -- a small CNN trained as in torch -----------------------------------------------------

LEARNING_RATE = 0.1
STEPS = 5
IMAGES = RNG.normal(size=(8, 1, 10, 10))
LABELS = RNG.integers(0, 3, size=8)


def _cnn(lib: Any) -> Any:
    n = lib.nn
    return n.Sequential(
        n.Conv2d(1, 4, 3, padding=1),
        n.ReLU(),
        n.MaxPool2d(2),
        n.Conv2d(4, 6, 3),
        n.AdaptiveAvgPool2d(1),
        n.Flatten(),
        n.Linear(6, 3),
    )


def _train(lib: Any, initial: dict[str, np.ndarray]) -> dict[str, Any]:
    """STEPS steps of SGD on cross-entropy from `initial` (float32, as in practice)."""
    model = _cnn(lib)
    model.load_state_dict({k: lib.tensor(v) for k, v in initial.items()})
    optimizer = lib.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=0.9)
    images = lib.tensor(IMAGES.astype(np.float32))
    labels = lib.tensor(LABELS)
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.item()))
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    return {"losses": losses, "state": state}


def _initial_state(torch: Any) -> dict[str, np.ndarray]:
    """The CNN's weights as torch initialises them under seed 0."""
    torch.manual_seed(0)
    return {k: v.numpy() for k, v in _cnn(torch).state_dict().items()}


def test_small_cnn_trains_as_torch() -> None:
    initial = oracle("initial", _initial_state)
    ours = _train(gradgen, initial)
    theirs = oracle("trained", lambda torch: _train(torch, initial))
    np.testing.assert_allclose(ours["losses"], theirs["losses"], rtol=1e-5)
    assert ours["losses"][-1] < ours["losses"][0]  # it learns
    assert sorted(ours["state"]) == sorted(theirs["state"])  # (JSON sorts keys)
    for key, mine in ours["state"].items():
        assert mine.dtype == np.float32
        np.testing.assert_allclose(mine, theirs["state"][key], rtol=1e-4, atol=1e-6)

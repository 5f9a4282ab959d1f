"""nn.Upsample, UpsamplingNearest2d, UpsamplingBilinear2d, PixelShuffle,
PixelUnshuffle, Fold, Unfold and ChannelShuffle against torch.nn: the same outputs,
input gradients and reprs. Recorded in tests/golden/ (see torch_oracle.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle

RNG = np.random.default_rng(31)


@pytest.fixture(autouse=True)
def _seeded() -> None:
    """The same inputs for a test however the run is selected."""
    global RNG
    RNG = np.random.default_rng(31)


LAYERS: list[tuple[Callable[[Any], Any], tuple[int, ...]]] = [
    (lambda nn: nn.Upsample(scale_factor=2), (1, 2, 3, 3)),
    (lambda nn: nn.Upsample(size=(5, 4), mode="bilinear"), (1, 2, 3, 3)),
    (
        lambda nn: nn.Upsample(
            scale_factor=(1.5, 2.0), mode="bicubic", align_corners=True
        ),
        (1, 1, 3, 4),
    ),
    (lambda nn: nn.Upsample(size=7, mode="linear"), (2, 2, 4)),
    (lambda nn: nn.Upsample(scale_factor=1.5, mode="trilinear"), (1, 1, 2, 3, 2)),
    (lambda nn: nn.UpsamplingNearest2d(scale_factor=3), (1, 2, 2, 3)),
    (lambda nn: nn.UpsamplingBilinear2d(size=(4, 5)), (1, 2, 2, 3)),
    (lambda nn: nn.PixelShuffle(2), (2, 8, 2, 3)),
    (lambda nn: nn.PixelUnshuffle(3), (1, 2, 6, 3)),
    (lambda nn: nn.ChannelShuffle(2), (2, 4, 3, 2)),
    (lambda nn: nn.Unfold(kernel_size=(2, 3), padding=1, stride=2), (2, 3, 4, 5)),
    (lambda nn: nn.Fold(output_size=(4, 5), kernel_size=2), (2, 8, 12)),
]


@pytest.mark.parametrize("index", range(len(LAYERS)))
def test_layer_matches_torch(index: int) -> None:
    make, shape = LAYERS[index]
    x = RNG.normal(size=shape)

    def run(lib: Any) -> list[Any]:
        layer = make(lib.nn)
        t = lib.tensor(x, requires_grad=True)
        out = layer(t)
        weights = np.linspace(-1.0, 1.0, out.numel()).reshape(tuple(out.shape))
        (grad,) = lib.autograd.grad((out * lib.tensor(weights)).sum(), [t])
        return [repr(layer), out.detach().numpy(), grad.numpy()]

    ours, theirs = run(gradgen), oracle("layer", run)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_layers_are_exported_where_torch_has_them() -> None:
    for name in (
        "Upsample",
        "UpsamplingNearest2d",
        "UpsamplingBilinear2d",
        "PixelShuffle",
        "PixelUnshuffle",
        "Fold",
        "Unfold",
        "ChannelShuffle",
    ):
        assert name in gradgen.nn.__all__
        assert getattr(gradgen.nn, name).__module__.startswith("gradgen.nn.modules.")

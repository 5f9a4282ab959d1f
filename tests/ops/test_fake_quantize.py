"""Fake quantization (quantization-aware training) against torch: values equal to the
last bit per tensor and per channel (int32 and float zero points, float32 and float64
inputs), the straight-through gradient (the incoming gradient where the value was in
range), the grad_fn PyTorch records, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradgen
from torch_compare import compare, same_error
from torch_oracle import oracle

X = np.random.default_rng(7).uniform(-3.0, 3.0, (4, 3))


@pytest.mark.parametrize(
    "scale, zero_point, quant_min, quant_max",
    [(0.1, 3, -128, 127), (0.013, 3, -10, 12), (0.37, 0, 0, 255), (1.0, 0, 0, 0)],
)
def test_per_tensor_matches_torch(scale, zero_point, quant_min, quant_max) -> None:
    def fn(lib, x):
        return lib.fake_quantize_per_tensor_affine(
            x, scale, zero_point, quant_min, quant_max
        )

    compare(fn, X)
    compare(fn, X.astype(np.float32))


@pytest.mark.parametrize("zero_point_dtype", ["int32", "float32"])
def test_per_channel_matches_torch(zero_point_dtype) -> None:
    def fn(lib, x):
        scale = lib.tensor([0.1, 0.05, 0.3], dtype=lib.float32)
        zero_point = lib.tensor([0, 1, -2], dtype=getattr(lib, zero_point_dtype))
        return lib.fake_quantize_per_channel_affine(x, scale, zero_point, 1, -5, 6)

    compare(fn, X)
    compare(lambda lib, x: fn(lib, x.t()).t(), X.T.copy())


def test_the_mask_and_the_grad_fn_match_torch() -> None:
    x = gradgen.tensor(X, requires_grad=True)
    output, mask = gradgen.fake_quantize_per_tensor_affine_cachemask(x, 0.2, 1, -6, 7)
    want = oracle(
        "mask and grad_fn",
        lambda torch: (
            torch.ops.aten.fake_quantize_per_tensor_affine_cachemask(
                torch.tensor(X), 0.2, 1, -6, 7
            )[1],
            type(
                torch.fake_quantize_per_tensor_affine(
                    torch.tensor(X, requires_grad=True), 0.2, 1, -6, 7
                ).grad_fn
            ).__name__,
        ),
    )
    np.testing.assert_array_equal(mask.numpy(), want[0])
    assert type(output.grad_fn).__name__ == want[1]
    assert not mask.requires_grad


def test_errors_match_torch() -> None:
    q = np.linspace(-1.0, 1.0, 4)
    same_error(
        lambda lib: lib.fake_quantize_per_tensor_affine(lib.tensor(q), 0.1, 0, 5, 1)
    )
    same_error(
        lambda lib: lib.fake_quantize_per_tensor_affine(lib.tensor(q), 0.1, 300, 0, 255)
    )
    same_error(
        lambda lib: lib.fake_quantize_per_tensor_affine(
            lib.tensor([1, 2], dtype=lib.int32), 0.1, 0, -128, 127
        )
    )
    same_error(
        lambda lib: lib.fake_quantize_per_channel_affine(
            lib.tensor(q).view(2, 2),
            lib.tensor([0.1, 0.2]),
            lib.tensor([0, 1]),
            1,
            -8,
            7,
        )
    )
    same_error(
        lambda lib: lib.fake_quantize_per_channel_affine(
            lib.tensor(q).view(2, 2),
            lib.tensor([0.1, 0.2, 0.3]),
            lib.tensor([0, 1, 1], dtype=lib.int32),
            1,
            -8,
            7,
        )
    )
    same_error(
        lambda lib: lib.fake_quantize_per_channel_affine(
            lib.tensor(q).view(2, 2),
            lib.tensor([0.1, 0.2]),
            lib.tensor([0, 9], dtype=lib.int32),
            0,
            -8,
            7,
        )
    )

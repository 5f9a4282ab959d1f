"""embedding, embedding_dense_backward and one_hot against PyTorch."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from gradgen.autograd import gradcheck, gradgradcheck
from torch_oracle import oracle
from ops.nn_checks import _arrays, _check_against_torch, _same_error

# torch.autograd.forward_ad's first use scripts a function with torch.jit (deprecated).
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)


# -- embedding ---------------------------------------------------------------------------

EMBEDDING_INDICES = np.array([[0, 2, 4], [2, 2, 1]])


@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
@pytest.mark.parametrize("padding_idx", [-1, 2, 3])
@pytest.mark.parametrize("scale_grad_by_freq", [False, True])
def test_embedding_matches_torch(padding_idx, scale_grad_by_freq, index_dtype) -> None:
    (w,) = _arrays(26, (5, 3))
    indices = EMBEDDING_INDICES.astype(index_dtype)
    _check_against_torch(
        lambda a: gradgen.embedding(
            a, gradgen.tensor(indices), padding_idx, scale_grad_by_freq
        ),
        lambda torch: lambda a: torch.embedding(
            a, torch.tensor(indices), padding_idx, scale_grad_by_freq
        ),
        [w],
    )


def test_embedding_scalar_index_float32_and_forward_mode() -> None:
    (w,) = _arrays(27, (5, 3), dtype="float32")
    _check_against_torch(
        lambda a: gradgen.embedding(a, gradgen.tensor(3)),
        lambda torch: lambda a: torch.embedding(a, torch.tensor(3)),
        [w],
    )
    (w,) = _arrays(28, (5, 3))
    assert gradcheck(
        lambda a: gradgen.embedding(a, gradgen.tensor(EMBEDDING_INDICES)),
        [gradgen.tensor(w, requires_grad=True)],
        check_forward_ad=True,
    )


def test_embedding_dense_backward_matches_torch() -> None:
    (g,) = _arrays(29, (2, 3, 4))
    for padding_idx in (-1, 2):
        for scale in (False, True):
            ours = gradgen.embedding_dense_backward(
                gradgen.tensor(g),
                gradgen.tensor(EMBEDDING_INDICES),
                6,
                padding_idx,
                scale,
            )
            theirs = oracle(
                f"{padding_idx} {scale}",
                lambda torch: torch.ops.aten.embedding_dense_backward(
                    torch.tensor(g),
                    torch.tensor(EMBEDDING_INDICES),
                    6,
                    padding_idx,
                    scale,
                ),
            )
            np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-12)
    # embedding_backward (the composite) is the same for sparse=False.
    ours = gradgen.embedding_backward(
        gradgen.tensor(g), gradgen.tensor(EMBEDDING_INDICES), 6, 2, True, False
    )
    theirs = oracle(
        "embedding_backward",
        lambda torch: torch.ops.aten.embedding_backward(
            torch.tensor(g), torch.tensor(EMBEDDING_INDICES), 6, 2, True, False
        ),
    )
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-12)
    with pytest.raises(NotImplementedError, match="sparse"):
        gradgen.embedding_backward(
            gradgen.tensor(g), gradgen.tensor(EMBEDDING_INDICES), 6, 2, True, True
        )


def test_embedding_dense_backward_double_backward_scales_by_frequency() -> None:
    """The derivative of embedding_dense_backward for grad_output is the transpose of
    the operator, scale_grad_by_freq included (PyTorch's formula leaves the scaling
    out, so its gradcheck of this case fails)."""
    (g,) = _arrays(30, (2, 3, 4))
    for padding_idx in (-1, 2):
        function = lambda a: gradgen.embedding_dense_backward(
            a * a, gradgen.tensor(EMBEDDING_INDICES), 6, padding_idx, True
        )  # noqa: E731
        inputs = [gradgen.tensor(g, requires_grad=True)]
        assert gradcheck(function, inputs, check_forward_ad=True)
        assert gradgradcheck(function, inputs)


def test_embedding_errors_match_torch() -> None:
    w = np.ones((5, 3))
    cases = [
        (w, np.array([0.0, 1.0])),
        (w, np.array([True])),
        (w, np.array([1 + 0j])),
        (w, np.array([0, 5])),
        (w, np.array([0, -1])),
        (np.ones(5), np.array([1])),
        (np.ones((5, 2, 2)), np.array([1])),
    ]
    for weight, indices in cases:
        _same_error(
            lambda: gradgen.embedding(gradgen.tensor(weight), gradgen.tensor(indices)),
            lambda torch: lambda: torch.embedding(
                torch.tensor(weight), torch.tensor(indices)
            ),
        )
    _same_error(
        lambda: gradgen.embedding_dense_backward(
            gradgen.ones(2, 3), gradgen.tensor([0.0, 1.0]), 4, -1, False
        ),
        lambda torch: lambda: torch.ops.aten.embedding_dense_backward(
            torch.ones(2, 3), torch.tensor([0.0, 1.0]), 4, -1, False
        ),
    )


def test_functional_embedding_matches_torch() -> None:
    (w,) = _arrays(31, (6, 3))
    indices = np.array([[1, 5, 0], [5, 5, 2]])
    for kwargs in (
        {},
        {"padding_idx": 5},
        {"padding_idx": -1},
        {"scale_grad_by_freq": True},
    ):
        _check_against_torch(
            lambda a: GF.embedding(gradgen.tensor(indices), a, **kwargs),
            lambda torch: lambda a: torch.nn.functional.embedding(
                torch.tensor(indices), a, **kwargs
            ),
            [w],
        )
    for padding_idx in (6, -7):
        with pytest.raises(
            AssertionError, match="^Padding_idx must be within num_embeddings$"
        ):
            GF.embedding(
                gradgen.tensor(indices), gradgen.tensor(w), padding_idx=padding_idx
            )
    with pytest.raises(NotImplementedError, match="sparse"):
        GF.embedding(gradgen.tensor(indices), gradgen.tensor(w), sparse=True)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
def test_functional_embedding_max_norm_renormalizes_rows_as_torch(norm_type) -> None:
    (w,) = _arrays(32, (6, 3))
    w = w * 3
    indices = np.array([[1, 4, 0], [4, 4, 2]])

    def theirs(torch: Any) -> list[Any]:
        theirs_w = torch.tensor(w, requires_grad=True)
        expected = torch.nn.functional.embedding(
            torch.tensor(indices), theirs_w, max_norm=1.5, norm_type=norm_type
        )
        renormed = theirs_w.detach().clone()
        expected.sum().backward()
        return [renormed, expected.detach(), theirs_w.grad]

    theirs_w, expected, theirs_grad = oracle("weight, out, grad", theirs)
    ours_w = gradgen.tensor(w, requires_grad=True)
    version = ours_w._version
    out = GF.embedding(
        gradgen.tensor(indices), ours_w, max_norm=1.5, norm_type=norm_type
    )
    assert ours_w._version == version + 1
    np.testing.assert_allclose(ours_w.detach().numpy(), theirs_w, rtol=1e-12)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(ours_w.grad.numpy(), theirs_grad, rtol=1e-12)


# -- one_hot -----------------------------------------------------------------------------


def test_one_hot_matches_torch() -> None:
    for values, num_classes in (
        ([0, 2, 1], -1),
        ([[0, 3], [1, 1]], 5),
        (2, 4),
        ([], 3),
    ):
        ours = GF.one_hot(gradgen.tensor(values, dtype=gradgen.int64), num_classes)
        theirs = oracle(
            f"{values} {num_classes}",
            lambda torch: torch.nn.functional.one_hot(
                torch.tensor(values, dtype=torch.int64), num_classes
            ),
        )
        assert ours.dtype == gradgen.int64 and ours.shape == theirs.shape
        assert theirs.dtype == np.int64 and ours.tolist() == theirs.tolist()
    for values, dtype, num_classes in (
        ([0.0, 1.0], None, -1),
        ([0, 1], "int32", -1),
        ([], "int64", -1),
        ([], "int64", 0),
        ([-1, 1], None, -1),
        ([3, 1], None, 3),
        ([0, 1], None, 0),
        ([0, 1], None, -2),
    ):
        _same_error(
            lambda: gradgen.one_hot(
                gradgen.tensor(np.array(values, dtype=dtype) if dtype else values),
                num_classes,
            ),
            lambda torch: lambda: torch.nn.functional.one_hot(
                torch.tensor(np.array(values, dtype=dtype) if dtype else values),
                num_classes,
            ),
        )


def test_one_hot_is_not_differentiable() -> None:
    out = gradgen.one_hot(gradgen.tensor([1, 0]), 2)
    assert not out.requires_grad and out.grad_fn is None

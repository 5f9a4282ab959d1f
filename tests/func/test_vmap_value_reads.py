"""Composites that read their arguments' values, under vmap: a BatchedTensor's array
is example 0's, so a composite that reads it gave every example example 0's answer
(attention's dead rows and bool masks, cross_entropy's ignored targets with label
smoothing, embedding_bag's bags). Each example now gets its own, as torch.func.vmap
gives; tensor_split with a Tensor of indices raises torch.func's error."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle

from .common import assert_same, errors, plain
from .test_vmap import _gradgen_internals

RNG = np.random.default_rng(12)
QUERIES = RNG.standard_normal((2, 1, 3, 4))
# Example 1 masks every key of its first query (a dead row), example 0 none of its.
FLOAT_MASK = np.zeros((2, 1, 3, 3))
FLOAT_MASK[1, 0, 0, :] = -np.inf
FLOAT_MASK[0, 0, 2, 1] = -np.inf
BOOL_MASK = FLOAT_MASK == 0  # scaled_dot_product_attention: True takes part
PADDING = np.array([[False, False, True], [True, False, False]])  # True: masked
LOGITS = RNG.standard_normal((2, 3, 4))
TARGETS = np.array([[0, 1, -100], [-100, -100, 2]])  # ignored where examples differ
WEIGHTS = np.array([1.0, 2.0, 3.0, 4.0])
TABLE = np.arange(12.0).reshape(4, 3)
PROJECTIONS = RNG.standard_normal((12, 4))  # multi_head_attention_forward's in_proj
RNG_ENCODER = np.random.default_rng(3)
LOGITS_CTC = RNG.standard_normal((2, 5, 1, 4))  # (example, T, N, C)
BAG_INDICES = np.array([[0, 1, 2, 3], [3, 2, 1, 0]])
BAG_OFFSETS = np.array([[0, 2], [0, 1]])


def _sdpa(lib: Any) -> Callable[..., Any]:
    return lambda q, m: lib.nn.functional.scaled_dot_product_attention(
        q, q, q, attn_mask=m
    )


def _mha(lib: Any) -> Callable[..., Any]:
    weights, out = lib.tensor(PROJECTIONS), lib.tensor(np.eye(4))

    def attend(q: Any, padding: Any) -> Any:
        q = q[0]  # (sequence, embedding): unbatched, one head
        return lib.nn.functional.multi_head_attention_forward(
            *(q, q, q, 4, 1, weights, None, None, None, False, 0.0, out, None),
            key_padding_mask=padding,
            need_weights=False,
        )[0]

    return attend


def _smoothed(lib: Any, **options: Any) -> Callable[..., Any]:
    return lambda x, t, *w: lib.nn.functional.cross_entropy(
        x, t, *w, label_smoothing=0.1, **options
    )


def _bags(mode: str) -> Callable[[Any], Callable[..., Any]]:
    return lambda lib: lambda i, o: lib.nn.functional.embedding_bag(
        i, lib.tensor(TABLE), o, mode=mode
    )


def _renormed(lib: Any) -> Callable[..., Any]:
    """embedding with max_norm (which renormalises weight's rows in place): the rows
    picked and the weight after."""

    def picked(weight: Any, indices: Any) -> Any:
        weight = weight.clone()
        rows = lib.nn.functional.embedding(indices, weight, max_norm=5.0)
        return lib.cat([rows.reshape(-1), weight.reshape(-1)])

    return picked


# name: (function of the library, arguments, in_dims)
CASES: dict[str, tuple[Callable[[Any], Any], tuple[np.ndarray, ...], Any]] = {
    "sdpa float mask": (_sdpa, (QUERIES, FLOAT_MASK), 0),
    "sdpa bool mask": (_sdpa, (QUERIES, BOOL_MASK), 0),
    "sdpa mask batched only": (_sdpa, (QUERIES[0], BOOL_MASK), (None, 0)),
    "mha key padding": (_mha, (QUERIES, PADDING), 0),
    "smoothing mean": (_smoothed, (LOGITS, TARGETS), 0),
    "smoothing none": (
        lambda lib: _smoothed(lib, reduction="none"),
        (LOGITS, TARGETS),
        0,
    ),
    "smoothing weights batched": (
        _smoothed,
        (LOGITS, TARGETS, np.stack([WEIGHTS, WEIGHTS[::-1]])),
        0,
    ),
    "smoothing weights batched only": (
        _smoothed,
        (LOGITS, TARGETS[0], np.stack([WEIGHTS, WEIGHTS[::-1]])),
        (0, None, 0),
    ),
    "bags mean": (_bags("mean"), (BAG_INDICES, BAG_OFFSETS), 0),
    "bags max": (_bags("max"), (BAG_INDICES, BAG_OFFSETS), 0),
    "bags sum, offsets batched": (
        _bags("sum"),
        (BAG_INDICES[0], BAG_OFFSETS),
        (None, 0),
    ),
    "bags max, table batched": (
        lambda lib: lambda w: lib.nn.functional.embedding_bag(
            lib.tensor(BAG_INDICES[1]), w, lib.tensor(BAG_OFFSETS[1]), mode="max"
        ),
        (np.stack([TABLE, -TABLE]),),
        0,
    ),
    "bags of a 2-d input": (
        lambda lib: lambda i: lib.nn.functional.embedding_bag(i, lib.tensor(TABLE)),
        (BAG_INDICES.reshape(2, 2, 2),),
        0,
    ),
    "pairwise_distance, p=3": (
        lambda lib: lambda a, b: lib.nn.functional.pairwise_distance(a, b, p=3, eps=0),
        (np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 2.0], [0.0, 0.0]])),
        0,
    ),
    "ctc_loss, targets batched": (
        lambda lib: lambda lp, t: lib.nn.functional.ctc_loss(
            lp.log_softmax(-1), t, lib.tensor([5]), lib.tensor([2])
        ),
        (LOGITS_CTC, np.array([[[1, 2]], [[3, 3]]])),
        0,
    ),
    "ctc_loss, lengths batched": (
        lambda lib: lambda lp, i, t: lib.nn.functional.ctc_loss(
            lp.log_softmax(-1), lib.tensor([[1, 2]]), i, t
        ),
        (LOGITS_CTC, np.array([[5], [4]]), np.array([[2], [1]])),
        0,
    ),
    "embedding max_norm, weights batched": (
        _renormed,
        (np.stack([TABLE * 0.1, TABLE]), np.array([[3], [3]])),
        0,
    ),
    "embedding max_norm, weights batched only": (
        _renormed,
        (np.stack([TABLE * 0.1, TABLE]), np.array([1, 3])),
        (0, None),
    ),
    "matrix_rank": (
        lambda lib: lib.linalg.matrix_rank,
        (np.stack([np.eye(3), np.diag([1.0, 0.0, 0.0])]),),
        0,
    ),
    "matrix_rank, hermitian, tolerances": (
        lambda lib: lambda m: lib.linalg.matrix_rank(
            m, atol=0.5, rtol=0.1, hermitian=True
        ),
        (np.stack([np.eye(3), np.diag([1.0, 0.4, -3.0])]),),
        0,
    ),
    "svdvals": (lambda lib: lib.linalg.svdvals, (RNG.standard_normal((2, 3, 2)),), 0),
    "eigvalsh": (lambda lib: lib.linalg.eigvalsh, (RNG.standard_normal((2, 3, 3)),), 0),
}


def _run(lib: Any, case: str) -> Any:
    function, arrays, in_dims = CASES[case]
    vmap = lib.vmap if lib is gradgen else lib.func.vmap
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the per-example fallbacks
        return plain(vmap(function(lib), in_dims=in_dims)(*map(lib.tensor, arrays)))


def _loop(case: str) -> Any:
    """gradgen, example by example (no vmap)."""
    function, arrays, in_dims = CASES[case]
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(arrays)
    results = []
    for index in range(2):
        args = [a if d is None else a[index] for a, d in zip(arrays, dims)]
        results.append(function(gradgen)(*map(gradgen.tensor, args)).detach().numpy())
    return np.stack(results)


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_example_reads_its_own_values(case: str) -> None:
    ours = _run(gradgen, case)
    assert_same(ours, oracle("vmap", lambda t: _run(t, case)), case)
    assert_same(ours[0], _loop(case), case)


def _gradients(lib: Any, case: str) -> Any:
    function, arrays, in_dims = CASES[case]
    vmap = lib.vmap if lib is gradgen else lib.func.vmap

    def loss(x: Any, *rest: Any) -> Any:
        return function(lib)(x, *rest).sin().sum()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        values = [lib.tensor(a) for a in arrays]
        return plain(vmap(lib.func.grad(loss), in_dims=in_dims)(*values))


@pytest.mark.parametrize(
    "case",
    [
        "sdpa float mask",
        "sdpa bool mask",
        "smoothing mean",
        "smoothing weights batched",
        "pairwise_distance, p=3",
        "ctc_loss, targets batched",
    ],
)
def test_the_gradients_of_each_example(case: str) -> None:
    assert_same(
        _gradients(gradgen, case), oracle("grads", lambda t: _gradients(t, case))
    )


def _singular(lib: Any) -> dict[str, Exception | None]:
    """lu_factor's error names the first singular matrix of the whole batch (the
    vmap dims first), not only of example 0."""
    eye, zero = np.eye(2), np.zeros((2, 2))
    one = lib.tensor(np.stack([eye, zero]))
    two = lib.tensor(np.stack([np.stack([eye, eye]), np.stack([eye, zero])]))
    vmap = lib.vmap if lib is gradgen else lib.func.vmap
    lu = lib.linalg.lu_factor
    return errors(
        {
            "example 1": lambda: vmap(lu)(one),
            "matrix 1 of example 1": lambda: vmap(lu)(two),
            "nested": lambda: vmap(vmap(lu))(two),
            "example 0 of matrix 1": lambda: vmap(lu, in_dims=1)(two),
        }
    )


def test_lu_factor_checks_every_example() -> None:
    theirs = oracle("errors", _singular)
    for case, ours in _singular(gradgen).items():  # messages as PyTorch's ("torch.")
        assert (type(ours).__name__, str(ours)) == (
            type(theirs[case]).__name__,
            str(theirs[case]),
        ), case


def _encoder(lib: Any, mask_check: bool) -> Any:
    layer = lib.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True)
    encoder = lib.nn.TransformerEncoder(layer, 1, mask_check=mask_check).eval()
    return lambda src, mask=None, padding=None: encoder(
        src, mask=mask, src_key_padding_mask=padding
    )


def _encoders(lib: Any) -> dict[str, Exception | None]:
    """TransformerEncoder under vmap: whether a batched mask is causal is control
    flow on its values; PyTorch's nested-tensor path (inference with a key padding
    mask) has no batching rule."""
    vmap = lib.vmap if lib is gradgen else lib.func.vmap
    src = lib.tensor(RNG_ENCODER.standard_normal((2, 1, 3, 4)), dtype=lib.float32)
    causal = np.triu(np.full((3, 3), -np.inf, np.float32), 1)
    masks = lib.tensor(np.stack([causal, np.zeros((3, 3), np.float32)]))
    pads = lib.tensor([[[False, False, True]], [[False, True, True]]])
    checked = _encoder(lib, True)
    with lib.no_grad():
        return errors(
            {
                "masks": lambda: vmap(checked)(src, masks),
                "pads": lambda: vmap(lambda s, p: checked(s, padding=p))(src, pads),
                "pads of one src": lambda: vmap(lambda p: checked(src[0], padding=p))(
                    pads
                ),
            }
        )


def _adaptive(lib: Any) -> dict[str, Exception | None]:
    """AdaptiveLogSoftmaxWithLoss picks each cluster's rows by nonzero (dynamic
    shapes) and predict branches on whether any class is outside the shortlist."""
    vmap = lib.vmap if lib is gradgen else lib.func.vmap
    adaptive = lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 4], div_value=2.0)
    x = lib.tensor(RNG_ENCODER.standard_normal((2, 3, 4)), dtype=lib.float32)
    targets = lib.tensor([[0, 3, 5], [1, 1, 2]])
    return errors(
        {
            "targets": lambda: vmap(lambda a, t: adaptive(a, t).loss)(x, targets),
            "predict": lambda: vmap(adaptive.predict)(x),
        }
    )


def test_adaptive_softmax_refusals() -> None:
    assert_same(_adaptive(gradgen), oracle("errors", _adaptive))


def test_transformer_encoder_refusals() -> None:
    assert_same(_encoders(gradgen), oracle("errors", _encoders))


def test_encoder_without_mask_check_pads_each_example() -> None:
    """(PyTorch's nested tensors fail there under vmap: compared with a loop.)"""
    gradgen.manual_seed(0)
    encoder = _encoder(gradgen, False)
    src = gradgen.tensor(
        RNG_ENCODER.standard_normal((2, 1, 3, 4)), dtype=gradgen.float32
    )
    pads = gradgen.tensor([[[False, False, True]], [[False, True, True]]])
    with gradgen.no_grad():
        ours = gradgen.vmap(lambda s, p: encoder(s, padding=p))(src, pads)
        loop = [encoder(src[i], padding=pads[i]).numpy() for i in range(2)]
    np.testing.assert_allclose(ours.numpy(), np.stack(loop), rtol=1e-6)
    assert not ours[1, 0, 1].numpy().any()  # example 1's second position padded


def _refused(lib: Any) -> dict[str, Exception | None]:
    vmap = lib.vmap if lib is gradgen else lib.func.vmap
    values, targets = lib.tensor(LOGITS), lib.tensor(TARGETS)
    weight = lib.tensor(WEIGHTS)
    rows, indices = lib.arange(10.0).reshape(2, 5), lib.tensor([[1, 3], [2, 4]])
    split = lib.tensor_split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return errors(
            {
                "renorm of one weight": lambda: vmap(
                    lambda i: lib.nn.functional.embedding(i, weight, max_norm=1.0)
                )(indices),
                "format of a number": lambda: vmap(
                    lambda a: format(a.sum(), ".2f") and a
                )(values),
                "smoothing, one weight": lambda: vmap(_smoothed(lib))(
                    values, targets, weight
                ),
                "smoothing, targets batched only": lambda: vmap(
                    _smoothed(lib), in_dims=(None, 0)
                )(values[0], targets),
                "split by batched indices": lambda: vmap(split)(rows, indices),
                "split of batched rows": lambda: vmap(split, in_dims=(0, None))(
                    rows, indices[0]
                ),
                "split of rows by sections": lambda: vmap(split, in_dims=(0, None))(
                    rows, lib.tensor(2)
                ),
            }
        )


def test_what_torch_func_refuses() -> None:
    ours = {k: _gradgen_internals(v) for k, v in _refused(gradgen).items()}
    assert_same(ours, oracle("errors", _refused))

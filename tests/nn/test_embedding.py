"""Embeddings: F.embedding_bag / nn.EmbeddingBag / gradgen.embedding_bag against
PyTorch (outputs, the four outputs of the operator, the gradients of the weight and of
per_sample_weights, errors), and F.embedding / nn.Embedding's padding_idx and max_norm
checked by hand. Recorded in tests/golden/ (see torch_oracle.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from gradgen import nn
from gradgen.autograd import gradcheck, gradgradcheck
from torch_oracle import oracle, outcome

RNG = np.random.default_rng(4242)
WEIGHT = RNG.normal(size=(10, 3))
INDICES = np.array([2, 7, 4, 5, 4, 3, 2, 9, 7, 0])
UPSTREAM = np.linspace(-1.0, 2.0, 60)


class Bag(NamedTuple):
    input: np.ndarray
    kwargs: dict[str, Any]
    offsets: np.ndarray | None = None
    weighted: bool = False  # per_sample_weights (mode="sum")


BAGS: dict[str, Bag] = {
    "mean": Bag(INDICES, {}, np.array([0, 3, 3, 8])),
    "sum": Bag(INDICES, {"mode": "sum"}, np.array([0, 3, 3, 8])),
    "max": Bag(INDICES, {"mode": "max"}, np.array([0, 3, 3, 8])),
    "sum weighted": Bag(INDICES, {"mode": "sum"}, np.array([0, 4, 6]), True),
    "2-D mean": Bag(INDICES.reshape(2, 5), {}),
    "2-D max": Bag(INDICES.reshape(5, 2), {"mode": "max"}),
    "2-D weighted": Bag(INDICES.reshape(2, 5), {"mode": "sum"}, None, True),
    "padding mean": Bag(INDICES, {"padding_idx": 4}, np.array([0, 3, 5, 8])),
    "padding negative sum": Bag(
        INDICES, {"padding_idx": -3, "mode": "sum"}, np.array([0, 2, 9]), True
    ),
    "padding max": Bag(INDICES, {"padding_idx": 2, "mode": "max"}, np.array([0, 1, 4])),
    "include_last_offset": Bag(
        INDICES, {"include_last_offset": True}, np.array([0, 3, 3, 8, 10])
    ),
    "include_last_offset short": Bag(
        INDICES, {"include_last_offset": True, "mode": "sum"}, np.array([0, 3, 6])
    ),
    "int32 indices": Bag(INDICES.astype(np.int32), {}, np.array([0, 6])),
}


def _bag(lib: Any, case: Bag) -> dict[str, Any]:
    weight = lib.tensor(WEIGHT, requires_grad=True)
    psw = None
    if case.weighted:
        psw = lib.tensor(np.linspace(0.5, 2.0, INDICES.size).reshape(case.input.shape))
        psw.requires_grad_(True)
    offsets = None if case.offsets is None else lib.tensor(case.offsets)
    out = lib.nn.functional.embedding_bag(
        lib.tensor(case.input), weight, offsets, per_sample_weights=psw, **case.kwargs
    )
    upstream = UPSTREAM[: out.numel()].reshape(tuple(out.shape))
    (out * lib.tensor(upstream)).sum().backward()
    answer = {"out": out.detach().numpy(), "weight": weight.grad.numpy()}
    if psw is not None:
        answer["per_sample_weights"] = psw.grad.numpy()
    return answer


@pytest.mark.parametrize("name", sorted(BAGS))
def test_functional_embedding_bag_matches_torch(name: str) -> None:
    case = BAGS[name]
    ours = _bag(gradgen, case)
    theirs = oracle("bag", lambda torch: _bag(torch, case))
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-12, atol=1e-14)


def test_embedding_bag_by_hand() -> None:
    """Bags [2, 7, 4], [], [5, 4, 3, 2, 9, 7]: sums, means, maxima worked out from the
    weight; an empty bag is zeros; the weight's gradient adds each bag's upstream
    gradient into the rows it used (divided by the bag's size for the mean)."""
    weight = gradgen.tensor(WEIGHT, requires_grad=True)
    offsets = gradgen.tensor([0, 3, 3])
    bags = [[2, 7, 4], [], [5, 4, 3, 2, 9, 7]]
    indices = gradgen.tensor(INDICES[:9])
    for mode, reduce in (("sum", np.sum), ("mean", np.mean), ("max", np.max)):
        out = GF.embedding_bag(indices, weight, offsets, mode=mode)
        expected = [reduce(WEIGHT[b], 0) if b else np.zeros(3) for b in bags]
        np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-14)
    out = GF.embedding_bag(indices, weight, offsets, mode="mean")
    out.backward(gradgen.ones(3, 3))
    expected = np.zeros((10, 3))
    for b in bags:
        for row in b:
            expected[row] += 1 / len(b)
    np.testing.assert_allclose(weight.grad.numpy(), expected, rtol=1e-14)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq_by_hand(mode: str) -> None:
    """Each row's gradient divided by how often its index occurs in the input (padding
    left out). PyTorch 2.13's CPU kernel divides by the count of another index when
    counts differ (pytorch/pytorch#190063, fixed after 2.13), so this is checked by
    hand; gradgen agrees with F.embedding's scaling."""
    weight = gradgen.tensor(WEIGHT, requires_grad=True)
    offsets = [0, 5, 7]
    out = GF.embedding_bag(
        gradgen.tensor(INDICES),
        weight,
        gradgen.tensor(offsets),
        mode=mode,
        scale_grad_by_freq=True,
        padding_idx=9,
    )
    out.backward(gradgen.ones(3, 3))
    counts = np.bincount(INDICES, minlength=10)
    sizes = np.diff(offsets + [INDICES.size]) - np.array([0, 0, 1])  # 9 in the last
    expected = np.zeros(10)
    for bag, (start, end) in enumerate(zip(offsets, offsets[1:] + [INDICES.size])):
        for row in INDICES[start:end]:
            if row != 9:
                share = 1 / sizes[bag] if mode == "mean" else 1.0
                expected[row] += share / counts[row]
    np.testing.assert_allclose(weight.grad.numpy()[:, 0], expected, rtol=1e-14)
    np.testing.assert_array_equal(weight.grad.numpy()[:, 0], weight.grad.numpy()[:, 2])


def test_embedding_bag_operator_outputs_match_torch() -> None:
    """gradgen.embedding_bag (torch.embedding_bag): the output, offset2bag, bag_size
    and max_indices."""
    for mode in (0, 1, 2):
        for padding in (None, 4):
            args = (False, mode, False, None, False, padding)

            def run(lib: Any) -> list[Any]:
                outputs = lib.embedding_bag(
                    lib.tensor(WEIGHT),
                    lib.tensor(INDICES),
                    lib.tensor([0, 4, 4]),
                    *args,
                )
                return [x.detach().numpy() for x in outputs]

            ours = run(gradgen)
            theirs = oracle(f"{mode} {padding}", run)
            for a, b in zip(ours, theirs):
                assert a.dtype == b.dtype and a.shape == b.shape
                np.testing.assert_allclose(a, b, rtol=1e-14)


def test_embedding_bag_gradcheck_2d_and_weighted() -> None:
    weight = gradgen.tensor(WEIGHT[:6], requires_grad=True)
    psw = gradgen.tensor(RNG.uniform(0.5, 1.5, (3, 2)), requires_grad=True)
    indices = gradgen.tensor([[0, 5], [2, 2], [1, 0]])

    def bag(w: Any, p: Any) -> Any:
        return GF.embedding_bag(indices, w, mode="sum", per_sample_weights=p)

    assert gradcheck(bag, [weight, psw], check_forward_ad=True)
    assert gradgradcheck(bag, [weight, psw])

    def largest(w: Any) -> Any:
        return GF.embedding_bag(indices, w, mode="max", padding_idx=0)

    assert gradcheck(largest, [weight], check_forward_ad=True)
    assert gradgradcheck(largest, [weight])


def test_embedding_bag_max_norm_renormalises_the_used_rows_in_place() -> None:
    def run(lib: Any) -> dict[str, Any]:
        weight = lib.tensor(WEIGHT * 2)
        out = lib.nn.functional.embedding_bag(
            lib.tensor(INDICES[:5]),
            weight,
            lib.tensor([0, 2]),
            max_norm=1.5,
            norm_type=3,
        )
        return {"out": out.numpy(), "weight": weight.numpy()}

    ours = run(gradgen)
    _same(ours, oracle("renorm", run))
    norms = np.linalg.norm(ours["weight"], ord=3, axis=1)
    used = np.isin(np.arange(10), INDICES[:5])
    assert np.all(norms[used] <= 1.5 + 1e-6)
    np.testing.assert_array_equal(ours["weight"][~used], WEIGHT[~used] * 2)


def _same(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-12, atol=1e-14)


BAG_ERRORS: dict[str, Callable[[Any], Any]] = {
    "offsets[0]": lambda lib: lib.tensor([1, 4]),
    "offsets[-1]": lambda lib: lib.tensor([0, 11]),
    "index high": lambda lib: (lib.tensor([0, 10]), lib.tensor([0])),
    "index negative": lambda lib: (lib.tensor([0, -1]), lib.tensor([0])),
    "index high float32": lambda lib: {
        "weight": lib.ones(10, 3),
        "indices": lib.tensor([0, 10]),
    },
    "float indices": lambda lib: (lib.tensor([0.0, 1.0]), lib.tensor([0])),
    "float offsets": lambda lib: lib.tensor([0.0, 3.0]),
    "mode": lambda lib: {"mode": "median"},
    "max and scale": lambda lib: {"mode": "max", "scale_grad_by_freq": True},
    "max and sparse": lambda lib: {"mode": "max", "sparse": True},
    "weights in mean": lambda lib: {"per_sample_weights": lib.ones(10)},
    "weights shape": lambda lib: {"mode": "sum", "per_sample_weights": lib.ones(9)},
    "weights dtype": lambda lib: {
        "mode": "sum",
        "per_sample_weights": lib.ones(10, dtype=lib.float32),
    },
    "no offsets": lambda lib: None,
    "2-D offsets": lambda lib: lib.tensor([[0, 3]]),
    "2-D input with offsets": lambda lib: (
        lib.ones(2, 5, dtype=lib.int64),
        lib.tensor([0]),
    ),
    "3-D input": lambda lib: (lib.ones(2, 5, 1, dtype=lib.int64), None),
    "1-D weight": lambda lib: {"weight": lib.ones(10)},
    "padding high": lambda lib: {"padding_idx": 10},
    "padding low": lambda lib: {"padding_idx": -11},
}


def _bag_error(lib: Any, name: str) -> Callable[[], Any]:
    spec = BAG_ERRORS[name](lib)
    indices, offsets, kwargs = lib.tensor(INDICES), lib.tensor([0, 3]), {}
    if isinstance(spec, tuple):
        indices, offsets = spec
    elif isinstance(spec, dict):
        kwargs = dict(spec)
    else:
        offsets = spec
    weight = kwargs.pop("weight", lib.tensor(WEIGHT))
    indices = kwargs.pop("indices", indices)
    return lambda: lib.nn.functional.embedding_bag(indices, weight, offsets, **kwargs)


@pytest.mark.parametrize("name", sorted(BAG_ERRORS))
def test_embedding_bag_errors_match_torch(name: str) -> None:
    theirs = oracle("error", lambda torch: outcome(_bag_error(torch, name)))
    assert isinstance(theirs, Exception)
    with pytest.raises(type(theirs)) as raised:
        _bag_error(gradgen, name)()
    expected = str(theirs).replace("torch.Size", "gradgen.Size")
    expected = expected.replace("'torch.Tensor'", "'gradgen.tensor.Tensor'")
    # PyTorch appends the offset's tensor type to one message: "1\n[ torch.LongTensor{} ]".
    assert str(raised.value) == expected.split("\n")[0]


def test_embedding_bag_decreasing_offsets() -> None:
    """PyTorch fails with an internal check here; gradgen names the offset."""
    with pytest.raises(RuntimeError, match=r"offsets\[2\] = 3 follows 5$"):
        GF.embedding_bag(
            gradgen.tensor(INDICES), gradgen.tensor(WEIGHT), gradgen.tensor([0, 5, 3])
        )


# -- nn.EmbeddingBag ------------------------------------------------------------------------


def test_embedding_bag_module_matches_torch() -> None:
    def run(lib: Any) -> dict[str, Any]:
        bag = lib.nn.EmbeddingBag.from_pretrained(
            lib.tensor(WEIGHT), freeze=False, mode="sum", padding_idx=-1
        )
        psw = lib.tensor(np.linspace(0.1, 1.0, 10))
        out = bag(lib.tensor(INDICES), lib.tensor([0, 4]), per_sample_weights=psw)
        (out * lib.tensor(UPSTREAM[:6].reshape(2, 3))).sum().backward()
        frozen = lib.nn.EmbeddingBag.from_pretrained(lib.tensor(WEIGHT))
        return {
            "out": out.detach().numpy(),
            "grad": bag.weight.grad.numpy(),
            "repr": repr(bag),
            "repr 2": repr(
                lib.nn.EmbeddingBag(
                    5,
                    2,
                    max_norm=1.0,
                    norm_type=1.0,
                    scale_grad_by_freq=True,
                    mode="max",
                )
            ),
            "frozen": frozen.weight.requires_grad,
            "frozen mean": frozen(lib.tensor(INDICES.reshape(2, 5))).numpy(),
        }

    ours, theirs = run(gradgen), oracle("module", run)
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        if isinstance(theirs[key], np.ndarray):
            np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-12)
        else:
            assert ours[key] == theirs[key], key


def test_embedding_bag_module_initialisation_and_errors() -> None:
    gradgen.manual_seed(0)
    bag = nn.EmbeddingBag(1000, 16, padding_idx=3)
    weight = bag.weight.detach().numpy()
    assert not weight[3].any()
    assert abs(weight.std() - 1) < 0.03 and abs(weight.mean()) < 0.03
    assert bag.mode == "mean" and bag.weight.requires_grad
    for padding_idx in (1000, -1001):
        with pytest.raises(
            AssertionError, match="^padding_idx must be within num_embeddings$"
        ):
            nn.EmbeddingBag(1000, 16, padding_idx=padding_idx)
    with pytest.raises(AssertionError, match="^Shape of weight does not match"):
        nn.EmbeddingBag(4, 2, _weight=gradgen.ones(2, 4))
    with pytest.raises(
        AssertionError, match="^Embeddings parameter is expected to be 2-dimensional$"
    ):
        nn.EmbeddingBag.from_pretrained(gradgen.ones(3))
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.EmbeddingBag(4, 2, sparse=True)(gradgen.tensor([[1, 2]]))


# -- F.embedding / nn.Embedding: padding_idx and max_norm, by hand ----------------------------


def test_embedding_padding_row_gets_no_gradient() -> None:
    embedding = nn.Embedding(6, 2, padding_idx=4)
    out = embedding(gradgen.tensor([[4, 1, 4], [0, 1, 5]]))
    out.backward(gradgen.ones(2, 3, 2) * 3)
    grad = embedding.weight.grad.numpy()
    np.testing.assert_array_equal(grad[:, 0], [3, 6, 0, 0, 0, 3])  # row 4 used, no grad
    np.testing.assert_array_equal(out.detach().numpy()[0, 0], [0, 0])


def test_embedding_max_norm_renormalises_used_rows_in_place() -> None:
    """Rows used with a norm above max_norm are scaled to max_norm (PyTorch adds 1e-7
    to the norm it divides by); rows not used are left alone; norm_type picks the
    norm."""
    values = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0], [1.0, -3.0]])
    weight = gradgen.tensor(values)
    version = weight._version
    out = GF.embedding(gradgen.tensor([0, 1, 3]), weight, max_norm=2.0)
    assert weight._version > version
    np.testing.assert_allclose(weight.numpy()[0], values[0] * 2 / (5 + 1e-7))
    np.testing.assert_array_equal(weight.numpy()[1], values[1])  # norm 0.5: kept
    np.testing.assert_array_equal(weight.numpy()[2], values[2])  # not used
    np.testing.assert_allclose(out.numpy()[0], weight.numpy()[0])
    weight = gradgen.tensor(values)
    GF.embedding(gradgen.tensor([3]), weight, max_norm=2.0, norm_type=1.0)
    np.testing.assert_allclose(weight.numpy()[3], values[3] * 2 / (4 + 1e-7))

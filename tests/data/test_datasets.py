"""gradgen.utils.data datasets, samplers and collation, against PyTorch's rules."""

from __future__ import annotations

import collections
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    random_split,
)
from torch_oracle import oracle, outcome


def same_error(key: str, ours: Callable[[], Any], theirs: Callable[[Any], Any]) -> None:
    """ours() raises what PyTorch's theirs(torch) raises: same class, same message."""
    expected = oracle(key, lambda torch: outcome(lambda: theirs(torch)))
    assert isinstance(expected, Exception), expected
    with pytest.raises(Exception) as raised:
        ours()
    assert type(raised.value).__name__ == type(expected).__name__
    assert str(raised.value) == str(expected)


def _plain(value: Any) -> Any:
    """A batch as recordable data: tensors as (dtype name, values)."""
    if isinstance(value, gradgen.Tensor):
        return ("tensor", str(value.dtype).split(".")[-1], value.tolist())
    if hasattr(value, "dtype") and hasattr(value, "tolist"):  # a torch tensor
        return ("tensor", str(value.dtype).split(".")[-1], value.tolist())
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return ("namedtuple", [_plain(item) for item in value])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_plain(item) for item in value])
    return value


Point = collections.namedtuple("Point", "x y")

# (name, samples) for default_collate; numpy values are built inside, for both sides.
COLLATE_CASES: list[tuple[str, Callable[[], list[Any]]]] = [
    ("ints", lambda: [1, 2, 3]),
    ("floats", lambda: [1.5, 2.0]),
    ("bools", lambda: [True, False]),
    ("strings", lambda: ["a", "b"]),
    ("tuples", lambda: [(1, "a", 0.5), (2, "b", 1.5)]),
    ("lists", lambda: [[1, 2], [3, 4]]),
    ("dicts", lambda: [{"x": 1, "y": [1.0]}, {"x": 2, "y": [2.0]}]),
    ("namedtuples", lambda: [Point(1, 2.0), Point(3, 4.0)]),
    ("arrays", lambda: [np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)]),
    ("float64 arrays", lambda: [np.arange(3.0), np.arange(3.0)]),
    ("numpy scalars", lambda: [np.int32(1), np.int32(5)]),
    ("numpy floats", lambda: [np.float64(0.5), np.float64(1.5)]),
]


@pytest.mark.parametrize(
    "name,samples", COLLATE_CASES, ids=[c[0] for c in COLLATE_CASES]
)
def test_default_collate_follows_pytorch(
    name: str, samples: Callable[[], list[Any]]
) -> None:
    expected = oracle(
        name,
        lambda torch: _plain(torch.utils.data.default_collate(samples())),
    )
    assert _plain(default_collate(samples())) == expected


def test_default_collate_of_tensors_stacks_them() -> None:
    batch = default_collate([gradgen.tensor([1.0, 2.0]), gradgen.tensor([3.0, 4.0])])
    assert batch.shape == (2, 2) and batch.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    same_error(
        "mismatched sizes",
        lambda: default_collate([gradgen.ones(2), gradgen.ones(3)]),
        lambda torch: torch.utils.data.default_collate([torch.ones(2), torch.ones(3)]),
    )


def test_default_collate_errors() -> None:
    same_error(
        "ragged lists",
        lambda: default_collate([[1, 2], [3]]),
        lambda torch: torch.utils.data.default_collate([[1, 2], [3]]),
    )
    same_error(
        "string arrays",
        lambda: default_collate([np.array(["a"]), np.array(["b"])]),
        lambda torch: torch.utils.data.default_collate(
            [np.array(["a"]), np.array(["b"])]
        ),
    )
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        default_collate([object(), object()])


def test_default_convert_follows_pytorch() -> None:
    def sample() -> Any:
        return [np.arange(2.0), (np.float32(3.0), "x"), {"k": np.int64(4)}, 7]

    expected = oracle(
        "convert",
        lambda torch: _plain(torch.utils.data.default_convert(sample())),
    )
    assert _plain(default_convert(sample())) == expected


def test_tensor_dataset_subset_concat_chain() -> None:
    data = TensorDataset(gradgen.arange(5.0), gradgen.arange(5) * 10)
    assert len(data) == 5
    x, y = data[3]
    assert (x.item(), y.item()) == (3.0, 30)
    same_error(
        "tensor dataset sizes",
        lambda: TensorDataset(gradgen.ones(2), gradgen.ones(3)),
        lambda torch: torch.utils.data.TensorDataset(torch.ones(2), torch.ones(3)),
    )
    subset = Subset(data, [4, 0])
    assert len(subset) == 2 and subset[0][1].item() == 40
    joined = ConcatDataset([subset, data])
    assert (
        len(joined) == 7 and joined[2][0].item() == 0.0 and joined[-1][1].item() == 40
    )
    assert len(data + subset) == 7
    same_error(
        "concat index",
        lambda: ConcatDataset([data])[-6],
        lambda torch: torch.utils.data.ConcatDataset([list(range(5))])[-6],
    )
    same_error(
        "concat empty",
        lambda: ConcatDataset([]),
        lambda torch: torch.utils.data.ConcatDataset([]),
    )

    class Numbers(IterableDataset[int]):
        def __init__(self, n: int) -> None:
            self.n = n

        def __iter__(self) -> Any:
            return iter(range(self.n))

    assert list(ChainDataset([Numbers(2), Numbers(3)])) == [0, 1, 0, 1, 2]
    assert list(Numbers(1) + Numbers(2)) == [0, 0, 1]
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([Numbers(2)])
    with pytest.raises(NotImplementedError):
        Dataset()[0]


def test_random_split_lengths_fractions_and_generator() -> None:
    parts = random_split(range(10), [3, 7], generator=np.random.default_rng(0))
    assert [len(part) for part in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = random_split(range(10), [3, 7], generator=np.random.default_rng(0))
    assert again[0].indices == parts[0].indices
    gradgen.manual_seed(3)
    first = random_split(range(10), [5, 5])[0].indices
    gradgen.manual_seed(3)
    assert random_split(range(10), [5, 5])[0].indices == first

    def fraction_lengths(split: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sizes = [
                [len(part) for part in split(range(n), fractions)]
                for n, fractions in [(10, [0.3, 0.3, 0.4]), (3, [0.1, 0.1, 0.8])]
            ]
        return sizes, [str(warning.message) for warning in caught]

    expected = oracle(
        "fractions",
        lambda torch: fraction_lengths(torch.utils.data.random_split),
    )
    assert fraction_lengths(random_split) == expected
    same_error(
        "split sum",
        lambda: random_split(range(5), [2, 2]),
        lambda torch: torch.utils.data.random_split(range(5), [2, 2]),
    )


def test_samplers() -> None:
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    order = list(RandomSampler(range(6), generator=np.random.default_rng(1)))
    assert sorted(order) == list(range(6))
    longer = list(RandomSampler(range(3), num_samples=7))
    assert len(longer) == 7 and sorted(longer[:6]) == [0, 0, 1, 1, 2, 2]
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=50))
    assert len(drawn) == 50 and set(drawn) <= {0, 1, 2}
    assert sorted(SubsetRandomSampler([5, 7, 9])) == [5, 7, 9]
    weighted = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 40))
    assert len(weighted) == 40 and set(weighted) <= {1, 3}
    unique = list(WeightedRandomSampler([1.0, 1.0, 0.0], 2, replacement=False))
    assert sorted(unique) == [0, 1]
    batches = BatchSampler(range(7), 3, drop_last=False)
    assert list(batches) == [[0, 1, 2], [3, 4, 5], [6]] and len(batches) == 3
    assert len(BatchSampler(range(7), 3, drop_last=True)) == 2


SAMPLER_ERRORS = [
    ("num_samples", lambda m: m.RandomSampler(range(3), num_samples=0)),
    ("replacement", lambda m: m.RandomSampler(range(3), replacement=1)),
    ("batch_size", lambda m: m.BatchSampler(range(3), 0, False)),
    ("drop_last", lambda m: m.BatchSampler(range(3), 2, 1)),
    ("weighted num_samples", lambda m: m.WeightedRandomSampler([1.0, 2.0], -1)),
    ("weighted shape", lambda m: m.WeightedRandomSampler([[1.0, 2.0]], 2)),
]


@pytest.mark.parametrize(
    "name,make", SAMPLER_ERRORS, ids=[e[0] for e in SAMPLER_ERRORS]
)
def test_sampler_errors(name: str, make: Callable[[Any], Any]) -> None:
    same_error(
        name, lambda: make(gradgen.utils.data), lambda torch: make(torch.utils.data)
    )

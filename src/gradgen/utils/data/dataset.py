"""torch.utils.data datasets: indexable (`Dataset`) and iterable (`IterableDataset`)
sources of samples, and the ways to combine and split them."""

from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ...tensor import Tensor
from .sampler import numpy_generator

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map from keys (usually 0..len-1) to samples: subclasses define
    `__getitem__` and, for the default samplers, `__len__`."""

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[Any]) -> ConcatDataset[Any]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A stream of samples: subclasses define `__iter__`. With worker processes every
    worker iterates its own copy (split the work with `get_worker_info()`)."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(
            "Subclasses of IterableDataset should implement __iter__."
        )

    def __add__(self, other: Dataset[Any]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Sample i is `(t[i] for t in tensors)`; the tensors share their first size."""

    def __init__(self, *tensors: Tensor) -> None:
        assert all(
            tensors[0].size(0) == tensor.size(0) for tensor in tensors
        ), "Size mismatch between tensors"
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return int(self.tensors[0].shape[0])


class Subset(Dataset[T_co]):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return [self.dataset[self.indices[i]] for i in index]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list[int]) -> list[Any]:
        """A batch at once (the DataLoader's call), through the dataset's own
        `__getitems__` when it has one."""
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])  # type: ignore[no-any-return]
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset[T_co]):
    """Several datasets one after the other."""

    def __init__(self, datasets: Iterable[Dataset[Any]]) -> None:
        self.datasets = list(datasets)
        assert len(self.datasets) > 0, "datasets should not be an empty iterable"
        for dataset in self.datasets:
            assert not isinstance(
                dataset, IterableDataset
            ), "ConcatDataset does not support IterableDataset"
        self.cumulative_sizes = self.cumsum(self.datasets)

    @staticmethod
    def cumsum(sequence: Sequence[Any]) -> list[int]:
        sizes, total = [], 0
        for dataset in sequence:
            total += len(dataset)
            sizes.append(total)
        return sizes

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> T_co:
        if index < 0:
            if -index > len(self):
                raise ValueError(
                    "absolute value of index should not exceed dataset length"
                )
            index = len(self) + index
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][index - start]  # type: ignore[no-any-return]


class ChainDataset(IterableDataset[Any]):
    """Several iterable datasets one after the other."""

    def __init__(self, datasets: Iterable[Dataset[Any]]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for dataset in self.datasets:
            assert isinstance(
                dataset, IterableDataset
            ), "ChainDataset only supports IterableDataset"
            yield from dataset

    def __len__(self) -> int:
        return sum(len(dataset) for dataset in self.datasets)  # type: ignore[arg-type,misc]


def _fraction_lengths(total: int, fractions: Sequence[float]) -> list[int]:
    """PyTorch's split of `total` by fractions: floors, then the remainder one by one
    from the first split on."""
    lengths = []
    for i, fraction in enumerate(fractions):
        if fraction < 0 or fraction > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(total * fraction))
    for i in range(total - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(
                f"Length of split at index {i} is 0. "
                "This might result in an empty dataset."
            )
    return lengths


def random_split(
    dataset: Dataset[T_co], lengths: Sequence[int | float], generator: Any = None
) -> list[Subset[T_co]]:
    """Disjoint random subsets of `dataset` of the given lengths (or fractions summing
    to 1)."""
    total = len(dataset)  # type: ignore[arg-type]
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _fraction_lengths(total, lengths)
    if sum(lengths) != total:
        raise ValueError(
            "Sum of input lengths does not equal the length of the input dataset!"
        )
    order = numpy_generator(generator).permutation(total).tolist()
    subsets, start = [], 0
    for length in lengths:
        stop = start + int(length)
        subsets.append(Subset(dataset, order[start:stop]))
        start = stop
    return subsets

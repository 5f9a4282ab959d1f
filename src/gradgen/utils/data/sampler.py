"""torch.utils.data samplers: the order in which a DataLoader visits a dataset.

Random samplers draw from numpy's PCG64 streams (gradgen's random numbers; PyTorch's
Mersenne streams are not reproduced bit for bit). `generator=` takes a numpy
`Generator`, or an object holding one as `_generator` (gradgen's); without one a
sampler seeds a fresh stream from gradgen's global generator (`gradgen.manual_seed`),
as PyTorch seeds from its default generator.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

import numpy as np

from ... import random

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

T = TypeVar("T")


def numpy_generator(generator: Any) -> np.random.Generator:
    """The numpy stream to draw from: `generator`'s, or a fresh one seeded from the
    global stream."""
    if generator is None:
        return np.random.default_rng(
            int(random.default_generator._generator.integers(2**63))
        )
    if isinstance(generator, np.random.Generator):
        return generator
    inner = getattr(generator, "_generator", None)
    if isinstance(inner, np.random.Generator):
        return inner
    raise TypeError(
        "generator must be a numpy.random.Generator or hold one as _generator, got "
        f"{type(generator).__name__}"
    )


def draw_seed(generator: Any) -> int:
    """A 63-bit seed from `generator` (or the global stream): worker seeds."""
    source = (
        random.default_generator._generator
        if generator is None
        else numpy_generator(generator)
    )
    return int(source.integers(2**63))


class Sampler(Generic[T]):
    """The base class: iterating yields indices (or lists of indices)."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[T]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A random order of the indices (each once per pass), or `num_samples` indices
    drawn with replacement."""

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Any = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, builtins.bool):
            raise TypeError(
                "replacement should be a boolean value, but got "
                f"replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        rng = numpy_generator(self.generator)
        if self.replacement:
            yield from rng.integers(0, n, size=self.num_samples).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from rng.permutation(n).tolist()
        yield from rng.permutation(n)[: self.num_samples % n].tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices, in a random order."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        rng = numpy_generator(self.generator)
        for position in rng.permutation(len(self.indices)).tolist():
            yield self.indices[position]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """`num_samples` indices drawn with probabilities proportional to `weights`."""

    def __init__(
        self,
        weights: Sequence[float] | Any,
        num_samples: int,
        replacement: bool = True,
        generator: Any = None,
    ) -> None:
        if (
            not isinstance(num_samples, int)
            or isinstance(num_samples, builtins.bool)
            or num_samples <= 0
        ):
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={num_samples}"
            )
        if not isinstance(replacement, builtins.bool):
            raise ValueError(
                "replacement should be a boolean value, but got "
                f"replacement={replacement}"
            )
        array = np.asarray(weights, dtype=np.float64)
        if array.ndim != 1:
            raise ValueError(
                "weights should be a 1d sequence but given weights have shape "
                f"{tuple(array.shape)}"
            )
        self.weights = array
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        rng = numpy_generator(self.generator)
        p = self.weights / self.weights.sum()
        chosen = rng.choice(len(p), self.num_samples, self.replacement, p)
        yield from chosen.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups another sampler's indices into lists of `batch_size` (the last one
    shorter, or dropped with `drop_last`)."""

    def __init__(
        self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool
    ) -> None:
        if (
            not isinstance(batch_size, int)
            or isinstance(batch_size, builtins.bool)
            or batch_size <= 0
        ):
            raise ValueError(
                "batch_size should be a positive integer value, but got "
                f"batch_size={batch_size}"
            )
        if not isinstance(drop_last, builtins.bool):
            raise ValueError(
                f"drop_last should be a boolean value, but got drop_last={drop_last}"
            )
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        count = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return count // self.batch_size
        return (count + self.batch_size - 1) // self.batch_size

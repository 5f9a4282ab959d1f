"""torch.nn.utils.rnn: PackedSequence and the functions that pack, pad and unpack
batches of sequences of different lengths.

A packed sequence stores, time step after time step, the rows of the sequences still
running at that step: `data` is (sum(batch_sizes), *), `batch_sizes[t]` the number of
sequences longer than t (non-increasing). Sequences are packed longest first;
`sorted_indices` is the order they were sorted into (None when they came sorted) and
`unsorted_indices` its inverse. Packing and padding are one `index_select` each, so
their gradients are one index addition.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from gradgen.dtypes import float32, float64, int64, spelling
from gradgen.factories import full, tensor
from gradgen.generated import ops
from gradgen.tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class PackedSequence_(NamedTuple):
    """The fields of a PackedSequence (PyTorch's base class of the same name)."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None


class PackedSequence(PackedSequence_):
    """(data, batch_sizes, sorted_indices, unsorted_indices), as PyTorch's; build it
    with pack_padded_sequence or pack_sequence, not by hand."""

    __slots__ = ()

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The same sequence with `data` converted (`Tensor.to`'s arguments)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return self._replace(data=data)

    def double(self) -> PackedSequence:
        return self._replace(data=self.data.to(float64))

    def float(self) -> PackedSequence:
        return self._replace(data=self.data.to(float32))

    def cpu(self) -> PackedSequence:
        return self

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes `permutation` (None for None)."""
    if permutation is None:
        return None
    return tensor(np.argsort(permutation.numpy(), kind="stable"), dtype=int64)


def _packed(
    data: Tensor, batch_sizes: Tensor, sorted_indices: Tensor | None
) -> PackedSequence:
    return PackedSequence(
        data, batch_sizes, sorted_indices, invert_permutation(sorted_indices)
    )


def _lengths_array(lengths: Any) -> np.ndarray:
    """`lengths` (a tensor or a sequence of ints) as a 1-d int64 array, PyTorch's
    checks of a lengths tensor included."""
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(
                "'lengths' argument should be a 1D CPU int64 tensor, but got "
                f"{lengths.dim()}D cpu {spelling(lengths.dtype).scalar_type} tensor"
            )
        return np.asarray(lengths.numpy(), dtype=np.int64)
    return np.asarray(list(lengths), dtype=np.int64).reshape(-1)


def _pack_rows(lengths: np.ndarray, batch: int) -> tuple[np.ndarray, list[int]]:
    """The rows of the (steps * batch, *) view of a padded (T, B, *) batch that a
    packed sequence keeps, in order, and the batch sizes."""
    batch_sizes = [int(np.count_nonzero(lengths > t)) for t in range(int(lengths[0]))]
    rows = [t * batch + b for t, size in enumerate(batch_sizes) for b in range(size)]
    return np.asarray(rows, dtype=np.int64), batch_sizes


def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | Sequence[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Packs a padded (T, B, *) batch ((B, T, *) with batch_first) whose b-th sequence
    has lengths[b] steps. With enforce_sorted the lengths must be non-increasing;
    otherwise the batch is sorted first and the order kept in the result."""
    array = _lengths_array(lengths)
    sorted_indices = None
    if enforce_sorted:
        if np.any(array[1:] > array[:-1]):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when "
                "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this "
                "requirement if you do not need ONNX exportability."
            )
    else:
        order = np.argsort(-array, kind="stable")
        array = array[order]
        sorted_indices = tensor(order, dtype=int64)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    if array.shape[0] != batch:
        raise RuntimeError(
            "Expected `len(lengths)` to be equal to batch_size, but got "
            f"{array.shape[0]} (batch_size={batch})"
        )
    if array.size == 0 or array[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element "
            "in 'lengths' that is <= 0"
        )
    if array[0] > steps:
        raise RuntimeError(
            f"pack_padded_sequence: the longest length, {int(array[0])}, is longer "
            f"than the padded input's {steps} steps"
        )
    rows, batch_sizes = _pack_rows(array, batch)
    flat = input.reshape([steps * batch, *input.shape[2:]])
    data = flat.index_select(0, tensor(rows, dtype=int64))
    return _packed(data, tensor(batch_sizes, dtype=int64), sorted_indices)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """(padded, lengths): the inverse of pack_padded_sequence, padded with
    padding_value to the longest length (or to total_length), in the batch's order
    before any sorting."""
    data, batch_sizes = sequence.data, sequence.batch_sizes
    sizes = [int(size) for size in batch_sizes.tolist()]
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest "
                f"sequence in input, but got total_length={total_length} and max "
                f"sequence length being {steps}"
            )
        steps = total_length
    batch = sizes[0]
    padding_row = data.shape[0]  # the row of padding appended below
    source = np.full(steps * batch, padding_row, dtype=np.int64)
    source[_pack_rows(_lengths_of(sizes, batch), batch)[0]] = np.arange(data.shape[0])
    padding = full([1, *data.shape[1:]], padding_value, dtype=data.dtype)
    padded = ops.cat([data, padding]).index_select(0, tensor(source, dtype=int64))
    padded = padded.reshape([steps, batch, *data.shape[1:]])
    lengths = tensor(_lengths_of(sizes, batch), dtype=int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices)
    return (padded.transpose(0, 1) if batch_first else padded), lengths


def _lengths_of(batch_sizes: list[int], batch: int) -> np.ndarray:
    """Each sequence's length, from the batch sizes of a packed sequence."""
    sizes = np.asarray(batch_sizes, dtype=np.int64)
    return np.asarray([np.count_nonzero(sizes > b) for b in range(batch)], np.int64)


def pad_sequence(
    sequences: Tensor | Iterable[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Sequences of (L_i, *) stacked into (max L, B, *) ((B, max L, *) with
    batch_first), the shorter ones padded with padding_value after their end (before
    it with padding_side='left')."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            "Expected padding_side to be one of left or right, but got "
            f"{padding_side}."
        )
    items = list(sequences.unbind(0) if isinstance(sequences, Tensor) else sequences)
    if not items:
        raise RuntimeError("received an empty list of sequences")
    longest = max(item.shape[0] for item in items)
    padded = []
    for item in items:
        missing = longest - item.shape[0]
        if missing:
            block = full([missing, *item.shape[1:]], padding_value, dtype=item.dtype)
            pieces = [item, block] if padding_side == "right" else [block, item]
            item = ops.cat(pieces)
        padded.append(item)
    return ops.stack(padded, 0 if batch_first else 1)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [
        sequence[: int(length)]
        for sequence, length in zip(padded_sequences.unbind(0), lengths.tolist())
    ]


def pack_sequence(
    sequences: Sequence[Tensor], enforce_sorted: bool = True
) -> PackedSequence:
    """pack_padded_sequence of pad_sequence(sequences) with their lengths."""
    lengths = tensor([item.shape[0] for item in sequences], dtype=int64)
    return pack_padded_sequence(
        pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted
    )


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The sequences of a packed sequence, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

"""segment_reduce: reductions over consecutive segments of one dimension, the
segments given by their lengths or by offsets (PyTorch's checks and messages)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import _wrap_dim

__all__ = ["segment_reduce"]

_REDUCTIONS = ("sum", "prod", "mean", "max", "min")


def _segment_lengths(
    data: np.ndarray,
    lengths: np.ndarray | None,
    indices: np.ndarray | None,
    offsets: np.ndarray | None,
    axis: int,
    unsafe: bool,
) -> np.ndarray:
    """The segments' lengths, shape data.shape[:axis] + (segments,)."""
    if lengths is not None:
        given = lengths
    elif offsets is not None:
        given = np.diff(offsets, axis=-1)
    elif indices is not None:
        raise RuntimeError(
            "segment_reduce(): indices based reduction is not supported yet."
        )
    else:
        raise RuntimeError(
            "segment_reduce(): Either lengths or offsets must be defined."
        )
    if given.dtype.kind not in "iu":
        raise NotImplementedError(
            '"_segment_reduce_lengths_cpu_kernel1" not implemented for '
            f"'{'Float' if given.dtype == np.float32 else 'Double'}'"
        )
    if given.ndim - 1 != axis:
        raise RuntimeError(
            "segment_reduce(): Expected axis to be the last dimension of lengths but "
            f"got {axis}."
        )
    if np.any(given < 0):
        raise RuntimeError("lengths contains negative value!")
    if not unsafe and np.any(given.sum(-1) != data.shape[axis]):
        raise RuntimeError(
            "segment_reduce(): Expected all rows of lengths along axis to sum to "
            "data.size(lengths.dim()-1) when !unsafe."
        )
    return given


def _reduce(segment: np.ndarray, reduce: str, initial: Any, axis: int) -> np.ndarray:
    """One segment reduced along `axis` (PyTorch's values for empty segments)."""
    empty = segment.shape[axis] == 0
    if reduce == "sum":
        value = segment.sum(axis)
    elif reduce == "prod":
        value = segment.prod(axis)
    elif reduce == "mean":
        total = segment.sum(axis) + (0 if initial is None else initial)
        return np.asarray(total / (segment.shape[axis] + (initial is not None)))
    else:
        ufunc = np.maximum if reduce == "max" else np.minimum
        start = -np.inf if reduce == "max" else np.inf
        value = ufunc.reduce(segment, axis, initial=start)
    if initial is not None:
        if reduce == "sum":
            value = value + initial
        elif reduce == "prod":
            value = value * initial
        else:
            value = (np.maximum if reduce == "max" else np.minimum)(value, initial)
    elif empty and reduce == "mean":
        value = np.full_like(value, np.nan)
    return np.asarray(value)


def segment_reduce(
    data: np.ndarray,
    reduce: str,
    lengths: np.ndarray | None,
    indices: np.ndarray | None,
    offsets: np.ndarray | None,
    axis: int,
    unsafe: bool,
    initial: Any,
) -> np.ndarray:
    """Each segment of `data` along `axis` reduced by sum, prod, mean, max or min
    (PyTorch's amax/amin spellings too); `initial` joins every segment."""
    reduce = {"amax": "max", "amin": "min"}.get(reduce, reduce)
    if reduce not in _REDUCTIONS:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    axis = _wrap_dim(axis, data.ndim)
    given = _segment_lengths(data, lengths, indices, offsets, axis, unsafe)
    out_shape = data.shape[:axis] + (given.shape[-1],) + data.shape[axis + 1 :]
    result = np.empty(out_shape, data.dtype)
    for outer in np.ndindex(*data.shape[:axis]):
        start = 0
        for s, length in enumerate(given[outer]):
            segment = data[outer][start : start + int(length)]
            result[outer + (s,)] = _reduce(segment, reduce, initial, 0)
            start += int(length)
    return result

"""PyTorch's default collation: a list of samples -> one batch (`default_collate`),
and the per-sample conversion used without batching (`default_convert`).

The rules, by the type of the first sample: tensors are stacked on a new first
dimension; numpy arrays become tensors and are stacked; numpy scalars, Python floats
(-> float64), ints (-> int64) and bools become one tensor; strings and bytes stay a
list; mappings, namedtuples and sequences are collated field by field (a tuple's
fields come back as a list, as in PyTorch).
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ...dtypes import float64
from ...factories import as_tensor, tensor
from ...generated.ops import stack
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]

# numpy dtypes that cannot become tensors: strings, bytes, objects.
_STRING_OR_OBJECT = re.compile(r"[SaUO]")

COLLATE_TYPE_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
    "lists; found {}"
)


def _is_numpy_value(value: Any) -> bool:
    kind = type(value)
    return kind.__module__ == "numpy" and kind.__name__ not in ("str_", "bytes_")


def _collate_numpy(batch: list[Any]) -> Any:
    elem = batch[0]
    if isinstance(elem, np.ndarray):
        if _STRING_OR_OBJECT.search(elem.dtype.str) is not None:
            raise TypeError(COLLATE_TYPE_ERROR.format(elem.dtype))
        return stack([as_tensor(array) for array in batch], 0)
    if getattr(elem, "shape", None) == ():
        return as_tensor(np.array(batch))
    raise TypeError(COLLATE_TYPE_ERROR.format(type(elem)))


def _collate_mapping(batch: list[Any]) -> Any:
    elem = batch[0]
    fields = {key: default_collate([sample[key] for sample in batch]) for key in elem}
    if isinstance(elem, collections.abc.MutableMapping):
        clone = copy.copy(elem)
        clone.update(fields)
        return clone
    try:
        return type(elem)(fields)
    except TypeError:
        return fields


def _collate_sequence(batch: list[Any]) -> Any:
    elem = batch[0]
    size = len(elem)
    if not all(len(sample) == size for sample in batch):
        raise RuntimeError("each element in list of batch should be of equal size")
    fields = [default_collate(samples) for samples in zip(*batch)]
    if isinstance(elem, tuple):
        return fields
    if isinstance(elem, collections.abc.MutableSequence):
        clone = copy.copy(elem)
        for i, field in enumerate(fields):
            clone[i] = field
        return clone
    try:
        return type(elem)(fields)
    except TypeError:
        return fields


def default_collate(batch: Any) -> Any:
    """One batch from a list of samples, by PyTorch's rules (see the module)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if _is_numpy_value(elem):
        return _collate_numpy(batch)
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):  # also bool: a bool batch is a bool tensor
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _collate_mapping(batch)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        return _collate_sequence(batch)
    raise TypeError(COLLATE_TYPE_ERROR.format(type(elem)))


def _convert_container(data: Any, convert: Callable[[Any], Any]) -> Any:
    if isinstance(data, collections.abc.Mapping):
        fields = {key: convert(data[key]) for key in data}
        kind: Any = type(data)
        try:
            return kind(fields)
        except TypeError:
            return fields
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(convert(item) for item in data))
    if isinstance(data, tuple):
        return [convert(item) for item in data]
    try:
        return type(data)([convert(item) for item in data])
    except TypeError:
        return [convert(item) for item in data]


def default_convert(data: Any) -> Any:
    """One sample with its numpy arrays and scalars turned into tensors (containers
    converted item by item; anything else unchanged)."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy_value(data) and isinstance(data, (np.ndarray, np.generic)):
        if _STRING_OR_OBJECT.search(data.dtype.str) is not None:
            return data
        return as_tensor(np.asarray(data))
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, (collections.abc.Mapping, collections.abc.Sequence)):
        return _convert_container(data, default_convert)
    return data

"""BatchedTensor and the Batched dispatch key: how vmap runs a function once per batch.

Inside ``vmap`` every input mapped over becomes a BatchedTensor: a Tensor whose
`_value` holds the whole batch with the batch dimension first, seen from the outside
with the shape of one example (its `_data` is a view of example 0, so code that reads
shapes sees the logical ones). While a vmap level is open the dispatcher enters every
operator at the Batched key (dispatch.py); its kernel here finds the innermost level
among the arguments and

- runs the operator's batching rule (batching_rules.py) when it has one: the operator
  is called once on the unwrapped values, with dims shifted past the batch dimension;
- else falls back: calls the operator once per example on slices of the values and
  stacks the results (warning once per operator), which is correct for any operator.

Levels nest (``vmap(vmap(f))``): a level's `_value` may itself be a BatchedTensor of
an outer level, and an operator called on values re-enters the dispatcher, where the
outer level's rules apply in turn. Autograd runs below the Batched key, on the values:
a batched call records one node for the whole batch.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from .. import dispatch
from ..dispatch import (
    AFTER_AUTOGRAD_KEYSET,
    ALL_KEYS,
    BATCHED_KEYSET,
    DispatchKey,
    OperatorHandle,
    enter_batched,
    exit_batched,
    forward_ad_levels,
    redispatch,
)
from ..generated import operators
from ..grad_mode import _state as _grad_mode_state
from ..graph import RemovableHandle
from ..tensor import Tensor

HANDLES: dict[str, OperatorHandle] = {
    handle.name: handle
    for handle in vars(operators).values()
    if isinstance(handle, OperatorHandle)
}


def _data_dependent(what: str) -> NoReturn:
    raise RuntimeError(
        f"vmap: It looks like you're calling {what} on a Tensor. We don't support vmap "
        f"over calling {what} on a Tensor, please try to rewrite what you're doing with "
        "other operations. If error is occurring somewhere inside gradgen internals, "
        "please file a bug report."
    )


class BatchedTensor(Tensor):
    """One example's view of a batch: `_value` has the batch at dimension 0."""

    __slots__ = ("_value", "_level")

    def __init__(self, value: Tensor, level: int) -> None:
        Tensor.__init__(self, value._data[0, ...])
        self._value = value
        self._level = level

    @property
    def requires_grad(self) -> bool:
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._value.requires_grad = value

    def detach(self) -> Tensor:
        return BatchedTensor(self._value.detach(), self._level)

    def _shallow_copy(self) -> Tensor:
        return BatchedTensor(self._value._shallow_copy(), self._level)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """`hook` on the value's gradient, seen as this level sees it (as torch.func):
        called once for the whole batch with the gradient batched at this level; a
        tensor it returns replaces the gradient (repeated when it is not batched)."""
        level = self._level

        def batched_hook(grad: Tensor) -> Tensor | None:
            enter_batched()  # the backward pass may run with the Batched key off
            try:
                result = hook(BatchedTensor(grad, level))
                return None if result is None else broadcast_value(result, level)
            finally:
                exit_batched()

        return self._value.register_hook(batched_hook)

    def item(self) -> NoReturn:
        _data_dependent(".item()")

    def tolist(self) -> NoReturn:
        _data_dependent(".tolist()")

    def numpy(self) -> NoReturn:
        _data_dependent(".numpy()")

    def __array__(self, dtype: Any = None, copy: Any = None) -> NoReturn:
        _data_dependent("numpy.asarray()")

    def __bool__(self) -> NoReturn:
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some "
            "data-dependent control flow. We don't support that yet, please file an "
            "issue at https://github.com/pytorch/pytorch/issues ."
        )

    def __float__(self) -> NoReturn:
        _data_dependent("float()")

    def __int__(self) -> NoReturn:
        _data_dependent("int()")

    def __index__(self) -> NoReturn:
        _data_dependent("operator.index()")

    def __setitem__(self, key: Any, value: Any) -> None:
        """``x[key] = value`` example by example (writes through the value's slices)."""
        for index in range(batch_size(self._level)):
            example = HANDLES["select.int"].call(self._value, 0, index)
            example[key] = slice_example(value, self._level, index)

    def __repr__(self) -> str:
        return f"BatchedTensor(lvl={self._level}, bdim=0, value={self._value!r})"


# -- levels ------------------------------------------------------------------------------


class _Levels(threading.local):
    def __init__(self) -> None:
        self.sizes: dict[int, int] = {}
        self.randomness: dict[int, Any] = {}
        self.next = 1
        self.looping = 0  # fallbacks running per example


_levels = _Levels()


class vmap_level:
    """Open a vmap level over a batch of `size` (``with vmap_level(size) as level:``);
    `randomness` is its vmap's (func/randomness.py), which the random operators'
    rules read."""

    __slots__ = ("_size", "_level", "_randomness")

    def __init__(self, size: int, randomness: Any = None) -> None:
        self._size = size
        self._randomness = randomness

    def __enter__(self) -> int:
        level = self._level = _levels.next
        _levels.next += 1
        _levels.sizes[level] = self._size
        _levels.randomness[level] = self._randomness
        enter_batched()
        return level

    def __exit__(self, *exc_info: object) -> None:
        exit_batched()
        del _levels.sizes[self._level]
        del _levels.randomness[self._level]
        _levels.next -= 1


def batch_size(level: int) -> int:
    return _levels.sizes[level]


def randomness_at(level: int) -> Any:
    """The Randomness of the vmap that opened `level` (None: not a vmap's)."""
    return _levels.randomness.get(level)


def innermost_level() -> int | None:
    return max(_levels.sizes) if _levels.sizes else None


def open_levels() -> list[int]:
    return sorted(_levels.sizes)


# -- wrapping ----------------------------------------------------------------------------


def is_batched(x: Any, level: int) -> bool:
    return isinstance(x, BatchedTensor) and x._level == level


def unwrap(x: Any, level: int) -> Any:
    return x._value if is_batched(x, level) else x


def wrap(value: Any, level: int) -> Any:
    """Results of a call on values, as BatchedTensors of `level`."""
    if isinstance(value, Tensor):
        return BatchedTensor(value, level)
    if isinstance(value, (tuple, list)):
        return _same_kind(value, [wrap(v, level) for v in value])
    return value


def _same_kind(container: Any, items: list[Any]) -> Any:
    """`items` in a container of the type of `container` (namedtuples included)."""
    if hasattr(container, "_fields"):
        return type(container)(*items)
    return type(container)(items)


def broadcast_value(x: Tensor, level: int) -> Tensor:
    """The value of `x` at `level`: its own if batched there, else `x` repeated (an
    expanded view, so gradients reach `x`)."""
    if isinstance(x, BatchedTensor) and x._level == level:
        return x._value
    size = batch_size(level)
    shape = [size] + list(x.shape)
    repeated: Tensor = call_plain(
        HANDLES["expand"], call_plain(HANDLES["unsqueeze"], x, 0), shape, False
    )
    return repeated


def make_batched(x: Tensor, level: int) -> BatchedTensor:
    if isinstance(x, BatchedTensor) and x._level == level:
        return x
    return BatchedTensor(broadcast_value(x, level), level)


def batch_at(x: Tensor, levels: list[int]) -> Tensor:
    """`x` batched at every one of `levels` (ascending; the outermost wraps the
    innermost value, as vmap nests them), repeating it where it is not."""
    if not levels:
        return x
    top = levels[-1]
    if isinstance(x, BatchedTensor) and x._level == top:
        inner = batch_at(x._value, levels[:-1])
        return x if inner is x._value else BatchedTensor(inner, top)
    return BatchedTensor(broadcast_value(batch_at(x, levels[:-1]), top), top)


def physical(x: Tensor) -> Tensor:
    """The plain tensor under every level of `x`: the batches first, outermost first."""
    while isinstance(x, BatchedTensor):
        x = x._value
    return x


def rewrap(value: Tensor, levels: list[int]) -> Tensor:
    """A plain tensor with batches for `levels` in front, as nested BatchedTensors."""
    for level in levels:
        value = BatchedTensor(value, level)
    return value


def slice_example(x: Any, level: int, index: int) -> Any:
    if is_batched(x, level):
        return HANDLES["select.int"].call(x._value, 0, index)
    if isinstance(x, (list, tuple)):
        return _same_kind(x, [slice_example(item, level, index) for item in x])
    return x


def top_level(args: Sequence[Any]) -> int | None:
    """The innermost vmap level among the arguments (None: nothing batched)."""
    found = None
    for arg in args:
        cls = arg.__class__
        if cls is Tensor or cls in _PLAIN_CLASSES:
            continue  # the common arguments, by their exact class
        if isinstance(arg, BatchedTensor):
            if found is None or arg._level > found:
                found = arg._level
        elif isinstance(arg, (list, tuple)):
            inner = top_level(arg)
            if inner is not None and (found is None or inner > found):
                found = inner
    return found


_PLAIN_CLASSES: frozenset[type] = frozenset({int, float, bool, str, type(None)})


def call_plain(handle: OperatorHandle, *args: Any) -> Any:
    """`handle.call(*args)` for a batching rule's call on values: with no
    BatchedTensor among them, straight to the kernels below the Batched key (where
    the Batched kernel would pass it), unless the profiler's observer must see it."""
    if dispatch._observer is None and top_level(args) is None:
        if _grad_mode_state.enabled or forward_ad_levels.count:
            keys = ALL_KEYS
        else:
            keys = AFTER_AUTOGRAD_KEYSET
        return redispatch(handle, keys, *args)
    return handle.call(*args)


# -- the fallback ------------------------------------------------------------------------

_warned: set[str] = set()
FALLBACK_WARNING = (
    "vmap: {name} has no batching rule for this call: it runs once per example and "
    "the results are stacked (gradgen.func.batching_rules lists the operators with one)"
)


def mutates_self(handle: OperatorHandle) -> bool:
    return "(a!) self" in handle.schema


def _stack(results: list[Any], level: int, name: str) -> Any:
    first = results[0]
    if isinstance(first, Tensor):
        return BatchedTensor(HANDLES["stack"].call(results, 0), level)
    if isinstance(first, (tuple, list)):
        columns = [
            _stack([r[i] for r in results], level, name) for i in range(len(first))
        ]
        return _same_kind(first, columns)
    if first is None or all(r == first for r in results):
        return first
    raise RuntimeError(
        f"vmap: {name} returned a different {type(first).__name__} for each example: "
        "data-dependent Python values cannot be batched"
    )


def fallback(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """Call `handle` per example and stack: correct for every operator."""
    if handle.name not in _warned:
        _warned.add(handle.name)
        warnings.warn(
            FALLBACK_WARNING.format(name=handle.name), UserWarning, stacklevel=4
        )
    if mutates_self(handle) and not is_batched(args[0], level):
        inplace_error(args[0], level)
    results = _each_example(handle.call, level, args)
    if mutates_self(handle):
        return args[0]
    return _stack(results, level, handle.name)


def _each_example(function: Callable[..., Any], level: int, args: Any) -> list[Any]:
    _levels.looping += 1  # its calls are per example: not at a level (`_drawing`)
    try:
        return [
            function(*slice_example(args, level, index))
            for index in range(batch_size(level))
        ]
    finally:
        _levels.looping -= 1


def per_example(name: str, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """A composite whose steps depend on its arguments' values (which a BatchedTensor
    holds for example 0 only) run as the fallback runs an operator: once per example
    of the innermost level among `args`, the results stacked (warning once)."""
    level = top_level(args)
    if level is None:
        return function(*args)
    if name not in _warned:
        _warned.add(name)
        warnings.warn(FALLBACK_WARNING.format(name=name), UserWarning, stacklevel=4)
    return _stack(_each_example(function, level, args), level, name)


def inplace_error(self: Tensor, level: int) -> NoReturn:
    """An in-place operator whose `self` is one tensor for the whole batch while
    another argument is batched: the result cannot go into `self`."""
    shape = list(self.shape)
    raise RuntimeError(
        f"output with shape {shape} doesn't match the broadcast shape "
        f"{[batch_size(level)] + shape}"
    )


# -- the kernel --------------------------------------------------------------------------

Rule = Callable[[OperatorHandle, int, tuple[Any, ...]], Any]


def _kernel(handle: OperatorHandle, rule: Rule | None) -> Callable[..., Any]:
    def batched(keys: int, *args: Any) -> Any:
        level = top_level(args)
        if level is None:
            return redispatch(handle, keys & ~BATCHED_KEYSET, *args)
        if rule is not None:
            result = rule(handle, level, args)
            if result is not NotImplemented:
                return result
        return fallback(handle, level, args)

    return batched


def _drawing(handle: OperatorHandle, rule: Rule) -> Callable[..., Any]:
    """The kernel of a random operator: its rule runs for a call without batched
    arguments too (at the innermost level, whose randomness decides whether the draw
    is repeated along the batch), except inside a fallback's per-example calls."""

    def batched(keys: int, *args: Any) -> Any:
        level = top_level(args)
        if level is None:
            if not _levels.sizes or _levels.looping:
                return redispatch(handle, keys & ~BATCHED_KEYSET, *args)
            level = max(_levels.sizes)
        result = rule(handle, level, args)
        if result is not NotImplemented:
            return result
        if not _any_batched(args, level):
            return redispatch(handle, keys & ~BATCHED_KEYSET, *args)
        return fallback(handle, level, args)

    return batched


def _any_batched(args: Sequence[Any], level: int) -> bool:
    return any(is_batched(a, level) for a in args)


def install(rules: dict[str, Rule], drawing: frozenset[str] = frozenset()) -> None:
    """Register the Batched kernel of every operator (its rule, or the fallback);
    the operators in `drawing` draw random numbers (`_drawing`)."""
    for name, handle in HANDLES.items():
        rule = rules.get(name)
        if name in drawing and rule is not None:
            handle.register(DispatchKey.Batched, _drawing(handle, rule))
        else:
            handle.register(DispatchKey.Batched, _kernel(handle, rule))


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The batch under a BatchedTensor (every level's with `recurse`); other tensors
    as they are. For looking inside vmap while debugging."""
    if not isinstance(tensor, BatchedTensor):
        return tensor
    return physical(tensor) if recurse else tensor._value


__all__ = ["BatchedTensor", "debug_unwrap"]

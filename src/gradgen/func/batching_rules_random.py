"""Batching rules of the random operators: one draw for the whole batch, as vmap's
`randomness` asks, with torch.func's behaviour in each mode:

- 'error': a draw raises torch.func's message (a call that does not draw, such as
  native_dropout with train=False, runs as usual);
- 'different': every example draws its own. The batch's values are drawn at once: a
  (B, ...) draw is numpy's B draws of one example in order, so the values are those
  of the per-example loop (one random operator in the function: with several, the
  loop interleaves their draws example by example). An unbatched argument is first
  repeated along the batch; in place on an unbatched tensor is torch.func's error;
- 'same': one draw of one example's shape, shared by the batch. A call without a
  batched argument runs as it is (its result is not batched); with a batched one,
  bernoulli and poisson raise torch.func's error, native_dropout shares one mask and
  exponential_ writes one draw into every example.

The rules also take calls without batched arguments (batching.install's `drawing`):
a draw inside vmap is the batch's even when its arguments are not (dropout's mask is
drawn on a new tensor). Each draw is marked as a rule's (Randomness.drawing), so that
vmap need not run the function per example; what a rule does not take
(NotImplemented: a batched generator argument, rrelu_with_noise with 'same' and a
batched `self`) draws as before, and vmap then runs the function once per example.
"""

from __future__ import annotations

import functools
from typing import Any

from ..dispatch import OperatorHandle
from ..tensor import Tensor
from .batching import (
    HANDLES,
    BatchedTensor,
    Rule,
    broadcast_value,
    call_plain,
    is_batched,
    randomness_at,
    unwrap,
    wrap,
)
from .batching_schema import same_kind
from .randomness import RANDOMNESS_ERROR, Randomness

SAME_BATCHED_ERROR = (
    "Vmap does not currently support same randomness with a batched tensor input. "
    "Please file an issue with functorch"
)
INPLACE_DIFFERENT_ERROR = (
    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This "
    "will appear like same randomness. If this is necessary for your usage, please "
    "file an issue with functorch."
)


def _state(level: int, args: tuple[Any, ...], tensors: int) -> Randomness | None:
    """The level's Randomness, when the rule takes the call: a vmap's level, and no
    argument after the first `tensors` batched. 'error' raises torch.func's message."""
    state: Randomness | None = randomness_at(level)
    if state is None or any(isinstance(a, BatchedTensor) for a in args[tensors:]):
        return None
    if state.mode == "error":
        raise RuntimeError(RANDOMNESS_ERROR)
    return state


def _example(x: BatchedTensor) -> Tensor:
    """One example of `x` (the first, detached): what a shared draw takes its shape
    and dtype from (batched at the outer levels still, whose randomness applies)."""
    example: Tensor = call_plain(HANDLES["select.int"], x._value.detach(), 0, 0)
    return example


def _draw(
    handle: OperatorHandle, level: int, args: tuple[Any, ...], *, share: bool
) -> Any:
    """bernoulli, bernoulli.p, poisson, exponential: draws in the first argument's
    shape. With 'same' and a batched argument, `share` draws one example's (else
    torch.func's error)."""
    state = _state(level, args, 1)
    if state is None:
        return NotImplemented
    self = args[0]
    rest = args[1:]
    if state.mode == "different":
        value = broadcast_value(self, level)
        return wrap(state.drawing(lambda: call_plain(handle, value, *rest)), level)
    if not is_batched(self, level):
        return state.drawing(lambda: call_plain(handle, *args))
    if not share:
        raise RuntimeError(SAME_BATCHED_ERROR)
    return state.drawing(lambda: call_plain(handle, _example(self), *rest))


def _exponential_(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """exponential_ into the batch: 'different' draws into every example, 'same'
    copies one example's draw into each; an unbatched `self` takes one draw
    ('same') or is torch.func's error ('different')."""
    state = _state(level, args, 1)
    if state is None:
        return NotImplemented
    self = args[0]
    rest = args[1:]
    if not is_batched(self, level):
        if state.mode == "different":
            raise RuntimeError(INPLACE_DIFFERENT_ERROR)
        state.drawing(lambda: call_plain(handle, *args))
    elif state.mode == "different":
        state.drawing(lambda: call_plain(handle, self._value, *rest))
    else:
        example = _example(self)
        draw = state.drawing(lambda: call_plain(HANDLES["exponential"], example, *rest))
        call_plain(HANDLES["copy_"], self._value, draw, False)
    return self


def _no_draw(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """A call that draws nothing (not training): on the values, batched as `args[0]`."""
    result = call_plain(handle, *[unwrap(a, level) for a in args])
    return wrap(result, level) if is_batched(args[0], level) else result


def _native_dropout(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """native_dropout: 'different' draws the batch's masks, 'same' one example's mask
    applied to every example as native_dropout_backward(input, mask, scale), which
    is input * mask * scale in native_dropout's own operations (so the same values,
    and its gradient is native_dropout's)."""
    input, p, train = args
    if train is not None and not train:
        return _no_draw(handle, level, args)
    state = _state(level, args, 1)
    if state is None:
        return NotImplemented
    if state.mode == "different":
        value = broadcast_value(input, level)
        return wrap(state.drawing(lambda: call_plain(handle, value, p, train)), level)
    if not is_batched(input, level):
        return state.drawing(lambda: call_plain(handle, *args))
    example = _example(input)
    drawn = state.drawing(lambda: call_plain(handle, example, p, train))
    mask = drawn[1]
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    output = call_plain(HANDLES["native_dropout_backward"], input._value, mask, scale)
    return same_kind(drawn, [BatchedTensor(output, level), mask])


def _rrelu_with_noise(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """rrelu_with_noise: without training leaky_relu (no draw). In training, with
    'different' and both `self` and `noise` batched, the batch's slopes drawn at once
    into the noise; with 'same' and neither batched, one call. Other training calls
    keep the loop: an unbatched noise, written per example, holds one example's
    slopes at a time (F.rrelu's noise is batched: a zeroed clone of the input)."""
    self, noise = args[0], args[1]
    if not args[4]:
        return _no_draw(handle, level, args)
    state = _state(level, args, 2)
    if state is None:
        return NotImplemented
    batched = is_batched(self, level), is_batched(noise, level)
    if state.mode == "different" and all(batched):
        values = self._value, noise._value
        rest = args[2:]
        return wrap(state.drawing(lambda: call_plain(handle, *values, *rest)), level)
    if state.mode == "same" and not any(batched):
        return state.drawing(lambda: call_plain(handle, *args))
    return NotImplemented


RANDOM_CUSTOM: dict[str, Rule] = {
    "bernoulli": functools.partial(_draw, share=False),
    "bernoulli.p": functools.partial(_draw, share=False),
    "poisson": functools.partial(_draw, share=False),
    "exponential": functools.partial(_draw, share=True),
    "exponential_": _exponential_,
    "native_dropout": _native_dropout,
    "rrelu_with_noise": _rrelu_with_noise,
}
# Their rules take calls without batched arguments too (batching.install).
DRAWING = frozenset(RANDOM_CUSTOM)

__all__ = ["DRAWING", "RANDOM_CUSTOM"]

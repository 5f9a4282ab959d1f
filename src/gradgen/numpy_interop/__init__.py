"""numpy functions on gradgen tensors: numpy's override protocols, routed to gradgen.

A Tensor takes part in both of numpy's protocols, each through a method of Tensor that
only delegates here:

- `__array_ufunc__` (NEP 13): `np.exp(t)`, `np.add(array, t)`, `array * t`: the ufunc's
  gradgen operator (`UFUNC_OPERATORS`), so the result is a Tensor in the graph.
- `__array_function__` (NEP 18): `np.sum(t, axis=0)`, `np.concatenate([t, u])`, ...:
  a translation of numpy's arguments into a call of gradgen operators (`FUNCTIONS`,
  filled by the `@_implements` translations below): numpy's `axis`/`keepdims` become
  `dim`/`keepdim`, `axis=None` is the full reduction, `ddof` is `correction`, a numpy
  `dtype=` becomes a gradgen dtype, ndarray arguments become tensors.

What gradgen cannot do, it refuses the way numpy expects:
- a ufunc or function without a gradgen operator (or a foreign array type among the
  arguments) returns NotImplemented, and numpy raises its TypeError ("no implementation
  found for 'numpy.sort' on types that implement __array_function__: [...Tensor]");
- a mapped function given an argument gradgen cannot honour (`out=`, `where=`,
  `initial=`, `order='F'`, ...) raises TypeError naming the argument, as PyTorch's
  `np.sum(t, dtype=np.float64)` raises TypeError for the argument it cannot take.

Results follow gradgen's operators (PyTorch's semantics): a reduction gives a 0-d
Tensor, not a numpy scalar, and dtypes follow gradgen's promotion rules (`np.mean` of
an integer tensor is an error, as `torch.mean`'s).

`np.asarray(t)` is `Tensor.__array__`, which gives the data (no copy) and, as PyTorch,
raises RuntimeError for a tensor that requires grad: data leaving the graph must be
detached on purpose (`t.detach()`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..factories import tensor as _new_tensor
from ..generated import ops
from ..tensor import Tensor, wrap_number
from ._registry import (
    FUNCTION_OPERATORS as FUNCTION_OPERATORS,
    FUNCTIONS as FUNCTIONS,
    UFUNC_OPERATORS as UFUNC_OPERATORS,
)

# The translations, by family: importing them fills FUNCTIONS.
from . import (
    elementwise as elementwise,
    reductions as reductions,
    shapes as shapes,
)

__all__ = ["UFUNC_OPERATORS", "FUNCTIONS", "array_ufunc", "array_function"]


def array_ufunc(
    ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """`Tensor.__array_ufunc__`: the ufunc's gradgen operator, or NotImplemented for a
    ufunc without one and for `out=`, `where=`, `.reduce`, `.accumulate`, ..."""
    operator_name = UFUNC_OPERATORS.get(ufunc.__name__)
    if method != "__call__" or kwargs or operator_name is None:
        return NotImplemented
    function = getattr(ops, operator_name, None)
    if function is None:
        return NotImplemented
    arguments = [_new_tensor(x) if isinstance(x, np.ndarray) else x for x in inputs]
    if arguments and isinstance(arguments[0], (np.generic, bool, int, float, complex)):
        # `np.float64(2) + t`: numpy hands the reflected operation to us with its
        # scalar first, where the operator wants a Tensor: a wrapped number, as
        # PyTorch makes of `2.0 + t`.
        arguments[0] = wrap_number(arguments[0])
    return function(*arguments)


def array_function(
    func: Callable[..., Any],
    types: Iterable[type],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """`Tensor.__array_function__`: numpy's `func(*args, **kwargs)` as gradgen
    operators, or NotImplemented when `func` has no translation or another array type
    that overrides numpy takes part (it may know what to do)."""
    translation = FUNCTIONS.get(func)
    if translation is None or not all(map(_understood, types)):
        return NotImplemented
    return translation(*args, **kwargs)


def _understood(kind: type) -> bool:
    """Tensors, and arrays that leave numpy functions to numpy (ndarray and the
    subclasses that do not override `__array_function__`): their data joins as a
    tensor. Another overriding type gets its own say."""
    return issubclass(kind, Tensor) or (
        issubclass(kind, np.ndarray)
        and getattr(kind, "__array_function__", None) is np.ndarray.__array_function__
    )

"""vmap: map a function over a dimension of its inputs, as torch.func.vmap.

``vmap(f, in_dims, out_dims)(*args)`` is ``stack([f(*args_i) for i], out_dims)``
where ``args_i`` takes the i-th slice of each input along its in_dim (None: the input
is passed whole to every call). Two ways run it:

- batched (the default): the inputs become BatchedTensors (batching.py) and f runs
  once; every operator called on them runs once on the whole batch by its batching
  rule (batching_rules.py), or, without one, per example and stacked (the fallback,
  which keeps every operator correct).
- per example (``_loop``): f runs once per example and the results are stacked;
  this is what the batched run must equal, and the tests compare the two.

`randomness` says what random operations do: 'error' refuses them, 'different' draws
per example, 'same' draws once for the whole batch. The random operators' batching
rules draw for the whole batch as the mode asks (batching_rules_random.py); any other
draw runs the function per example (the generator rewound before every example for
'same').
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..autograd._transform_slots import slots as _slots
from ..generated import ops
from ..tensor import Tensor
from . import batching, batching_composites
from .randomness import Randomness as _Randomness
from .batching_rules import DRAWING, RULES
from .pytree import (
    TreeSpec,
    broadcast_prefix_of_spec,
    tree_flatten,
    tree_unflatten,
)


def _name(func: Callable[..., Any]) -> str:
    return getattr(func, "__name__", repr(func))


def _check_in_dims(
    func: Callable[..., Any], in_dims: Any, args: tuple[Any, ...]
) -> tuple[int, list[int | None], list[Any], Any]:
    """The batch size, each input leaf's in_dim (non-negative) and the input leaves."""
    name = _name(func)
    where = _Where(name, in_dims)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"{where}: expected `in_dims` to be int or a (potentially nested) tuple "
            f"matching the structure of inputs, got: {type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or "
            "you are trying to vmap over a function with no inputs. The latter is "
            "unsupported."
        )
    flat_args, spec = tree_flatten(args)
    dims = broadcast_prefix_of_spec(in_dims, spec)
    if dims is None:
        raise ValueError(
            f"{where}: in_dims is not compatible with the structure of `inputs`. "
            f"in_dims has structure {tree_flatten(in_dims)[1]} but inputs has structure "
            f"{spec}."
        )
    for index, (arg, dim) in enumerate(zip(flat_args, dims)):
        if dim is None or (
            # the common case, as `_check_in_dim` finds it, without the call
            dim.__class__ is int
            and arg.__class__ is Tensor
            and 0 <= dim < arg._data.ndim
        ):
            continue
        dims[index] = _check_in_dim(where, arg, dim)
    # (every mapped argument is a Tensor, checked above: its array has its shape)
    sizes = [arg._data.shape[d] for arg, d in zip(flat_args, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if sizes.count(sizes[0]) != len(sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, "
            f"got sizes {sizes} for the mapped dimension"
        )
    return sizes[0], dims, flat_args, spec


class _Where:
    """The start of vmap's messages about in_dims, spelled out only for an error."""

    __slots__ = ("name", "in_dims")

    def __init__(self, name: str, in_dims: Any) -> None:
        self.name, self.in_dims = name, in_dims

    def __str__(self) -> str:
        return f"vmap({self.name}, in_dims={self.in_dims}, ...)(<inputs>)"


def _check_in_dim(where: _Where, arg: Any, dim: Any) -> int | None:
    if dim is None:
        return None
    if dim.__class__ is int and arg.__class__ is Tensor and 0 <= dim < arg.dim():
        return dim  # the common case, as the checks below find it
    if not isinstance(dim, int):
        raise ValueError(
            f"{where}: Got in_dim={dim} for an input but in_dim must be either an "
            "integer dimension or None."
        )
    if not isinstance(arg, Tensor):
        raise ValueError(
            f"{where}: Got in_dim={dim} for an input but the input is of type "
            f"{type(arg)}. We cannot vmap over non-Tensor arguments, please use None as "
            "the respective in_dim"
        )
    rank = arg.dim()
    if not -rank <= dim < rank:
        raise ValueError(
            f"{where}: Got in_dim={dim} for some input, but that input is a Tensor of "
            f"dimensionality {rank} so expected in_dim to satisfy -{rank} <= in_dim < "
            f"{rank}."
        )
    return dim % rank


def _check_out_dims(
    func: Callable[..., Any], out_dims: Any, out_spec: TreeSpec
) -> list[Any]:
    name = _name(func)
    if not isinstance(out_dims, (int, tuple, list)) and out_dims is not None:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or "
            "a python collection of ints representing where in the outputs the vmapped "
            "dimension should appear."
        )
    dims = broadcast_prefix_of_spec(out_dims, out_spec)
    if dims is None:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            "compatible with the structure of `outputs`. out_dims has structure "
            f"{tree_flatten(out_dims)[1]} but outputs has structure {out_spec}."
        )
    return dims


def _slice(args: list[Any], dims: list[int | None], index: int) -> list[Any]:
    return [a if d is None else ops.select(a, d, index) for a, d in zip(args, dims)]


def _loop(
    func: Callable[..., Any],
    batch_size: int,
    dims: list[int | None],
    flat_args: list[Any],
    spec: Any,
    kwargs: dict[str, Any],
    randomness: _Randomness,
) -> tuple[list[list[Any]], Any]:
    """Each example's flat outputs, and the output structure."""
    results: list[list[Any]] = []
    out_spec: Any = None
    for index in range(batch_size):
        randomness.before_call()
        output = func(*tree_unflatten(_slice(flat_args, dims, index), spec), **kwargs)
        randomness.after_call()
        flat, out_spec = tree_flatten(output)
        results.append(flat)
    return results, out_spec


def _batch_first(arg: Tensor, dim: int) -> Tensor:
    """`arg` with dimension `dim` first: itself when it is already (no permute to
    record), unless it requires grad (in-place changes inside then meet a view, as
    they would with the permute)."""
    if dim == 0 and not arg.requires_grad:
        return arg
    return ops.movedim(arg, dim, 0)


def _batched(
    func: Callable[..., Any],
    batch_size: int,
    dims: list[int | None],
    flat_args: list[Any],
    spec: Any,
    kwargs: dict[str, Any],
    randomness: _Randomness,
) -> tuple[list[Any], list[bool], Any]:
    """Run `func` once on BatchedTensors: its flat outputs as values with the batch
    first (whether each was batched), and the output structure."""
    with batching.vmap_level(batch_size, randomness) as level:
        inputs = [
            a if d is None else batching.BatchedTensor(_batch_first(a, d), level)
            for a, d in zip(flat_args, dims)
        ]
        output = func(*tree_unflatten(inputs, spec), **kwargs)
        flat, out_spec = tree_flatten(output)
        batched: list[bool] = []
        values: list[Any] = []
        for o in flat:
            if o.__class__ is batching.BatchedTensor and o._level == level:
                batched.append(True)  # the common case, by the exact class
                values.append(o._value)
                continue
            is_batched = batching.is_batched(o, level)
            batched.append(is_batched)
            if isinstance(o, Tensor) and not is_batched:
                o = batching.BatchedTensor(batching.broadcast_value(o, level), level)
            values.append(batching.unwrap(o, level))
    return values, batched, out_spec


def _place_outputs(
    func: Callable[..., Any],
    values: list[Any],
    batched: list[bool],
    out_spec: TreeSpec,
    out_dims: Any,
) -> list[Any]:
    """Each output's batch dimension moved to its out_dim."""
    name = _name(func)
    placed = []
    for value, was_batched, dim in zip(
        values, batched, _check_out_dims(func, out_dims, out_spec)
    ):
        if dim is None:
            if was_batched:
                raise ValueError(
                    f"vmap({name}, ...): `{name}` can not return a BatchedTensor when "
                    "out_dim is None"
                )
            placed.append(
                ops.select(value, 0, 0) if isinstance(value, Tensor) else value
            )
            continue
        if not isinstance(value, Tensor):
            raise ValueError(
                f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                f"{type(value)}. Did you mean to set out_dims= to None for output?"
            )
        placed.append(value if dim == 0 else ops.movedim(value, 0, dim))
    return placed


def _run_batched(
    func: Callable[..., Any],
    batch_size: int,
    dims: list[int | None],
    flat_args: list[Any],
    spec: Any,
    kwargs: dict[str, Any],
    chunk_size: int | None,
    randomness: _Randomness,
) -> tuple[list[Any], list[bool], Any]:
    """`_batched` over chunks of `chunk_size` examples, concatenated ('same': every
    chunk draws from the start, as torch.func's)."""
    if chunk_size is None or chunk_size >= batch_size:
        return _batched(func, batch_size, dims, flat_args, spec, kwargs, randomness)
    pieces = []
    for start in range(0, batch_size, chunk_size):
        if randomness.mode == "same" and not randomness.drew_elsewhere():
            randomness.rewind()
        length = min(chunk_size, batch_size - start)
        chunk = [
            a if d is None else ops.narrow(a, d, start, length)
            for a, d in zip(flat_args, dims)
        ]
        pieces.append(_batched(func, length, dims, chunk, spec, kwargs, randomness))
    # (an unbatched output's value is repeated along its chunk: joined, the batch's)
    values = [
        ops.cat([p[0][i] for p in pieces], 0) if isinstance(v, Tensor) else v
        for i, v in enumerate(pieces[0][0])
    ]
    return values, pieces[0][1], pieces[0][2]


def _stack_outputs(
    func: Callable[..., Any], results: list[list[Any]], out_dims: list[Any]
) -> list[Any]:
    name = _name(func)
    stacked = []
    for position, dim in enumerate(out_dims):
        column = [flat[position] for flat in results]
        if dim is None:
            stacked.append(column[0])
            continue
        if not isinstance(column[0], Tensor):
            raise ValueError(
                f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                f"{type(column[0])}. Did you mean to set out_dims= to None for output?"
            )
        stacked.append(ops.stack(column, dim))
    return stacked


def vmap(
    func: Callable[..., Any],
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """`func` mapped over dimension `in_dims` of its inputs, the results stacked at
    `out_dims` (both ints, None or pytrees matching the inputs and outputs);
    `chunk_size` examples run at a time."""
    _Randomness(randomness)  # checks the mode
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(
            f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})"
        )

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        batch_size, dims, flat_args, spec = _check_in_dims(func, in_dims, args)
        state = _Randomness(randomness)
        values, batched, out_spec = _run_batched(
            func, batch_size, dims, flat_args, spec, kwargs, chunk_size, state
        )
        if state.drew_elsewhere():
            # A random draw inside the batched run that no batching rule made: 'error'
            # refuses it, and the other modes run per example, as their draws must be
            # per example or shared.
            state.after_call()
            state.rewind()
            return _per_example(
                func, out_dims, batch_size, dims, flat_args, spec, kwargs, state
            )
        if out_dims.__class__ is int and out_dims == 0 and all(batched):
            return tree_unflatten(values, out_spec)  # every output's batch at 0
        placed = _place_outputs(func, values, batched, out_spec, out_dims)
        return tree_unflatten(placed, out_spec)

    return wrapper


def _per_example(
    func: Callable[..., Any],
    out_dims: Any,
    batch_size: int,
    dims: list[int | None],
    flat_args: list[Any],
    spec: Any,
    kwargs: dict[str, Any],
    state: _Randomness,
) -> Any:
    """vmap by running `func` once per example and stacking the results."""
    results, out_spec = _loop(func, batch_size, dims, flat_args, spec, kwargs, state)
    flat_out_dims = _check_out_dims(func, out_dims, out_spec)
    return tree_unflatten(_stack_outputs(func, results, flat_out_dims), out_spec)


batching.install(RULES, DRAWING)
batching_composites.install()
_slots.vmap = vmap  # autograd.grad(is_grads_batched=True) runs backward under it

__all__ = ["vmap"]

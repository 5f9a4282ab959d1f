"""jacrev, jacfwd and hessian, as torch.func: Jacobians built on eager_transforms'
reverse mode (one backward pass over a batch of basis cotangents, or one per row
inside another vmap or dual level) and forward mode (one `jvp` per input element)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import autograd
from ..dispatch import forward_ad_levels
from ..generated import ops
from ..tensor import Tensor
from .batching import open_levels
from .eager_transforms import (
    Argnums,
    _call_differentiable,
    _check_argnums,
    _detach,
    _keeps_graph,
    _level,
    _replace_argnums,
    _slice_argnums,
    _split_aux,
    _tensor_outputs,
    _vjp,
    _zeros,
    jvp,
)
from .pytree import tree_flatten, tree_unflatten
from .randomness import Randomness as _Randomness


def _jacobian_tree(blocks: list[list[Tensor]], out_spec: Any, in_spec: Any) -> Any:
    """blocks[o][i] (output leaf o, input leaf i) as the output pytree of input pytrees."""
    return tree_unflatten([tree_unflatten(row, in_spec) for row in blocks], out_spec)


def jacrev(
    func: Callable[..., Any],
    argnums: Argnums = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable[..., Any]:
    """A function returning the Jacobian of `func` with respect to `argnums`, one
    reverse-mode pass per output element (`chunk_size` of them at a time)."""
    if chunk_size is not None and not chunk_size > 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        api = "jacrev(f, ...)(*args)"
        positions = _check_argnums(argnums, len(args))
        keep = _keeps_graph(args)
        with _level():
            output, aux, flat_in, in_spec = _call_differentiable(
                func, args, kwargs, positions, has_aux, api
            )
            flat_out, out_spec = _tensor_outputs(output, api)
            blocks = [_reverse_rows(o, flat_in, keep, chunk_size) for o in flat_out]
        result = _jacobian_tree(blocks, out_spec, in_spec)
        result = (result, aux) if has_aux else result
        return result if keep else _detach(result)

    return wrapper


def _reverse_rows(
    output: Tensor, inputs: list[Tensor], keep: bool, chunk_size: int | None
) -> list[Tensor]:
    """The Jacobian blocks d output / d input_i, shaped output.shape + input_i.shape:
    one backward pass over the batch of basis cotangents (vmap), or one per row inside
    another vmap or dual level."""
    count = output._data.size
    basis = np.eye(count, dtype=output._data.dtype).reshape(
        (count,) + output._data.shape
    )
    shapes = [tuple(output._data.shape) + tuple(x._data.shape) for x in inputs]
    if count == 0:
        return [Tensor(np.zeros(s, x._data.dtype)) for s, x in zip(shapes, inputs)]
    if not open_levels() and not forward_ad_levels.count:
        step = count if chunk_size is None else chunk_size
        chunks = [
            _batched_rows(output, inputs, keep, basis[start : start + step])
            for start in range(0, count, step)
        ]
        return [
            (
                chunks[0][i] if len(chunks) == 1 else ops.cat([c[i] for c in chunks], 0)
            ).reshape(s)
            for i, s in enumerate(shapes)
        ]
    rows = [_vjp([output], inputs, [Tensor(basis[k])], keep) for k in range(count)]
    return [
        ops.stack([r[index] for r in rows], 0).reshape(s)
        for index, s in enumerate(shapes)
    ]


def _batched_rows(
    output: Tensor, inputs: list[Tensor], keep: bool, cotangents: np.ndarray
) -> list[Tensor]:
    """The vjps of a batch of cotangents, the batch first: one backward pass with
    ``autograd.grad(is_grads_batched=True)`` (zeros for an input not used)."""
    if not output.requires_grad:
        found: Sequence[Tensor | None] = [None] * len(inputs)
    else:
        found = autograd.grad(
            [output],
            inputs,
            [Tensor(cotangents)],
            retain_graph=True,
            create_graph=keep,
            allow_unused=True,
            is_grads_batched=True,
        )
    return [
        (
            Tensor(np.zeros((len(cotangents),) + tuple(x._data.shape), x._data.dtype))
            if g is None
            else g
        )
        for g, x in zip(found, inputs)
    ]


def jacfwd(
    func: Callable[..., Any],
    argnums: Argnums = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable[..., Any]:
    """A function returning the Jacobian of `func` with respect to `argnums`, one
    forward-mode pass (`jvp`) per input element."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        randomness_state = _Randomness(randomness)
        positions = _check_argnums(argnums, len(args))
        flat_in, in_spec = tree_flatten(_slice_argnums(args, positions))

        def partial(*leaves: Tensor) -> Any:
            diff = tree_unflatten(list(leaves), in_spec)
            return func(*_replace_argnums(args, positions, diff), **kwargs)

        columns, output, aux = _forward_columns(
            partial, flat_in, has_aux, randomness_state
        )
        flat_out, out_spec = tree_flatten(output)
        blocks = []
        for o, out in enumerate(flat_out):
            row = []
            for i, x in enumerate(flat_in):
                shape = tuple(out._data.shape) + tuple(x._data.shape)
                if not columns[i]:
                    row.append(Tensor(np.zeros(shape, out._data.dtype)))
                    continue
                stacked = ops.stack([col[o] for col in columns[i]], -1)
                row.append(stacked.reshape(shape))
            blocks.append(row)
        result = _jacobian_tree(blocks, out_spec, in_spec)
        return (result, aux) if has_aux else result

    return wrapper


def _forward_columns(
    func: Callable[..., Any],
    inputs: list[Tensor],
    has_aux: bool,
    randomness: _Randomness,
) -> tuple[list[list[list[Tensor]]], Any, Any]:
    """columns[i][k]: the output tangents (flat) along the k-th element of input i."""
    zeros = [_zeros(x) for x in inputs]
    output: Any = None
    aux: Any = None
    columns: list[list[list[Tensor]]] = []
    for i, x in enumerate(inputs):
        count = x._data.size
        basis = np.eye(count, dtype=x._data.dtype).reshape((count,) + x._data.shape)
        found = []
        for k in range(count):
            tangents = zeros[:i] + [Tensor(basis[k])] + zeros[i + 1 :]
            randomness.before_call()  # every column sees the same draws
            answer = jvp(func, tuple(inputs), tuple(tangents), has_aux=has_aux)
            randomness.after_call()
            output, aux = answer[0], answer[2] if has_aux else None
            found.append(tree_flatten(answer[1])[0])
        columns.append(found)
    if output is None:  # every input is empty: run once for the output
        output, aux = _split_aux(func(*inputs), has_aux, "jacfwd(f, ...)(*args)")
    return columns, output, aux


def hessian(func: Callable[..., Any], argnums: Argnums = 0) -> Callable[..., Any]:
    """The Hessian of `func`: the forward-mode Jacobian of its reverse-mode one."""
    return jacfwd(jacrev(func, argnums), argnums)


__all__ = ["hessian", "jacfwd", "jacrev"]

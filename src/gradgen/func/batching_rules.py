"""Batching rules: how an operator runs once on a whole batch inside vmap.

Each operator's kind of rule is declared in native_functions.yaml (``batching:``, see
docs/yaml-reference.md; generated into gradgen.generated.batching) and `RULES`, keyed
by operator name, is built from it. The kinds:

- `pointwise`: elementwise operators (the elementwise family, the pointwise
  activations and their backward formulas). Every batched argument's value gets size-1
  dimensions after its batch dimension up to the largest logical rank, so numpy's
  broadcasting lines the examples up; unbatched arguments broadcast as they are.
- `dims`: operators along `dim` arguments (reductions, softmax, scans, sort, views
  such as select, narrow, transpose, ...). Which arguments are dims comes from the
  operator's schema (`int dim`, `int[1]? dim`, `dim0`, `dims`, ...): each shifts by one
  past the batch dimension, and a reduction's "all dims" (None or []) becomes the
  logical dims. Other Tensor arguments must have the same logical rank; unbatched ones
  are expanded along the batch.
- `trailing`: operators that only look at their last dims (tril, constant_pad_nd,
  layer_norm, embedding's indices, ...) run on the values as they are, when only the
  named arguments are batched.
- `leading(NAME:RANK, ...)`: pooling, padding, upsampling, im2col, grid sampling:
  the named tensors' examples have RANK dims after an optional batch dim N, and the
  vmap batch folds into N (batching_rules_nn.py).
- `loss`: the unreduced loss (pointwise), reduced per example.
- `contraction`: matrix products as numpy's batched matmul (`CONTRACTIONS`, by base
  name; addmv, addr, baddbmm, addbmm in batching_rules_index.py).
- `custom`: one-off rules (`CUSTOM`: shape lists of view, reshape, expand, permute,
  ...; whole-tensor reductions as the `dim` overload over the logical dims; batched
  extra arguments of fill, masked_fill, embedding, layer norm). The families' own
  are in batching_rules_nn.py (convolution by groups, batch and group norm by
  channels), batching_rules_index.py (index, index_put, take, put, whole-tensor
  reductions), batching_rules_more.py (row and class losses, fused RNN cells, renorm, ...) and
  batching_rules_linalg.py (the solves whose arguments broadcast their batch dims)
  and batching_rules_random.py (the random operators, as vmap's `randomness` asks),
  batching_rules_scatter.py (masked_scatter), batching_rules_strided.py
  (as_strided, as torch.func reads its offsets).

A rule returns NotImplemented when a call falls outside what it handles (an unbatched
`self` of an in-place operator, mixed ranks, ...): the fallback (batching.py) then
runs that call per example. Operators without a rule always fall back (`LOOPED` says
why for each); `rule_count()` says how many have one.
"""

from __future__ import annotations

import functools
from typing import Any

from .. import dispatch
from ..dispatch import AFTER_AUTOGRAD_KEYSET, OperatorHandle, redispatch
from ..generated import ops
from ..generated.batching import DECLARED
from ..tensor import Tensor
from .batching import (
    HANDLES,
    BatchedTensor,
    Rule,
    batch_size,
    broadcast_value,
    call_plain,
    inplace_error,
    is_batched,
    mutates_self,
    unwrap,
    wrap,
)
from .batching_linear import linear_node
from .batching_rules_index import ADD_PRODUCTS, INDEX_CUSTOM, offsets
from .batching_rules_linalg import LINALG_CUSTOM
from .batching_rules_more import MORE_CUSTOM
from .batching_rules_nn import NN_CUSTOM, leading
from .batching_rules_random import DRAWING, RANDOM_CUSTOM
from .batching_rules_scatter import SCATTER_CUSTOM
from .batching_rules_strided import STRIDED_CUSTOM
from .batching_schema import DIM_NAMES, arguments, pad, same_kind, tensors_of, wrap_dim

# -- pointwise ---------------------------------------------------------------------------


def _promotes_alike(tensors: list[Tensor], level: int, rank: int) -> bool:
    """Whether the values promote as the examples do: a batch of 0-d examples is a
    dimensioned tensor, which outranks a 0-d one of another dtype; it cannot change
    the result when a dimensioned example's category is higher."""
    first = tensors[0]._data.dtype
    if rank == 0 or all(t._data.dtype == first for t in tensors):
        return True
    scalars = [t for t in tensors if is_batched(t, level) and t.dim() == 0]
    if not scalars:
        return True
    top = max((t.dtype.category for t in tensors if t.dim() > 0), default=-1)
    return all(t.dtype.category < top for t in scalars)


def pointwise(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    if len(args) == 1 and is_batched(args[0], level) and not mutates_self(handle):
        # A unary operator (relu, neg, exp, ...): its one argument is the batch.
        result = call_plain(handle, args[0]._value)
        if result.__class__ is Tensor:  # `wrap`'s common case
            return BatchedTensor(result, level)
        return wrap(result, level)
    tensors = tensors_of(args)
    rank = max(t.dim() for t in tensors)
    if not _promotes_alike(tensors, level, rank):
        return NotImplemented
    inplace = mutates_self(handle)
    if inplace and not is_batched(args[0], level):
        inplace_error(args[0], level)
    new_args = [_pointwise_value(a, level, rank) for a in args]
    result = call_plain(handle, *new_args)
    return args[0] if inplace else wrap(result, level)


def _pointwise_value(arg: Any, level: int, rank: int) -> Any:
    """An argument as the batched call takes it: a batched value padded to `rank`;
    with 0-d examples, an unbatched 0-d tensor repeated too (0-d against 0-d, as in
    one example); anything else as it is."""
    if is_batched(arg, level):
        return pad(arg._value, arg.dim(), rank)
    if rank == 0 and isinstance(arg, Tensor) and not arg._is_wrapped_number:
        return broadcast_value(arg, level)
    return arg


# -- dims --------------------------------------------------------------------------------

REDUCTION_TYPES = ("int[1]", "int[1]?", "int[]?")


def _shift(kind: str, value: Any, rank: int, reduce_all: bool) -> Any:
    if value is None or (isinstance(value, (list, tuple)) and not value):
        if reduce_all and kind in REDUCTION_TYPES:
            return list(range(1, rank + 1))
        return value
    if isinstance(value, (list, tuple)):
        return [wrap_dim(d, rank) + 1 for d in value]
    return wrap_dim(value, rank) + 1


def dims(
    handle: OperatorHandle,
    level: int,
    args: tuple[Any, ...],
    *,
    extra_rank: int = 0,
    reduce_all: bool = True,
) -> Any:
    """Shift the schema's dim arguments past the batch dimension."""
    schema = arguments(handle.schema)
    tensors = tensors_of(args)
    rank = tensors[0].dim()
    if rank + extra_rank == 0 or any(t.dim() != rank for t in tensors):
        return NotImplemented  # 0-d examples: "all dims" would take the batch too
    if (None in args[1:] or [] in args[1:]) and any(
        k == "int?" and n in DIM_NAMES and a is None for (k, n), a in zip(schema, args)
    ):
        return NotImplemented  # `int? dim=None`: over the flattened tensor
    if mutates_self(handle) and not is_batched(args[0], level):
        inplace_error(args[0], level)
    new_args = []
    for (kind, name), arg in zip(schema, args):
        if isinstance(arg, Tensor):
            arg = broadcast_value(arg, level)
        elif name in DIM_NAMES and kind.startswith(("int", "SymInt")):
            arg = _shift(kind, arg, rank + extra_rank, reduce_all)
        new_args.append(arg)
    new_args += list(args[len(schema) :])
    result = call_plain(handle, *new_args)
    return args[0] if mutates_self(handle) else wrap(result, level)


def _tensor_list_dims(
    handle: OperatorHandle, level: int, args: tuple[Any, ...], extra_rank: int
) -> Any:
    """cat / stack: every tensor of the list batched, the dim shifted."""
    tensors = list(args[0])
    if not tensors:
        return NotImplemented
    rank = tensors[0].dim()
    values = [broadcast_value(t, level) for t in tensors]
    dim = args[1] if len(args) > 1 else 0
    return wrap(call_plain(handle, values, wrap_dim(dim, rank + extra_rank) + 1), level)


# -- shapes ------------------------------------------------------------------------------


def _with_batch(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """view / reshape / _unsafe_view: the size gets the batch in front."""
    value = unwrap(args[0], level)
    if not is_batched(args[0], level):
        return NotImplemented
    size = [batch_size(level)] + list(args[1])
    return wrap(call_plain(handle, value, size, *args[2:]), level)


def _expand(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self, size = args[0], list(args[1])
    if not is_batched(self, level) or len(size) < self.dim():
        return NotImplemented
    value = pad(self._value, self.dim(), len(size))
    return wrap(call_plain(handle, value, [batch_size(level)] + size, *args[2:]), level)


def _sum_to_size(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self, size = args[0], list(args[1])
    if not is_batched(self, level):
        return NotImplemented
    padded = [1] * (self.dim() - len(size)) + size
    summed = call_plain(handle, self._value, [batch_size(level)] + padded)
    return wrap(ops.reshape(summed, [batch_size(level)] + size), level)


def _permute(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self = args[0]
    rank = self.dim()
    order = [0] + [wrap_dim(d, rank) + 1 for d in args[1]]
    return wrap(call_plain(handle, self._value, order), level)


def _t(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self = args[0]
    if self.dim() < 2:
        return wrap(
            call_plain(HANDLES["view"], self._value, list(self._value.shape)), level
        )
    return wrap(call_plain(HANDLES["transpose.int"], self._value, 1, 2), level)


def _unsqueeze(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """The `dims` rule's case of a batched tensor and an int dim, directly."""
    self = args[0]
    if (
        self.__class__ is not BatchedTensor
        or self._level != level
        or len(args) != 2
        or args[1].__class__ is not int
    ):
        return dims(handle, level, args, extra_rank=1)
    dim = wrap_dim(args[1], self.dim() + 1) + 1
    value = self._value
    if (
        value.__class__ is Tensor
        and value._grad_fn is None
        and not value._requires_grad
        and value._base is None
        and value._fw_grad is None
        and dispatch._observer is None
    ):
        # Nothing for autograd to record (its kernel would find no edge and no
        # tangent): straight to the view's kernels below it.
        plain = redispatch(handle, AFTER_AUTOGRAD_KEYSET, value, dim)
        return BatchedTensor(plain, level)
    return BatchedTensor(call_plain(handle, value, dim), level)


def _squeeze(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self = args[0]
    shape = [batch_size(level)] + [s for s in self.shape if s != 1]
    return wrap(call_plain(HANDLES["view"], self._value, shape), level)


def _repeat(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self, repeats = args[0], list(args[1])
    if not is_batched(self, level) or len(repeats) < self.dim():
        return NotImplemented
    value = pad(self._value, self.dim(), len(repeats))
    return wrap(call_plain(handle, value, [1] + repeats), level)


def _sizes_and_dims(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """select_backward / slice_backward / diagonal_backward: (grad, input_sizes, dims)."""
    grad, sizes = args[0], list(args[1])
    if not is_batched(grad, level):
        return NotImplemented
    rank = len(sizes)
    schema = arguments(handle.schema)
    rest = [
        wrap_dim(a, rank) + 1 if name in DIM_NAMES else a
        for (_, name), a in zip(schema[2:], args[2:])
    ]
    value = grad._value
    return wrap(call_plain(handle, value, [batch_size(level)] + sizes, *rest), level)


def _index_select(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self, dim, index = args
    if is_batched(index, level) or not is_batched(self, level):
        return NotImplemented
    return wrap(
        call_plain(handle, self._value, wrap_dim(dim, self.dim()) + 1, index), level
    )


def trailing(*batched_names: str) -> Rule:
    """Operators on the last dims: run on the values when only these are batched."""

    def rule(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
        schema = arguments(handle.schema)
        for (_, name), arg in zip(schema, args):
            if is_batched(arg, level) and name not in batched_names:
                return NotImplemented
        if mutates_self(handle) and not is_batched(args[0], level):
            inplace_error(args[0], level)
        result = call_plain(handle, *[unwrap(a, level) for a in args])
        if mutates_self(handle):
            return args[0]
        if isinstance(result, tuple):
            return _wrap_outputs(result, level)
        return wrap(result, level)

    return rule


def _wrap_outputs(results: Any, level: int) -> Any:
    """Several outputs, batched at `level`, but for the empty placeholders of outputs
    not computed (the vectors of _linalg_svd without compute_uv, _linalg_eigh without
    compute_v: shape (0,)), which have no batch: they stay as they are."""
    size = batch_size(level)
    return same_kind(
        results,
        [
            (
                r
                if isinstance(r, Tensor) and r.shape[:1] == (0,) != (size,)
                else wrap(r, level)
            )
            for r in results
        ],
    )


# -- whole-tensor reductions -------------------------------------------------------------


def reduce_all(target: str, *extra: Any, before: tuple[Any, ...] = ()) -> Rule:
    """An operator over the whole tensor as `target` over the logical dims."""

    def rule(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
        self = args[0]
        all_dims = list(range(1, self.dim() + 1))
        if not all_dims:
            return wrap(call_plain(HANDLES["clone"], self._value, None), level)
        call_args = (self._value, *before, *args[1 : 1 + len(before)], all_dims, *extra)
        return wrap(HANDLES[target].call(*call_args), level)

    return rule


def _sum(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self = args[0]
    dtype = args[1] if len(args) > 1 else None
    all_dims = list(range(1, self.dim() + 1))
    if not all_dims:
        return wrap(call_plain(HANDLES["clone"], self._value, None), level)
    name = "sum.dim_IntList" if handle.name == "sum" else "mean.dim"
    return wrap(HANDLES[name].call(self._value, all_dims, False, dtype), level)


def _prod(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    flat = ops.reshape(args[0]._value, [batch_size(level), -1])
    dtype = args[1] if len(args) > 1 else None
    return wrap(call_plain(HANDLES["prod.dim_int"], flat, 1, False, dtype), level)


# -- matrix products ---------------------------------------------------------------------


def _values(level: int, *tensors: Tensor) -> list[Tensor]:
    return [unwrap(t, level) for t in tensors]


def _matmul_rule(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """mm / bmm: numpy's batched matmul broadcasts the batch of either side."""
    a, b = _values(level, args[0], args[1])
    return wrap(_matmul_values(a, b), level)


def _matmul_values(a: Tensor, b: Tensor) -> Tensor:
    """The product of the values of two batches of matrices (or of one, and a matrix
    for every example)."""
    if a.shape[-1] == 1:
        # Outer products (per-example weight gradients): numpy's matmul has no fast
        # path for a contraction of length 1, its broadcasting multiply does.
        return ops.mul(a, b)
    if (
        a.dim() == 3
        and b.dim() == 3
        and a.shape[0] == b.shape[0]
        and a.shape[2] == b.shape[1]
        and a.dtype == b.dtype
    ):
        # mm with both sides batched: bmm itself, without matmul's expand and view
        # steps (and their nodes); bmm reads a weight repeated over the batch once.
        product: Tensor = call_plain(HANDLES["bmm"], a, b)
        return product
    return ops.matmul(a, b)


def _mv(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    a, v = _values(level, args[0], args[1])
    column = call_plain(HANDLES["unsqueeze"], v, -1)
    return wrap(call_plain(HANDLES["squeeze.dim"], ops.matmul(a, column), -1), level)


def _dot(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    a, b = args[0], args[1]
    if handle.name == "vdot":
        a = ops.conj(a)
    product = call_plain(HANDLES["mul.Tensor"], a, b)
    return call_plain(HANDLES["sum.dim_IntList"], product, [-1], False, None)


_ONES = ((), (1,), (1, 1))  # addmm's beta and alpha when they are the default


def _addmm(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    bias, a, b = args[0], args[1], args[2]
    if bias.__class__ is BatchedTensor and bias._level == level and args[3:] in _ONES:
        # nn.Linear inside vmap(grad) (per-example weights): one node for the layer.
        result = linear_node(bias._value, unwrap(a, level), unwrap(b, level))
        if result is not None:
            return BatchedTensor(result, level)
    beta = args[3] if len(args) > 3 else 1
    alpha = args[4] if len(args) > 4 else 1
    if (
        beta == 1
        and alpha == 1
        and (is_batched(a, level) or is_batched(b, level))
        and a.dim() == 2
        and b.dim() == 2
        and bias.dim() <= 2
        and bias.dtype == a.dtype == b.dtype
    ):
        # nn.Linear's call: mm's rule and add's on the values, without entering them
        # again (the same calls, one batch each).
        product = _matmul_values(*_values(level, a, b))
        if is_batched(bias, level):
            bias = pad(bias._value, bias.dim(), 2)
        return wrap(call_plain(HANDLES["add.Tensor"], product, bias, 1), level)
    product = call_plain(HANDLES["mm"], a, b)
    if alpha != 1:
        product = call_plain(HANDLES["mul.Scalar"], product, alpha)
    if beta == 0:
        return product
    return call_plain(HANDLES["add.Tensor"], product, bias, beta)


# -- losses ------------------------------------------------------------------------------


def _loss(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """A loss as its unreduced (pointwise) form, then reduced per example."""
    schema = arguments(handle.schema)
    names = [name for _, name in schema]
    position = names.index("reduction")
    full = list(args) + [None] * (len(schema) - len(args))
    reduction = (
        1 if full[position] is None and len(args) <= position else full[position]
    )
    full[position] = 0
    while full and full[-1] is None and len(full) > len(args):
        full.pop()
    if handle.name.endswith("_backward") and reduction != 0:
        # A reduced loss's grad is one number per example: spread it over the
        # example's elements first, as the unreduced backward takes it.
        grad, self = full[0], full[1]
        shape = [batch_size(level)] + list(self.shape)
        value = pad(broadcast_value(grad, level), grad.dim(), self.dim())
        full[0] = BatchedTensor(
            call_plain(HANDLES["expand"], value, shape, False), level
        )
        full[1] = BatchedTensor(broadcast_value(self, level), level)
    unreduced = pointwise(handle, level, tuple(full[: max(len(args), position + 1)]))
    if unreduced is NotImplemented or reduction == 0:
        return unreduced
    if handle.name.endswith("_backward"):
        count = max(args[1].numel(), 1)
        return (
            unreduced
            if reduction == 2
            else call_plain(HANDLES["div.Scalar"], unreduced, count)
        )
    target = "sum.dim_IntList" if reduction == 2 else "mean.dim"
    all_dims = list(range(unreduced.dim()))
    if not all_dims:
        return unreduced
    return HANDLES[target].call(unreduced, all_dims, False, None)


# -- batched extra arguments -------------------------------------------------------------


def _padded(value: Any, level: int, rank: int) -> Tensor:
    """A tensor argument as a batch with size-1 dims up to logical `rank`."""
    return pad(broadcast_value(value, level), value.dim(), rank)


def _fill(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """fill.Tensor / fill_.Tensor with a batched value: every example its own."""
    self, value = args[0], args[1]
    if not is_batched(value, level):
        return pointwise(handle, level, args)
    shape = [batch_size(level)] + list(self.shape)
    filled = call_plain(
        HANDLES["expand"], _padded(value, level, self.dim()), shape, False
    )
    filled = filled.to(self.dtype)
    if mutates_self(handle):
        if not is_batched(self, level):
            inplace_error(self, level)
        call_plain(HANDLES["copy_"], self._value, filled, False)
        return self
    return wrap(filled, level)


def _masked_fill(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """masked_fill(.Tensor) with a batched value: `where(mask, value, self)`."""
    self, mask, value = args[0], args[1], args[2]
    if not isinstance(value, Tensor) or not is_batched(value, level):
        return pointwise(handle, level, args)
    rank = max(self.dim(), mask.dim())
    filled = call_plain(
        HANDLES["where.self"],
        _padded(mask, level, rank),
        _padded(value, level, rank).to(self.dtype),
        _padded(self, level, rank),
    )
    if mutates_self(handle):
        if not is_batched(self, level):
            inplace_error(self, level)
        call_plain(HANDLES["copy_"], self._value, filled, False)
        return self
    return wrap(filled, level)


def _arg_reduction(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """argmax / argmin: over the flattened example when `dim` is None."""
    self = args[0]
    dim = args[1] if len(args) > 1 else None
    if dim is not None:
        return dims(handle, level, args)
    keepdim = bool(args[2]) if len(args) > 2 else False
    size = batch_size(level)
    flat = call_plain(
        HANDLES["view"],
        call_plain(HANDLES["clone"], broadcast_value(self, level), None),
        [size, -1],
    )
    found = call_plain(handle, flat, 1, False)
    if keepdim:
        found = call_plain(HANDLES["view"], found, [size] + [1] * self.dim())
    return wrap(found, level)


def _roll(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """roll: `dims` shift past the batch; no dims rolls each flattened example."""
    self, shifts = args[0], args[1]
    roll_dims = list(args[2]) if len(args) > 2 else []
    if roll_dims:
        return dims(handle, level, args, reduce_all=False)
    size = batch_size(level)
    value = broadcast_value(self, level)
    flat = call_plain(
        HANDLES["view"], call_plain(HANDLES["clone"], value, None), [size, -1]
    )
    rolled = call_plain(handle, flat, list(shifts), [1])
    return wrap(call_plain(HANDLES["view"], rolled, list(value.shape)), level)


def _embedding(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """embedding with a batched weight: example b's rows are b * num_weights + index
    of the batch's weights as one matrix; the padding index's rows are detached, as
    the operator's backward leaves them without gradient."""
    weight, indices = args[0], args[1]
    padding_idx = args[2] if len(args) > 2 else -1
    if not is_batched(weight, level):
        return trailing("indices")(handle, level, args)
    size, count = batch_size(level), weight.shape[0]
    index = broadcast_value(indices, level)
    shifted = index + offsets(size, count, indices.dim())
    flat = ops.reshape(weight._value, [size * count, weight.shape[-1]])
    rows = call_plain(handle, flat, shifted, -1, *args[3:])
    if padding_idx >= 0:
        padding = call_plain(HANDLES["unsqueeze"], ops.eq(index, padding_idx), -1)
        rows = call_plain(HANDLES["where.self"], padding, rows.detach(), rows)
    return wrap(rows, level)


def _layer_norm(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """native_layer_norm: normalise the input's values (batched or not) without the
    affine part, then each example's weight and bias."""
    input, shape, weight, bias, eps = args
    if not any(is_batched(t, level) for t in (weight, bias)):
        return trailing("input")(handle, level, args)
    out, mean, rstd = call_plain(handle, unwrap(input, level), shape, None, None, eps)
    rank = input.dim()
    if not is_batched(input, level):
        out = broadcast_value(out, level)
        mean, rstd = broadcast_value(mean, level), broadcast_value(rstd, level)
    if weight is not None:
        out = call_plain(HANDLES["mul.Tensor"], out, _padded(weight, level, rank))
    if bias is not None:
        out = call_plain(HANDLES["add.Tensor"], out, _padded(bias, level, rank), 1)
    return wrap((out, mean, rstd), level)


def _scatter_dims(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """select_scatter / diagonal_scatter: `src` has fewer dims than `self`; the dims
    shift by `self`'s rank."""
    rank = args[0].dim()
    new_args = [
        (
            broadcast_value(a, level)
            if isinstance(a, Tensor)
            else wrap_dim(a, rank) + 1 if name in DIM_NAMES else a
        )
        for (_, name), a in zip(arguments(handle.schema), args)
    ]
    return wrap(call_plain(handle, *new_args), level)


def _unfold(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self, dimension = args[0], args[1]
    shifted = wrap_dim(dimension, self.dim()) + 1
    return wrap(call_plain(handle, self._value, shifted, *args[2:]), level)


def _searchsorted(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """searchsorted: a batched sequence gives each example its own row (the values
    flattened after the batch when the sequence is 1-d)."""
    sequence, values = args[0], args[1]
    sorter = args[5] if len(args) > 5 else None
    if sorter is not None and is_batched(sorter, level) != is_batched(sequence, level):
        return NotImplemented  # a sorter batched apart from its sequence
    if not is_batched(sequence, level):
        if sequence.dim() != 1:
            return NotImplemented
        return wrap(call_plain(handle, sequence, values._value, *args[2:]), level)
    rows = broadcast_value(values, level)
    if sequence.dim() == 1:
        shape = list(rows.shape)
        found = call_plain(
            handle, sequence._value, ops.reshape(rows, [shape[0], -1]), *args[2:]
        )
        return wrap(ops.reshape(found, shape), level)
    return wrap(call_plain(handle, sequence._value, rows, *args[2:]), level)


# -- the table ---------------------------------------------------------------------------

# Which kind of rule an operator has is declared in native_functions.yaml (`batching:`,
# codegen/batching.py, written to gradgen.generated.batching); the hand-written rules
# of `contraction` (by the operator's base name) and `custom` (by its name) are here.
CONTRACTIONS: dict[str, Rule] = {
    "mm": _matmul_rule,
    "bmm": _matmul_rule,
    "mv": _mv,
    "dot": _dot,
    "vdot": _dot,
    "addmm": _addmm,
    **ADD_PRODUCTS,
}

CUSTOM: dict[str, Rule] = {
    "view": _with_batch,
    "_unsafe_view": _with_batch,
    "expand": _expand,
    "sum_to_size": _sum_to_size,
    "permute": _permute,
    "t": _t,
    "squeeze": _squeeze,
    "repeat": _repeat,
    "unsqueeze": _unsqueeze,
    "roll": _roll,
    "argmax": _arg_reduction,
    "argmin": _arg_reduction,
    "fill.Tensor": _fill,
    "fill_.Tensor": _fill,
    "masked_fill.Tensor": _masked_fill,
    "masked_fill_.Tensor": _masked_fill,
    "cat": functools.partial(_tensor_list_dims, extra_rank=0),
    "stack": functools.partial(_tensor_list_dims, extra_rank=1),
    "select_backward": _sizes_and_dims,
    "slice_backward": _sizes_and_dims,
    "diagonal_backward": _sizes_and_dims,
    "index_select": _index_select,
    "embedding": _embedding,
    "native_layer_norm": _layer_norm,
    "sum": _sum,
    "mean": _sum,
    "prod": _prod,
    "max": reduce_all("amax", False),
    "min": reduce_all("amin", False),
    **NN_CUSTOM,
    **INDEX_CUSTOM,
    **MORE_CUSTOM,
    **LINALG_CUSTOM,
    **RANDOM_CUSTOM,
    **SCATTER_CUSTOM,
    **STRIDED_CUSTOM,
    "diag_embed": functools.partial(dims, extra_rank=1),
    "select_scatter": _scatter_dims,
    "diagonal_scatter": _scatter_dims,
    "unfold": _unfold,
    "unfold_backward": _sizes_and_dims,
    "searchsorted.Tensor": _searchsorted,
}

KINDS: dict[str, Rule] = {"pointwise": pointwise, "dims": dims, "loss": _loss}


def rule_of(name: str, kind: str, names: tuple[str, ...]) -> Rule:
    """The rule of a `batching:` declaration (NAME is the operator)."""
    if kind in KINDS:
        return KINDS[kind]
    if kind == "trailing":
        return trailing(*names)
    if kind == "leading":
        return leading({n.split(":")[0]: int(n.split(":")[1]) for n in names})
    table, key = (
        (CONTRACTIONS, name.split(".")[0]) if kind == "contraction" else (CUSTOM, name)
    )
    if key not in table:
        raise RuntimeError(
            f"native_functions.yaml declares 'batching: {kind}' for {name}, but "
            "gradgen.func.batching_rules has no such rule: add one to "
            f"{'CONTRACTIONS' if kind == 'contraction' else 'CUSTOM'} or declare "
            "another kind"
        )
    return table[key]


def _build() -> dict[str, Rule]:
    return {
        name: rule_of(name, kind, names)
        for name, (kind, names) in DECLARED.items()
        if name in HANDLES
    }


RULES: dict[str, Rule] = _build()


_DATA_SIZED = "the output's size depends on each example's values"
# The operators that keep the per-example loop, and why (tests/func/test_vmaprules.py
# checks that this is every operator without a rule).
LOOPED: dict[str, str] = {
    **{
        name: _DATA_SIZED
        for name in (
            "nonzero",
            "_unique",
            "_unique2",
            "unique_consecutive",
            "unique_dim",
            "unique_dim_consecutive",
            "bincount",
            "repeat_interleave.Tensor",
            "segment_reduce",
        )
    },
    "histc": "with min == max the range is each example's own; the bins of one call "
    "cannot be told apart per example at the range's edges",
    "allclose": "returns a Python bool (data-dependent control flow)",
    "equal": "returns a Python bool (data-dependent control flow)",
    "as_strided_scatter": "writes through one example's sizes and strides into a "
    "contiguous copy of it (not done: as_strided has a rule)",
}


def rule_count() -> tuple[int, int]:
    """(operators with a batching rule, operators in all)."""
    return len(RULES), len(HANDLES)


def operators_without_rule() -> list[str]:
    return sorted(set(HANDLES) - set(RULES))


__all__ = ["DRAWING", "LOOPED", "RULES", "operators_without_rule", "rule_count"]

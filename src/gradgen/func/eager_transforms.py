"""grad, grad_and_value, vjp, jvp and linearize, as torch.func (jacrev, jacfwd and
hessian, built on them, are in jacobians.py).

Each transform runs the function on aliases of its inputs and differentiates with
gradgen's own reverse mode (`autograd.grad`) or forward mode (`autograd.forward_ad`):

- Reverse mode: every differentiated input becomes a fresh alias that requires grad (a
  view of it when it already does, so outer levels still see the path). A transform
  differentiates only with respect to its own aliases, so nested levels never take
  each other's derivatives ("perturbation confusion"): in
  ``grad(lambda x: x * grad(lambda y: x * y)(x))`` the inner level sees ``x`` as a
  constant. Inner levels keep the graph of their results (`create_graph`) whenever an
  outer level may differentiate them: a transform is running, a forward-AD level is
  open, or an input already requires grad. At the top level the results are detached.
- Forward mode: `jvp` opens a dual level and reads the output tangents. gradgen has
  one dual level at a time (as PyTorch's forward_ad), so a `jvp` that runs inside
  another (``jacfwd(jacfwd(f))``) computes J v by reverse mode twice instead: the
  vector-Jacobian product ``g(u) = J^T u`` is linear in ``u``, and its own vjp with
  ``v`` is ``J v``. The tangents of the outer level flow through both passes.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import autograd
from ..autograd import forward_ad
from ..dispatch import enter_batched, exit_batched, forward_ad_levels
from ..grad_mode import _set_enabled as _set_grad_enabled
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor
from . import autograd_function
from .batching import (
    BatchedTensor,
    batch_at,
    batch_size,
    open_levels,
    physical,
    rewrap,
)
from .tree_backward import tree_grads
from .pytree import (
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_unflatten,
    treespec_pprint,
)

Argnums = int | tuple[int, ...]


class _Nesting(threading.local):
    depth = 0


_nesting = _Nesting()


class _level:
    """A transform's level (``with _level():``): counted in `_nesting`, grad mode on."""

    __slots__ = ("_previous",)

    def __enter__(self) -> None:
        _nesting.depth += 1
        self._previous = is_grad_enabled()
        _set_grad_enabled(True)

    def __exit__(self, *exc_info: object) -> None:
        _set_grad_enabled(self._previous)
        _nesting.depth -= 1


def _transform_active() -> bool:
    """Whether a transform of gradgen.func is running (custom Functions ask)."""
    return _nesting.depth > 0 or bool(open_levels())


def _keeps_graph(inputs: Any) -> bool:
    """Whether a level's results must stay differentiable: an outer level may take
    their derivative (see the module docstring)."""
    if _nesting.depth > 0 or forward_ad_levels.count:
        return True
    if not is_grad_enabled():
        return False
    return _any_requires_grad(inputs)


def _any_requires_grad(tree: Any) -> bool:
    """Whether a tensor among the leaves of `tree` requires grad."""
    cls = tree.__class__
    if cls is dict:
        items: Any = tree.values()
    elif cls is tuple or cls is list:
        items = tree
    else:
        return any(
            isinstance(leaf, Tensor) and leaf.requires_grad
            for leaf in tree_leaves(tree)
        )
    for item in items:
        if item.__class__ is Tensor and item._base is None:
            # The common leaves (the property's reads: no view to refresh)
            if item._requires_grad or item._grad_fn is not None:
                return True
        elif item.__class__ not in _NO_TENSORS and _any_requires_grad(item):
            return True
    return False


# Leaves that hold no tensor, by their exact class.
_NO_TENSORS = frozenset({int, float, bool, complex, str, type(None)})


def _detach(tree: Any) -> Any:
    """`tree` with its tensors cut from the graph (one that does not require grad has
    no graph: it stays as it is)."""
    return tree_map(
        lambda x: x.detach() if isinstance(x, Tensor) and x.requires_grad else x, tree
    )


def _differentiable(x: Any, levels: list[int] | None = None) -> Tensor:
    """An alias of `x` that requires grad and that this level differentiates. Inside
    vmap the alias is batched at every open level (an unbatched input is repeated), so
    that one backward pass gives every example its own gradient. `levels`: the open
    vmap levels, when the caller knows them."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if levels is None:
        levels = open_levels()
    if len(levels) == 1 and x.__class__ is Tensor and _plain(x):
        return BatchedTensor(_repeated_alias(x, batch_size(levels[0])), levels[0])
    value = physical(batch_at(x, levels))
    if value.requires_grad:
        alias = value.view_as(value)
    else:
        alias = value.detach().requires_grad_()
        if value._fw_grad is not None:
            forward_ad.set_fw_grad(alias, value._fw_grad)
    return rewrap(alias, levels)


def _plain(x: Tensor) -> bool:
    return not x.requires_grad and x._fw_grad is None


def _repeated_alias(x: Tensor, size: int) -> Tensor:
    """`x` repeated `size` times along a new first dimension, as a leaf that requires
    grad: what unsqueeze, expand and detach give (a read-only view sharing x's
    version counter and base), without recording the two views."""
    data = x._data
    if data.flags.c_contiguous:  # numpy's broadcast_to, without its checks
        repeated = np.ndarray(
            (size, *data.shape), data.dtype, data, 0, (0, *data.strides)
        )
        repeated.flags.writeable = False
    else:
        repeated = np.broadcast_to(data, (size, *data.shape))
    alias = Tensor(repeated, version_counter=x._counter())
    alias._base = x if x._base is None else x._base
    if data.dtype.kind in "fc":
        alias._requires_grad = True  # requires_grad_()'s case of a new leaf
        return alias
    return alias.requires_grad_()


def _physical(x: Tensor, levels: list[int] | None = None) -> Tensor:
    """The plain tensor under `x`, batched at every open vmap level (`levels`, when
    the caller knows them)."""
    return physical(batch_at(x, open_levels() if levels is None else levels))


# -- argnums -----------------------------------------------------------------------------


def _check_argnum(argnum: Any, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -num_args <= argnum < num_args:
        return argnum % num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _check_argnums(argnums: Any, num_args: int) -> Argnums:
    if isinstance(argnums, int):
        return _check_argnum(argnums, num_args)
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        checked = tuple(_check_argnum(a, num_args) for a in argnums)
        if len(set(checked)) != len(checked):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return checked
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _slice_argnums(args: tuple[Any, ...], argnums: Argnums) -> Any:
    if isinstance(argnums, int):
        return args[argnums]
    return tuple(args[a] for a in argnums)


def _replace_argnums(
    args: tuple[Any, ...], argnums: Argnums, new: Any
) -> tuple[Any, ...]:
    replaced = list(args)
    if isinstance(argnums, int):
        replaced[argnums] = new
    else:
        for index, value in zip(argnums, new):
            replaced[index] = value
    return tuple(replaced)


def _split_aux(output: Any, has_aux: bool, api: str) -> tuple[Any, Any]:
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(
            f"{api}: output of function f should be a tuple: (output, aux) if has_aux is "
            "True"
        )
    return output[0], output[1]


def _tensor_outputs(output: Any, api: str) -> tuple[list[Tensor], Any]:
    flat, spec = tree_flatten(output)
    if not flat:
        raise RuntimeError(
            f"{api}: Expected f to be a function that has non-empty output (got output = "
            f"{output})"
        )
    for leaf in flat:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(
                f"{api}: expected f(*primals) to return only tensors, got unsupported "
                f"type {type(leaf)}"
            )
    return flat, spec


# -- reverse mode ------------------------------------------------------------------------


def _zeros(like: Tensor, requires_grad: bool = False) -> Tensor:
    """Zeros shaped as `like` (as every example of it inside vmap)."""
    zeros = Tensor(np.zeros_like(_physical(like)._data))
    return rewrap(zeros.requires_grad_(requires_grad), open_levels())


def _batches_plain(
    levels: list[int], outputs: list[Tensor], inputs: list[Tensor]
) -> bool:
    """Whether a backward over batches may run as over plain tensors: with one vmap
    level open, the graph under the batches was recorded below the Batched key, on
    plain tensors, so its formulas need no batching rule; the dispatcher then skips
    the Batched key (and the backward may hand bare arrays on). Nested levels keep
    it: there the batches are BatchedTensors of the outer levels."""
    return len(levels) == 1 and all(t.__class__ is Tensor for t in (*outputs, *inputs))


def _vjp(
    outputs: Sequence[Tensor],
    inputs: Sequence[Tensor],
    cotangents: Sequence[Tensor | None],
    create_graph: bool,
) -> list[Tensor]:
    """d(sum_i <outputs_i, cotangents_i>)/d inputs; zeros for an unused input."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return [_zeros(x) for x in inputs]
    levels = open_levels()
    if len(pairs) == 1 and pairs[0][1] is None and len(levels) == 1:
        batch = _vjp_of_batch(pairs[0][0], inputs, levels[0], create_graph)
        if batch is not None:
            return batch
    if levels and not any(isinstance(x, BatchedTensor) for x in inputs):
        # A batch of cotangents through a graph made outside vmap (jacrev's rows): the
        # backward formulas run on the batched cotangents, by the batching rules.
        found = autograd.grad(
            [o for o, _ in pairs],
            list(inputs),
            grad_outputs=[c for _, c in pairs],  # type: ignore[misc]  # None: implicit
            retain_graph=True,
            create_graph=create_graph,
            allow_unused=True,
        )
        return [_zeros(x) if g is None else g for x, g in zip(inputs, found)]
    physical_outputs = [_physical(o, levels) for o, _ in pairs]
    physical_cotangents = [
        _physical(c, levels) if c is not None else None for _, c in pairs
    ]
    if levels:  # a batch of scalars: every example's gradient at once
        physical_cotangents = [
            Tensor(np.ones_like(o._data)) if c is None else c
            for o, c in zip(physical_outputs, physical_cotangents)
        ]
    physical_inputs = [_physical(x, levels) for x in inputs]
    plain = _batches_plain(levels, physical_outputs, physical_inputs)
    if plain:
        exit_batched()
    try:
        grads = autograd.grad(
            physical_outputs,
            physical_inputs,
            grad_outputs=physical_cotangents,  # type: ignore[arg-type]  # None: implicit
            retain_graph=True,
            create_graph=create_graph,
            allow_unused=True,
        )
    finally:
        if plain:
            enter_batched()
    return [
        _zeros(x) if g is None else rewrap(g, levels) for x, g in zip(inputs, grads)
    ]


def _vjp_of_batch(
    output: Tensor, inputs: Sequence[Tensor], level: int, create_graph: bool
) -> list[Tensor] | None:
    """`_vjp`'s common case inside one vmap level (grad's: every example's gradient
    of its scalar output): the output and every input batched at `level` over plain
    tensors. The steps of the general case without its walks over the levels; None
    when the call is not that case."""
    if not isinstance(output, BatchedTensor):
        return None
    value = output._value
    if output._level != level or value.__class__ is not Tensor:
        return None
    values = []
    for x in inputs:
        if not isinstance(x, BatchedTensor) or x._level != level:
            return None
        inner = x._value
        if inner.__class__ is not Tensor:
            return None
        values.append(inner)
    exit_batched()
    try:
        data = value._data
        seed = np.ones(data.shape, data.dtype)  # (ones_like's, without its wrapper)
        found = None if create_graph else tree_grads(value, seed, values)
        grads = (
            autograd.grad(
                [value],
                values,
                grad_outputs=[Tensor(seed)],
                retain_graph=True,
                create_graph=create_graph,
                allow_unused=True,
            )
            if found is None
            else found
        )
    finally:
        enter_batched()
    return [
        _zeros(x) if g is None else BatchedTensor(g, level)
        for x, g in zip(inputs, grads)
    ]


def grad_and_value(
    func: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """A function returning ``(gradient, value)`` of `func`, a function with a scalar
    Tensor output, with respect to the positional arguments `argnums` (pytrees)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return _grad_and_value(func, argnums, has_aux, args, kwargs, True)

    return wrapper


def _call_differentiable(
    func: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    positions: Argnums,
    has_aux: bool,
    api: str,
) -> tuple[Any, Any, list[Any], Any]:
    """Inside a transform's level: `func` called with the arguments at `positions`
    made differentiable at that level; ``(output, aux, flat inputs, their spec)``."""
    flat_primals, spec = tree_flatten(_slice_argnums(args, positions))
    levels = open_levels()
    if len(levels) == 1:
        # One vmap level (vmap(grad)'s): `_differentiable`'s first case inline.
        level = levels[0]
        size = batch_size(level)
        flat_diff = [
            (
                BatchedTensor(_repeated_alias(x, size), level)
                if x.__class__ is Tensor
                and x._base is None  # (no view's grad_fn to refresh)
                and x._grad_fn is None
                and not x._requires_grad
                and x._fw_grad is None
                else _differentiable(x, levels)
            )
            for x in flat_primals
        ]
    else:
        flat_diff = [_differentiable(x, levels) for x in flat_primals]
    diff = tree_unflatten(flat_diff, spec)
    output, aux = _split_aux(
        func(*_replace_argnums(args, positions, diff), **kwargs), has_aux, api
    )
    return output, aux, flat_diff, spec


def _grad_and_value(
    func: Callable[..., Any],
    argnums: Argnums,
    has_aux: bool,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    with_value: bool,
) -> Any:
    """``(gradient, value)`` (value: the output, with `has_aux` ``(output, aux)``);
    without `with_value` the output is left out of the value (grad's call)."""
    api = "grad_and_value(f)(*args)"
    positions = _check_argnums(argnums, len(args))
    keep = _keeps_graph(args)
    with _level():
        output, aux, flat_diff, spec = _call_differentiable(
            func, args, kwargs, positions, has_aux, api
        )
        if not isinstance(output, Tensor):
            raise RuntimeError(
                f"{api}: Expected f(*args) to return a Tensor, got {type(output)}"
            )
        if output.dim() != 0:
            raise RuntimeError(
                f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs "
                "instead?"
            )
        grads = tree_unflatten(_vjp([output], flat_diff, [None], keep), spec)
    if not with_value:
        output = None
    value = (output, aux) if has_aux else output
    # Without `keep` the gradients were computed without a graph: nothing to cut.
    return grads, value if keep or value is None else _detach(value)


def grad(
    func: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """A function returning the gradient of `func` (see `grad_and_value`); with
    `has_aux`, ``(gradient, aux)``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        grads, value = _grad_and_value(func, argnums, has_aux, args, kwargs, False)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(func(*primals), vjp_fn)``, and `aux` last with `has_aux`: ``vjp_fn(v)`` is the
    tuple of vector-Jacobian products with each primal."""
    api = "vjp(f, *primals)"
    keep = _keeps_graph(primals)
    with _level():
        diff = tree_map(_differentiable, primals)
        output, aux = _split_aux(func(*diff), has_aux, api)
        flat_out, out_spec = _tensor_outputs(output, api)
        for leaf in flat_out:
            if not (leaf.is_floating_point() or leaf.is_complex()):
                raise RuntimeError(
                    "vjp(f, ...): All outputs of f must be floating-point or complex "
                    f"Tensors, got Tensor with dtype {leaf.dtype}"
                )
    flat_diff, diff_spec = tree_flatten(diff)

    def vjp_fn(cotangents: Any) -> Any:
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree "
                f"structure of outputs to the function. cotangents: "
                f"{treespec_pprint(cot_spec)}, primal output: {treespec_pprint(out_spec)}"
            )
        grads_keep = keep or _keeps_graph(cotangents)
        with _level():
            grads = _vjp(flat_out, flat_diff, flat_cot, grads_keep)
        result = tree_unflatten(grads, diff_spec)
        return result if grads_keep else _detach(result)

    result = (output, vjp_fn, aux) if has_aux else (output, vjp_fn)
    return (
        result
        if keep
        else (_detach(output), vjp_fn) + ((_detach(aux),) if has_aux else ())
    )


# -- forward mode ------------------------------------------------------------------------


def _check_jvp_arguments(
    primals: Any, tangents: Any
) -> tuple[list[Tensor], list[Tensor], Any]:
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{api}: Expected primals to be a tuple. E.g. it should be valid to call "
            "f(*primals)."
        )
    flat_primals, primals_spec = tree_flatten(primals)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(
            f"{api}: Expected primals and tangents to have the same python structure. "
            "For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
            f"primals with structure {primals_spec} and tangents with structure "
            f"{tangents_spec}"
        )
    for name, leaves in (("primals", flat_primals), ("tangents", flat_tangents)):
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(
                    f"{api}: Expected {name} to only contain Tensors, got {type(leaf)}"
                )
    return flat_primals, flat_tangents, primals_spec


def jvp(
    func: Callable[..., Any],
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> Any:
    """``(func(*primals), J tangents)`` (and `aux` last with `has_aux`): the
    Jacobian-vector product, by forward-mode AD."""
    flat_primals, flat_tangents, spec = _check_jvp_arguments(primals, tangents)
    if forward_ad_levels.count:
        return _jvp_by_reverse_mode(func, flat_primals, flat_tangents, spec, has_aux)
    api = "jvp(f, primals, tangents)"
    keep = _keeps_graph((primals, tangents))
    levels = open_levels()
    with forward_ad.dual_level():
        duals = [
            rewrap(forward_ad.make_dual(_physical(p), _physical(t)), levels)
            for p, t in zip(flat_primals, flat_tangents)
        ]
        output, aux = _split_aux(func(*tree_unflatten(duals, spec)), has_aux, api)
        flat_out, out_spec = _tensor_outputs(output, api)
        unpacked = [forward_ad.unpack_dual(_physical(o)) for o in flat_out]
        primals_out = [rewrap(u.primal, levels) for u in unpacked]
        tangents_out = [
            rewrap(
                (
                    Tensor(np.zeros_like(u.primal._data))
                    if u.tangent is None
                    else u.tangent
                ),
                levels,
            )
            for u in unpacked
        ]
    pair = (
        tree_unflatten(primals_out, out_spec),
        tree_unflatten(tangents_out, out_spec),
    )
    result = pair + (aux,) if has_aux else pair
    return result if keep else _detach(result)


def _jvp_by_reverse_mode(
    func: Callable[..., Any],
    flat_primals: list[Tensor],
    flat_tangents: list[Tensor],
    spec: Any,
    has_aux: bool,
) -> Any:
    """J v as the vjp (in u) of the vjp ``u -> J^T u``, for a jvp inside a dual level."""
    api = "jvp(f, primals, tangents)"
    with _level():
        diff = [_differentiable(p) for p in flat_primals]
        output, aux = _split_aux(func(*tree_unflatten(diff, spec)), has_aux, api)
        flat_out, out_spec = _tensor_outputs(output, api)
        dummies = [_zeros(o, requires_grad=True) for o in flat_out]
        transposed = _vjp(flat_out, diff, dummies, create_graph=True)
        tangents_out = _vjp(transposed, dummies, flat_tangents, create_graph=True)
    result = (
        tree_unflatten(flat_out, out_spec),
        tree_unflatten(tangents_out, out_spec),
    )
    return result + (aux,) if has_aux else result


def linearize(
    func: Callable[..., Any], *primals: Any
) -> tuple[Any, Callable[..., Any]]:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector
    product at `primals` (computed by `jvp` at each call)."""
    output = func(*primals)

    def jvp_fn(*tangents: Any) -> Any:
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


def functionalize(
    func: Callable[..., Any], *, remove: str = "mutations"
) -> Callable[..., Any]:
    """`func` itself: gradgen runs eagerly and its transforms differentiate through
    in-place operators and views, so there is nothing to rewrite (torch.func's
    functionalize removes mutations for its tracing backends)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            "functionalize(f, remove='mutations'): received invalid argument for remove="
            f"{remove}. Valid options are:\n     remove='mutations': all inplace and out= "
            "operators will be removed from the program, and replaced with their "
            "out-of-place equivalents.\n     remove='mutations_and_views': In addition "
            "to the above, all aliasing operators {view} will be replaced with their "
            "non-aliasing counterparts, {view}_copy.\n"
        )
    return func


__all__ = [
    "functionalize",
    "grad",
    "grad_and_value",
    "jvp",
    "linearize",
    "vjp",
]


autograd_function.install(_transform_active)

"""PyTorch's Python-level functions (torch.functional's): `unique`,
`unique_consecutive` and `nonzero` (with their Tensor methods, and the `as_tuple`
keyword PyTorch's binding adds to nonzero); the varargs spellings of the operators of
a tensor list (`meshgrid(a, b)`, `einsum("ij,jk", a, b)`, `broadcast_tensors`,
`atleast_*d`, `cartesian_prod`, `chain_matmul`), `tensordot`'s `dims`, `cdist`'s
`compute_mode`, `broadcast_shapes` and `block_diag(*tensors)`.

The operators (`_unique2`, `unique_dim`, `unique_consecutive`) always return three
tensors, the last two empty unless asked for; these functions return only what was
asked for: the values alone, or a tuple with the inverse indices and the counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .arguments import write_out
from .factories import zeros
from .generated import operators, ops
from .tensor import Size, Tensor


def _asked_for(found: Any, return_inverse: bool, return_counts: bool) -> Any:
    """The values alone, or a tuple with the inverse and the counts asked for."""
    values, inverse, counts = found
    wanted = [values]
    if return_inverse:
        wanted.append(inverse)
    if return_counts:
        wanted.append(counts)
    return wanted[0] if len(wanted) == 1 else tuple(wanted)


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The distinct elements of `input` (or its distinct slices along `dim`), sorted;
    with `return_inverse` the index of each element's value among them, with
    `return_counts` how often each occurs."""
    if dim is None:
        found = operators._unique2.call(input, sorted, return_inverse, return_counts)
    else:
        found = operators.unique_dim.call(
            input, dim, sorted, return_inverse, return_counts
        )
    return _asked_for(found, return_inverse, return_counts)


def unique_consecutive(
    input: Tensor,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """`input` with each run of equal consecutive elements (or slices along `dim`)
    kept once; with `return_inverse` each element's run number, with `return_counts`
    the runs' lengths."""
    found = operators.unique_consecutive.call(input, return_inverse, return_counts, dim)
    return _asked_for(found, return_inverse, return_counts)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """The indices of the nonzero elements: one row each (n x ndim), or with
    `as_tuple` a tuple of one index tensor per dimension."""
    if as_tuple:
        return tuple(ops.nonzero_numpy(input))
    return operators.nonzero.call(input)


# -- torch.functional's wrappers over the operators of a tensor list ------------------


def _tensors(tensors: tuple[Any, ...]) -> list[Any]:
    """`f(a, b)` and `f([a, b])` alike, as torch.functional reads its varargs."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded to their common broadcast shape (views)."""
    return tuple(ops.broadcast_tensors(list(tensors)))


def broadcast_shapes(*shapes: int | Sequence[int]) -> Size:
    """The shape tensors of these shapes broadcast to, without making any tensor."""
    result: list[int] = []
    for index, shape in enumerate(shapes):
        dims = [shape] if isinstance(shape, int) else list(shape)
        if len(dims) > len(result):
            result = [1] * (len(dims) - len(result)) + result
        for i, size in enumerate(dims, start=len(result) - len(dims)):
            if size == result[i] or size == 1:
                continue
            if result[i] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at "
                    f"{i - len(result)}! Mismatching argument at index {index} had "
                    f"{tuple(dims)}; but expected shape should be broadcastable to "
                    f"{result}"
                )
            result[i] = size
    return Size(result)


def _atleast(function: Any, tensors: tuple[Any, ...]) -> Any:
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return function(tensors[0])
    return tuple(function(t) for t in _tensors(tensors))


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least one dimension (one tensor in, one out)."""
    return _atleast(ops.atleast_1d, tensors)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least two dimensions (one tensor in, one out)."""
    return _atleast(ops.atleast_2d, tensors)


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least three dimensions (one tensor in, one out)."""
    return _atleast(ops.atleast_3d, tensors)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids of 0-d and 1-d tensors ("ij" indexing, or "xy")."""
    found = _tensors(tensors)
    if indexing is None:
        return tuple(ops.meshgrid(found))
    return tuple(ops.meshgrid(found, indexing=indexing))


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element of each vector, as rows."""
    return ops.cartesian_prod(list(tensors))


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of the matrices (deprecated: linalg.multi_dot)."""
    return ops.chain_matmul(list(matrices))


_COMPUTE_MODES = {
    "use_mm_for_euclid_dist_if_necessary": None,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}


def cdist(
    x1: Tensor,
    x2: Tensor,
    p: float = 2.0,
    compute_mode: str = "use_mm_for_euclid_dist_if_necessary",
) -> Tensor:
    """The p-norm distance between each row of x1 and each row of x2 (batched)."""
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return ops.cdist(x1, x2, p, _COMPUTE_MODES[compute_mode])


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """The sum of products over the last `dims` dims of a and the first of b, or
    over the dims listed in `dims` = (dims_a, dims_b)."""
    if isinstance(dims, Tensor):
        dims = dims.item() if dims.numel() == 1 else dims.tolist()
    if isinstance(dims, (list, tuple)):
        if len(dims) != 2:
            raise RuntimeError(
                "tensordot expects dims to be a pair of lists of dimensions"
            )
        for position, name, d in (
            (3, "dims_self", dims[0]),
            (4, "dims_other", dims[1]),
        ):
            if not isinstance(d, (list, tuple)):  # PyTorch's binding takes lists only
                raise TypeError(
                    f"tensordot(): argument '{name}' (position {position}) must be "
                    f"tuple of ints, not {type(d).__name__}"
                )
        dims_a, dims_b = list(dims[0]), list(dims[1])
    elif isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(
                f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}"
            )
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        raise RuntimeError(
            f"tensordot expects dims to be int or (list[int], list[int]), got {dims!r}"
        )
    if out is not None:
        return write_out("tensordot", out, ops.tensordot, (a, b, dims_a, dims_b))  # type: ignore[no-any-return]
    return ops.tensordot(a, b, dims_a, dims_b)


def _sublist_equation(arguments: tuple[Any, ...]) -> tuple[str, list[Tensor]]:
    """einsum(op1, sublist1, op2, sublist2, ..., [sublist_out]): the equation string
    with the sublists' integers as letters (0-25 a-z, 26-51 A-Z)."""

    def letters(sublist: Sequence[Any]) -> str:
        text = ""
        for item in sublist:
            if item is Ellipsis:
                text += "..."
            elif isinstance(item, int) and 0 <= item < 52:
                text += chr(ord("a") + item) if item < 26 else chr(ord("A") + item - 26)
            else:
                raise ValueError(
                    "einsum(): expected subscript to be within the range [0, 52) but "
                    f"got {item}"
                )
        return text

    operands = list(arguments[0::2])
    sublists = list(arguments[1::2])
    output = None
    if len(operands) > len(sublists):
        output = operands.pop()
    equation = ",".join(letters(s) for s in sublists)
    if output is not None:
        equation += "->" + letters(output)
    return equation, operands


def einsum(*args: Any) -> Tensor:
    """Einstein summation: einsum("ij,jk->ik", a, b), einsum("ij,jk", [a, b]), or
    the sublist form einsum(a, [0, 1], b, [1, 2], [0, 2])."""
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, "
            "or at least one operand and its subscripts list"
        )
    if isinstance(args[0], str):
        equation, operands = args[0], _tensors(args[1:])
    else:
        equation, operands = _sublist_equation(args)
    return ops.einsum(equation, operands)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (each at most 2-d) on the diagonal of one matrix, zeros elsewhere:
    the block_diag operator over the arguments."""
    if not tensors:  # PyTorch's: a 1 x 0 matrix of the default dtype
        return operators.block_diag.call([zeros(0)])  # type: ignore[no-any-return]
    return operators.block_diag.call(list(tensors))  # type: ignore[no-any-return]

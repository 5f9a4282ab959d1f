"""`gradgen.unique`, `gradgen.unique_consecutive`, `gradgen.nonzero` (with their
Tensor methods) and `gradgen.block_diag`: PyTorch's Python-level functions
(torch.functional's, and the `as_tuple` keyword PyTorch's binding adds to nonzero).

The operators (`_unique2`, `unique_dim`, `unique_consecutive`) always return three
tensors, the last two empty unless asked for; these functions return only what was
asked for: the values alone, or a tuple with the inverse indices and the counts.
"""

from __future__ import annotations

from typing import Any

from .factories import zeros
from .generated import operators, ops
from .tensor import Tensor


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


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (each at most 2-d) on the diagonal of one matrix, zeros elsewhere:
    the block_diag operator over the arguments."""
    if not tensors:  # PyTorch's: a 1 x 0 matrix of the default dtype
        return operators.block_diag.call([zeros(0)])  # type: ignore[no-any-return]
    return operators.block_diag.call(list(tensors))  # type: ignore[no-any-return]

"""gradgen.func.rearrange, as torch.func.rearrange: einops-style patterns.

``rearrange(x, "b (h w) c -> b c h w", h=4)`` reads the left side as names for the
tensor's dimensions (a parenthesised group splits one dimension into several, ``...``
stands for the dimensions no name covers, ``1`` or ``()`` for a dimension that goes
away) and the right side as the order and grouping of the result. It runs as three
operators, so autograd, forward AD and vmap see plain ``reshape``/``permute`` calls:

1. reshape into the *elementary* axes, one per name, in the left side's order;
2. permute them into the right side's order;
3. reshape into the right side's groups.

The pattern is parsed and checked once per (ndim, pattern, lengths) and cached. The
messages are PyTorch's (torch takes the parser from einops and binds the sizes with
first-class dimensions, whose binding errors are `DimensionBindError`s naming the
dimensions ``d0``, ``d1``, ... in the order the left side lists them).
"""

from __future__ import annotations

import functools
import keyword
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..generated import ops
from ..tensor import Tensor

__all__ = ["DimensionBindError", "rearrange"]

# `...` is replaced by this one character while parsing (as einops does), so that it
# reads as one identifier; it is also how messages spell the ellipsis.
ELLIPSIS = "\u2026"

# A left-side unit axis (``1`` or ``()``) is a dimension of its own that the result
# sums away (a size-1 dimension disappears).
_UNIT = "1"


class DimensionBindError(Exception):
    """The tensor's sizes do not fit the pattern's groups (PyTorch's functorch.dim
    error of that name)."""


# -- parsing one side of the pattern -----------------------------------------------------


@dataclass
class _Side:
    """One side of a pattern: its groups in order, each a list of axis names (a bare
    name is a group of one; an empty group is a unit axis) or the ellipsis."""

    groups: list[list[str] | str] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    has_ellipsis: bool = False
    ellipsis_in_group: bool = False
    sized_anonymous: bool = False  # a number other than 1, e.g. "2"


def _axis_name_problem(name: str) -> str | None:
    """Why `name` cannot name an axis (None when it can); warns on discouraged names."""
    if not name.isidentifier():
        return "not a valid python identifier"
    if name.startswith("_") or name.endswith("_"):
        return "axis name should should not start or end with underscore"
    if keyword.iskeyword(name):
        warnings.warn(
            f"It is discouraged to use axes names that are keywords: {name}",
            RuntimeWarning,
            stacklevel=5,
        )
    if name == "axis":
        warnings.warn(
            "It is discouraged to use 'axis' as an axis name and will raise an error "
            "in future",
            FutureWarning,
            stacklevel=5,
        )
    return None


def _check_dots(expression: str) -> str:
    """`expression` with its one `...` as the ellipsis character."""
    if "." not in expression:
        return expression
    if "..." not in expression:
        raise ValueError("Expression may contain dots only inside ellipsis (...)")
    if expression.count("...") != 1 or expression.count(".") != 3:
        raise ValueError(
            "Expression may contain dots only inside ellipsis (...); only one "
            "ellipsis for tensor "
        )
    return expression.replace("...", ELLIPSIS)


def _add_axis(side: _Side, group: list[str] | None, token: str) -> None:
    """Put one token (a name, a number or the ellipsis) into `group` or the side."""
    if token in side.names:
        raise ValueError(f"Indexing expression contains duplicate dimension '{token}'")
    if token == ELLIPSIS:
        side.names.add(ELLIPSIS)
        side.ellipsis_in_group = group is not None
        (side.groups if group is None else group).append(ELLIPSIS)
        return
    if token.isdecimal() and int(token) == 1:
        if group is None:  # a 1 inside a group changes nothing
            side.groups.append([])
        return
    if token.isdecimal():
        if int(token) < 1:
            raise ValueError(
                f"Anonymous axis should have positive length, not {int(token)}"
            )
        side.sized_anonymous = True
        return
    problem = _axis_name_problem(token)
    if problem is not None:
        raise ValueError(f"Invalid axis identifier: {token}\n{problem}")
    side.names.add(token)
    if group is None:
        side.groups.append([token])
    else:
        group.append(token)


def _parse_side(text: str) -> _Side:
    expression = _check_dots(text)
    side = _Side(has_ellipsis=ELLIPSIS in expression)
    group: list[str] | None = None
    token = ""
    for char in expression:
        if char in "() ":
            if token:
                _add_axis(side, group, token)
            token = ""
            if char == "(":
                if group is not None:
                    raise ValueError(
                        "Axis composition is one-level (brackets inside brackets not "
                        "allowed)"
                    )
                group = []
            elif char == ")":
                if group is None:
                    raise ValueError("Brackets are not balanced")
                side.groups.append(group)
                group = None
        elif char.isalnum() or char in ("_", ELLIPSIS):
            token += char
        else:
            raise ValueError(f"Unknown character '{char}'")
    if group is not None:
        raise ValueError(f"Imbalanced parentheses in expression: '{expression}'")
    if token:
        _add_axis(side, group, token)
    return side


# -- the whole pattern ---------------------------------------------------------------------


def _parse_pattern(pattern: str, lengths: Mapping[str, int]) -> tuple[_Side, _Side]:
    sides = pattern.split("->")
    if len(sides) != 2:
        raise ValueError("Pattern must contain a single '->' separator")
    if ELLIPSIS in lengths:
        raise ValueError(f"'{ELLIPSIS}' is not an allowed axis identifier")
    left, right = _parse_side(sides[0]), _parse_side(sides[1])
    if right.has_ellipsis and not left.has_ellipsis:
        raise ValueError(
            f"Ellipsis found in right side, but not left side of a pattern {pattern}"
        )
    if left.has_ellipsis and left.ellipsis_in_group:
        raise ValueError(
            f"Ellipsis is parenthesis in the left side is not allowed: {pattern}"
        )
    return left, right


def _validate(left: _Side, right: _Side, lengths: Mapping[str, int]) -> None:
    for length in lengths.values():
        if type(length) is not int:
            raise TypeError(
                f"rearrange axis lengths must be integers, got: {type(length)}"
            )
    if left.sized_anonymous or right.sized_anonymous:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    one_side = left.names ^ right.names
    if one_side:
        raise ValueError(
            "Identifiers only on one side of rearrange expression (should be on "
            f"both): {one_side}"
        )
    unknown = lengths.keys() - left.names
    if unknown:
        raise ValueError(f"Identifiers not found in rearrange expression: {unknown}")


@dataclass(frozen=True)
class _Plan:
    """A checked pattern for one number of dimensions, as positions of elementary
    axes (numbered in the left side's order, as PyTorch's d0, d1, ...)."""

    left: tuple[
        tuple[int, ...] | int, ...
    ]  # per tensor dim: a pack, or an ellipsis axis
    right: tuple[tuple[int, ...], ...]  # per result dim: the axes it groups
    units: tuple[int, ...]  # left unit axes, summed away
    lengths: tuple[tuple[int, int], ...]  # (axis, length) given as keywords

    @property
    def count(self) -> int:
        return sum(len(p) if isinstance(p, tuple) else 1 for p in self.left)


def _check_ndim(left: _Side, ndim: int) -> int:
    """How many dimensions the ellipsis stands for."""
    if left.has_ellipsis:
        named = sum(1 for g in left.groups if g != ELLIPSIS)
        if named > ndim:
            raise ValueError(
                f"Number of dimensions in pattern ({named}) must be less than or "
                f"equal to the number of dimensions in the tensor ({ndim})"
            )
        return ndim - named
    if len(left.groups) != ndim:
        raise ValueError(
            f"Number of dimensions in pattern ({len(left.groups)}) must be equal to "
            f"the number of dimensions in the tensor ({ndim})"
        )
    return 0


@functools.lru_cache(256)
def _plan(ndim: int, pattern: str, lengths: tuple[tuple[str, int], ...]) -> _Plan:
    named_lengths = dict(lengths)
    left, right = _parse_pattern(pattern, named_lengths)
    _validate(left, right, named_lengths)
    ellipsis_count = _check_ndim(left, ndim)
    axis: dict[str, tuple[int, ...]] = {}
    packs: list[tuple[int, ...] | int] = []
    units: list[int] = []
    counter = 0
    for group in left.groups:
        if group == ELLIPSIS:
            axis[ELLIPSIS] = tuple(range(counter, counter + ellipsis_count))
            packs.extend(axis[ELLIPSIS])
            counter += ellipsis_count
            continue
        names = group or [_UNIT]
        packs.append(tuple(range(counter, counter + len(names))))
        for name in names:
            if name == _UNIT:
                units.append(counter)
            else:
                axis[name] = (counter,)
            counter += 1
    result: list[tuple[int, ...]] = []
    for group in right.groups:
        if group == ELLIPSIS:
            result.extend((a,) for a in axis[ELLIPSIS])
        else:
            result.append(tuple(a for name in group for a in axis[name]))
    return _Plan(
        tuple(packs),
        tuple(result),
        tuple(units),
        tuple((axis[name][0], size) for name, size in lengths),
    )


# -- binding sizes and running ------------------------------------------------------------


def _bind_pack(pack: tuple[int, ...], size: int, sizes: list[int | None]) -> None:
    """Give every axis of `pack` its size so that their product is `size`."""
    unknown = [a for a in pack if sizes[a] is None]
    known = math.prod(sizes[a] or 0 for a in pack if sizes[a] is not None)
    if len(unknown) > 1:
        raise DimensionBindError(
            "cannot infer the sizes of two dimensions at once "
            f"d{unknown[0]} and d{unknown[1]}"
        )
    if unknown:
        if known == 0 or size % known:
            shown = tuple("?" if sizes[a] is None else sizes[a] for a in pack)
            raise DimensionBindError(
                "inferred dimension does not evenly fit into larger dimension: "
                f"{size} vs {shown}"
            )
        sizes[unknown[0]] = size // known
    elif known != size:
        names = "(" + ", ".join(f"d{a}" for a in pack) + ("," * (len(pack) == 1)) + ")"
        raise DimensionBindError(
            f"Dimension sizes to do not match ({size} != {known}) when matching "
            f"dimension pack {names}"
        )


def _elementary_sizes(plan: _Plan, shape: Sequence[int]) -> list[int]:
    sizes: list[int | None] = [None] * plan.count
    for position, length in plan.lengths:
        sizes[position] = length
    for pack, size in zip(plan.left, shape):
        if isinstance(pack, tuple):
            _bind_pack(pack, size, sizes)
        else:
            sizes[pack] = size
    return [1 if s is None else s for s in sizes]  # every axis is bound by now


def _run(plan: _Plan, tensor: Tensor) -> Tensor:
    sizes = _elementary_sizes(plan, tuple(tensor.shape))
    kept = [a for a in range(plan.count) if a not in plan.units]
    out = ops.reshape(tensor, sizes)
    if plan.units and any(sizes[a] != 1 for a in plan.units):
        out = ops.sum(out, list(plan.units))
    else:
        out = ops.reshape(out, [sizes[a] for a in kept])
    order = [a for group in plan.right for a in group]
    out = ops.permute(out, [kept.index(a) for a in order])
    return ops.reshape(out, [math.prod(sizes[a] for a in g) for g in plan.right])


def rearrange(
    tensor: Tensor | Sequence[Tensor], pattern: str, **axes_lengths: int
) -> Tensor:
    """Reorder, split, merge, add or remove dimensions of `tensor` as `pattern` says
    (a sequence of tensors is stacked first)."""
    if not isinstance(tensor, Tensor):
        tensor = ops.stack(list(tensor))
    lengths = tuple(axes_lengths.items())
    # The cache would take True for 1 (equal keys): only int lengths are cached.
    cached = all(type(length) is int for _, length in lengths)
    plan = (_plan if cached else _plan.__wrapped__)(tensor.ndim, pattern, lengths)
    if plan.count == 0:
        return tensor
    return _run(plan, tensor)

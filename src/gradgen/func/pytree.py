"""Pytrees: nested tuples, lists and dicts of leaves (tensors, numbers, ...).

The transforms take and return pytrees, as torch.func's do: `tree_flatten` lists the
leaves in a fixed order (tuples and lists by position, dicts by insertion order) with a
`TreeSpec` that `tree_unflatten` uses to rebuild the same structure around new leaves.
Anything else, None included, is a leaf, as in torch.utils._pytree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class TreeSpec:
    """The shape of a pytree: `kind` is 'leaf', 'tuple', 'list' or 'dict' (`context`
    holds a dict's keys or a namedtuple's class); equal when the structures are.
    Treated as immutable."""

    __slots__ = ("kind", "context", "children", "num_leaves")

    kind: str
    context: Any
    children: tuple[TreeSpec, ...]
    num_leaves: int  # how many leaves the structure holds

    def __init__(
        self,
        kind: str,
        context: Any = None,
        children: tuple[TreeSpec, ...] = (),
        num_leaves: int | None = None,
    ) -> None:
        self.kind = kind
        self.context = context
        self.children = children
        if num_leaves is not None:  # counted by the caller (`_flatten_into`)
            self.num_leaves = num_leaves
        elif kind == "leaf":
            self.num_leaves = 1
        else:
            self.num_leaves = sum([child.num_leaves for child in children])

    def _key(self) -> tuple[str, Any, tuple[TreeSpec, ...]]:
        return self.kind, self.context, self.children

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self, indent: int = 0) -> str:
        """As torch.utils._pytree's: ``TreeSpec(tuple, None, [*,\n  *])``."""
        if self.kind == "leaf":
            return "*"
        name = "namedtuple" if self.kind == "tuple" and self.context else self.kind
        context = list(self.context) if self.kind == "dict" else self.context
        inner = [child.__repr__(indent + 2) for child in self.children]
        joined = (",\n" + " " * (indent + 2)).join(inner)
        return f"TreeSpec({name}, {context}, [{joined}])"


def treespec_pprint(spec: TreeSpec) -> str:
    """A spec as Python's spelling of the structure: ``(*, [*, *], {'k': *})``."""
    if spec.kind == "leaf":
        return "*"
    inner = [treespec_pprint(child) for child in spec.children]
    if spec.kind == "dict":
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(spec.context, inner)) + "}"
    if spec.kind == "list":
        return "[" + ", ".join(inner) + "]"
    return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"


LEAF = TreeSpec("leaf")

# Classes that are leaves for sure (skips the subclass checks of `_children`); every
# other class `_children` finds to be a leaf joins them.
_LEAF_CLASSES: set[type] = {int, float, bool, complex, str, type(None)}


def _children(tree: Any) -> tuple[str, Any, list[Any]] | None:
    cls = tree.__class__
    if cls is dict:  # the common kinds first, by their exact class
        return "dict", tuple(tree), list(tree.values())
    if cls is tuple:
        return "tuple", None, list(tree)
    if cls is list:
        return "list", None, list(tree)
    if cls in _LEAF_CLASSES:
        return None
    if isinstance(tree, tuple):
        named = type(tree) if hasattr(tree, "_fields") else None
        return "tuple", named, list(tree)
    if isinstance(tree, list):
        return "list", None, list(tree)
    if isinstance(tree, dict):
        return "dict", tuple(tree), list(tree.values())
    # A class that is no tuple, list or dict (nor one's subclass) stays a leaf: the
    # next of its instances skips the checks above (tensors, chiefly).
    _LEAF_CLASSES.add(cls)
    return None


def tree_flatten(tree: Any) -> tuple[list[Any], TreeSpec]:
    """The leaves of `tree`, left to right, and its structure."""
    leaves: list[Any] = []
    return leaves, _flatten_into(tree, leaves)


def _flatten_into(tree: Any, leaves: list[Any]) -> TreeSpec:
    """Append the leaves of `tree` to `leaves`; its structure."""
    found = _children(tree)
    if found is None:
        leaves.append(tree)
        return LEAF
    kind, context, items = found
    start = len(leaves)
    specs: list[TreeSpec] = []
    for item in items:
        if item.__class__ in _LEAF_CLASSES:  # a leaf, without the call
            leaves.append(item)
            specs.append(LEAF)
        else:
            specs.append(_flatten_into(item, leaves))
    return TreeSpec(kind, context, tuple(specs), len(leaves) - start)


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of `tree`, left to right (`tree_flatten` without the structure)."""
    found = _children(tree)
    if found is None:
        return [tree]
    leaves: list[Any] = []
    for item in found[2]:
        leaves.extend(tree_leaves(item))
    return leaves


def tree_unflatten(leaves: list[Any], spec: TreeSpec) -> Any:
    """The pytree of structure `spec` holding `leaves` in order."""
    if len(leaves) != spec.num_leaves:
        raise ValueError(
            f"tree_unflatten(leaves, spec): `leaves` has length {len(leaves)} but the "
            f"spec refers to a pytree that holds {spec.num_leaves} items ({spec})."
        )
    return _build(iter(leaves), spec)


def _build(leaves: Any, spec: TreeSpec) -> Any:
    if spec.kind == "leaf":
        return next(leaves)
    items = [
        next(leaves) if child is LEAF else _build(leaves, child)
        for child in spec.children
    ]
    if spec.kind == "list":
        return items
    if spec.kind == "dict":
        return dict(zip(spec.context, items))
    return spec.context(*items) if spec.context is not None else tuple(items)


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """`tree` with every leaf replaced by `fn(leaf)`."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix: Any, tree: Any) -> list[Any] | None:
    """The leaves of `prefix` repeated for every leaf of `tree` below it (an int for a
    whole tuple, as vmap's in_dims), or None when `prefix` is not a prefix of `tree`."""
    return broadcast_prefix_of_spec(prefix, tree_flatten(tree)[1])


def broadcast_prefix_of_spec(prefix: Any, spec: TreeSpec) -> list[Any] | None:
    """`broadcast_prefix` for a tree known by its structure `spec`."""
    mine = _children(prefix)
    if mine is None:
        return [prefix] * spec.num_leaves
    if spec.kind == "leaf" or mine[0] != spec.kind:
        return None
    if len(mine[2]) != len(spec.children) or (
        mine[0] == "dict" and mine[1] != spec.context
    ):
        if mine[0] != "dict" or set(mine[1]) != set(spec.context):
            return None
        mine = ("dict", spec.context, [prefix[key] for key in spec.context])
    result: list[Any] = []
    for sub_prefix, sub_spec in zip(mine[2], spec.children):
        found = broadcast_prefix_of_spec(sub_prefix, sub_spec)
        if found is None:
            return None
        result.extend(found)
    return result


__all__ = ["TreeSpec", "tree_flatten", "tree_leaves", "tree_map", "tree_unflatten"]

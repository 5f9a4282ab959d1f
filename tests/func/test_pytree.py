"""gradgen.func.pytree: flatten/unflatten round trips and torch.utils._pytree's
spelling of a structure (the transforms' error messages show it)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import pytest

from gradgen.func.pytree import (
    broadcast_prefix,
    tree_flatten,
    tree_map,
    tree_unflatten,
    treespec_pprint,
)
from torch_oracle import oracle

Point = namedtuple("Point", "x y")
TREES = {
    "leaf": 1,
    "none": None,
    "tuple": (1, 2),
    "one tuple": (1,),
    "nested": [1, {"a": 2, "b": (3, [4, 5])}, None],
    "dict": {"z": 1, "a": 2},
    "empty": ((), [], {}),
}


@pytest.mark.parametrize("name", sorted(TREES))
def test_round_trip_and_spelling_match_torch(name: str) -> None:
    tree = TREES[name]
    leaves, spec = tree_flatten(tree)
    assert tree_unflatten(leaves, spec) == tree

    def spelled(flatten: Any, pprint: Any) -> Any:
        leaves, spec = flatten(tree)
        return [repr(spec), pprint(spec), len(leaves)]

    def theirs(torch: Any) -> Any:
        from torch.utils import _pytree

        return spelled(_pytree.tree_flatten, _pytree.treespec_pprint)

    assert spelled(tree_flatten, treespec_pprint) == oracle("spelling", theirs)


def test_namedtuples_keep_their_class() -> None:
    leaves, spec = tree_flatten(Point(1, (2, 3)))
    assert leaves == [1, 2, 3]
    assert tree_unflatten([4, 5, 6], spec) == Point(4, (5, 6))
    assert tree_map(lambda v: v * 2, Point(1, 2)) == Point(2, 4)


def test_unflatten_checks_the_leaf_count() -> None:
    _, spec = tree_flatten((1, 2))
    with pytest.raises(ValueError, match="holds 2 items"):
        tree_unflatten([1], spec)


def test_broadcast_prefix() -> None:
    """An int applies to a whole subtree, as vmap's in_dims; a mismatch is None."""
    assert broadcast_prefix(0, (1, [2, 3])) == [0, 0, 0]
    assert broadcast_prefix((0, None), (1, [2, 3])) == [0, None, None]
    assert broadcast_prefix({"b": 1, "a": 0}, {"a": 5, "b": 6}) == [0, 1]
    assert broadcast_prefix((0, 1, 2), (1, 2)) is None

"""gradgen.func.rearrange against torch.func.rearrange: einops patterns (groups split
and merged, unit axes, `...`, lists of tensors), gradients through it, vmap over it,
and the messages for bad patterns (recorded in tests/golden/)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle

from .common import assert_same, errors, plain

DATA = np.linspace(-2.0, 2.0, 240).reshape(2, 3, 8, 5)

# (pattern, axis lengths, shape the data is cut to)
CASES: list[tuple[str, dict[str, int], tuple[int, ...]]] = [
    ("b h w c -> b c h w", {}, (2, 3, 8, 5)),
    ("b h w c -> (b h) w c", {}, (2, 3, 8, 5)),
    ("b h w c -> h (b w) c", {}, (2, 3, 8, 5)),
    ("b h w c -> b (c h w)", {}, (2, 3, 8, 5)),
    ("b (h1 h) (w1 w) c -> (b h1 w1) h w c", {"h1": 2, "w1": 2}, (2, 4, 6, 5)),
    ("b (h h1) (w w1) c -> b h w (c h1 w1)", {"h1": 2, "w1": 3}, (2, 4, 6, 5)),
    ("(a b) c -> a b c", {"a": 2}, (12, 20)),
    ("(a b) (c d) -> a b c d", {"a": 3, "d": 2}, (3, 80)),
    ("a b -> b a 1", {}, (12, 20)),
    ("a b -> b () a 1", {}, (12, 20)),
    ("a 1 b -> b a", {}, (12, 1, 20)),
    ("a () b -> (b a)", {}, (12, 1, 20)),
    ("a (b 1) -> (a 1 b)", {}, (12, 20)),
    ("1 b -> b", {}, (12, 20)),  # PyTorch sums a left unit axis of size > 1
    ("... c -> c ...", {}, (2, 3, 8, 5)),
    ("a ... -> (...) a", {}, (2, 3, 8, 5)),
    ("a ... b -> b a ...", {}, (2, 3, 8, 5)),
    ("a b ... -> (a b) ...", {}, (2, 120)),
    ("... -> ...", {}, (240,)),
    ("a  b->b   a", {}, (12, 20)),
]


def _values(lib: Any) -> list[Any]:
    found = []
    for pattern, lengths, shape in CASES:
        x = lib.tensor(DATA.reshape(shape))
        found.append(lib.func.rearrange(x, pattern, **lengths))
    return found


def test_patterns_give_torchs_values() -> None:
    theirs = oracle("values", lambda torch: plain(_values(torch)))
    assert_same(plain(_values(gradgen)), theirs)


def _lists_and_scalars(lib: Any) -> list[Any]:
    parts = [lib.tensor(DATA[i, 0]) for i in range(2)]
    return [
        lib.func.rearrange(parts, "n h w -> h (n w)"),
        lib.func.rearrange(tuple(parts), "n h w -> n w h"),
        lib.func.rearrange(lib.tensor(3.5), " -> "),
        lib.func.rearrange(lib.tensor(3.5), "... -> ..."),
        lib.func.rearrange(lib.tensor(3.5), "-> 1 ()"),
    ]


def test_lists_are_stacked_and_scalars_pass() -> None:
    theirs = oracle("lists", lambda torch: plain(_lists_and_scalars(torch)))
    assert_same(plain(_lists_and_scalars(gradgen)), theirs)


def _gradient(lib: Any) -> Any:
    x = lib.tensor(DATA.reshape(2, 24, 5), requires_grad=True)
    weights = lib.tensor(np.linspace(0.5, 1.5, 240).reshape(5, 8, 6))
    y = lib.func.rearrange(x, "b (h w) c -> c h (b w)", w=3)
    (y * weights).sum().backward()
    unit = lib.tensor(DATA.reshape(3, 80), requires_grad=True)
    (lib.func.rearrange(unit, "1 b -> b") ** 2).sum().backward()
    return [x.grad, unit.grad]


def test_gradients_flow_back_as_torchs() -> None:
    theirs = oracle("gradient", lambda torch: plain(_gradient(torch)))
    assert_same(plain(_gradient(gradgen)), theirs)


def _vmapped(lib: Any) -> Any:
    x = lib.tensor(DATA)
    return lib.func.vmap(
        lambda t: lib.func.rearrange(t, "h (w1 w) c -> (c w1) h w", w1=2)
    )(x)


def test_rearrange_under_vmap() -> None:
    theirs = oracle("vmap", lambda torch: plain(_vmapped(torch)))
    assert_same(plain(_vmapped(gradgen)), theirs)


def _error_calls(lib: Any) -> dict[str, Any]:
    x = lib.tensor(DATA.reshape(12, 20))
    r = lib.func.rearrange
    return {
        "no arrow": lambda: r(x, "a b"),
        "two arrows": lambda: r(x, "a -> b -> c"),
        "not divisible": lambda: r(x, "(a b) c -> a b c", a=5),
        "two unknowns": lambda: r(x, "(a b) c -> a b c"),
        "sizes differ": lambda: r(x, "(a b) c -> a b c", a=2, b=3),
        "single size differs": lambda: r(x, "a b -> a b", a=4),
        "one side only": lambda: r(x, "a b -> a b c"),
        "left only": lambda: r(x, "a b -> a"),
        "duplicate": lambda: r(x, "a a -> a a"),
        "unknown length": lambda: r(x, "a b -> a b", c=2),
        "ellipsis length": lambda: r(x, "a b -> a b", **{"\u2026": 2}),
        "open bracket": lambda: r(x, "a (b c -> a b c"),
        "close bracket": lambda: r(x, "a) b -> a b"),
        "nested": lambda: r(x, "((a b)) c -> a b c"),
        "sized anonymous": lambda: r(x, "a b -> a 2 b"),
        "float length": lambda: r(x, "a b -> a b", a=2.0),
        "bool length": lambda: r(x, "a b -> a b", a=True),
        "character": lambda: r(x, "a% b -> a b"),
        "two dots": lambda: r(x, "a b.. -> a b"),
        "two ellipses": lambda: r(x, "... a ... -> a"),
        "underscore": lambda: r(x, "a _b -> a _b"),
        "identifier": lambda: r(x, "a 2b -> a 2b"),
        "ellipsis in group": lambda: r(x, "(a ...) b -> a b"),
        "ellipsis right only": lambda: r(x, "a b -> ... a b"),
        "too many dims": lambda: r(x, "a b c -> a b c"),
        "too many with ellipsis": lambda: r(x, "... a b c -> ... a b c"),
        "zero axis": lambda: r(x, "a 0 -> a"),
    }


def test_bad_patterns_raise_torchs_errors() -> None:
    theirs = oracle("errors", lambda torch: errors(_error_calls(torch)))
    assert_same(errors(_error_calls(gradgen)), theirs)


def test_discouraged_names_warn_as_torch() -> None:
    x = gradgen.ones(2, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradgen.func.rearrange(x, "lambda axis -> axis lambda")
    kinds = sorted(type(w.message).__name__ for w in caught)
    # one of each per side, as PyTorch parses both sides
    assert kinds == ["FutureWarning"] * 2 + ["RuntimeWarning"] * 2
    assert "keywords: lambda" in str(
        next(w.message for w in caught if w.category is RuntimeWarning)
    )


def test_the_ellipsis_reads_as_one_axis_group_on_the_right() -> None:
    x = gradgen.tensor(DATA)
    y = gradgen.func.rearrange(x, "a ... -> (...) a")
    expected = np.moveaxis(DATA, 0, -1).reshape(120, 2)
    np.testing.assert_array_equal(y.numpy(), expected)
    with pytest.raises(gradgen.func.einops.DimensionBindError):
        gradgen.func.rearrange(x, "(a b) ... -> a b ...", a=3)

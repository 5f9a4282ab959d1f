"""PyTorch's C++ positional arguments where an overload takes them by position: the
reader leaves them positional (addbmm's `batch1_t.bmm(batch2_p).sum(0)` is a sum over
dim 0, not `sum(dtype=0)`), and still names the keyword-only ones no overload takes."""

from __future__ import annotations

import ast

from gradgen.codegen.cpp_spelling import parse_formula
from gradgen.codegen.formulas import FormulaNames

# sum's overloads as load._keyword_only lists them for methods: sum(*, dtype) and
# sum.dim_IntList(dim, keepdim=False, *, dtype); div.Tensor_mode(other, *, rounding_mode).
_NAMES = FormulaNames(
    helpers=frozenset(),
    functions=frozenset(),
    methods=frozenset({"sum", "div"}),
    keyword_only={
        ("method", "sum"): ((0, ("dtype",)), (2, ("dtype",))),
        ("method", "div"): ((1, ()), (1, ("rounding_mode",))),
    },
)


def _read(text: str) -> str:
    return ast.unparse(parse_formula(text, "formula", _NAMES))


def test_an_argument_some_overload_takes_by_position_stays_positional() -> None:
    assert _read("x.bmm(y).sum(0) * !a") == "x.bmm(y).sum(0) * (not a)"
    assert _read("x.sum(0, true) * !a") == "x.sum(0, True) * (not a)"


def test_arguments_beyond_every_overloads_positions_are_named() -> None:
    assert _read("x.sum(0, true, y) * !a") == "x.sum(0, True, dtype=y) * (not a)"
    assert (
        _read('x.div(y, "trunc") * !a') == "x.div(y, rounding_mode='trunc') * (not a)"
    )

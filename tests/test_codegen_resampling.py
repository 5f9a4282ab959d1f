"""Generator limits met by the resampling family's pasted formulas (codegen)."""

from __future__ import annotations

import ast

import pytest

from gradgen.codegen.cpp_spelling import parse_formula


def _read(text: str) -> str:
    return ast.unparse(parse_formula(text, "formula"))


@pytest.mark.parametrize(
    ("cpp", "python"),
    [
        # channel_shuffle's backward: C++ divides integers
        (
            "channel_shuffle_symint(grad, grad.sym_size(1) / groups)",
            "channel_shuffle(grad, grad.sym_sizes()[1] // groups)",
        ),
        ("self.numel() / 2", "self.numel() // 2"),
        ("self.dim() / 2 ? a : b", "a if self.dim() // 2 else b"),
        # a tensor divided stays a true division
        ("grad / self.sym_size(0)", "grad / self.sym_sizes()[0]"),
        ("grad / 2", "grad / 2"),
    ],
)
def test_a_size_divided_is_integer_division(cpp: str, python: str) -> None:
    assert _read(cpp) == python

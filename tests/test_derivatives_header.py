"""derivatives.yaml's header says what a formula may use; keep it true."""

from __future__ import annotations

import re
from pathlib import Path

from gradgen import helpers
from gradgen.codegen.allowed import HAND_WRITTEN_METHODS, TENSOR_QUERY_METHODS
from gradgen.codegen.formulas import METADATA_SUGAR, SCALAR_METHODS
from gradgen.codegen.load import exported_names

ROOT = Path(__file__).resolve().parent.parent
HEADER = "".join(
    line
    for line in (ROOT / "derivatives.yaml").read_text().splitlines(keepends=True)
    if line.startswith("#")
)


def _section(title: str) -> set[str]:
    """The names listed after `title` up to the next section of the header."""
    match = re.search(rf"#   {re.escape(title)}(.*?)(?=\n#   \S|\Z)", HEADER, re.S)
    assert match, f"the header has no '{title}' section"
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", match.group(1)))


def test_header_points_at_the_helpers_lists_instead_of_copying_them() -> None:
    """The header names where the helpers are listed (their families' `__all__`,
    which the generator reads) and the examples it gives exist: no second list."""
    described = _section("helpers:")
    assert {"__all__", "src", "gradgen", "helpers"} <= described
    examples = described & {"handle_r_to_c", "sum_to", "pow_backward"}
    assert examples == {"handle_r_to_c", "sum_to", "pow_backward"}
    assert examples <= set(helpers.__all__)
    assert exported_names("helpers") == frozenset(helpers.__all__)


def test_header_lists_the_metadata_sugar_and_queries() -> None:
    sugar = _section("saved metadata")
    assert set(METADATA_SUGAR) <= sugar
    assert TENSOR_QUERY_METHODS <= _section("tensor queries:")
    assert HAND_WRITTEN_METHODS <= _section("hand-written:")
    assert set(SCALAR_METHODS) <= _section("scalars:")


def test_every_helper_exists() -> None:
    for name in helpers.__all__:
        assert callable(getattr(helpers, name)), name

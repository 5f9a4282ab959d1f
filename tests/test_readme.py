"""Every Python block in README.md runs, and prints what its comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def _expected_output(block: str) -> list[str]:
    """The comment after each `print(...)`: what that line prints."""
    return [
        line.split("#", 1)[1].strip()
        for line in block.splitlines()
        if line.lstrip().startswith("print(") and "#" in line
    ]


def test_the_readme_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_block_runs_and_prints_what_it_says(block: str) -> None:
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(block, str(README), "exec"), {})
    assert output.getvalue().splitlines() == _expected_output(block)

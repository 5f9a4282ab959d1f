"""Hand-written code is black-formatted, as the generated code is (issue 17).

`make generate` formats generated/ itself; this test holds the hand-written rest to the
same pinned black (pyproject's `[tool.black]`), so `black src codegen tests bench`
changes nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HAND_WRITTEN = ["src", "codegen", "tests", "bench", "templates/__init__.py"]


def test_hand_written_code_is_black_formatted() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "black", "--check", *HAND_WRITTEN],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    unformatted = [
        line.removeprefix("would reformat ")
        for line in result.stderr.splitlines()
        if line.startswith("would reformat ")
    ]
    assert result.returncode == 0, (
        "black would reformat these hand-written files (run `black "
        + " ".join(HAND_WRITTEN)
        + "`):\n"
        + "\n".join(unformatted or [result.stderr])
    )

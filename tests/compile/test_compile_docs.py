"""docs/compile.md shows the source gradgen.compile really generates for its step."""

from __future__ import annotations

import linecache
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "compile.md"


def test_the_documented_source_is_what_the_step_generates() -> None:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w+)\n(.*?)```", text, re.S)
    step = next(code for kind, code in blocks if kind == "python")
    documented = next(code for kind, code in blocks if kind == "text")
    # Run the step as the file train.py, whose lines the comments quote.
    linecache.cache["train.py"] = (len(step), None, step.splitlines(True), "train.py")
    namespace: dict[str, object] = {}
    exec(
        compile(step.replace("print(", "(lambda *a: a)("), "train.py", "exec"),
        namespace,
    )
    loss_of = namespace["loss_of"]
    (entry,) = loss_of.cache.values()  # type: ignore[attr-defined]
    assert entry.program.source == documented

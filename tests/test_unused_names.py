"""Hand-written code has no unused names (issue 17): pyflakes, in `make test` and CI.

pyflakes reports unused imports and variables, names redefined before use and other
slips. Two kinds of its messages are what gradgen means on purpose, and only those two
are let through:
- `from m import name as name` is the explicit re-export of a typed package (PEP 484):
  the name is imported to be exported, not to be used here;
- a package's `__init__.py` star-imports its family files (`helpers`, `composites`,
  `numpy_kernels`) or the generated operators (`gradgen`), so pyflakes cannot tell
  whether a name is defined there ("unable to detect undefined names"); the families'
  `__all__` lists are checked by tests/test_family_packages.py. A star import anywhere
  else fails.
Everything else fails with the file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pyflakes import api as pyflakes_api
from pyflakes import messages
from pyflakes.reporter import Reporter

ROOT = Path(__file__).resolve().parent.parent
HAND_WRITTEN = ["src", "codegen", "tests", "bench", "templates/__init__.py"]


def _python_files() -> list[Path]:
    files: list[Path] = []
    for entry in HAND_WRITTEN:
        path = ROOT / entry
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    # tests/typecheck/typings links to generated/, which is not hand-written
    return [file for file in files if "typings" not in file.parts]


def _explicit_reexports(tree: ast.Module) -> set[int]:
    """Lines of `from m import name as name` / `import name as name` (PEP 484)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.asname is not None and alias.asname == alias.name:
                    lines.add(node.lineno)
    return lines


class _Collect(Reporter):  # type: ignore[misc]  (pyflakes ships no type stubs)
    def __init__(self) -> None:
        self.found: list[messages.Message] = []
        self.problems: list[str] = []

    def flake(self, message: messages.Message) -> None:
        self.found.append(message)

    def syntaxError(self, filename, msg, lineno, offset, text):  # noqa: N802
        self.problems.append(f"{filename}:{lineno}: {msg}")

    def unexpectedError(self, filename, msg):  # noqa: N802
        self.problems.append(f"{filename}: {msg}")


def _is_on_purpose(
    message: messages.Message, reexports: set[int], package_init: bool
) -> bool:
    if isinstance(message, (messages.ImportStarUsage, messages.ImportStarUsed)):
        return package_init  # see the module docstring
    if isinstance(message, messages.UnusedImport):
        star = message.message_args[0].endswith("*")
        return message.lineno in reexports or (star and package_init)
    return False


def test_hand_written_code_has_no_unused_names() -> None:
    failures: list[str] = []
    for path in _python_files():
        source = path.read_text(encoding="utf-8")
        reporter = _Collect()
        pyflakes_api.check(source, str(path.relative_to(ROOT)), reporter)
        failures.extend(reporter.problems)
        reexports = _explicit_reexports(ast.parse(source))
        for message in reporter.found:
            if not _is_on_purpose(message, reexports, path.name == "__init__.py"):
                failures.append(str(message))
    assert not failures, "pyflakes found (fix, or re-export with `as`):\n" + "\n".join(
        failures
    )


def test_the_check_catches_an_unused_import() -> None:
    reporter = _Collect()
    pyflakes_api.check("import os\nfrom m import a as a\n", "probe.py", reporter)
    tree = ast.parse("import os\nfrom m import a as a\n")
    reexports = _explicit_reexports(tree)
    kept = [m for m in reporter.found if not _is_on_purpose(m, reexports, True)]
    assert [type(m).__name__ for m in kept] == ["UnusedImport"]
    assert "'os' imported but unused" in str(kept[0])


def test_a_star_import_outside_a_package_init_fails() -> None:
    source = "from m import *\nprint(name)\n"
    reporter = _Collect()
    pyflakes_api.check(source, "probe.py", reporter)
    kinds = {
        type(m).__name__
        for m in reporter.found
        if not _is_on_purpose(m, set(), package_init=False)
    }
    assert kinds == {"ImportStarUsed", "ImportStarUsage"}

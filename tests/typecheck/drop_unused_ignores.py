"""Remove the `# type: ignore` comments (or codes of them) that mypy reports unused.

    python tests/typecheck/drop_unused_ignores.py [--config FILE] [--skip PATH ...]

Runs mypy from the repository root with the given config (pyproject.toml: src/gradgen,
codegen, tests/typecheck/public_api.py; tests/typecheck/tests.ini for the tests), reads
its `Unused "type: ignore[...]" comment` errors (warn_unused_ignores), drops those
codes from each comment (the whole comment when none is left; a comment after it, such
as `# noqa`, stays), black-formats the files it changed, and repeats until mypy
reports none. `--skip` leaves files under a path alone. Prints what it changed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_UNUSED = re.compile(
    r'^(?P<path>[^:\n]+):(?P<line>\d+): error: Unused "type: ignore'
    r'(?:\[(?P<codes>[^\]]*)\])?" comment'
)
_IGNORE = re.compile(r"#\s*type:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")


def unused_ignores(report: str) -> dict[Path, dict[int, set[str] | None]]:
    """path -> line -> the unused codes (None: the bare comment) from mypy's output."""
    found: dict[Path, dict[int, set[str] | None]] = {}
    for text in report.splitlines():
        match = _UNUSED.match(text)
        if match:
            codes = match["codes"]
            found.setdefault(ROOT / match["path"], {})[int(match["line"])] = (
                None if codes is None else {c.strip() for c in codes.split(",")}
            )
    return found


def drop(line: str, unused: set[str] | None) -> str:
    """`line` without the unused codes of its `# type: ignore` comment."""
    match = _IGNORE.search(line)
    if match is None:
        return line
    kept = []
    if unused is not None and match["codes"] is not None:
        kept = [c.strip() for c in match["codes"].split(",") if c.strip() not in unused]
    if kept:
        return (
            line[: match.start()]
            + f"# type: ignore[{', '.join(kept)}]"
            + line[match.end() :]
        )
    before, after = line[: match.start()].rstrip(), line[match.end() :].strip()
    if not before.strip():  # a comment line of its own
        return before + after if after else ""
    return f"{before}  {after}" if after else before


def apply(
    found: dict[Path, dict[int, set[str] | None]], skip: list[Path]
) -> list[Path]:
    changed = []
    for path, lines in sorted(found.items()):
        if any(path.is_relative_to(s) for s in skip):
            continue
        text = path.read_text().split("\n")
        for number, unused in lines.items():
            text[number - 1] = drop(text[number - 1], unused)
        path.write_text("\n".join(text))
        changed.append(path)
        print(f"{path.relative_to(ROOT)}: {len(lines)} comment(s)")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="pyproject.toml")
    parser.add_argument("--skip", nargs="*", default=[], type=Path)
    arguments = parser.parse_args(argv)
    skip = [(ROOT / s).resolve() for s in arguments.skip]
    for _ in range(5):
        result = subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", arguments.config],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        changed = apply(unused_ignores(result.stdout), skip)
        if not changed:
            return 0
        subprocess.run([sys.executable, "-m", "black", "-q", *map(str, changed)])
    return 1


if __name__ == "__main__":
    sys.exit(main())

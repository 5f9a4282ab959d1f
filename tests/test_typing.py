"""mypy reports no errors (pyproject.toml's [tool.mypy]: src/gradgen, codegen and
tests/typecheck/public_api.py), and the package ships its py.typed marker.

The mypy test is skipped when mypy is not installed, unless GRADGEN_REQUIRE_MYPY=1 is
set, in which case it fails (`pip install -e '.[test]'` installs the pinned mypy).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REQUIRE_MYPY = os.environ.get("GRADGEN_REQUIRE_MYPY") == "1"


@pytest.mark.slow  # a cold run (no .mypy_cache) reads numpy's stubs: several seconds
def test_mypy_reports_no_errors() -> None:
    if importlib.util.find_spec("mypy") is None:
        if REQUIRE_MYPY:
            pytest.fail("mypy is not installed (GRADGEN_REQUIRE_MYPY=1 requires it)")
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    # From the repository root, so the config's `files` and cache_dir resolve there.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    report = result.stdout + result.stderr
    errors = [line for line in report.splitlines() if re.search(r": error: ", line)]
    assert (
        result.returncode == 0 and not errors
    ), f"mypy found {len(errors)} error(s) (exit status {result.returncode}):\n{report}"
    assert "Success: no issues found" in result.stdout, report


def test_py_typed_marker_is_shipped() -> None:
    """PEP 561: the marker exists and setuptools' package-data includes it."""
    assert (ROOT / "src" / "gradgen" / "py.typed").is_file()
    if sys.version_info < (3, 11):
        pytest.skip("tomllib needs Python 3.11")
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["gradgen"]

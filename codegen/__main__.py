"""python -m gradgen.codegen --native-functions F --derivatives F --out DIR [--kernels F.py]

Exit status: 0 done (or, with --check, nothing stale); 1 errors in the input (printed
as file:line: operator: message, all of them) or stale files with --check; 2 usage (or
the codegen extra not installed); 3 a bug in the generator (a short message; the
traceback with --verbose). Bad input never prints a traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

from . import generate
from .errors import NESTED_TOO_DEEPLY, CodegenError, shorten

# What the generator needs beyond the runtime: the `codegen` extra of gradgen.
_EXTRA_MODULES = {"yaml": "pyyaml", "jinja2": "jinja2", "black": "black"}


def _missing_extra() -> str | None:
    """A message naming the extra to install when a module of it cannot be imported."""
    import importlib

    for module, project in _EXTRA_MODULES.items():
        try:
            importlib.import_module(module)
        except ImportError:
            return (
                f"gradgen-codegen: the generator needs {project}, which is not installed; "
                "install gradgen's codegen extra: pip install 'gradgen[codegen]'"
            )
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gradgen-codegen",
        description="Generate an autograd operator package from native_functions.yaml "
        "and derivatives.yaml.",
    )
    parser.add_argument("--native-functions", required=True, type=Path, metavar="FILE")
    parser.add_argument("--derivatives", required=True, type=Path, metavar="FILE")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR")
    parser.add_argument(
        "--kernels",
        type=Path,
        metavar="FILE.py",
        help="your own kernels module: the functions in its __all__ may be called by "
        "kernel expressions and formulas; it is copied into the package as user_kernels.py",
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; fail if any file is stale"
    )
    parser.add_argument("--verbose", action="store_true", help="show tracebacks")
    parser.add_argument(
        "--no-cache", action="store_true", help="format everything anew (no ~/.cache)"
    )
    arguments = parser.parse_args(argv)
    missing = _missing_extra()
    if missing:
        print(missing, file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        paths = generate(
            arguments.native_functions,
            arguments.derivatives,
            arguments.out,
            arguments.check,
            cache=not arguments.no_cache,
            kernels=arguments.kernels,
        )
    except CodegenError as error:
        if arguments.verbose:
            traceback.print_exc()
        print(error, file=sys.stderr)
        count = len(getattr(error, "errors", [error]))
        print(
            f"gradgen-codegen: {count} error(s); nothing was written", file=sys.stderr
        )
        return 1
    except RecursionError:
        if arguments.verbose:
            traceback.print_exc()
        print(f"gradgen-codegen: the input is {NESTED_TOO_DEEPLY}", file=sys.stderr)
        print("gradgen-codegen: 1 error(s); nothing was written", file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 - anything else is the generator's fault
        if arguments.verbose:
            traceback.print_exc()
        print(
            f"gradgen-codegen: internal error, a bug in the generator: "
            f"{type(error).__name__}: {shorten(str(error), 300)}; nothing was written "
            "(run with --verbose for the traceback, and please report it)",
            file=sys.stderr,
        )
        return 3
    except KeyboardInterrupt:
        print("gradgen-codegen: interrupted; nothing was written", file=sys.stderr)
        return 130
    elapsed = time.perf_counter() - started
    if arguments.check:
        for path in paths:
            print(f"stale: {path}", file=sys.stderr)
        if paths:
            print(
                "gradgen-codegen: generated files are stale; run `make generate`",
                file=sys.stderr,
            )
            return 1
        print(f"gradgen-codegen: {arguments.out} is up to date ({elapsed:.2f} s)")
        return 0
    written = ", ".join(p.name for p in paths) or "nothing changed"
    print(f"gradgen-codegen: {arguments.out}: {written} ({elapsed:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

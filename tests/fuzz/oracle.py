"""The fuzzer's oracle: generate, then accept only a package that parses and imports
or a located CodegenError; and the hypothesis budgets (see
tests/fuzz/test_codegen_fuzz.py)."""

from __future__ import annotations

import ast
import functools
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

try:
    import resource
except ImportError:  # not on Windows: no memory limit there
    resource = None  # type: ignore[assignment]
from hypothesis import HealthCheck, Phase, settings

from gradgen.codegen import CodegenError, generate
from gradgen.codegen import emit, load

from fuzz.mutations import PAYLOAD_NAMES

# -- the oracle ---------------------------------------------------------------------------


class _InvalidOutput(Exception):
    """The generator accepted its input and emitted code that does not parse."""


class _Timeout(Exception):
    pass


@contextmanager
def _bounded(seconds: float, extra_memory: int = 1 << 30) -> Iterator[None]:
    """Turn a hang into _Timeout and a runaway allocation into MemoryError (so both fail
    the test, not the machine): a timer, and an address-space limit of what the process
    uses now plus `extra_memory`. Both are put back afterwards."""
    use_alarm = hasattr(signal, "setitimer") and sys.platform != "win32"
    if use_alarm:

        def on_alarm(signum: int, frame: Any) -> None:
            raise _Timeout(f"generation took more than {seconds} s")

        previous_handler = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    limits = None
    try:
        if resource is None:
            raise OSError("no resource module")
        status = Path("/proc/self/status").read_text()
        vm_size = int(re.search(r"VmSize:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]
        limits = resource.getrlimit(resource.RLIMIT_AS)
        if limits[1] == resource.RLIM_INFINITY or limits[1] > vm_size + extra_memory:
            resource.setrlimit(resource.RLIMIT_AS, (vm_size + extra_memory, limits[1]))
        else:
            limits = None
    except (OSError, AttributeError, ValueError):
        limits = None
    try:
        yield
    finally:
        if limits is not None:
            resource.setrlimit(resource.RLIMIT_AS, limits)
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous_handler)


MAX_ERROR_LENGTH = 1000

# file:line: at the start of each error: the location the user is given.
_LOCATED = re.compile(r"^[^\n:]+\.(yaml|yml|py):[1-9]\d*: ")


def _check_refusal(error: CodegenError) -> None:
    errors = getattr(error, "errors", None) or [error]
    for one in errors:
        text = str(one)
        assert (
            len(text) <= MAX_ERROR_LENGTH
        ), f"an error of {len(text)} characters (errors quote a short excerpt): {text[:300]!r}..."
        assert _LOCATED.match(text), f"a CodegenError without file:line: {text[:500]!r}"


def _payload_identifiers(name: str, source: str) -> set[str]:
    """Payload identifiers used as code (not inside a string) in a generated module.

    A name the module binds itself (a parameter, an assignment, an import) is an
    operator's argument or output, not a payload: `Tensor os` is a legal argument, and
    its name may reach the code as a parameter, a keyword or a field of a named tuple
    (given as a string).
    """
    try:
        tree = ast.parse(source, name)
    except SyntaxError as error:
        raise _InvalidOutput(f"{name}: {error}") from None
    except ValueError as error:  # e.g. an integer literal over 4,300 digits
        raise _InvalidOutput(f"{name}: {error}") from None
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.keyword) and node.arg:
            bound.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            bound.add(node.value)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in PAYLOAD_NAMES - bound:
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in PAYLOAD_NAMES - bound:
            found.add("." + node.attr)
    return found


def _write_pair(
    directory: Path, native: str | bytes, derivatives: str | bytes
) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = (directory / "native_functions.yaml", directory / "derivatives.yaml")
    for path, content in zip(paths, (native, derivatives)):
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8", "surrogatepass"))
    return paths


class Fuzzer:
    """Runs the generator on one input and checks the outcome (see the module docstring)."""

    def __init__(
        self, root: Path, monkeypatch: pytest.MonkeyPatch, black: bool
    ) -> None:
        self.root = root
        self.black = black
        self.counts = {"generated": 0, "refused": 0}
        self.cases = 0
        self.to_import: list[Path] = []
        self.rendered: dict[str, str] = {}
        # The runtime's export lists do not change during a run: read them once.
        for name in ("exported_names", "defined_functions"):
            if hasattr(load, name):
                monkeypatch.setattr(load, name, functools.cache(getattr(load, name)))
        if not black:
            monkeypatch.setattr(
                emit.BlackCache,
                "format_modules",
                lambda cache, texts: self._parse_only(texts),
            )

    def _parse_only(self, texts: dict[str, str]) -> dict[str, str]:
        self.rendered = dict(texts)
        return dict(texts)

    def __call__(
        self, native: str | bytes, derivatives: str | bytes, keep: bool = False
    ) -> str:
        """'generated' or 'refused'; an AssertionError for any other outcome."""
        self.cases += 1
        case = self.root / f"case{self.cases}"
        native_path, derivatives_path = _write_pair(case, native, derivatives)
        out = case / "fzpkg"
        self.rendered = {}
        outcome = "generated"
        try:
            with _bounded(seconds=20):
                generate(native_path, derivatives_path, out, cache=False)
                sources = self.rendered or {
                    p.name: p.read_text(encoding="utf-8") for p in out.glob("*.py")
                }
                found = set().union(
                    *(_payload_identifiers(n, s) for n, s in sources.items())
                )
        except CodegenError as error:
            outcome = "refused"
            _check_refusal(error)
        except _InvalidOutput as error:
            raise AssertionError(
                f"the generator accepted the input and emitted invalid Python: {error}"
            ) from None
        except BaseException as error:  # noqa: BLE001 - any other outcome is the defect
            if isinstance(error, KeyboardInterrupt):
                raise
            raise AssertionError(
                f"the generator raised {type(error).__name__}, not CodegenError: {str(error)[:300]}"
            ) from error
        else:
            assert (
                not found
            ), f"payload identifiers reached the generated code: {sorted(found)}"
            if keep:
                self.to_import.append(out)
        self.counts[outcome] += 1
        assert not list(
            self.root.rglob("CANARY*")
        ), "a canary file was written during generation"
        return outcome

    def import_all(self) -> None:
        """Import every kept package in a subprocess; each must import, none may write
        the canary. One interpreter imports gradgen once and forks per package."""
        if not self.to_import:
            return
        script = textwrap.dedent("""
            import importlib, os, sys
            import gradgen  # noqa: F401
            failed = []
            for path in sys.argv[1:]:
                parent, name = os.path.split(path)
                if not hasattr(os, "fork"):
                    raise SystemExit("no fork")
                pid = os.fork()
                if pid == 0:
                    try:
                        sys.path.insert(0, parent)
                        importlib.import_module(name)
                    except BaseException as error:
                        sys.stderr.write(f"{path}: {type(error).__name__}: {error}\\n")
                        os._exit(1)
                    os._exit(0)
                _, status = os.waitpid(pid, 0)
                if status:
                    failed.append(path)
            print(len(failed))
            """)
        result = subprocess.run(
            [sys.executable, "-c", script, *map(str, self.to_import)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.root,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert (
            result.stdout.strip() == "0"
        ), f"generated packages that do not import:\n{result.stderr[-3000:]}"
        assert not list(
            self.root.rglob("CANARY*")
        ), "importing a generated package wrote a canary file"


def _fast(examples: int) -> Callable[[Any], Any]:
    """CI budget: a fixed seed, no example database, no shrinking (a failure is
    reported as found; rerun the slow test locally to shrink it)."""
    return settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )


def _long(examples: int) -> Callable[[Any], Any]:
    return settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )

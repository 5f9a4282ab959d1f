"""The generator under fuzzing: hostile or broken YAML either generates a package that
imports, or is refused with a CodegenError that says file:line -- never anything else.

Inputs start from real entries of the repository's native_functions.yaml and
derivatives.yaml and from small hand-made pairs, and are mutated the way a careless or
hostile author would: characters inserted, deleted or replaced (quotes, triple quotes,
backslashes, newlines, control characters, template braces, unicode), tokens swapped or
replaced by names the generated code uses itself, YAML values of the wrong type, keys
deleted, renamed or duplicated, deep nesting, aliases, huge numbers and non-UTF-8 bytes.

The oracle (`_generate`) accepts exactly two outcomes:

* generation succeeds: every generated module parses, and no identifier of the kind a
  payload would smuggle in (`PWNED`, `__import__`, `eval`, `os`, `system`, `tofile`,
  ...) appears in the generated code outside a string literal; a few packages of each
  run are also imported, in a subprocess, and must import;
* generation refuses with `CodegenError`, each error located (``file:line: ...``) and
  short (an error quotes an excerpt, never a whole value).

Anything else fails the test: another exception type (RecursionError, MemoryError, a
KeyError from deep inside), an unlocated error, generated code that does not parse or
import, a payload identifier in the code, or a canary file written.

Cost: most examples run the generator in process with black replaced by a parse of the
rendered text (`BlackCache.format_modules` patched; black only formats, the parse
checks what black would have refused), with the runtime's export lists read once. One
test runs the whole generator (black included, no cache) on fewer examples and imports
what it produced. Every test has a fixed seed and a budget (the fast run takes about
15 s); the `slow` tests run the same properties on more examples (about 2 minutes).
A memory limit and a timer guard each example, so a resource bug fails the test
instead of the machine.
"""

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
import yaml

try:
    import resource
except ImportError:  # not on Windows: no memory limit there
    resource = None  # type: ignore[assignment]
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from gradgen.codegen import CodegenError, Location, generate
from gradgen.codegen import emit, load

ROOT = Path(__file__).resolve().parent.parent

# -- seeds --------------------------------------------------------------------------------

# Real entries, self-contained (their formulas call helpers only, not other operators).
REAL_OPERATORS = (
    "mul.Tensor",
    "pow.Tensor_Scalar",
    "sum.dim_IntList",
    "mean.dim",
    "clamp",
    "cat",
    "div.Tensor_mode",
    "permute",
    "add.Tensor",
)


def _operator_name(schema: str) -> str:
    return schema.split("(", 1)[0].strip()


@functools.cache
def _real_entries() -> tuple[tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]]:
    native = yaml.safe_load(
        (ROOT / "native_functions.yaml").read_text(encoding="utf-8")
    )
    derivatives = yaml.safe_load(
        (ROOT / "derivatives.yaml").read_text(encoding="utf-8")
    )
    wanted = set(REAL_OPERATORS)
    return (
        tuple(e for e in native if _operator_name(e["func"]) in wanted),
        tuple(e for e in derivatives if _operator_name(e["name"]) in wanted),
    )


def _renamed(entry: dict[str, Any], key: str) -> dict[str, Any]:
    """The entry with its operator renamed fz_<name>: generated packages are imported
    beside gradgen's own operators, whose names they must not take."""
    copy = dict(entry)
    copy[key] = "fz_" + copy[key]
    if "composite" in copy:  # not expected in the seeds, but keep them generating
        del copy["composite"]
    return copy


HAND_MADE_NATIVE = [
    {
        "func": "fz_scale(Tensor self, Scalar factor=2, *, str mode='plain') -> Tensor",
        "variants": "function, method",
        "numpy": "self * factor if mode == 'plain' else np.abs(self) * factor",
    },
    {
        "func": "fz_split2(Tensor self) -> (Tensor first, Tensor second)",
        "numpy": "(self * 0.5, self * 1.5)",
    },
    {
        "func": "fz_pick(Tensor self, int[2] dims=[0,1], bool flag=False) -> Tensor",
        "numpy": "np.negative(self) if flag else self + 0.0",
    },
]
HAND_MADE_DERIVATIVES = [
    {
        "name": HAND_MADE_NATIVE[0]["func"],
        "self": "grad * factor if mode == 'plain' else grad * factor * sgn_backward(self, grad, result)",
        "result": "self_t * factor",
    },
    {
        "name": HAND_MADE_NATIVE[1]["func"],
        "self": "grads[0] * 0.5 if grads[1] is None else grads[1] * 1.5",
    },
    {"name": HAND_MADE_NATIVE[2]["func"], "self": "-grad if flag else grad"},
]


def _seed_pairs() -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    native, derivatives = _real_entries()
    real = (
        [_renamed(e, "func") for e in native],
        [_renamed(e, "name") for e in derivatives],
    )
    one_real = ([real[0][0]], [real[1][0]])
    return [real, one_real, (list(HAND_MADE_NATIVE), list(HAND_MADE_DERIVATIVES))]


def _dump(entries: list[dict[str, Any]]) -> str:
    return yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=10**6)


# -- hostile material ---------------------------------------------------------------------

PAYLOAD_NAMES = frozenset(
    {
        "PWNED", "__import__", "eval", "exec", "open", "compile", "breakpoint",
        "getattr", "setattr", "delattr", "globals", "locals", "vars", "exit", "quit",
        "__subclasses__", "__globals__", "__builtins__", "__class__", "__dict__",
        "os", "sys", "subprocess", "builtins", "importlib", "ctypes", "pickle", "shutil",
        "f2py", "_datasource", "system", "popen", "tofile", "fromfile", "memmap",
        "save", "savez", "savetxt", "load", "loadtxt", "genfromtxt",
    }
)  # fmt: skip

HOSTILE = [
    '"', "'", '"""', "'''", "\\", "\\n", "\n", "\r", "\t", "#", "\x00", "\x07", "\x1b",
    "\x85", "\u2028", "\u200b", "\u202e", "\ufeff", "é", "ℕ", "İ", "\U0001f600", "ǅ",
    "{{", "}}", "{%", "%}", "{#", "#}", "${x}", "%s", "{0}",
    "(", ")", "[", "]", ",", "->", "=", "*", ":", "?", "!", "|", "&", ".", " ", "-",
    "~", "@", "`", ";", "<", ">",
    '"+PWNED()+"', "'+PWNED()+'", '"""+PWNED()+"""', "'''+PWNED()+'''",
    "\nPWNED()\n", "\\\nPWNED()#", '"""\nPWNED()\n"""', "'); PWNED(); ('",
    "__import__('os').system('true')", "np.f2py.os.system('true')",
    "np.lib._datasource.os.system('true')", "np.ma.core.builtins.eval('1')",
    "self.tofile('x')", "np.save('x', self)", "np.load('x', allow_pickle=True)",
    "eval('1')", "open('x')", "getattr(np, 'os')", "self.__class__", "lambda: 0",
    "(x := 1)", "...", "yield 1", "await x", "f'{PWNED()}'",
    "9" * 400, "1e999", "-0", "0x10", "1_0", "nan", "inf", "-9223372036854775809",
]  # fmt: skip

# Names the generated code uses for itself, keywords, builtins: what a YAML name must not
# be able to shadow or break.
NAMES = [
    "self", "other", "grad", "grads", "result", "result0", "grad_input_mask",
    "any_grad_defined", "needs_input_grad", "ks", "input", "redispatch", "functions",
    "operators", "set_history", "Node", "Tensor", "SavedVariable", "np", "dtype",
    "kernels", "ops", "_a", "def", "class", "lambda", "None", "True", "False", "not",
    "and", "in", "is", "if", "else", "for", "import", "return", "print", "len", "list",
    "int", "str", "bool", "float", "Scalar", "ScalarType", "Tensor[]", "int[]",
    "__init__", "__class__", "PWNED", "x" * 300, "é",
]  # fmt: skip

_TOKEN = re.compile(r"\w+|[^\w\s]|\s+")


def _hostile_text() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(HOSTILE),
        st.sampled_from(NAMES),
        st.text(max_size=6),  # any unicode, surrogates excluded by hypothesis
    )


@st.composite
def _mutated_text(draw: st.DrawFn, text: str) -> str:
    """`text` after one to three character or token mutations."""
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["insert", "delete", "replace", "swap", "token"]))
        position = draw(st.integers(0, len(text)))
        if kind == "insert":
            text = text[:position] + draw(_hostile_text()) + text[position:]
        elif kind == "delete":
            text = text[:position] + text[position + draw(st.integers(1, 8)) :]
        elif kind == "replace":
            text = text[:position] + draw(_hostile_text()) + text[position + 1 :]
        else:
            tokens = _TOKEN.findall(text)
            if not tokens:
                continue
            i = draw(st.integers(0, len(tokens) - 1))
            if kind == "swap":
                j = draw(st.integers(0, len(tokens) - 1))
                tokens[i], tokens[j] = tokens[j], tokens[i]
            else:
                tokens[i] = draw(st.sampled_from(NAMES + HOSTILE[:60]))
            text = "".join(tokens)
    return text


def _other_value() -> st.SearchStrategy[Any]:
    """A YAML value of another type than the one expected."""
    leaf = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.just(10**500),
        st.floats(allow_nan=True),
        st.text(max_size=10),
        st.sampled_from(HOSTILE),
    )
    nested = st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.text(max_size=5), inner, max_size=3),
        ),
        max_leaves=8,
    )
    return st.one_of(
        nested,
        st.integers(1, 200).map(
            lambda n: functools.reduce(lambda v, _: [v], range(n), 0)
        ),
    )


ENTRY_KEYS = [
    "func", "name", "numpy", "composite", "variants", "type_promotion", "python_binding",
    "self", "other", "result", "output_differentiability", "self, other", "dispatch",
]  # fmt: skip


@st.composite
def _mutated_entries(
    draw: st.DrawFn, entries: list[dict[str, Any]], keys: tuple[str, ...] | None
) -> list[dict[str, Any]]:
    """`entries` after one mutation: of a string value (of `keys` when given), of a
    value's type, or of the keys and entries themselves."""
    entries = [dict(e) for e in entries]
    if not entries:
        return entries
    entry = entries[draw(st.integers(0, len(entries) - 1))]
    candidates = [
        k for k in entry if isinstance(entry[k], str) and (keys is None or k in keys)
    ]
    kind = draw(
        st.sampled_from(["text"] * 6 + ["type", "delete", "rename", "add", "entry"])
    )
    if kind == "text" and candidates:
        key = draw(st.sampled_from(candidates))
        entry[key] = draw(_mutated_text(entry[key]))
    elif kind == "type" and entry:
        entry[draw(st.sampled_from(sorted(entry)))] = draw(_other_value())
    elif kind == "delete" and entry:
        del entry[draw(st.sampled_from(sorted(entry)))]
    elif kind == "rename" and entry:
        old = draw(st.sampled_from(sorted(entry)))
        new = draw(st.one_of(st.sampled_from(ENTRY_KEYS + NAMES), _hostile_text()))
        value = entry.pop(old)
        entry[new] = value
    elif kind == "add":
        entry[draw(st.sampled_from(ENTRY_KEYS + NAMES))] = draw(
            st.one_of(st.sampled_from(HOSTILE + NAMES), _other_value())
        )
    elif kind == "entry":
        i = draw(st.integers(0, len(entries) - 1))
        if draw(st.booleans()):
            entries.insert(i, dict(entries[i]))  # the same operator twice
        else:
            del entries[i]
    return entries


@st.composite
def _mutated_document(draw: st.DrawFn, text: str) -> str | bytes:
    """A whole YAML document after a text-level mutation (the YAML itself may break)."""
    lines = text.splitlines(keepends=True) or ["\n"]
    kind = draw(
        st.sampled_from(
            [
                "chars",
                "chars",
                "line-dup",
                "line-del",
                "indent",
                "nest",
                "alias",
                "bytes",
                "tabs",
                "anchor-key",
            ]
        )
    )
    i = draw(st.integers(0, len(lines) - 1))
    if kind == "chars":
        return draw(_mutated_text(text))
    if kind == "line-dup":  # duplicate keys or entries
        lines.insert(i, lines[i])
    elif kind == "line-del":
        del lines[i]
    elif kind == "indent":
        lines[i] = " " * draw(st.integers(0, 6)) + lines[i].lstrip(" ")
    elif kind == "nest":  # very deep flow collections
        depth = draw(st.integers(50, 3000))
        lines.insert(i, f"- func: {'[' * depth}{']' * depth}\n")
    elif kind == "alias":  # a small alias bomb: 10**levels scalars from a few lines
        levels = draw(st.integers(2, 4))
        bomb = [
            "- func: x\n",
            '  b0: &b0 ["aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa"]\n',
        ]
        for level in range(1, levels + 1):
            bomb.append(
                f"  b{level}: &b{level} [{', '.join([f'*b{level - 1}'] * 10)}]\n"
            )
        lines[i:i] = bomb
    elif kind == "bytes":  # not UTF-8
        raw = "".join(lines).encode("utf-8")
        position = draw(st.integers(0, len(raw)))
        junk = draw(
            st.sampled_from(
                [b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\x80abc"]
            )
        )
        return raw[:position] + junk + raw[position:]
    elif kind == "tabs":
        lines[i] = lines[i].replace("  ", "\t", 1)
    elif kind == "anchor-key":  # merge keys and aliases used as values
        lines.insert(
            i,
            "- &e {func: 'fz_a(Tensor self) -> Tensor', numpy: 'self'}\n- *e\n- {<<: *e, func: 'fz_b(Tensor self) -> Tensor'}\n",
        )
    return "".join(lines)


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


@pytest.fixture()
def fuzzer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fuzzer:
    return Fuzzer(tmp_path, monkeypatch, black=False)


@pytest.fixture()
def full_fuzzer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fuzzer:
    return Fuzzer(tmp_path, monkeypatch, black=True)


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


# Structured mutations keep the input well-formed more often, so that hostile text
# reaches the later stages (the templates) instead of being refused by the parser.
STRING_CONTENT = [
    '"', "'", '"""', "'''", "\\", "\\'", '\\"', "\n", "\\n", "\x00", "\x1b", "\u2028",
    '"+PWNED()+"', "'+PWNED()+'", '"""+PWNED()+"""', "'''+PWNED()+'''", "\\'+PWNED()+\\'",
    "{{ PWNED() }}", "{% PWNED %}", "#", "é\U0001f600", "x" * 200,
]  # fmt: skip
ARGUMENT_TYPES = [
    "Tensor", "Tensor?", "Scalar", "Scalar?", "int", "int?", "int[]", "int[2]", "int[1]?",
    "float", "bool", "str", "str?", "ScalarType?", "Tensor[]", "SymInt", "Layout?",
    "int[999999999]", "int[" + "9" * 30 + "]", "Tensor(a)", "Tensor(a!)",
]  # fmt: skip
DEFAULTS = [
    "", "=None", "=True", "=False", "=maybe", "=0", "=-1", "=1.5", "=[]", "=[0,1]",
    "=" + "9" * 4400, "=1e999", "=contiguous_format", "=long",
]  # fmt: skip
HOSTILE_EXPRESSIONS = [
    "np.f2py.os.system('true')", "np.lib._datasource.os.system('true')",
    "np.ma.core.builtins.eval('1')", "np.f2py.subprocess.run('true')", "self.tofile('x')",
    "np.save('x', self)", "np.load('x', allow_pickle=True)", "np.PWNED", "__import__('os')",
    "PWNED()", "self.__class__", "getattr(np, 'os')", "(lambda: 0)()", "[x for x in ()]",
    "len('\"\"\"')", "'\"\"\"+PWNED()+\"\"\"'", "'\\'\\'\\'+PWNED()+\\'\\'\\''",
    "'\"+PWNED()+\"'", "'\\n\"\"\"\\nPWNED()\\n\"\"\"'", "'{{PWNED()}}'", "b'\\x00'",
    "f'{self}'", "'%s' % 1", "not_implemented('\"\"\"')", "1 if '\"\"\"' else 0",
    "2**64", "-(2**63)", "10**400", "(" * 40 + "1" + ")" * 40,
    "1" + " + 1" * 3000, "self" + ".T" * 400,
]  # fmt: skip


@st.composite
def _structured_schema(draw: st.DrawFn, schema: str) -> str:
    """A schema with an extra argument (hostile name, type or default), a new operator
    name, or new return names."""
    head, rest = schema.split("(", 1)
    arguments, returns = rest.rsplit(") -> ", 1)
    kind = draw(
        st.sampled_from(["argument", "argument", "argument", "name", "returns"])
    )
    if kind == "argument":
        kind_of_default = draw(st.integers(0, 2))
        if kind_of_default == 0:
            default = draw(st.sampled_from(DEFAULTS))
        else:
            quote = "'" if kind_of_default == 1 else '"'
            default = f"={quote}{draw(st.sampled_from(STRING_CONTENT))}{quote}"
        # half the time a plain `str fz_arg`, so that the default reaches the templates
        type_ = draw(st.one_of(st.just("str"), st.sampled_from(ARGUMENT_TYPES)))
        name = draw(st.one_of(st.just("fz_arg"), st.sampled_from(NAMES)))
        argument = f"{type_} {name}{default}"
        if "*" not in arguments and draw(st.booleans()):
            argument = "*, " + argument
        arguments = f"{arguments}, {argument}"
    elif kind == "name":
        overload = "." + head.split(".", 1)[1] if "." in head else ""
        head = draw(st.sampled_from(NAMES + [n + "_" for n in NAMES[:20]])) + overload
    else:
        names = draw(
            st.lists(st.sampled_from(NAMES + ["out0", "out1"]), min_size=1, max_size=3)
        )
        returns = "(" + ", ".join(f"Tensor {n}" for n in names) + ")"
    return f"{head}({arguments}) -> {returns}"


@st.composite
def _structured_formula(draw: st.DrawFn, formula: str) -> str:
    """A formula or kernel expression that also evaluates a hostile expression (a
    string constant with quotes, an attribute chain, a huge or deep expression)."""
    attack = draw(st.sampled_from(HOSTILE_EXPRESSIONS))
    form = draw(
        st.sampled_from(
            ["{f} if {a} else {f}", "({f}) + 0 * ({a})", "{a}", "({f}, {a})[0]"]
        )
    )
    return form.format(f=formula, a=attack)


SCHEMA_KEYS = ("func", "name")
FORMULA_KEYS = ("numpy",)  # and every derivatives.yaml key but name (see below)


@st.composite
def _schema_mutation(draw: st.DrawFn) -> tuple[str, str]:
    """One schema mutated; the same text in both files (so that the pair still joins),
    or in one of them only."""
    native, derivatives = draw(st.sampled_from(_seed_pairs()))
    native = [dict(e) for e in native]
    derivatives = [dict(e) for e in derivatives]
    i = draw(st.integers(0, len(native) - 1))
    old = native[i]["func"]
    if draw(st.booleans()):
        new = draw(_structured_schema(old))
    else:
        new = draw(_mutated_text(old))
    where = draw(st.sampled_from(["both", "both", "native"]))
    native[i]["func"] = new
    if where == "both":
        for entry in derivatives:
            if entry.get("name") == old:
                entry["name"] = new
    return _dump(native), _dump(derivatives)


@st.composite
def _formula_mutation(draw: st.DrawFn) -> tuple[str, str]:
    """A kernel expression or a derivative formula mutated."""
    native, derivatives = draw(st.sampled_from(_seed_pairs()))
    if draw(st.booleans()):  # a structured attack in one formula or expression
        in_native = draw(st.booleans())
        entries = [dict(e) for e in (native if in_native else derivatives)]
        entry = entries[draw(st.integers(0, len(entries) - 1))]
        keys = sorted(
            k
            for k, v in entry.items()
            if isinstance(v, str)
            and k not in ("func", "name", "variants", "type_promotion")
        )
        if keys:
            key = draw(st.sampled_from(keys))
            entry[key] = draw(_structured_formula(entry[key]))
        if in_native:
            native = entries
        else:
            derivatives = entries
    elif draw(st.booleans()):
        native = draw(_mutated_entries(native, FORMULA_KEYS))
    else:
        keys = tuple({k for e in derivatives for k in e if k != "name"})
        derivatives = draw(_mutated_entries(derivatives, keys))
    return _dump(native), _dump(derivatives)


@st.composite
def _entry_mutation(draw: st.DrawFn) -> tuple[str, str]:
    """Any value, key or entry of either file mutated (types, keys, duplicates)."""
    native, derivatives = draw(st.sampled_from(_seed_pairs()))
    for _ in range(draw(st.integers(1, 2))):
        if draw(st.booleans()):
            native = draw(_mutated_entries(native, None))
        else:
            derivatives = draw(_mutated_entries(derivatives, None))
    return _dump(native), _dump(derivatives)


@st.composite
def _document_mutation(draw: st.DrawFn) -> tuple[str | bytes, str | bytes]:
    """One whole document mutated as text (the YAML itself may break)."""
    native, derivatives = draw(st.sampled_from(_seed_pairs()))
    native_text, derivatives_text = _dump(native), _dump(derivatives)
    if draw(st.booleans()):
        return draw(_mutated_document(native_text)), derivatives_text
    return native_text, draw(_mutated_document(derivatives_text))


# -- the seeds generate (the oracle is not vacuous) --------------------------------------


def test_the_seeds_generate_and_import(full_fuzzer: Fuzzer) -> None:
    for native, derivatives in _seed_pairs():
        assert full_fuzzer(_dump(native), _dump(derivatives), keep=True) == "generated"
    full_fuzzer.import_all()


def test_the_oracle_catches_a_payload_in_generated_code() -> None:
    assert _payload_identifiers("m.py", "x = 'PWNED()'\n") == set()
    found = _payload_identifiers("m.py", "x = PWNED()\ny = np.f2py.os.system\n")
    assert found == {"PWNED", ".f2py", ".os", ".system"}
    # an operator's own argument or output named like a payload is not one
    source = "def f(os, load=None):\n    return g(os, save=load).system\nT = nt('T', ['system'])\n"
    assert _payload_identifiers("m.py", source) == set()
    with pytest.raises(_InvalidOutput):
        _payload_identifiers("m.py", "x = '\n")
    with pytest.raises(AssertionError, match="without file:line"):
        _check_refusal(CodegenError("the generated ops.py is not valid Python"))
    with pytest.raises(AssertionError, match="short excerpt"):
        _check_refusal(CodegenError("x" * 5000, Location("a.yaml", 3)))
    _check_refusal(CodegenError("bad", Location("a.yaml", 3)))


@pytest.mark.skipif(
    resource is None or not Path("/proc/self/status").exists(),
    reason="the memory limit needs Linux (resource, /proc)",
)
def test_a_bounded_example_turns_a_runaway_allocation_into_memory_error() -> None:
    with pytest.raises(MemoryError):
        with _bounded(seconds=20, extra_memory=256 << 20):
            bytearray(1 << 30)


# -- the fast properties (CI) -------------------------------------------------------------


@_fast(120)
@given(pair=_schema_mutation())
def test_mutated_schemas_generate_or_are_refused_with_a_location(
    fuzzer: Fuzzer, pair: tuple[str, str]
) -> None:
    fuzzer(*pair)


@_fast(120)
@given(pair=_formula_mutation())
def test_mutated_formulas_generate_or_are_refused_with_a_location(
    fuzzer: Fuzzer, pair: tuple[str, str]
) -> None:
    fuzzer(*pair)


@_fast(100)
@given(pair=_entry_mutation())
def test_mutated_entries_generate_or_are_refused_with_a_location(
    fuzzer: Fuzzer, pair: tuple[str, str]
) -> None:
    fuzzer(*pair)


@_fast(100)
@given(pair=_document_mutation())
def test_mutated_documents_generate_or_are_refused_with_a_location(
    fuzzer: Fuzzer, pair: tuple[str | bytes, str | bytes]
) -> None:
    fuzzer(*pair)


def test_the_whole_generator_with_black_and_the_packages_import(
    full_fuzzer: Fuzzer,
) -> None:
    @_fast(12)
    @given(pair=st.one_of(_schema_mutation(), _formula_mutation(), _entry_mutation()))
    def run(pair: tuple[str, str]) -> None:
        full_fuzzer(*pair, keep=True)

    run()
    full_fuzzer.import_all()  # one interpreter imports every package generated


# -- the long run -------------------------------------------------------------------------


@pytest.mark.slow
@_long(2000)
@given(
    pair=st.one_of(
        _schema_mutation(), _formula_mutation(), _entry_mutation(), _document_mutation()
    )
)
def test_long_run_every_mutation(
    fuzzer: Fuzzer, pair: tuple[str | bytes, str | bytes]
) -> None:
    fuzzer(*pair)


@pytest.mark.slow
def test_long_run_whole_generator_and_import(full_fuzzer: Fuzzer) -> None:
    @_long(120)
    @given(pair=st.one_of(_schema_mutation(), _formula_mutation(), _entry_mutation()))
    def run(pair: tuple[str, str]) -> None:
        full_fuzzer(*pair, keep=True)

    run()
    full_fuzzer.import_all()


# -- defects the fuzzer found beyond issue 11 (minimal reproducers) -----------------------


@pytest.mark.parametrize(
    "kind",
    [
        "auto_element_wise",
        "auto_linear",
    ],
)
def test_an_auto_result_without_a_backward_formula_is_a_located_error(
    tmp_path: Path, kind: str
) -> None:
    native = "- func: fz(Tensor self) -> Tensor\n  numpy: self * 2\n"
    derivatives = f"- name: fz(Tensor self) -> Tensor\n  result: {kind}\n"
    native_path, derivatives_path = _write_pair(tmp_path, native, derivatives)
    try:
        generate(native_path, derivatives_path, tmp_path / "fzpkg", cache=False)
    except CodegenError as error:
        _check_refusal(error)
        assert "derivatives.yaml:" in str(error)


def test_grad_input_mask_in_a_single_input_formula_is_refused_or_works(
    tmp_path: Path,
) -> None:
    # derivatives.yaml's header allows grad_input_mask in multi-input formulas; in a
    # one-input formula it generates a Backward node that raises NameError when run.
    native = "- func: fz(Tensor self) -> Tensor\n  numpy: self * 2\n"
    derivatives = (
        "- name: fz(Tensor self) -> Tensor\n"
        "  self: grad * 2 if grad_input_mask[0] else None\n"
    )
    native_path, derivatives_path = _write_pair(tmp_path, native, derivatives)
    try:
        generate(native_path, derivatives_path, tmp_path / "fzpkg", cache=False)
    except CodegenError as error:
        _check_refusal(error)
        return
    script = (
        f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
        "import gradgen, fzpkg\n"
        "x = gradgen.tensor([1.0, 2.0], requires_grad=True)\n"
        "fzpkg.fz(x).sum().backward()\n"
        "print(x.grad.tolist())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-1000:]
    assert result.stdout.strip() == "[2.0, 2.0]"  # d(2x)/dx

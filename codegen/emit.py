"""Render the templates and format them with black (output.py writes them).

One template per generated file. Rendering uses StrictUndefined (a missing value is an
error, never an empty string), and the output is formatted in process with the pinned
black, so regenerating from the same YAML gives byte-identical files. A file is
rewritten only when its content changes.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, TypeVar

import black
import jinja2

from .errors import CodegenError
from .ir import BindingIR, OverloadedIR, PackageIR
from .model import NAMESPACES
from .literals import FILTERS
from .stubs import STUB_FILES, StubIR, stub_context
from .workers import parse_paused, run_jobs

# Explicit target versions: black must not infer them from each block it is given.
_BLACK_MODE = black.Mode(line_length=88, target_versions={black.TargetVersion.PY310})


@dataclass(frozen=True)
class OutputFile:
    name: str
    template: str
    purpose: str


OUTPUT_FILES = (
    OutputFile(
        "__init__.py",
        "package_init.py.j2",
        "The generated operators; importing it registers their kernels.",
    ),
    OutputFile(
        "operators.py",
        "operators.py.j2",
        "One dispatcher entry (OperatorHandle) per operator.",
    ),
    OutputFile(
        "batching.py",
        "batching.py.j2",
        "vmap's batching rule of each operator, from its `batching:` key.",
    ),
    OutputFile(
        "kernels.py",
        "kernels.py.j2",
        "The NumPy backend: one kernel per operator, from its `numpy:` expression.",
    ),
    OutputFile(
        "kernel_sources.py",
        "kernel_sources.py.j2",
        "The kernels as data for gradgen.compile: per operator, its numpy expression.",
    ),
    OutputFile(
        "inplace_or_view.py",
        "inplace_or_view.py.j2",
        "ADInplaceOrView kernels: view operators share their input's version counter.",
    ),
    OutputFile(
        "functions.py",
        "functions.py.j2",
        "One Backward Node per derivatives.yaml entry, with its formulas.",
    ),
    OutputFile(
        "variable_type.py",
        "variable_type.py.j2",
        "Autograd kernels: record the graph, then redispatch to the kernel.",
    ),
    OutputFile("ops.py", "ops.py.j2", "The public functions, gradgen.NAME(...)."),
    *(
        OutputFile(
            f"{module}.py",
            "ops.py.j2",
            f"The public functions of python_module: {module}, gradgen.{module}.NAME(...).",
        )
        for module in NAMESPACES
    ),
    OutputFile(
        "tensor_methods.py",
        "tensor_methods.py.j2",
        "The Tensor methods, tensor.NAME(...).",
    ),
)


def templates_directory() -> Path:
    """The templates, in a checkout (../templates) or an installed package (./templates)."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "templates", here / "templates"):
        if (candidate / "functions.py.j2").is_file():
            return candidate
    raise CodegenError("cannot find the generator's templates")


def _environment() -> jinja2.Environment:
    """Templates print input text only through the filters of literals.py: `py`
    (a string literal), `docstring`, `comment` and `identifier`."""
    return _environment_of(templates_directory())


@functools.cache
def _environment_of(directory: Path) -> jinja2.Environment:
    """One environment per templates directory and process, so a template is compiled
    once (the probe package of names.py renders them too); jinja2 compiles a template
    again when its file changes."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(directory),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    environment.filters.update(FILTERS)
    return environment


# A block starts at a top-level def, class or decorator; statements stay with the block
# before them (imports with the header, registrations at the end together).
_TOP_LEVEL = re.compile(r"^(?=(?:def |class |@))", re.M)
_BOUNDARY = "# @@gradgen-codegen-block@@"


class BlackCache:
    """Formatted top-level blocks, keyed by their unformatted text and black's version.

    Generated files are long and black formats about 10,000 lines a second, so each
    file is cut into top-level blocks (a def, a class, a statement), blocks already
    formatted once are taken from the cache, and the others are formatted in batches
    (joined by marker comments, split again afterwards), the batches of all files
    spread over the machine's CPUs (workers.py). Blocks are joined with the two blank
    lines black puts before and after a top-level def or class, so the file is
    exactly what black makes of it as a whole. black formats a text twice unless its
    first pass leaves it as it was; only the blocks the first pass changed get the
    second (`_format_batch`), so a template that prints code as black would print it
    costs one pass. The cache is a JSON file in ~/.cache/gradgen-codegen
    (GRADGEN_CODEGEN_CACHE overrides the directory); deleting it changes nothing but
    the time taken.

    The cache is an optimisation only, never trusted: whoever can write the file must
    not decide the generated code. A cache file that is not a JSON object of hashes
    to strings is ignored, and a generated file made of cached blocks is written (or,
    with --check, compared) only once `verified()` has found that each of its blocks
    parses to the same syntax tree as its unformatted code (`same_code`); a block that
    does not is formatted anew. Files that come out the same as those already in --out
    are not written, so they need no check: `make generate` with nothing to do costs
    loading and rendering only (about 1.5 s). Checking the whole package takes about
    1 s of CPU time, formatting it about 20 s.
    """

    # A cache file larger than this is not read (the package's is about 1 MB).
    MAX_FILE_BYTES = 64 << 20
    # When the cache holds more blocks than this, a save keeps only this run's.
    MAX_ENTRIES = 20_000

    def __init__(self, directory: Path | None) -> None:
        self.path = (
            None if directory is None else directory / f"black-{black.__version__}.json"
        )
        self.entries: dict[str, str] = (
            {} if self.path is None else _read_cache(self.path)
        )
        self.used: set[str] = set()
        self.changed = False
        self._fresh: set[str] = set()  # formatted by black in this run
        self._blocks: dict[str, list[str]] = {}
        self._keys: dict[str, list[str]] = {}

    @staticmethod
    def _key(block: str) -> str:
        """The block's text and black's mode: a new mode formats everything anew."""
        return hashlib.sha256(f"{_BLACK_MODE!r}\0{block}".encode("utf-8")).hexdigest()

    def format_modules(self, texts: dict[str, str]) -> dict[str, str]:
        """Every file formatted (`texts` maps file names to unformatted source).

        Files with blocks taken from the cache are not checked yet: `verified()` does
        that, for the files about to be written or compared.
        """
        self._blocks = {name: _blocks(text) for name, text in texts.items()}
        self._keys = {
            name: [self._key(block) for block in file_blocks]
            for name, file_blocks in self._blocks.items()
        }
        self._format_missing(self._blocks)
        for file_keys in self._keys.values():
            self.used.update(file_keys)
        return {name: self._join(file_keys) for name, file_keys in self._keys.items()}

    def verified(self, files: dict[str, str], names: Iterable[str]) -> dict[str, str]:
        """`files` (from `format_modules`), those of `names` that hold blocks from the
        cache checked to be the code they stand for (`same_code`, block by block); a
        block that is not is formatted anew, and the cache forgets it.

        A block the cache holds exactly as rendered is its own source and needs no
        check. The others are checked one block at a time, which is as good as
        checking the file: each block and its formatted text parse on their own (so
        neither leaves a bracket, string or indented suite open for the next one), and
        only the first block of a file can hold its docstring and an encoding
        declaration (same_code's `first`).
        """
        files = dict(files)
        pending: dict[tuple[str, bool], tuple[str, str, bool]] = {}
        for name in sorted(set(names)):
            for index, (block, key) in enumerate(
                zip(self._blocks.get(name, ()), self._keys.get(name, ()))
            ):
                piece = self.entries[key]
                if key not in self._fresh and piece != block:
                    pending[key, index == 0] = (block, piece, index == 0)
        jobs = _batches(list(pending.values()), _CHECK_LINES, _pair_lines)
        checks = run_jobs(_same_code_batch, jobs, _pairs_lines)
        results = [same for batch in checks for same in batch]
        wrong = {key for (key, _), same in zip(pending, results) if not same}
        for key in wrong:
            self.entries.pop(key, None)
        for name in sorted(set(names)):
            if wrong.intersection(self._keys.get(name, ())):
                # If the code itself is not valid Python, black says so here.
                self._format_missing({name: self._blocks[name]})
                files[name] = self._join(self._keys[name])
        return files

    def _join(self, keys: list[str]) -> str:
        return "\n\n\n".join(self.entries[key] for key in keys) + "\n"

    def _format_missing(self, blocks: dict[str, list[str]]) -> None:
        """Format the blocks not in the cache (each once), and add them to it."""
        queued: set[str] = set()
        jobs: list[tuple[str, list[str]]] = []
        for name, file_blocks in blocks.items():
            missing = []
            for block in file_blocks:
                key = self._key(block)
                if key not in self.entries and key not in queued:
                    queued.add(key)
                    missing.append(block)
            jobs += [
                (name, batch) for batch in _batches(missing, _BATCH_LINES, _block_lines)
            ]
        for (name, batch), pieces in zip(jobs, _format_batches(jobs)):
            for block, piece in zip(batch, pieces):
                self.entries[self._key(block)] = piece
            self.changed = True
        self._fresh.update(queued)

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        entries = self.entries
        if len(entries) > self.MAX_ENTRIES:
            entries = {key: entries[key] for key in self.used if key in entries}
        temporary = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # A new file of our own (never one that is there already, which could be a
            # link to somewhere else), then renamed over the cache in one step.
            descriptor, name = tempfile.mkstemp(prefix=".black-", dir=self.path.parent)
            temporary = Path(name)
            with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
                json.dump(entries, stream)
            temporary.replace(self.path)
            temporary = None
        except OSError:
            pass  # a cache that cannot be written only costs time
        finally:
            if temporary is not None:
                temporary.unlink(missing_ok=True)


_CACHE_KEY = re.compile(r"[0-9a-f]{64}")


def _read_cache(path: Path) -> dict[str, str]:
    """The cache file's entries; nothing when it is missing, too large, not JSON, or not
    an object of hashes to strings (all of it is then ignored)."""
    try:
        if path.stat().st_size > BlackCache.MAX_FILE_BYTES:
            return {}
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or not all(
        isinstance(key, str) and isinstance(value, str) and _CACHE_KEY.fullmatch(key)
        for key, value in data.items()
    ):
        return {}
    return data


# PEP 263: a comment on line 1 or 2 such as `# coding: utf-7` changes how Python decodes
# the whole file, so formatted code may carry no such comment (comments are not in the
# syntax tree; no other comment changes what the code does).
_CODING_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=]", re.M)
_DOCSTRING_OWNERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def same_code(source: str, formatted: str, first: bool = True) -> bool:
    """Whether `formatted` is the code of `source` (as black formats it): the same
    syntax tree, docstrings compared line by line with the whitespace at the ends of
    lines removed (black re-indents them), and no encoding declaration.

    `first`: the text starts the file. Otherwise a string that opens it is no module
    docstring but a statement of its own, compared exactly."""
    if _CODING_COOKIE.search("\n".join(formatted.split("\n", 2)[:2])):
        return False
    try:
        return _same_tree(parse_paused(source), parse_paused(formatted), first)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _same_code_batch(batch: list[tuple[str, str, bool]]) -> list[bool]:
    return [same_code(*job) for job in batch]


def _docstring(node: ast.AST) -> str | None:
    body = getattr(node, "body", None)
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    ):
        value = body[0].value.value
        if isinstance(value, str):
            return "\n".join(line.strip() for line in value.splitlines()).strip()
    return None


def _same_tree(a: ast.AST, b: ast.AST, module_docstring: bool = True) -> bool:
    owners = _DOCSTRING_OWNERS if module_docstring else _DOCSTRING_OWNERS[1:]
    stack: list[tuple[object, object]] = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, ast.AST):
            assert isinstance(y, ast.AST)
            skip_docstring = False
            if isinstance(x, owners):
                docstring = _docstring(x)
                if docstring != _docstring(y):
                    return False
                skip_docstring = docstring is not None
            for field in x._fields:
                if field == "kind":  # the u of u"..." (black drops it), not the value
                    continue
                first, second = getattr(x, field, None), getattr(y, field, None)
                if field == "body" and skip_docstring:
                    first, second = first[1:], second[1:]  # type: ignore[index]
                stack.append((first, second))
        elif isinstance(x, list):
            assert isinstance(y, list)
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif x != y:
            return False
    return True


# Batches of about this many lines: enough of them to keep every CPU busy.
_BATCH_LINES = 600
# The same for checking blocks from the cache (source and formatted lines together).
_CHECK_LINES = 4000


def _blocks(text: str) -> list[str]:
    blocks: list[str] = []
    for block in (b.strip("\n") for b in _TOP_LEVEL.split(text) if b.strip()):
        if blocks and all(line.startswith("@") for line in blocks[-1].splitlines()):
            blocks[-1] += "\n" + block  # a decorator stays with what it decorates
        else:
            blocks.append(block)
    return blocks


def _format_batch(job: tuple[str, list[str]]) -> list[str] | str:
    """One batch of blocks formatted by black: the pieces, or an error message.

    black.format_str formats its input twice unless the first pass leaves it as it is
    (the second pass settles trailing commas that the first one added). Here each pass
    is given only the blocks that need it: the first one all of them, the second the
    blocks the first one changed, which is what format_str makes of each block alone.
    """
    name, batch = job
    try:
        first = _black_pass(batch)
        if first is None:
            return f"formatting {name} lost block boundaries (a generator bug)"
        changed = [index for index, block in enumerate(batch) if first[index] != block]
        if _FORMAT_ONCE is None or not changed:
            return first
        second = _black_pass([first[index] for index in changed])
    except black.InvalidInput as error:
        return (
            f"the generated {name} is not valid Python ({error}); this is a bug in "
            "the generator or its templates"
        )
    if second is None:
        return f"formatting {name} lost block boundaries (a generator bug)"
    for index, piece in zip(changed, second):
        first[index] = piece
    return first


# One pass of black (black.format_str is two of them when the first changes the text);
# without it (another black), format_str does both passes on the whole batch.
_FORMAT_ONCE: Callable[..., str] | None = getattr(black, "_format_str_once", None)


def _black_pass(blocks: list[str]) -> list[str] | None:
    """The blocks joined by marker comments, formatted, split again (None when the
    markers did not come back one per block)."""
    joined = f"\n\n\n{_BOUNDARY}\n".join(blocks) + "\n"
    if _FORMAT_ONCE is None:
        formatted = black.format_str(joined, mode=_BLACK_MODE)
    else:
        formatted = _FORMAT_ONCE(joined, mode=_BLACK_MODE, lines=())
    pieces = re.split(rf"^{re.escape(_BOUNDARY)}\n", formatted, flags=re.M)
    if len(pieces) != len(blocks):
        return None
    return [piece.strip("\n") for piece in pieces]


def _format_batches(jobs: list[tuple[str, list[str]]]) -> list[list[str]]:
    """Format the batches, in worker processes (workers.py); the order of the results
    is the order of `jobs` either way, so the output does not depend on the machine."""
    formatted: list[list[str]] = []
    for result in run_jobs(_format_batch, jobs, _job_lines):
        if isinstance(result, str):
            raise CodegenError(result)
        formatted.append(result)
    return formatted


_I = TypeVar("_I")


def _batches(
    items: list[_I], max_lines: int, lines_of: Callable[[_I], int]
) -> list[list[_I]]:
    """`items` in order, cut into batches of about `max_lines` lines."""
    batches: list[list[_I]] = []
    lines = max_lines
    for item in items:
        size = lines_of(item)
        if lines + size > max_lines:
            batches.append([])
            lines = 0
        batches[-1].append(item)
        lines += size
    return batches


def _block_lines(block: str) -> int:
    return block.count("\n") + 1


def _pair_lines(pair: tuple[str, str, bool]) -> int:
    return pair[0].count("\n") + pair[1].count("\n") + 2


def _pairs_lines(pairs: list[tuple[str, str, bool]]) -> int:
    return sum(map(_pair_lines, pairs))


def _job_lines(job: tuple[str, list[str]]) -> int:
    return sum(map(_block_lines, job[1]))


def default_cache_directory() -> Path:
    configured = os.environ.get("GRADGEN_CODEGEN_CACHE")
    if configured:
        return Path(configured)
    return (
        Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
        / "gradgen-codegen"
    )


def _bindings(
    ir: PackageIR, file_name: str
) -> dict[str, tuple[BindingIR, ...] | tuple[OverloadedIR, ...]]:
    """The functions (or methods) a bindings file defines: tensor_methods.py the
    methods, ops.py gradgen.NAME, linalg.py gradgen.linalg.NAME, ..."""
    if file_name == "tensor_methods.py":
        return {"bindings": ir.methods, "overloaded": ir.overloaded_methods}
    for namespace in ir.namespaces:
        if file_name == f"{namespace.module}.py":
            return {"bindings": namespace.functions, "overloaded": namespace.overloaded}
    return {"bindings": ir.functions, "overloaded": ir.overloaded_functions}


def render(
    ir: PackageIR,
    sources: str,
    cache: BlackCache | None = None,
    stubs: StubIR | None = None,
) -> dict[str, str]:
    """The content of every generated file, formatted (with the type stubs, stubs.py,
    when `stubs` is given)."""
    environment = _environment()
    cache = cache if cache is not None else BlackCache(None)
    texts = {}
    for output in OUTPUT_FILES:
        texts[output.name] = environment.get_template(output.template).render(
            sources=sources,
            purpose=output.purpose,
            operators=ir.operators,
            backward_nodes=ir.backward_nodes,
            **_bindings(ir, output.name),
            kernel_helpers=ir.kernel_helpers,
            return_types=ir.return_types,
            jvps=ir.jvps,
            formula_helpers=ir.formula_helpers,
            formula_functions=ir.formula_functions,
            formula_imports=ir.formula_imports,
            namespaces=ir.namespaces,
            user_module=ir.user_module,
            kernel_sources=ir.kernel_sources,
            array_forms=ir.array_forms,
        )
    for name, template, purpose in STUB_FILES if stubs is not None else ():
        assert stubs is not None
        texts[name] = environment.get_template(template).render(
            sources=sources, purpose=purpose, **stub_context(stubs, name)
        )
    files = cache.format_modules(texts)
    cache.save()
    return files

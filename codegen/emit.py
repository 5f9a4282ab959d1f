"""Render the templates, format with black, write only what changed.

One template per generated file. Rendering uses StrictUndefined (a missing value is an
error, never an empty string), and the output is formatted in process with the pinned
black, so regenerating from the same YAML gives byte-identical files. A file is
rewritten only when its content changes.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import black
import jinja2

from .errors import CodegenError
from .ir import PackageIR
from .literals import FILTERS

# Explicit target versions: black must not infer them from each block it is given.
_BLACK_MODE = black.Mode(line_length=88, target_versions={black.TargetVersion.PY310})


@dataclass(frozen=True)
class OutputFile:
    name: str
    template: str
    purpose: str


OUTPUT_FILES = (
    OutputFile("__init__.py", "package_init.py.j2", "The generated operators; importing it registers their kernels."),
    OutputFile("operators.py", "operators.py.j2", "One dispatcher entry (OperatorHandle) per operator."),
    OutputFile("kernels.py", "kernels.py.j2", "The NumPy backend: one kernel per operator, from its `numpy:` expression."),
    OutputFile("inplace_or_view.py", "inplace_or_view.py.j2", "ADInplaceOrView kernels: view operators share their input's version counter."),
    OutputFile("functions.py", "functions.py.j2", "One Backward Node per derivatives.yaml entry, with its formulas."),
    OutputFile("variable_type.py", "variable_type.py.j2", "Autograd kernels: record the graph, then redispatch to the kernel."),
    OutputFile("ops.py", "ops.py.j2", "The public functions, gradgen.NAME(...)."),
    OutputFile("tensor_methods.py", "tensor_methods.py.j2", "The Tensor methods, tensor.NAME(...)."),
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
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_directory()),
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

    Generated files are long and black parses about 3,000 lines a second, so each
    file is cut into top-level blocks (a def, a class, a statement), blocks already
    formatted once are taken from the cache, and the others are formatted in batches
    (joined by marker comments, split again afterwards), the batches of all files
    spread over the machine's CPUs. Blocks are
    joined with the two blank lines black puts before and after a top-level def or
    class, so the file is exactly what black makes of it as a whole. The
    cache is a JSON file in ~/.cache/gradgen-codegen (GRADGEN_CODEGEN_CACHE overrides
    the directory); deleting it changes nothing but the time taken.
    """

    def __init__(self, directory: Path | None) -> None:
        self.path = None if directory is None else directory / f"black-{black.__version__}.json"
        self.entries: dict[str, str] = {}
        if self.path is not None and self.path.is_file():
            try:
                self.entries = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self.entries = {}
        self.changed = False

    @staticmethod
    def _key(block: str) -> str:
        """The block's text and black's mode: a new mode formats everything anew."""
        return hashlib.sha256(f"{_BLACK_MODE!r}\0{block}".encode("utf-8")).hexdigest()

    def format_modules(self, texts: dict[str, str]) -> dict[str, str]:
        """Every file formatted (`texts` maps file names to unformatted source)."""
        blocks = {name: _blocks(text) for name, text in texts.items()}
        queued: set[str] = set()
        jobs: list[tuple[str, list[str]]] = []
        for name, file_blocks in blocks.items():
            missing = []
            for block in file_blocks:
                key = self._key(block)
                if key not in self.entries and key not in queued:
                    queued.add(key)
                    missing.append(block)
            jobs += [(name, batch) for batch in _batches(missing, _BATCH_LINES)]
        for (name, batch), pieces in zip(jobs, _format_batches(jobs)):
            for block, piece in zip(batch, pieces):
                self.entries[self._key(block)] = piece
            self.changed = True
        return {
            name: "\n\n\n".join(self.entries[self._key(b)] for b in file_blocks) + "\n"
            for name, file_blocks in blocks.items()
        }

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text(json.dumps(self.entries), encoding="utf-8")
            temporary.replace(self.path)
        except OSError:
            pass  # a cache that cannot be written only costs time


# Batches of about this many lines: enough of them to keep every CPU busy.
_BATCH_LINES = 600


def _blocks(text: str) -> list[str]:
    return [b.strip("\n") for b in _TOP_LEVEL.split(text) if b.strip()]


def _format_batch(job: tuple[str, list[str]]) -> list[str] | str:
    """One batch of blocks formatted by black: the pieces, or an error message."""
    name, batch = job
    joined = f"\n\n\n{_BOUNDARY}\n".join(batch) + "\n"
    try:
        formatted = black.format_str(joined, mode=_BLACK_MODE)
    except black.InvalidInput as error:
        return (
            f"the generated {name} is not valid Python ({error}); this is a bug in "
            "the generator or its templates"
        )
    pieces = re.split(rf"^{re.escape(_BOUNDARY)}\n", formatted, flags=re.M)
    if len(pieces) != len(batch):
        return f"formatting {name} lost block boundaries (a generator bug)"
    return [piece.strip("\n") for piece in pieces]


def _format_batches(jobs: list[tuple[str, list[str]]]) -> list[list[str]]:
    """Format the batches, in worker processes when there are several and several
    CPUs (forked, so black is not imported again); the order of the results is the
    order of `jobs` either way, so the output does not depend on the machine."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    workers = min(len(jobs), cpus or 1)
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            results = list(pool.map(_format_batch, jobs))
    else:
        results = [_format_batch(job) for job in jobs]
    formatted: list[list[str]] = []
    for result in results:
        if isinstance(result, str):
            raise CodegenError(result)
        formatted.append(result)
    return formatted


def _batches(blocks: list[str], max_lines: int) -> list[list[str]]:
    batches: list[list[str]] = []
    lines = max_lines
    for block in blocks:
        size = block.count("\n") + 1
        if lines + size > max_lines:
            batches.append([])
            lines = 0
        batches[-1].append(block)
        lines += size
    return batches


def default_cache_directory() -> Path:
    configured = os.environ.get("GRADGEN_CODEGEN_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gradgen-codegen"


def render(ir: PackageIR, sources: str, cache: BlackCache | None = None) -> dict[str, str]:
    """The content of every generated file, formatted."""
    environment = _environment()
    cache = cache if cache is not None else BlackCache(None)
    texts = {}
    for output in OUTPUT_FILES:
        texts[output.name] = environment.get_template(output.template).render(
            sources=sources,
            purpose=output.purpose,
            operators=ir.operators,
            backward_nodes=ir.backward_nodes,
            bindings=ir.methods if output.name == "tensor_methods.py" else ir.functions,
            overloaded=(
                ir.overloaded_methods
                if output.name == "tensor_methods.py"
                else ir.overloaded_functions
            ),
            kernel_helpers=ir.kernel_helpers,
            return_types=ir.return_types,
            jvps=ir.jvps,
            formula_helpers=ir.formula_helpers,
            formula_functions=ir.formula_functions,
            user_module=ir.user_module,
        )
    files = cache.format_modules(texts)
    cache.save()
    return files


def write_changed(out_directory: Path, files: dict[str, str]) -> list[Path]:
    """Write the files whose content differs; return the paths written."""
    out_directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in sorted(files.items()):
        path = out_directory / name
        if path.is_file() and path.read_text(encoding="utf-8") == content:
            continue
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written


def stale_files(out_directory: Path, files: dict[str, str]) -> list[Path]:
    """The paths whose content would change (for `--check`)."""
    return [
        out_directory / name
        for name, content in sorted(files.items())
        if not (out_directory / name).is_file()
        or (out_directory / name).read_text(encoding="utf-8") != content
    ]

"""Load native_functions.yaml and derivatives.yaml into the model, validating both.

Each entry is checked inside `ErrorCollector.context`, so every error carries
``file:line: operator:`` and one run reports all of them. Known keys are popped from
each entry; what is left is an unknown key and an error (it catches typos). A
derivatives.yaml `name:` must repeat a native_functions.yaml schema byte for byte.

The readers of one entry are native_entries.py and derivative_entries.py; this module
reads the files, runs them over every entry and joins the results into the Model.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

from .workers import parse_paused
from .errors import CodegenError, ErrorCollector, Location, did_you_mean, shorten
from .formulas import FormulaNames, python_identifier
from .kernels_module import KernelsModule, read_all
from .names import check_operator_names
from .model import DifferentiabilityInfo, Model, NativeFunction, Variant
from .yaml_loader import load_entries
from .derivative_entries import (
    DERIVATIVE_CONTROL_KEYS,
    _differentiability_info,
    _inplace_infos,
)
from .native_entries import NATIVE_KEYS, _derive_inplace, _native_function

__all__ = [
    "defined_functions",
    "DERIVATIVE_CONTROL_KEYS",
    "exported_names",
    "load",
    "load_derivatives",
    "load_native_functions",
    "NATIVE_KEYS",
]


# -- names the runtime exports, read from its source without importing it ------------


def _runtime_source(module: str) -> Path:
    """The source of a gradgen runtime module, in a checkout or an installed package:
    its file, or a package's `__init__.py` (which lists its family modules' names)."""
    here = Path(__file__).resolve().parent
    for root in (here.parent / "src" / "gradgen", here.parent):
        for candidate in (root / f"{module}.py", root / module / "__init__.py"):
            if candidate.is_file():
                return candidate
    raise CodegenError(f"cannot find the gradgen runtime module '{module}.py'")


@dataclass(frozen=True)
class _RuntimeModule:
    """What the generator reads from a runtime module's source."""

    exports: frozenset[str] | None  # its `__all__`, None when it has none
    star_imports: tuple[str, ...]  # the modules of its `from .NAME import *`
    functions: frozenset[str]  # its public top-level functions


def _runtime_module(path: Path) -> _RuntimeModule:
    """A runtime module, read once per version of its file (a run asks for the same
    modules several times)."""
    status = path.stat()
    return _read_runtime_module(path, status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=256)
def _read_runtime_module(path: Path, mtime_ns: int, size: int) -> _RuntimeModule:
    tree = parse_paused(path.read_text(encoding="utf-8"))
    exports = read_all(tree, path.name)
    star_imports = tuple(
        node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        and node.level == 1
        and node.module
        and [alias.name for alias in node.names] == ["*"]
    )
    functions = frozenset(
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    )
    return _RuntimeModule(
        None if exports is None else exports[0], star_imports, functions
    )


def exported_names(module: str) -> frozenset[str]:
    """The `__all__` of a runtime module, read with ast (the module is not run).

    `__all__ = [...]` and later `__all__ += [...]` (one per section of the file) count;
    a package's are its `__init__.py`'s plus those of the modules it star-imports.
    """
    path = _runtime_source(module)
    read = _runtime_module(path)
    if read.exports is None:
        raise CodegenError(f"{path} has no __all__")
    if path.name != "__init__.py":
        return read.exports
    # A package: its own names and the `__all__` of every family module it
    # star-imports (the runtime adds the same lists when it is imported).
    names = set(read.exports)
    for name in read.star_imports:
        family = path.parent / f"{name}.py"
        listed = _runtime_module(family).exports
        if listed is None:
            raise CodegenError(f"{family} has no __all__")
        names |= listed
    return frozenset(names)


def defined_functions(module: str) -> frozenset[str]:
    """The public top-level functions of a runtime module, read with ast; for a
    package, the `__all__` of its `__init__.py` (the functions are in its families)."""
    path = _runtime_source(module)
    if path.name == "__init__.py":
        return exported_names(module)
    return _runtime_module(path).functions


# -- native_functions.yaml ------------------------------------------------------------


def _operator_label(text: object) -> str | None:
    """``mul.Tensor`` from a schema string, for error messages."""
    return (
        shorten(text.split("(", 1)[0].strip(), 120) if isinstance(text, str) else None
    )


def load_native_functions(
    path: Path,
    errors: ErrorCollector,
    attempted: set[str],
    kernels: KernelsModule | None = None,
    check_names: bool = True,
) -> list[NativeFunction]:
    """The valid entries; every `func:` text seen is added to `attempted`.

    `check_names` refuses names that meet the generator's own (names.py); only the
    probe package that finds those names is loaded without."""
    kernel_helpers = exported_names("numpy_kernels")
    composites = defined_functions("composites")
    functions: list[NativeFunction] = []
    seen: dict[str, NativeFunction] = {}
    identifiers: dict[str, NativeFunction] = {}
    for entry in load_entries(path):
        func = entry.values.get("func")
        if isinstance(func, str):
            attempted.add(func)
        with errors.context(entry.location, _operator_label(func)):
            function = _native_function(entry, kernel_helpers, composites, kernels)
            if function.name in seen:
                raise CodegenError(
                    f"operator '{function.name}' is declared twice (first at "
                    f"{seen[function.name].location})"
                )
            seen[function.name] = function
            if check_names:
                check_operator_names(
                    function,
                    has_method=Variant.method in function.variants,
                    has_function=Variant.function in function.variants,
                )
            other = identifiers.get(function.identifier)
            if other is not None:
                raise CodegenError(
                    f"operators '{other.name}' and '{function.name}' are both "
                    f"'{function.identifier}' in generated code (first at "
                    f"{other.location}); rename one"
                )
            identifiers[function.identifier] = function
            functions.append(function)
    functions = [_derive_inplace(f, functions, errors) for f in functions]
    return functions


def _formula_names(
    functions: list[NativeFunction], kernels: KernelsModule | None = None
) -> FormulaNames:
    return FormulaNames(
        helpers=exported_names("helpers"),
        functions=frozenset(
            f.python_name for f in functions if Variant.function in f.variants
        ),
        methods=frozenset(
            f.python_name for f in functions if Variant.method in f.variants
        ),
        user=kernels.names if kernels is not None else frozenset(),
        user_file=kernels.file_name if kernels is not None else "",
        keyword_only=_keyword_only(functions),
    )


def _keyword_only(
    functions: list[NativeFunction],
) -> dict[tuple[str, str], tuple[tuple[int, tuple[str, ...]], ...]]:
    """Each operator's overloads as (positional count, keyword-only names), for calls
    and method calls (see FormulaNames.keyword_only)."""
    found: dict[tuple[str, str], list[tuple[int, tuple[str, ...]]]] = {}
    for function in functions:
        arguments = function.schema.arguments
        keywords = tuple(python_identifier(a.name) for a in arguments.kwarg_only)
        count = len(arguments.positional)
        if Variant.function in function.variants:
            found.setdefault(("function", function.python_name), []).append(
                (count, keywords)
            )
        if Variant.method in function.variants:
            found.setdefault(("method", function.python_name), []).append(
                (count - 1, keywords)
            )
    return {key: tuple(value) for key, value in found.items()}


def load_derivatives(
    path: Path,
    functions: list[NativeFunction],
    errors: ErrorCollector,
    broken_operators: frozenset[str] = frozenset(),
    kernels: KernelsModule | None = None,
    check_names: bool = True,
) -> list[DifferentiabilityInfo]:
    """The entries joined to `functions`; entries for `broken_operators` (whose native
    entries already failed and were reported) are skipped, not reported again."""
    by_schema = {str(f.schema): f for f in functions}
    names = _formula_names(functions, kernels)
    infos: list[DifferentiabilityInfo] = []
    claimed: dict[str, Location] = {}
    op_counters: dict[str, int] = {}
    for entry in load_entries(path):
        name = entry.values.get("name")
        with errors.context(entry.location, _operator_label(name)):
            if not isinstance(name, str):
                raise CodegenError("missing key 'name' (the operator's schema)")
            function = by_schema.get(name)
            if function is None and _operator_label(name) in broken_operators:
                continue
            if function is None:
                raise CodegenError(
                    f"could not find ATen function for schema: {shorten(name, 300)}"
                    + did_you_mean(name, by_schema)
                    + " (the name must repeat a native_functions.yaml func: exactly)"
                )
            if function.composite is not None:
                # PyTorch's rule for CompositeImplicitAutograd operators (torchgen asserts
                # that an operator with formulas has a dispatch section).
                raise CodegenError(
                    f"a composite operator (composite: {function.composite}) must not have "
                    "a derivatives.yaml entry: autograd records the operators the composite "
                    "calls, so these formulas would never run; remove the entry, or give the "
                    "operator a numpy: kernel instead of composite: to use them"
                )
            if name in claimed:
                raise CodegenError(
                    f"a second entry for this operator (first at {claimed[name]})"
                )
            claimed[name] = entry.location
            info = _differentiability_info(
                entry, function, names, op_counters, errors, check_names
            )
            if info is not None:
                infos.append(info)
    return infos + _inplace_infos(functions, infos)


def load(
    native_functions: Path,
    derivatives: Path,
    kernels: KernelsModule | None = None,
    check_names: bool = True,
) -> Model:
    """Both files as a Model; all errors of both files at once as CodegenError(s).

    With `kernels`, kernel expressions and formulas may also call the functions in the
    user's kernels module's `__all__`."""
    errors = ErrorCollector()
    functions: list[NativeFunction] = []
    infos: list[DifferentiabilityInfo] = []
    attempted: set[str] = set()
    try:
        functions = load_native_functions(
            native_functions, errors, attempted, kernels, check_names
        )
    except CodegenError as error:
        # The file itself is unreadable: joining derivatives to it would only report
        # every entry as missing, so check derivatives.yaml's syntax alone.
        errors.add(error)
        try:
            load_entries(derivatives)
        except CodegenError as derivatives_error:
            errors.add(derivatives_error)
        errors.raise_if_any()
    broken = frozenset(_operator_label(text) or "" for text in attempted) - {
        f.name for f in functions
    }
    try:
        infos = load_derivatives(
            derivatives, functions, errors, broken, kernels, check_names
        )
    except CodegenError as error:
        errors.add(error)
    errors.raise_if_any()
    return Model(tuple(functions), tuple(infos), kernels)

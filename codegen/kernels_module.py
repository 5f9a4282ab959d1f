"""A user's kernels module (`--kernels FILE.py`): the names its `__all__` lends to the
package's kernel expressions and derivative formulas.

The module is read with `ast` and never run by the generator (it may import the very
package being generated). What it offers is exactly its `__all__`, as for gradgen's own
numpy_kernels and helpers packages.

The generated package carries a byte-for-byte copy of the file as `user_kernels.py`
(`MODULE_NAME`), so the output directory is a self-contained package: it imports on any
machine that has gradgen, without the original file on `sys.path` or installed. Kernel
expressions and formulas call the module's functions through that name
(`cube_kernel(self)` is generated as `user_kernels.cube_kernel(self)`), so a user's name
can never collide with a name the generated code uses for itself, and a user's function
may share its name with one of gradgen's helpers (the user's is the one called).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from .errors import CodegenError, Location, did_you_mean, excerpt
from .yaml_loader import read_text

# The copy's file name in the generated package, and how generated code refers to it.
MODULE_NAME = "user_kernels"

# Words of the derivatives.yaml language a formula uses without calling a helper: a
# function of the same name would be ambiguous.
RESERVED_NAMES = frozenset(
    {
        "grad",
        "grads",
        "result",
        "grad_input_mask",
        "retain_variables",
        "not_implemented",
        "to_args_sizes",
        "to_args_sizes_symint",
        "to_args_scalartypes",
        "np",
        MODULE_NAME,
    }
)


@dataclass(frozen=True)
class KernelsModule:
    """A user's kernels module as read from its file."""

    path: Path
    source: str  # the text, copied verbatim into the generated package
    names: frozenset[str]  # its __all__

    @property
    def file_name(self) -> str:
        return self.path.name


def read_all(tree: ast.Module, file_name: str) -> tuple[frozenset[str], int] | None:
    """The names of a module's `__all__` and the line of its first assignment, or None
    when it has none.

    `__all__ = [...]` (or a tuple) and later `__all__ += [...]` count; anything but a
    literal list of strings is an error naming the line.
    """
    names: set[str] = set()
    first_line = 0
    for node in tree.body:
        target = value = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            target, value = node.target, node.value
        if not (
            isinstance(target, ast.Name)
            and target.id == "__all__"
            and value is not None
        ):
            continue
        try:
            listed = ast.literal_eval(value)
        except ValueError:
            listed = None
        if not isinstance(listed, (list, tuple)) or not all(
            isinstance(n, str) for n in listed
        ):
            raise CodegenError(
                "__all__ must be a literal list of strings (it is read without running "
                f"the module), not {ast.unparse(value)}",
                Location(file_name, node.lineno),
            )
        names |= set(listed)
        first_line = first_line or node.lineno
    return (frozenset(names), first_line) if first_line else None


def _defined_names(tree: ast.Module) -> set[str] | None:
    """The names a module defines at its top level; None when a `from x import *` makes
    that unknowable."""
    defined: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return None
    for node in tree.body:
        for statement in _top_level_statements(node):
            if isinstance(
                statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
            ):
                defined.add(statement.name)
            elif isinstance(statement, (ast.Import, ast.ImportFrom)):
                for alias in statement.names:
                    defined.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = (
                    statement.targets
                    if isinstance(statement, ast.Assign)
                    else [statement.target]
                )
                for target in targets:
                    defined |= {
                        n.id for n in ast.walk(target) if isinstance(n, ast.Name)
                    }
    return defined


def _top_level_statements(node: ast.stmt) -> list[ast.stmt]:
    """A statement, and those inside the `if`/`try` blocks of a module's top level
    (`try: import scipy except ImportError: ...` defines names too)."""
    if isinstance(node, ast.If):
        return [
            s for child in node.body + node.orelse for s in _top_level_statements(child)
        ]
    if isinstance(node, ast.Try):
        blocks = node.body + node.orelse + node.finalbody
        blocks += [s for handler in node.handlers for s in handler.body]
        return [s for child in blocks for s in _top_level_statements(child)]
    return [node]


def load_kernels_module(path: Path) -> KernelsModule:
    """Read and check a user's kernels module; every problem is a CodegenError naming
    the file (and line)."""
    path = Path(path)
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CodegenError(
            f"cannot read the kernels module: {error.strerror}", Location(str(path))
        ) from None
    except UnicodeDecodeError:
        source = read_text(path)  # raises the error with the line of the first bad byte
    name = path.name
    try:
        tree = ast.parse(source, filename=name)
    except SyntaxError as error:
        raise CodegenError(
            f"the kernels module is not valid Python: {error.msg}",
            Location(name, error.lineno or 0),
        ) from None
    except (ValueError, RecursionError, MemoryError) as error:  # null bytes; nesting
        raise CodegenError(
            f"the kernels module cannot be parsed: {excerpt(str(error) or type(error).__name__)}",
            Location(name),
        ) from None
    exports = read_all(tree, name)
    if exports is None:
        raise CodegenError(
            "the kernels module has no __all__: list the functions that kernel "
            "expressions and formulas may call, e.g. __all__ = ['cube_kernel', "
            "'cube_backward']",
            Location(name),
        )
    names, line = exports
    defined = _defined_names(tree)
    for exported in sorted(names):
        location = Location(name, line)
        if not exported.isidentifier():
            raise CodegenError(
                f"__all__ lists {excerpt(exported)}, which is not a Python name",
                location,
            )
        if exported.startswith("__"):
            raise CodegenError(
                f"__all__ lists '{exported}': dunder names may not be used", location
            )
        if exported in RESERVED_NAMES:
            raise CodegenError(
                f"__all__ lists '{exported}', a name derivatives.yaml or the generated "
                "code reserves for itself; rename the function",
                location,
            )
        if defined is not None and exported not in defined:
            raise CodegenError(
                f"__all__ lists '{exported}', which the module does not define"
                + did_you_mean(exported, defined),
                location,
            )
    return KernelsModule(path, source, names)

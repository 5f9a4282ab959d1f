"""Floors (docs/architecture.md, "Floors"): a module imports from its own floor or below.

The table below is the rule as data: every module of src/gradgen (and the generated
package) has a floor, and the tests read every module with `ast` (nothing is imported)
and fail, naming file and line, on an import that goes up a floor, on a module that has
no floor, and on an import circle other than the documented tie (the generated
operators <-> the helpers and composites they call and that call them, as PyTorch's
Functions <-> FunctionsManual). Imports under `if TYPE_CHECKING:` do not run and are
not counted.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Where each package's sources are (setuptools' package-dir in pyproject.toml).
SOURCES = {"gradgen": ROOT / "src" / "gradgen", "gradgen.generated": ROOT / "generated"}

# The operators' floor, LAYOUT's "[generated]" between 4 and 5: the generated code
# and the hand-written functions it calls (helpers: formulas; composites:
# CompositeImplicitAutograd kernels), which call operators in turn.
OPERATORS = 4.5

# module or package -> floor. A package's entry covers every module in it (a new family
# file goes with its package); a new top-level module must be given a line here.
FLOORS: dict[str, float] = {
    # 1: Python-level state and data, no tensors.
    "gradgen.dtypes": 1,
    "gradgen.devices": 1,
    "gradgen.formatting": 1,
    "gradgen.grad_mode": 1,
    "gradgen.anomaly_mode": 1,
    # 2: the dispatcher, the graph's nodes, the numpy kernels (arrays, not tensors).
    "gradgen.dispatch": 2,
    "gradgen.graph": 2,
    "gradgen.saved_variable": 2,
    "gradgen.numpy_kernels": 2,
    # 3: the tensor core.
    "gradgen.tensor": 3,
    # 4: the runtime the generated code calls, and autograd (the generated kernels
    # record into forward_ad; importing it runs gradgen/autograd/__init__.py).
    "gradgen.scalars": 4,
    "gradgen.factories": 4,
    "gradgen.random": 4,
    "gradgen.arguments": 4,
    "gradgen.overloads": 4,
    "gradgen.view_history": 4,
    "gradgen.variable_type_utils": 4,
    "gradgen.engine": 4,
    "gradgen.engine_hooks": 4,
    "gradgen.engine_checks": 4,
    "gradgen.engine_tree": 4,
    "gradgen.autograd": 4,
    # 4.5: the operators, and the functions they call that call operators (the tie).
    "gradgen.generated": OPERATORS,
    "gradgen.helpers": OPERATORS,
    "gradgen.composites": OPERATORS,
    # 5: hand-written API over the operators.
    "gradgen.tensor_api": 5,
    "gradgen.legacy_tensors": 5,
    "gradgen.indexing": 5,
    "gradgen.numpy_interop": 5,
    "gradgen.norms": 5,
    "gradgen.functional": 5,
    # 6: libraries on top (take operators from gradgen.generated.ops, never `gradgen`).
    "gradgen.nn": 6,
    "gradgen.optim": 6,
    "gradgen.utils": 6,
    "gradgen.serialization": 6,
    "gradgen.func": 6,
    "gradgen.autograd.functional": 6,
    "gradgen.compile": 6,
    "gradgen.linalg": 6,
    "gradgen.special": 6,
    "gradgen.fft": 6,
    "gradgen.viz": 6,
    "gradgen.profiler": 6,
    # 7: the package itself, and programs that import it.
    "gradgen": 7,
    "gradgen.demo": 7,
}

# The one mutual tie, by design: packages whose modules may import each other.
TIE = ("gradgen.generated", "gradgen.helpers", "gradgen.composites")

# (importer, imported) -> why this import may go up a floor. None does today: an entry
# needs a reason a reader accepts (a function-local import that breaks the tie, ...).
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    path: Path
    line: int
    local: bool  # inside a function: runs when called, not when the module loads

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


@functools.cache
def modules() -> dict[str, Path]:
    """Every module of the runtime and the generated package: dotted name -> file."""
    found: dict[str, Path] = {}
    for package, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def floor_of(module: str) -> float | None:
    """The floor of a module: its own entry or its nearest package's (the root
    package's entry is only its own)."""
    name = module
    while name:
        if name in FLOORS and (name == module or name != "gradgen"):
            return FLOORS[name]
        name = name.rpartition(".")[0]
    return None


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(
    body: list[ast.stmt], local: bool = False
) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """The import statements that run, with whether they are inside a function."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, local
        elif isinstance(node, ast.If) and _is_type_checking(node):
            yield from _import_nodes(node.orelse, local)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _import_nodes(node.body, True)
        else:
            # Class bodies, if/for/while/with/try blocks: they run with the module.
            blocks = [getattr(node, f, []) for f in ("body", "orelse", "finalbody")]
            blocks += [handler.body for handler in getattr(node, "handlers", [])]
            for block in blocks:
                yield from _import_nodes(block, local)


def _targets(
    module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]
) -> set[str]:
    """The gradgen modules an import runs: the one named, each package on the way
    (importing `a.b.c` runs a/__init__ and a/b/__init__), except the root package and
    the importer's own packages (already running)."""
    named: set[str] = set()
    if isinstance(node, ast.Import):
        named = {alias.name for alias in node.names}
    else:
        base = node.module or ""
        if node.level:
            package = module if is_package else module.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            named.add(submodule if submodule in known else base)
    targets: set[str] = set()
    own = {module.rsplit(".", n)[0] for n in range(module.count(".") + 1)}
    for name in named:
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            prefix = ".".join(parts[:end])
            if prefix not in known or prefix == module:
                continue
            if prefix == name or (prefix != "gradgen" and prefix not in own):
                targets.add(prefix)
    return targets


@functools.cache
def imports() -> list[Import]:
    known = modules()
    found: list[Import] = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_package = path.name == "__init__.py"
        for node, local in _import_nodes(tree.body):
            for imported in sorted(_targets(module, is_package, node, set(known))):
                found.append(Import(module, imported, path, node.lineno, local))
    return found


def _upward(found: list[Import]) -> list[str]:
    problems = []
    for item in found:
        mine, theirs = floor_of(item.importer), floor_of(item.imported)
        if mine is None or theirs is None or theirs <= mine:
            continue
        if (item.importer, item.imported) in ALLOWED_UPWARD:
            continue
        kind = "function-local import" if item.local else "import"
        problems.append(
            f"{item.where()}: {kind} of {item.imported} (floor {theirs:g}) in "
            f"{item.importer} (floor {mine:g})"
        )
    return problems


def _cycles(found: list[Import]) -> list[list[str]]:
    """The import circles (strongly connected components of more than one module) of
    the imports that run when modules load, in Tarjan's order."""
    graph: dict[str, set[str]] = {module: set() for module in modules()}
    for item in found:
        if item.local:
            continue
        graph[item.importer].add(item.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative Tarjan: (node, iterator over its successors).
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def _in_tie(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in TIE)


def test_every_module_has_a_floor() -> None:
    missing = [
        f"{path.relative_to(ROOT)} ({module})"
        for module, path in modules().items()
        if floor_of(module) is None
    ]
    assert not missing, (
        "modules without a floor (give each a line in FLOORS here and in "
        "docs/architecture.md's floor table):\n" + "\n".join(missing)
    )


def test_no_import_goes_up_a_floor() -> None:
    problems = _upward(imports())
    assert not problems, (
        "imports that go up a floor (import from your floor or below; see "
        "docs/architecture.md, Floors):\n" + "\n".join(problems)
    )


def test_no_import_circle_but_the_documented_tie() -> None:
    circles = [c for c in _cycles(imports()) if not all(map(_in_tie, c))]
    reports = []
    for circle in circles:
        files = ", ".join(str(modules()[m].relative_to(ROOT)) for m in circle)
        reports.append(f"{len(circle)} modules: {files}")
    assert not circles, "import circles:\n" + "\n".join(reports)


def test_the_tie_is_what_the_documentation_says() -> None:
    """The circle that remains is the generated operators with their helpers and
    composites, and nothing below or above them is in it."""
    circles = _cycles(imports())
    tied = [c for c in circles if all(map(_in_tie, c))]
    assert len(tied) == 1 and "gradgen.generated.ops" in tied[0], tied
    assert any(m.startswith("gradgen.helpers") for m in tied[0])


def test_allow_lists_name_real_imports() -> None:
    """An entry of an allow-list that no import uses is stale: remove it."""
    used = {(item.importer, item.imported) for item in imports()}
    stale = (set(ALLOWED_UPWARD)) - used
    assert not stale, f"allow-list entries with no such import: {sorted(stale)}"


# -- the checker itself, on small trees -----------------------------------------------


def _targets_of(source: str, module: str, known: set[str]) -> set[str]:
    node = ast.parse(source).body[0]
    assert isinstance(node, (ast.Import, ast.ImportFrom))
    return _targets(module, False, node, known)


KNOWN = {
    "gradgen",
    "gradgen.tensor",
    "gradgen.generated",
    "gradgen.generated.ops",
    "gradgen.autograd",
    "gradgen.autograd.forward_ad",
}


@pytest.mark.parametrize(
    "source, module, expected",
    [
        ("from . import tensor", "gradgen.indexing", {"gradgen.tensor"}),
        ("from .tensor import Tensor", "gradgen.indexing", {"gradgen.tensor"}),
        ("import gradgen", "gradgen.nn.functional", {"gradgen"}),
        ("from gradgen import Tensor", "gradgen.viz", {"gradgen"}),
        (
            "from ..generated.ops import cat",
            "gradgen.helpers.shape",
            {"gradgen.generated", "gradgen.generated.ops"},
        ),
        (
            "from gradgen.autograd.forward_ad import in_jvp",
            "gradgen.generated.variable_type",
            {"gradgen.autograd", "gradgen.autograd.forward_ad"},
        ),
        ("from . import ops", "gradgen.generated.kernels", {"gradgen.generated.ops"}),
        ("import numpy as np", "gradgen.tensor", set()),
    ],
)
def test_an_import_runs_the_module_it_names_and_its_packages(
    source: str, module: str, expected: set[str]
) -> None:
    assert _targets_of(source, module, KNOWN) == expected


def test_type_checking_imports_do_not_count_and_function_ones_do() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from . import tensor_api\n"
        "else:\n"
        "    import json\n"
        "def f():\n"
        "    from .generated import ops\n"
    )
    found = [
        (type(n).__name__, n.lineno, local) for n, local in _import_nodes(tree.body)
    ]
    assert found == [
        ("ImportFrom", 1, False),
        ("Import", 5, False),
        ("ImportFrom", 7, True),
    ]


def test_an_upward_import_is_reported_with_file_and_line() -> None:
    path = SOURCES["gradgen"] / "tensor.py"
    upward = Import("gradgen.tensor", "gradgen.tensor_api", path, 12, True)
    downward = Import("gradgen.tensor_api", "gradgen.tensor", path, 3, False)
    assert _upward([upward, downward]) == [
        "src/gradgen/tensor.py:12: function-local import of gradgen.tensor_api "
        "(floor 5) in gradgen.tensor (floor 3)"
    ]


def test_floors_of_packages_cover_their_new_files() -> None:
    assert floor_of("gradgen.nn.modules.conv") == 6
    assert floor_of("gradgen.utils.data.dataloader") == 6
    assert floor_of("gradgen.numpy_kernels.conv") == 2
    assert floor_of("gradgen.brand_new_module") is None  # a new file must be placed


def _documented_floors() -> dict[str, float]:
    """docs/architecture.md's floor table: module or package -> floor."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("## Floors", 1)[1].split("\n\n")[2]
    documented: dict[str, float] = {}
    for row in table.splitlines()[2:]:
        floor, names = row.split("|")[1:3]
        value = float(floor.strip().replace("½", ".5"))
        for name in names.replace("`", " ").split():
            name = name.removesuffix("/").removesuffix(".py").replace("/", ".")
            documented[
                "gradgen" if name == "gradgen.__init__" else f"gradgen.{name}"
            ] = value
    return documented


def test_the_documented_table_is_this_table() -> None:
    assert _documented_floors() == FLOORS

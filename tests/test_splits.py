"""The size rules of docs/LAYOUT (issue 17) on the generator, gradcheck and the
benchmarks: no module over 800 lines, no function over 60 lines (a few named
exceptions that may not grow), no unused import and no dead name in the generator,
and the import paths that the split kept."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CODEGEN = sorted((ROOT / "codegen").glob("*.py"))
SPLIT_SOURCES = [
    *CODEGEN,
    *sorted((ROOT / "bench").glob("*.py")),
    *sorted((ROOT / "src" / "gradgen" / "autograd").glob("*gradcheck*.py")),
]
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 60
# Longer functions, each no longer than it is now: argument parsers and public
# functions whose signature and docstring (PyTorch's keywords) are most of the length.
LONG_FUNCTIONS = {
    "codegen/__main__.py:main": 81,
    "src/gradgen/autograd/gradcheck.py:gradcheck": 66,
    "src/gradgen/autograd/gradcheck.py:gradgradcheck": 62,
}


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


@pytest.mark.parametrize("path", SPLIT_SOURCES, ids=_name)
def test_module_is_at_most_800_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{_name(path)} has {lines} lines"


@pytest.mark.parametrize("path", SPLIT_SOURCES, ids=_name)
def test_functions_are_at_most_60_lines(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    too_long = []
    for function in _functions(tree):
        start = min([d.lineno for d in function.decorator_list] + [function.lineno])
        assert function.end_lineno is not None
        length = function.end_lineno - start + 1
        limit = LONG_FUNCTIONS.get(f"{_name(path)}:{function.name}", MAX_FUNCTION_LINES)
        if length > limit:
            too_long.append(f"{function.name} ({length} lines, at most {limit})")
    assert not too_long, f"{_name(path)}: split into named steps: {too_long}"


def _imported_names(tree: ast.Module) -> dict[str, int]:
    names = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                names[alias.asname or alias.name] = node.lineno
    return names


def _declared_all(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "__all__"
        ):
            value = ast.literal_eval(node.value)
            return set(value)
    return set()


@pytest.mark.parametrize("path", CODEGEN, ids=_name)
def test_codegen_module_imports_only_what_it_uses(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    used |= {
        n.value.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
    }
    exported = _declared_all(tree)
    unused = [
        f"{name} (line {line})"
        for name, line in _imported_names(tree).items()
        if name not in used and name not in exported
    ]
    if path.name == "__init__.py":  # the package's public names
        unused = [u for u in unused if u.split()[0] not in exported]
    assert not unused, f"{_name(path)} imports but never uses {unused}"


def _corpus() -> str:
    paths = [
        *(ROOT / "codegen").glob("*.py"),
        *(ROOT / "templates").rglob("*"),
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "src").rglob("*.py"),
    ]
    return "\n".join(
        p.read_text(encoding="utf-8")
        for p in paths
        if p.is_file() and p.suffix in (".py", ".j2") and p.name != "test_splits.py"
    )


def test_every_codegen_name_is_used() -> None:
    """A module-level name or method of the generator that nothing reads is dead."""
    corpus = _corpus()
    dead = []
    for path in CODEGEN:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names: list[str] = []
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.append(node.name)
            if isinstance(node, ast.ClassDef):
                names += [
                    f.name
                    for f in node.body
                    if isinstance(f, ast.FunctionDef)
                    and not f.name.startswith(("__", "visit_"))
                ]
            elif isinstance(node, ast.Assign):
                names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        for name in names:
            if name == "__all__":
                continue
            if len(re.findall(rf"\b{re.escape(name)}\b", corpus)) < 2:
                dead.append(f"{_name(path)}: {name}")
    assert not dead, f"defined but never used: {dead}"


@pytest.mark.parametrize(
    "module, names",
    [
        ("gradgen.codegen", ["CodegenError", "FunctionSchema", "generate"]),
        (
            "gradgen.codegen.schema",
            [
                "Annotation",
                "Argument",
                "Arguments",
                "BaseOperatorName",
                "BaseTy",
                "BaseType",
                "CustomClassType",
                "FunctionSchema",
                "ListType",
                "MAX_LIST_SIZE",
                "OperatorName",
                "OptionalType",
                "Return",
                "SchemaKind",
                "TORCH_KEYWORDS",
                "Type",
                "default_to_python",
                "parse_schema",
            ],
        ),
        ("gradgen.codegen.ir", ["PackageIR", "BindingIR", "build"]),
        (
            "gradgen.codegen.load",
            [
                "DERIVATIVE_CONTROL_KEYS",
                "NATIVE_KEYS",
                "defined_functions",
                "exported_names",
                "load",
            ],
        ),
        (
            "gradgen.codegen.formulas",
            ["AnalysedFormula", "FormulaNames", "METADATA_SUGAR", "SCALAR_METHODS"],
        ),
        (
            "gradgen.autograd.gradcheck",
            ["GradcheckError", "gradcheck", "gradgradcheck"],
        ),
        ("gradgen.autograd", ["GradcheckError", "gradcheck", "gradgradcheck"]),
    ],
)
def test_import_paths_kept(module: str, names: list[str]) -> None:
    imported = importlib.import_module(module)
    missing = [name for name in names if not hasattr(imported, name)]
    assert not missing, f"{module} lost {missing}"


def test_gradcheck_error_keeps_its_public_module() -> None:
    from gradgen.autograd.gradcheck import GradcheckError

    assert GradcheckError.__module__ == "gradgen.autograd.gradcheck"
    assert GradcheckError.__qualname__ == "GradcheckError"

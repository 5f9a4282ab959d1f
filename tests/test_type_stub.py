"""The generated type stubs (codegen/stubs.py -> generated/*.pyi): mypy sees every
operator and Tensor method with its signature, from the repository and from an
installed wheel, and reports wrong calls.

The stubs say the same as the runtime: the same names (ops.__all__, the methods
installed on Tensor, the named tuples returned), and for a name with one schema the
same parameters (names, kinds, which have defaults) as the generated function.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import os
import re
import runpy
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import gradgen
from gradgen.generated import kernels, ops, tensor_methods

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
OPERATORS_PROGRAM = ROOT / "tests" / "typecheck" / "operators.py"

# Wrong calls, each with the mypy error code it must get (and nothing else may fail).
WRONG_PROGRAM = """\
import gradgen

x = gradgen.ones(2, 3)
gradgen.add(x, "a")  # error: arg-type
gradgen.exp(x, alpha=2)  # error: call-arg
x.permute("a")  # error: arg-type
x.sum(keepdims=True)  # error: call-overload
gradgen.no_such_operator(x)  # error: attr-defined
count: int = x.mul(2)  # error: assignment
x.max(dim=0).value  # error: attr-defined
gradgen.cat(x)  # error: arg-type
x.clamp(min="0")  # error: call-overload
"""


def _stub(name: str) -> ast.Module:
    return ast.parse((GENERATED / name).read_text())


def _stub_defs(body: list[ast.stmt]) -> dict[str, list[ast.FunctionDef]]:
    defs: dict[str, list[ast.FunctionDef]] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            defs.setdefault(node.name, []).append(node)
    return defs


def _tensor_base() -> ast.ClassDef:
    (node,) = [
        n
        for n in _stub("tensor_base.pyi").body
        if isinstance(n, ast.ClassDef) and n.name == "TensorBase"
    ]
    return node


def _parameters(node: ast.FunctionDef) -> list[tuple[str, str, bool]]:
    """(name, kind, has a default) of a stub def, as inspect names the kinds."""
    arguments = node.args
    result = []
    defaults = [None] * (len(arguments.args) - len(arguments.defaults))
    for argument, default in zip(arguments.args, defaults + arguments.defaults):
        result.append((argument.arg, "POSITIONAL_OR_KEYWORD", default is not None))
    if arguments.vararg is not None:
        result.append((arguments.vararg.arg, "VAR_POSITIONAL", False))
    for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        result.append((argument.arg, "KEYWORD_ONLY", default is not None))
    return result


def _runtime_parameters(function: object) -> list[tuple[str, str, bool]]:
    return [
        (p.name, p.kind.name, p.default is not inspect.Parameter.empty)
        for p in inspect.signature(function).parameters.values()  # type: ignore[arg-type]
    ]


# -- the stubs say what the runtime has -----------------------------------------------


def test_the_stub_declares_every_public_function() -> None:
    module = _stub("ops.pyi")
    (declared,) = [
        ast.literal_eval(n.value)
        for n in module.body
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "__all__"
    ]
    assert sorted(declared) == sorted(ops.__all__)
    assert set(_stub_defs(module.body)) == set(ops.__all__)


def test_tensor_base_declares_every_generated_method() -> None:
    declared = set(_stub_defs(_tensor_base().body))
    assert declared == set(tensor_methods.METHODS)
    # ... which Tensor has at runtime, attached by install_methods.
    assert all(callable(getattr(gradgen.Tensor, name)) for name in declared)


def test_single_schema_names_have_the_runtime_parameters() -> None:
    functions = _stub_defs(_stub("ops.pyi").body)
    checked = 0
    for name, defs in functions.items():
        if len(defs) == 1:
            assert _parameters(defs[0]) == _runtime_parameters(getattr(ops, name)), name
            checked += 1
    methods = _stub_defs(_tensor_base().body)
    for name, defs in methods.items():
        if len(defs) == 1:
            runtime = _runtime_parameters(tensor_methods.METHODS[name])
            assert _parameters(defs[0]) == runtime, name
            checked += 1
    assert checked > 300


def test_overloaded_names_are_overloads_with_one_def_per_schema() -> None:
    for body in (_stub("ops.pyi").body, _tensor_base().body):
        for name, defs in _stub_defs(body).items():
            decorated = [ast.unparse(d) for node in defs for d in node.decorator_list]
            assert decorated == (
                ["overload"] * len(defs) if len(defs) > 1 else []
            ), name
    assert (
        len(_stub_defs(_tensor_base().body)["pow"]) == 2
    )  # Tensor_Scalar, Tensor_Tensor


def test_named_tuples_have_the_runtime_fields() -> None:
    classes = {
        n.name: [ast.unparse(s.target) for s in n.body if isinstance(s, ast.AnnAssign)]
        for n in _stub("tensor_base.pyi").body
        if isinstance(n, ast.ClassDef) and n.name != "TensorBase"
    }
    assert "max_dim_return" in classes
    for name, fields in classes.items():
        assert list(getattr(kernels, name)._fields) == fields, name


def test_tensor_inherits_the_stub_only_when_type_checking() -> None:
    assert gradgen.Tensor.__mro__ == (gradgen.Tensor, object)
    assert not (GENERATED / "tensor_base.py").exists()


def test_mypy_finds_the_stubs_through_the_typings_link() -> None:
    link = ROOT / "tests" / "typecheck" / "typings" / "gradgen" / "generated"
    assert link.is_symlink() and link.resolve() == GENERATED.resolve()


def test_the_stubs_are_package_data() -> None:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib needs Python 3.11")
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "*.pyi" in config["tool"]["setuptools"]["package-data"]["gradgen.generated"]


def test_the_typed_program_runs() -> None:
    """Every call that tests/typecheck/operators.py type-checks is valid at runtime."""
    assert "type: ignore" not in OPERATORS_PROGRAM.read_text()
    namespace = runpy.run_path(str(OPERATORS_PROGRAM))
    assert namespace["largest"].values.shape == (3,)


# -- mypy on user programs --------------------------------------------------------------


def _require_mypy() -> None:
    if importlib.util.find_spec("mypy") is None:
        if os.environ.get("GRADGEN_REQUIRE_MYPY") == "1":
            pytest.fail("mypy is not installed (GRADGEN_REQUIRE_MYPY=1 requires it)")
        pytest.skip("mypy is not installed (pip install -e '.[test]')")


def _errors(report: str, program: str) -> dict[int, set[str]]:
    """line -> the error codes mypy reported in `program`."""
    found: dict[int, set[str]] = {}
    for line in report.splitlines():
        match = re.match(
            rf".*{re.escape(program)}:(\d+): error: .*\[([a-z-]+)\]$", line
        )
        if match:
            found.setdefault(int(match[1]), set()).add(match[2])
    return found


def _expected_errors() -> dict[int, set[str]]:
    return {
        number: {line.rsplit("# error: ", 1)[1]}
        for number, line in enumerate(WRONG_PROGRAM.splitlines(), 1)
        if "# error: " in line
    }


@pytest.mark.slow  # mypy over the runtime (a few seconds with its cache)
def test_mypy_reports_wrong_calls_in_the_repository(tmp_path: Path) -> None:
    _require_mypy()
    program = tmp_path / "wrong_calls.py"
    program.write_text(WRONG_PROGRAM)
    # The repository's configuration (its stubs link); the runtime through MYPYPATH.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", str(program)],
        cwd=ROOT,
        env={**os.environ, "MYPYPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
    )
    report = result.stdout + result.stderr
    assert _errors(report, program.name) == _expected_errors(), report
    assert result.stdout.count(": error: ") == len(_expected_errors()), report


def _install_wheel(tmp_path: Path) -> Path:
    """A virtual environment with gradgen installed from a wheel (not editable); numpy
    and typing_extensions come from this environment through a .pth file."""
    # From a copy of what the build reads, so that no build/ is left in the checkout.
    source = tmp_path / "source"
    source.mkdir()
    for name in (
        "pyproject.toml",
        "README.md",
        "src",
        "codegen",
        "templates",
        "generated",
    ):
        if (ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy(ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps"]
        + ["--no-build-isolation", "-w", str(wheels), str(source)],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("gradgen-*.whl")
    environment = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(environment)], check=True
    )
    python = environment / ("Scripts" if os.name == "nt" else "bin") / "python"
    site_packages = Path(
        subprocess.run(
            [
                str(python),
                "-c",
                "import sysconfig; print(sysconfig.get_path('purelib'))",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    with zipfile.ZipFile(wheel) as archive:  # a pure-Python wheel installs by unpacking
        archive.extractall(site_packages)
    numpy_home = Path(importlib.util.find_spec("numpy").origin).parent.parent  # type: ignore[arg-type,union-attr]
    (site_packages / "test_dependencies.pth").write_text(f"{numpy_home}\n")
    assert (site_packages / "gradgen" / "generated" / "ops.pyi").is_file()
    return python


@pytest.mark.slow  # builds a wheel and runs mypy cold over numpy's stubs: ~30 s
def test_an_installed_wheel_types_operators_and_methods(tmp_path: Path) -> None:
    _require_mypy()
    python = _install_wheel(tmp_path)
    project = tmp_path / "user"
    project.mkdir()
    shutil.copy(OPERATORS_PROGRAM, project / "operators.py")
    (project / "wrong_calls.py").write_text(WRONG_PROGRAM)
    (project / "mypy.ini").write_text("[mypy]\n")  # no configuration of the repository

    def mypy(program: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--python-executable"]
            + [str(python), "--cache-dir", str(tmp_path / "cache"), program],
            cwd=project,
            capture_output=True,
            text=True,
        )

    typed = mypy("operators.py")
    assert typed.returncode == 0, typed.stdout + typed.stderr
    assert "Success: no issues found in 1 source file" in typed.stdout
    wrong = mypy("wrong_calls.py")
    assert _errors(wrong.stdout, "wrong_calls.py") == _expected_errors(), wrong.stdout

"""The runtime packages cut by family (numpy_kernels, helpers, composites): each family
module lists its names, the package's `__init__.py` lists them all (the generator reads
that list without importing), and an installed gradgen contains every package."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from codegen.load import exported_names

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "src" / "gradgen"

# Names a package's `__all__` takes from outside its family modules.
OUTSIDE_FAMILIES = {
    "numpy_kernels": {
        "cat_arrays",
        "stack_arrays",
        "negative",
        "subtract",
        "alpha_scaled",
        "add_scaled",
        "sub_check",
        "power",
        "random_generator",
    },
    "helpers": {"is_grad_enabled"},
    "composites": set(),
}
PACKAGES = sorted(OUTSIDE_FAMILIES)


def _families(package: ModuleType) -> list[ModuleType]:
    """The family modules (a subpackage, as helpers' array twins, is no family)."""
    return [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
        if not info.ispkg
    ]


def _functions(module: ModuleType) -> set[str]:
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_the_split_modules_are_packages() -> None:
    for name in PACKAGES:
        assert not (RUNTIME / f"{name}.py").exists(), f"{name}.py beside {name}/"


@pytest.mark.parametrize("name", PACKAGES)
def test_package_all_is_the_union_of_its_families(name: str) -> None:
    package = importlib.import_module(f"gradgen.{name}")
    listed = list(package.__all__)
    assert len(listed) == len(set(listed)), "a name listed twice"
    union: set[str] = set()
    for family in _families(package):
        names = set(getattr(family, "__all__", ()))
        if not family.__name__.rsplit(".", 1)[1].startswith("_"):
            # A family module lists the functions it defines: every public one, and
            # private-looking ones PyTorch names so (helpers' `_to_copy_backward`).
            defined = _functions(family)
            public = {n for n in defined if not n.startswith("_")}
            assert public <= names <= defined, family.__name__
        assert not names & union, f"{family.__name__} lists a name of another family"
        union |= names
        for member in names:
            assert getattr(package, member) is getattr(family, member)
    assert set(listed) == union | OUTSIDE_FAMILIES[name]
    # What the generator reads (ast, no import) is what the package exports.
    assert exported_names(name) == frozenset(listed)


@pytest.mark.parametrize("name", PACKAGES)
def test_family_modules_stay_small(name: str) -> None:
    for path in (RUNTIME / name).glob("*.py"):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= 800, f"{path.name}: {lines} lines"


def test_no_merge_batch_sections_or_placeholders_in_the_split_packages() -> None:
    stale = re.compile(r"# -+ batch [A-F]|functions of this group go here")
    for name in PACKAGES:
        for path in (RUNTIME / name).glob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert not stale.search(text), path


def test_an_installed_gradgen_contains_every_runtime_package() -> None:
    """setuptools' `packages` list is explicit: a package missing from it is missing
    from a wheel (a non-editable install) while every test in a checkout passes."""
    if sys.version_info < (3, 11):
        pytest.skip("tomllib needs Python 3.11")
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    on_disk = {
        "gradgen" + ".".join(("",) + path.parent.relative_to(RUNTIME).parts)
        for path in RUNTIME.rglob("__init__.py")
    }
    assert on_disk - listed == set()
    mypy_modules = {
        module
        for override in config["tool"]["mypy"]["overrides"]
        for module in override["module"]
    }
    assert {"gradgen.numpy_kernels", "gradgen.numpy_kernels.*"} <= mypy_modules

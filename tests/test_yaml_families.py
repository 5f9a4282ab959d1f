"""native_functions.yaml and derivatives.yaml are cut into one section per family,
named as the family's files are in every other layer (../shared/LAYOUT.md rule 2):
numpy_kernels/<family>.py, composites/<family>.py, tests/ops/test_<family>.py.

A section starts with a header line `# ==== family: NAME ====`. Where an operator goes
is decided by data where there is some: the module that defines the kernel its
`numpy:` expression calls (the outermost call), or its `composite:` function. An
in-place operator without a kernel of its own goes with its functional one, a
`*_backward` / `*_forward` operator with the operator it serves, and every overload of
a name with the others. derivatives.yaml has the same sections as native_functions.yaml,
in the same order, and an operator's formulas sit in its native entry's family; the
operator table (tests/test_operator_table.py) is cut the same way.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from codegen.yaml_loader import load_entries

ROOT = Path(__file__).resolve().parent.parent
NATIVE = ROOT / "native_functions.yaml"
DERIVATIVES = ROOT / "derivatives.yaml"
OPERATOR_TABLE = ROOT / "tests" / "test_operator_table.py"
RUNTIME = ROOT / "src" / "gradgen"

# LAYOUT.md's families (rnn and attention have composites only).
FAMILIES = (
    "shape",
    "indexing",
    "elementwise",
    "reduction",
    "linalg",
    "activation",
    "loss",
    "normalization",
    "sparse",
    "conv",
    "pooling",
    "resampling",
    "fft",
    "special",
    "rnn",
    "attention",
)

# Runtime modules not named after a family, and the family of what they define
# (composites/dropout.py holds dropout, an activation-family operator: its tests are in
# tests/ops/test_activation.py; a family's module over ~800 lines splits by topic into
# <family>_<topic>.py). A module listed here must exist.
MODULE_FAMILY = {
    "composites/dropout.py": "activation",
    "numpy_kernels/linalg_decompositions.py": "linalg",
    "composites/linalg_decompositions.py": "linalg",
    "numpy_kernels/linalg_distance.py": "linalg",
    "composites/linalg_products.py": "linalg",
    "composites/shape_joining.py": "shape",
    "numpy_kernels/elementwise_quantize.py": "elementwise",
    "numpy_kernels/linalg_products.py": "linalg",
    "numpy_kernels/linalg_factorizations.py": "linalg",
    "numpy_kernels/shape_strided.py": "shape",
    "numpy_kernels/shape_building.py": "shape",
    "numpy_kernels/reduction_segments.py": "reduction",
}

HEADER = re.compile(r"^# ==== family: (?P<family>\S+) ====$")
# Anything that looks like a section header: it must be a family header.
HEADER_LIKE = re.compile(r"^#\s*(={3,}|-{3,})")


@dataclass(frozen=True)
class Placed:
    """An entry (or table line) and the section it is in."""

    name: str  # the operator, e.g. add.Tensor
    family: str | None  # None: before the first section
    where: str  # file:line
    values: dict[str, object]


@dataclass(frozen=True)
class Sections:
    order: list[str]
    entries: list[Placed]
    errors: list[str]


def _operator(schema: str) -> str:
    return schema.split("(", 1)[0].strip()


def _base(name: str) -> str:
    """The operator's name without overload and in-place underscore: fill_.Scalar -> fill."""
    return name.split(".", 1)[0].rstrip("_")


def _headers(path: Path, lines: list[str]) -> tuple[dict[int, str], list[str]]:
    """Line number -> family of each header line, and the errors found in headers."""
    headers: dict[int, str] = {}
    errors: list[str] = []
    for number, line in enumerate(lines, 1):
        match = HEADER.match(line)
        if match:
            family = match["family"]
            if family not in FAMILIES:
                errors.append(
                    f"{path.name}:{number}: section '{family}' is not a family "
                    f"(one of: {', '.join(FAMILIES)})"
                )
            if family in headers.values():
                errors.append(f"{path.name}:{number}: a second '{family}' section")
            headers[number] = family
        elif HEADER_LIKE.match(line):
            errors.append(
                f"{path.name}:{number}: a section header must be "
                f"'# ==== family: NAME ====', not {line!r}"
            )
    return headers, errors


def _family_at(headers: dict[int, str], line: int) -> str | None:
    above = [number for number in headers if number < line]
    return headers[max(above)] if above else None


def _sections(path: Path, key: str) -> Sections:
    lines = path.read_text(encoding="utf-8").splitlines()
    headers, errors = _headers(path, lines)
    entries = []
    for entry in load_entries(path):
        line = entry.location.line
        family = _family_at(headers, line)
        where = f"{path.name}:{line}"
        name = _operator(str(entry.values[key]))
        if family is None:
            errors.append(f"{where}: {name} is before the first family section")
        entries.append(Placed(name, family, where, entry.values))
    for number, family in headers.items():
        if not any(placed.family == family for placed in entries):
            errors.append(f"{path.name}:{number}: section '{family}' has no entry")
    return Sections(list(headers.values()), entries, errors)


@pytest.fixture(scope="module")
def native() -> Sections:
    return _sections(NATIVE, "func")


@pytest.fixture(scope="module")
def derivatives() -> Sections:
    return _sections(DERIVATIVES, "name")


def _defined_in(package: str) -> dict[str, tuple[str, str]]:
    """Public function name -> (family, module) of the runtime module that defines it
    (the names a YAML entry may call)."""
    defined: dict[str, tuple[str, str]] = {}
    for path in sorted((RUNTIME / package).glob("*.py")):
        if path.stem.startswith("_"):
            continue  # shared by families (the package's private modules)
        module = f"{package}/{path.name}"
        family = MODULE_FAMILY.get(module, path.stem)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            # A public name is defined once in a package (test_family_packages).
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                defined[node.name] = (family, module)
    return defined


def _outermost_call(
    expression: str, functions: dict[str, tuple[str, str]]
) -> str | None:
    """The first function of `functions` the expression calls, outermost first."""
    for node in ast.walk(ast.parse(expression, mode="eval")):  # breadth first
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in functions:
                return node.func.id
    return None


def test_the_module_family_exceptions_exist() -> None:
    for module in MODULE_FAMILY:
        assert (RUNTIME / module).is_file(), f"{module} is gone: drop it here"


@pytest.mark.parametrize("which", ["native", "derivatives"])
def test_every_entry_is_in_a_family_section(
    which: str, request: pytest.FixtureRequest
) -> None:
    sections: Sections = request.getfixturevalue(which)
    assert sections.entries, "no entries read"
    assert not sections.errors, "\n".join(sections.errors)


@pytest.mark.parametrize(
    "path", [NATIVE, DERIVATIVES, OPERATOR_TABLE], ids=lambda p: p.name
)
def test_no_merge_batch_words_in_section_headers(path: Path) -> None:
    """A header names what is inside: no "batch A ... F" (nor the description lines
    under a header)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for number, line in enumerate(lines, 1):
        if not (HEADER.match(line) or HEADER_LIKE.match(line)):
            continue
        block = [number]
        while block[-1] < len(lines) and lines[block[-1]].startswith("#"):
            block.append(block[-1] + 1)  # the comment lines right under the header
        for at in block:
            if re.search(r"\bbatch(es)?\b", lines[at - 1], re.IGNORECASE):
                found.append(f"{path.name}:{at}: {lines[at - 1]}")
    assert not found, "\n".join(found)


def test_kernels_and_composites_are_defined_in_their_family(native: Sections) -> None:
    kernels, composites = _defined_in("numpy_kernels"), _defined_in("composites")
    errors = []
    for placed in native.entries:
        numpy, composite = placed.values.get("numpy"), placed.values.get("composite")
        found = None
        if isinstance(numpy, str):
            kernel = _outermost_call(numpy, kernels)
            if kernel is not None:
                found = (f"its kernel {kernel}", *kernels[kernel])
        elif isinstance(composite, str) and composite in composites:
            found = (f"its composite {composite}", *composites[composite])
        if found is None:
            continue  # numpy or Python operators only: placed by name
        what, family, module = found
        if family != placed.family:
            errors.append(
                f"{placed.where}: {placed.name} is in section '{placed.family}', but "
                f"{what} is defined in {module} (family '{family}')"
            )
    assert not errors, "\n".join(errors)


def test_related_operators_share_a_family(native: Sections) -> None:
    """Overloads and in-place forms of a name share its family (the Backward class
    numbers count a name's entries in file order); `X_backward`, `X_backward_data` and
    `X_forward` go with X."""
    by_base: dict[str, Placed] = {}
    errors = []
    for placed in native.entries:
        first = by_base.setdefault(_base(placed.name), placed)
        if first.family != placed.family:
            errors.append(
                f"{placed.where}: {placed.name} is in '{placed.family}', "
                f"{first.name} ({first.where}) in '{first.family}'"
            )
    for placed in native.entries:
        base = _base(placed.name)
        for suffix in ("_backward_data", "_backward", "_forward"):
            served = (
                by_base.get(base[: -len(suffix)]) if base.endswith(suffix) else None
            )
            if served is not None and served.family != placed.family:
                errors.append(
                    f"{placed.where}: {placed.name} is in '{placed.family}', the "
                    f"operator it serves, {served.name} ({served.where}), in "
                    f"'{served.family}'"
                )
                break
    assert not errors, "\n".join(errors)


def test_derivatives_follow_native_functions(
    native: Sections, derivatives: Sections
) -> None:
    errors = []
    by_name = {placed.name: placed for placed in native.entries}
    for placed in derivatives.entries:
        functional = by_name.get(placed.name)
        if functional is None:
            continue  # the generator reports an entry without an operator
        if functional.family != placed.family:
            errors.append(
                f"{placed.where}: {placed.name} is in section '{placed.family}', its "
                f"operator ({functional.where}) in '{functional.family}'"
            )
    # The same sections, in the same order (a family may have no formulas at all).
    order = [family for family in native.order if family in derivatives.order]
    if derivatives.order != order:
        errors.append(
            f"{DERIVATIVES.name}: sections {derivatives.order}, but "
            f"{NATIVE.name} has them in the order {native.order}"
        )
    assert not errors, "\n".join(errors)


def _is_table(node: ast.AST) -> bool:
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and node.target.id == "TABLE"
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        return (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "TABLE"
        )
    return False


def test_the_operator_table_is_cut_by_the_same_families(native: Sections) -> None:
    lines = OPERATOR_TABLE.read_text(encoding="utf-8").splitlines()
    headers, errors = _headers(OPERATOR_TABLE, lines)
    family_of = {placed.name: placed for placed in native.entries}
    tree = ast.parse("\n".join(lines))
    for statement in tree.body:
        if not _is_table(statement):
            continue
        for node in ast.walk(statement):
            if not isinstance(node, ast.Dict):
                continue
            for key in node.keys:
                if not (isinstance(key, ast.Constant) and key.value in family_of):
                    continue  # test_operator_table checks the keys themselves
                entry = family_of[key.value]
                family = _family_at(headers, key.lineno)
                if family != entry.family:
                    section = f"'{family}'" if family else "no family section"
                    errors.append(
                        f"{OPERATOR_TABLE.name}:{key.lineno}: {key.value!r} is under "
                        f"{section}, its operator ({entry.where}) in '{entry.family}'"
                    )
    order = [family for family in native.order if family in headers.values()]
    if list(headers.values()) != order:
        errors.append(
            f"{OPERATOR_TABLE.name}: sections {list(headers.values())}, but "
            f"{NATIVE.name} has them in the order {native.order}"
        )
    assert not errors, "\n".join(errors)

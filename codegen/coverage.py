"""`make coverage`: how much of PyTorch's derivatives.yaml gradgen has, and reads as is.

    python -m codegen.coverage [--torch-derivatives FILE] [--derivatives FILE]
                               [--native-functions FILE] [--missing N] [--array-forms]

PyTorch's file is the one packaged with torchgen (found without importing torch), or
the file given. Without either, the counts against PyTorch are skipped, saying so. The
counts, each of PyTorch's entries named by operator and overload (`add.Tensor`):

- present: PyTorch's entries this repository's derivatives.yaml has an entry for;
- public functional: PyTorch's entries for operators a user calls, the rule of
  `is_public_functional`: the operator name has no leading underscore, no `backward`
  in it, no trailing underscore (in-place), and the overload is no `out` one. They are
  counted as entries and as operators (overloads folded: an operator counts as present
  when this repository has an entry for any of its public overloads);
- double backward: entries of PyTorch's `*backward*` operators (`is_double_backward`),
  which give the gradients of gradients;
- accepted verbatim: PyTorch's entries the generator reads pasted unchanged. Each is a
  dry run of the generator's own reading (the schema from the entry's `name:`, each
  formula parsed and checked against gradgen's helpers, operators and methods); nothing
  is generated. An entry fails on the first problem of each formula; unknown names are
  tallied by how many entries they block, so the most useful helpers to add come first;
- identical: this repository's entries whose every key and value is PyTorch's text.

First it reports how many operators declare a vmap batching rule (`batching:` in
native_functions.yaml, by kind); the others run vmap's per-example loop.
With --array-forms (`make coverage` passes it), of this repository's own entries: how
many have an array form (array_formulas.py:
every formula of the entry translates to array twins), with the twins whose absence
blocks the most entries.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .array_formulas import Untranslatable, read_twins, translate
from .derivative_entries import _differentiability_info
from .errors import CodegenError, ErrorCollector
from .load import _formula_names, load, load_native_functions
from .model import NativeFunction, Variant
from .schema import parse_schema
from .yaml_loader import Entry, load_entries

ROOT = Path(__file__).resolve().parent.parent
PACKAGED = Path("packaged", "autograd", "derivatives.yaml")


# -- the counting rules -------------------------------------------------------------


def operator_key(name: Any) -> str:
    """An entry's operator and overload: ``add.Tensor(Tensor self, ...)`` -> ``add.Tensor``."""
    return str(name).split("(", 1)[0].strip()


def _split(key: str) -> tuple[str, str]:
    base, _, overload = key.partition(".")
    return base, overload


def is_public_functional(key: str) -> bool:
    """An operator a user calls: no leading `_`, no `backward`, not in-place, not out=."""
    base, overload = _split(key)
    return (
        not base.startswith("_")
        and "backward" not in base
        and not base.endswith("_")
        and "out" not in overload.split("_")
    )


def is_double_backward(key: str) -> bool:
    """An entry of a `*backward*` operator: the derivative of a derivative."""
    return "backward" in _split(key)[0]


def is_identical(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> bool:
    """Every key and value the same: PyTorch's entry pasted byte for byte."""
    return dict(ours) == dict(theirs)


# -- the dry run ----------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """Whether the generator reads one of PyTorch's entries as it is, and why not."""

    accepted: bool
    unknown: tuple[str, ...] = ()  # the names it does not know
    reasons: tuple[str, ...] = ()  # the other problems, shortened


def _reason(error: CodegenError) -> str:
    """A problem as a short category: its message up to the first quote or colon."""
    text = error.message
    for stop in (" '", ": ", " ("):
        text = text.split(stop, 1)[0]
    return text[:80]


def dry_run(entry: Entry, names: Any) -> Verdict:
    """Read `entry` as the generator would, without generating anything."""
    errors = ErrorCollector()
    try:
        schema = parse_schema(str(entry.values.get("name")))
        function = NativeFunction(
            schema=schema,
            variants=frozenset({Variant.function}),
            numpy=None,
            composite=None,
            type_promotion=(),
            location=entry.location,
        )
        with errors.context(entry.location):
            _differentiability_info(entry, function, names, {}, errors)
    except CodegenError as error:
        errors.add(error)
    unknown = tuple(word for error in errors.errors for word in error.unknown)
    reasons = tuple(_reason(e) for e in errors.errors if not e.unknown)
    return Verdict(not errors.errors, unknown, reasons)


# -- the counts -----------------------------------------------------------------------


@dataclass
class Coverage:
    ours: int = 0  # entries of this repository
    theirs: int = 0  # PyTorch's entries
    present: int = 0
    public: int = 0
    public_present: int = 0
    public_operators: int = 0
    public_operators_present: int = 0
    double: int = 0
    double_present: int = 0
    accepted: int = 0
    identical: int = 0
    missing: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)


def count(
    ours: Iterable[Mapping[str, Any]],
    theirs: Iterable[Mapping[str, Any]],
    verdicts: Iterable[Verdict] = (),
) -> Coverage:
    """The counts of the module's doc over two lists of entries (and the dry runs of
    PyTorch's entries, when made)."""
    mine = {operator_key(e.get("name")): e for e in ours}
    torch = {operator_key(e.get("name")): e for e in theirs}
    result = Coverage(ours=len(mine), theirs=len(torch))
    result.present = sum(1 for key in torch if key in mine)
    public = [key for key in torch if is_public_functional(key)]
    result.public = len(public)
    result.public_present = sum(1 for key in public if key in mine)
    operators = {_split(key)[0] for key in public}
    result.public_operators = len(operators)
    result.public_operators_present = len(
        {_split(key)[0] for key in public if key in mine}
    )
    double = [key for key in torch if is_double_backward(key)]
    result.double = len(double)
    result.double_present = sum(1 for key in double if key in mine)
    result.identical = sum(
        1
        for key, entry in mine.items()
        if key in torch and is_identical(entry, torch[key])
    )
    for verdict in verdicts:
        result.accepted += verdict.accepted
        result.missing.update(set(verdict.unknown))
        result.reasons.update(set(verdict.reasons))
    return result


def render(coverage: Coverage, accepted_measured: bool = True, top: int = 25) -> str:
    """The counts as a table, and what blocks verbatim acceptance most often."""
    c = coverage
    rows = [
        ("PyTorch's entries present (operator.overload)", c.present, c.theirs),
        ("  public functional entries present", c.public_present, c.public),
        (
            "  public functional operators present (overloads folded)",
            c.public_operators_present,
            c.public_operators,
        ),
        ("  double-backward entries present", c.double_present, c.double),
    ]
    if accepted_measured:
        rows.append(
            ("PyTorch's entries the generator accepts verbatim", c.accepted, c.theirs)
        )
    rows.append(
        ("this repository's entries identical to PyTorch's", c.identical, c.ours)
    )
    width = max(len(r[0]) for r in rows)
    lines = [f"{'':{width}}  {'count':>6}  {'of':>6}"]
    lines += [f"{label:{width}}  {n:>6}  {total:>6}" for label, n, total in rows]
    if accepted_measured and c.missing:
        lines += [
            "",
            f"Names blocking verbatim acceptance (entries blocked), top {top}:",
        ]
        lines += [f"  {n:>4}  {name}" for name, n in c.missing.most_common(top)]
    if accepted_measured and c.reasons:
        lines += ["", "Other problems (entries):"]
        lines += [f"  {n:>4}  {reason}" for reason, n in c.reasons.most_common(top)]
    return "\n".join(lines)


# -- vmap's batching rules ----------------------------------------------------------


def batching_report(native_functions: Path) -> str:
    """How many operators (entries with a kernel: a dispatcher entry each) declare a
    batching rule (`batching:`), by kind; the others run vmap's per-example loop."""
    functions = load_native_functions(native_functions, ErrorCollector(), set())
    operators = [f for f in functions if f.composite is None]
    kinds = Counter(f.batching.kind for f in operators if f.batching is not None)
    declared = sum(kinds.values())
    lines = [
        f"vmap batching rules (native_functions.yaml `batching:`): {declared} of "
        f"{len(operators)} operators; the other {len(operators) - declared} run "
        "the per-example loop"
    ]
    lines += [f"  {n:>4}  {kind}" for kind, n in sorted(kinds.items())]
    return "\n".join(lines)


# -- the array forms -------------------------------------------------------------------


@dataclass
class ArrayForms:
    entries: int = 0  # differentiable entries of this repository
    with_array_form: int = 0
    missing: Counter[str] = field(default_factory=Counter)  # twin -> entries blocked


def array_forms(native_functions: Path, derivatives: Path) -> ArrayForms:
    """How many of this repository's entries have an array form (and what blocks the
    others: a twin to write, a Tensor[] input, a formula not implemented)."""
    model = load(native_functions, derivatives, None)
    twins = read_twins()
    result = ArrayForms()
    for info in model.infos:
        if info.op is None:
            continue
        result.entries += 1
        blocked: set[str] = set()
        for derivative in info.derivatives:
            if derivative.formula.is_not_implemented:
                blocked.add("(not implemented)")
                continue
            try:
                translate(derivative.formula.expression, info.saved, twins)
            except Untranslatable as error:
                blocked.add(error.missing)
        if any(a.kind.value == "tensor_list" for a in info.saved):
            blocked.add("(a saved Tensor[])")
        if blocked:
            result.missing.update(blocked)
        else:
            result.with_array_form += 1
    return result


def render_array_forms(forms: ArrayForms, top: int = 25) -> str:
    lines = [
        f"derivatives.yaml entries with an array form: {forms.with_array_form} of "
        f"{forms.entries}",
        f"What blocks the others (entries blocked), top {top}:",
    ]
    lines += [f"  {n:>4}  {name}" for name, n in forms.missing.most_common(top)]
    return "\n".join(lines)


# -- the command ----------------------------------------------------------------------


def packaged_derivatives() -> Path | None:
    """torchgen's packaged derivatives.yaml, found without importing torch, or None."""
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = Path(location) / PACKAGED
        if path.is_file():
            return path
    return None


def measure(
    torch_path: Path | None, derivatives: Path, native_functions: Path
) -> tuple[Coverage, bool]:
    """The counts; the second value says whether PyTorch's file was read."""
    ours = [e.values for e in load_entries(derivatives)]
    if torch_path is None:
        return count(ours, []), False
    theirs = load_entries(torch_path)
    functions = load_native_functions(native_functions, ErrorCollector(), set())
    names = _formula_names(functions)
    verdicts = [dry_run(entry, names) for entry in theirs]
    return count(ours, [e.values for e in theirs], verdicts), True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m codegen.coverage",
        description="Count how much of PyTorch's derivatives.yaml gradgen has and "
        "reads verbatim.",
    )
    parser.add_argument("--torch-derivatives", type=Path, metavar="FILE")
    parser.add_argument(
        "--derivatives", type=Path, default=ROOT / "derivatives.yaml", metavar="FILE"
    )
    parser.add_argument(
        "--native-functions",
        type=Path,
        default=ROOT / "native_functions.yaml",
        metavar="FILE",
    )
    parser.add_argument("--missing", type=int, default=25, metavar="N")
    parser.add_argument(
        "--array-forms",
        action="store_true",
        help="also count the entries that have an array form (loads both files)",
    )
    arguments = parser.parse_args(argv)
    torch_path = arguments.torch_derivatives or packaged_derivatives()
    try:
        coverage, read = measure(
            torch_path, arguments.derivatives, arguments.native_functions
        )
        batching = batching_report(arguments.native_functions)
        forms = (
            array_forms(arguments.native_functions, arguments.derivatives)
            if arguments.array_forms
            else None
        )
    except CodegenError as error:
        print(f"coverage: {error}", file=sys.stderr)
        return 1
    print(batching + "\n")
    if not read:
        print(
            "coverage: torch (torchgen) is not installed and no --torch-derivatives "
            f"FILE was given: PyTorch's counts are skipped; derivatives.yaml has "
            f"{coverage.ours} entries"
        )
    else:
        print(f"PyTorch's derivatives.yaml: {torch_path}")
        print(render(coverage, top=arguments.missing))
    if forms is not None:
        print()
        print(render_array_forms(forms, top=arguments.missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The `batching:` key of native_functions.yaml: the generator checks it against the
schema (errors with file:line), writes the table gradgen.generated.batching, and the
runtime builds vmap's rules from it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gradgen.codegen.errors import ErrorCollector
from gradgen.codegen.load import load_native_functions
from gradgen.func import batching_rules
from gradgen.generated.batching import DECLARED

ROOT = Path(__file__).resolve().parent.parent.parent

CASES = {
    "times(Tensor self, Tensor other) -> Tensor\n  batching: pointwise": None,
    "times(Tensor self, int dim) -> Tensor\n  batching: dims": None,
    "times(Tensor self, Tensor other) -> Tensor\n  batching: trailing(self, other)": None,
    "times(Tensor self, Tensor other) -> Tensor\n  batching: dims": (
        "native_functions.yaml:1: times: batching: dims needs a dim argument"
    ),
    "times(Tensor self, Tensor other) -> Tensor\n  batching: pointwse": (
        "native_functions.yaml:1: times: unknown batching kind 'pointwse'; did you "
        "mean 'pointwise'?"
    ),
    "times(Tensor self, Tensor other) -> Tensor\n  batching: trailing(input)": (
        "native_functions.yaml:1: times: batching: trailing(input) names 'input', "
        "which is not a Tensor argument of 'times'"
    ),
    "times(Tensor self, Tensor other) -> Tensor\n  batching: trailing": (
        "batching: trailing(NAMES) names the Tensor arguments that may be batched"
    ),
    "times(Tensor self, Tensor other) -> Tensor\n  batching: pointwise(self)": (
        "other kinds take no names, got 'pointwise(self)'"
    ),
    "times(Tensor self, Tensor other) -> Tensor\n  batching: loss": (
        "batching: loss needs a 'reduction' argument; 'times' has none"
    ),
    "times(Tensor self, int other) -> Tensor\n  batching: contraction": (
        "batching: contraction needs two Tensor arguments; 'times' has 1"
    ),
    "times(int self) -> Tensor\n  batching: pointwise": (
        "batching: pointwise needs a Tensor argument to batch; 'times' has none"
    ),
    "times(Tensor self) -> Tensor\n  batching: [pointwise]": (
        "batching must be one of pointwise, dims, loss, trailing(NAMES), "
        "leading(NAME:RANK, ...), contraction, custom, got"
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=range(len(CASES)))
def test_the_generator_checks_the_declaration(case: str, tmp_path: Path) -> None:
    path = tmp_path / "native_functions.yaml"
    path.write_text(f"- func: {case}\n  numpy: self\n")
    errors = ErrorCollector()
    functions = load_native_functions(path, errors, set())
    expected = CASES[case]
    if expected is None:
        assert not errors.errors
        assert functions[0].batching is not None
        return
    assert len(errors.errors) == 1
    message = str(errors.errors[0])
    assert expected in message, message
    assert message.startswith("native_functions.yaml:1: times: ") or ":1:" in message


def test_the_generated_table_is_the_yaml() -> None:
    entries = yaml.safe_load((ROOT / "native_functions.yaml").read_text())
    declared = {
        entry["func"].split("(")[0]: entry["batching"]
        for entry in entries
        if "batching" in entry
    }
    assert sorted(declared) == sorted(DECLARED)
    for name, text in declared.items():
        kind, names = DECLARED[name]
        assert text.startswith(kind), name
        assert text == kind or text == f"{kind}({', '.join(names)})", name


def test_every_declaration_has_its_rule_and_every_hand_written_rule_is_declared() -> (
    None
):
    assert set(batching_rules.RULES) == set(DECLARED)
    custom = {name for name, (kind, _) in DECLARED.items() if kind == "custom"}
    assert custom == set(batching_rules.CUSTOM)
    contractions = {
        name.split(".")[0]
        for name, (kind, _) in DECLARED.items()
        if kind == "contraction"
    }
    assert contractions == set(batching_rules.CONTRACTIONS)


def test_a_custom_declaration_without_a_rule_is_refused_naming_the_operator() -> None:
    with pytest.raises(RuntimeError, match="declares 'batching: custom' for frob"):
        batching_rules.rule_of("frob", "custom", ())
    with pytest.raises(RuntimeError, match="add one to CONTRACTIONS"):
        batching_rules.rule_of("kron", "contraction", ())

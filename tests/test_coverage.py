"""`make coverage` (codegen/coverage.py): its counting rules on small fixture files, not
on torch's derivatives.yaml, so these run without torch."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradgen.codegen import coverage
from gradgen.codegen.coverage import (
    count,
    dry_run,
    is_double_backward,
    is_identical,
    is_public_functional,
    operator_key,
)
from gradgen.codegen.formulas import FormulaNames
from gradgen.codegen.yaml_loader import load_entries

# A PyTorch-like derivatives.yaml: five public functional entries (mul.Tensor,
# mul.Scalar, sum, kthvalue, clamp), an in-place one, an out= one, two private ones,
# two of *backward* operators.
THEIRS = """\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: mul_tensor_backward(grad, other, self.scalar_type())
  other: mul_tensor_backward(grad, self, other.scalar_type())
  result: other_t * self_p + self_t * other_p

- name: mul.Scalar(Tensor self, Scalar other) -> Tensor
  self: mul_tensor_backward(grad, other, self.scalar_type())
  result: self_t * other

- name: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  self: grad.expand_symint(self.sym_sizes())
  result: auto_linear

- name: kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)
  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)
  output_differentiability: [True, False]

- name: clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
  self: "grad.defined() ? clamp_backward(grad, self, min, max) : Tensor()"

- name: mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
  self: grad * other

- name: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  self: grad

- name: _private(Tensor self) -> Tensor
  self: at::frobnicate(grad)

- name: _softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
  output: grad
  dispatch:
    Default:
      grad_output: frobnicate(grad)

- name: tanh_backward(Tensor grad_output, Tensor output) -> Tensor
  grad_output: tanh_backward(grad, output.conj())
  output: "grad.defined() ? frobnicate(grad) : Tensor()"
"""

# This repository's: mul.Tensor verbatim, sum rewritten, tanh_backward verbatim, and
# one entry PyTorch has not.
OURS = """\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: mul_tensor_backward(grad, other, self.scalar_type())
  other: mul_tensor_backward(grad, self, other.scalar_type())
  result: other_t * self_p + self_t * other_p

- name: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  self: grad.expand(self.sym_sizes())
  result: auto_linear

- name: tanh_backward(Tensor grad_output, Tensor output) -> Tensor
  grad_output: tanh_backward(grad, output.conj())
  output: "grad.defined() ? frobnicate(grad) : Tensor()"

- name: sum_to_size(Tensor self, SymInt[] size) -> Tensor
  self: grad.expand(self.sym_sizes())
"""

NAMES = FormulaNames(
    helpers=frozenset({"mul_tensor_backward", "value_selecting_reduction_backward"}),
    functions=frozenset({"tanh_backward", "clamp_backward"}),
    methods=frozenset({"expand", "conj"}),
)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("name", "public", "double"),
    [
        ("mul.Tensor", True, False),
        ("sum", True, False),
        ("mul_.Tensor", False, False),  # in-place
        ("add.out", False, False),
        ("sum.dtype_out", False, False),  # an out= overload with a longer name
        ("max.dim_max", True, False),
        ("_private", False, False),
        ("tanh_backward", False, True),
        ("_softmax_backward_data", False, True),
        ("convolution_backward_overrideable", False, True),
    ],
)
def test_the_rules(name: str, public: bool, double: bool) -> None:
    assert is_public_functional(name) is public
    assert is_double_backward(name) is double


def test_operator_key_is_name_and_overload() -> None:
    assert (
        operator_key("add.Tensor(Tensor self, Tensor other) -> Tensor") == "add.Tensor"
    )
    assert operator_key("sum(Tensor self) -> Tensor") == "sum"


def test_identical_means_every_key_and_value() -> None:
    entry = {"name": "f(Tensor self) -> Tensor", "self": "grad"}
    assert is_identical(entry, dict(entry))
    assert is_identical(entry, {"self": "grad", "name": "f(Tensor self) -> Tensor"})
    assert not is_identical(entry, {**entry, "self": "grad "})
    assert not is_identical(entry, {**entry, "result": "auto_linear"})


def test_the_counts_on_the_fixture(tmp_path: Path) -> None:
    theirs = [e.values for e in load_entries(_write(tmp_path, "t.yaml", THEIRS))]
    ours = [e.values for e in load_entries(_write(tmp_path, "o.yaml", OURS))]
    c = count(ours, theirs)
    assert (c.ours, c.theirs) == (4, 10)
    assert c.present == 3  # mul.Tensor, sum, tanh_backward
    assert (c.public_present, c.public) == (2, 5)
    # operators, overloads folded: mul (present through mul.Tensor), sum, kthvalue, clamp
    assert (c.public_operators_present, c.public_operators) == (2, 4)
    assert (c.double_present, c.double) == (1, 2)
    assert c.identical == 2  # mul.Tensor and tanh_backward
    assert c.accepted == 0  # no dry runs given


def test_the_dry_run_accepts_reads_and_names_what_is_missing(tmp_path: Path) -> None:
    entries = {
        operator_key(e.values["name"]): e
        for e in load_entries(_write(tmp_path, "derivatives.yaml", THEIRS))
    }
    verdicts = {key: dry_run(entry, NAMES) for key, entry in entries.items()}
    accepted = sorted(key for key, v in verdicts.items() if v.accepted)
    # C++ spelling (clamp's ?:, `_symint` variants) is read; mul.Scalar's forward
    # formula is Python; mul_.Tensor and add.out have gradgen-readable formulas.
    assert accepted == [
        "add.out",
        "clamp",
        "kthvalue",
        "mul.Scalar",
        "mul.Tensor",
        "mul_.Tensor",
        "sum",
    ]
    assert verdicts["_private"].unknown == ("frobnicate",)
    assert verdicts["tanh_backward"].unknown == ("frobnicate",)
    # a problem that is no unknown name is a reason
    assert verdicts["_softmax_backward_data"].reasons == (
        "formulas both under dispatch",
    )


def test_verdicts_count_each_blocking_name_once_per_entry() -> None:
    verdicts = [
        coverage.Verdict(True),
        coverage.Verdict(False, ("frobnicate", "frobnicate", "zap")),
        coverage.Verdict(False, ("frobnicate",)),
        coverage.Verdict(False, (), ("per-dispatch-key formulas",)),
    ]
    c = count([], [], verdicts)
    assert c.accepted == 1
    assert c.missing == {"frobnicate": 2, "zap": 1}
    assert c.reasons == {"per-dispatch-key formulas": 1}


def test_the_command_prints_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    native = Path(__file__).resolve().parent.parent / "native_functions.yaml"
    status = coverage.main(
        [
            "--torch-derivatives",
            str(_write(tmp_path, "derivatives.yaml", THEIRS)),
            "--derivatives",
            str(_write(tmp_path, "ours.yaml", OURS)),
            "--native-functions",
            str(native),
        ]
    )
    printed = capsys.readouterr().out
    assert status == 0
    rows = {
        line[:58].strip(): line[58:].split()
        for line in printed.splitlines()
        if line[:2] in ("Py", "  ", "th") and len(line) > 58
    }
    assert rows["PyTorch's entries present (operator.overload)"] == ["3", "10"]
    assert rows["public functional entries present"] == ["2", "5"]
    assert rows["double-backward entries present"] == ["1", "2"]
    assert rows["this repository's entries identical to PyTorch's"] == ["2", "4"]
    assert "frobnicate" in printed.split("Names blocking")[1]


def test_without_torch_the_counts_against_pytorch_are_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(coverage, "packaged_derivatives", lambda: None)
    status = coverage.main(["--derivatives", str(_write(tmp_path, "o.yaml", OURS))])
    assert status == 0
    out = capsys.readouterr().out
    assert out.startswith("vmap batching rules (native_functions.yaml `batching:`): ")
    assert out.endswith(
        "\n\ncoverage: torch (torchgen) is not installed and no --torch-derivatives FILE "
        "was given: PyTorch's counts are skipped; derivatives.yaml has 4 entries\n"
    )

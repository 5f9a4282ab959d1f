"""The generator under fuzzing: hostile or broken YAML either generates a package that
imports, or is refused with a CodegenError that says file:line -- never anything else.

Inputs start from real entries of the repository's native_functions.yaml and
derivatives.yaml and from small hand-made pairs, and are mutated the way a careless or
hostile author would: characters inserted, deleted or replaced (quotes, triple quotes,
backslashes, newlines, control characters, template braces, unicode), tokens swapped or
replaced by names the generated code uses itself, YAML values of the wrong type, keys
deleted, renamed or duplicated, deep nesting, aliases, huge numbers and non-UTF-8 bytes.

The oracle (`_generate`) accepts exactly two outcomes:

* generation succeeds: every generated module parses, and no identifier of the kind a
  payload would smuggle in (`PWNED`, `__import__`, `eval`, `os`, `system`, `tofile`,
  ...) appears in the generated code outside a string literal; a few packages of each
  run are also imported, in a subprocess, and must import;
* generation refuses with `CodegenError`, each error located (``file:line: ...``) and
  short (an error quotes an excerpt, never a whole value).

Anything else fails the test: another exception type (RecursionError, MemoryError, a
KeyError from deep inside), an unlocated error, generated code that does not parse or
import, a payload identifier in the code, or a canary file written.

Cost: most examples run the generator in process with black replaced by a parse of the
rendered text (`BlackCache.format_modules` patched; black only formats, the parse
checks what black would have refused), with the runtime's export lists read once. One
test runs the whole generator (black included, no cache) on fewer examples and imports
what it produced. Every test has a fixed seed and a budget (the fast run takes about
15 s); the `slow` tests run the same properties on more examples (about 2 minutes).
A memory limit and a timer guard each example, so a resource bug fails the test
instead of the machine.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

try:
    import resource
except ImportError:  # not on Windows: no memory limit there
    resource = None  # type: ignore[assignment]
from hypothesis import given
from hypothesis import strategies as st

from gradgen.codegen import CodegenError, Location, generate

from fuzz.mutations import (
    _document_mutation,
    _dump,
    _entry_mutation,
    _formula_mutation,
    _schema_mutation,
    _seed_pairs,
)
from fuzz.oracle import (
    Fuzzer,
    _InvalidOutput,
    _bounded,
    _check_refusal,
    _fast,
    _long,
    _payload_identifiers,
    _write_pair,
)

# -- the seeds generate (the oracle is not vacuous) --------------------------------------


def test_the_seeds_generate_and_import(full_fuzzer: Fuzzer) -> None:
    for native, derivatives in _seed_pairs():
        assert full_fuzzer(_dump(native), _dump(derivatives), keep=True) == "generated"
    full_fuzzer.import_all()


def test_the_oracle_catches_a_payload_in_generated_code() -> None:
    assert _payload_identifiers("m.py", "x = 'PWNED()'\n") == set()
    found = _payload_identifiers("m.py", "x = PWNED()\ny = np.f2py.os.system\n")
    assert found == {"PWNED", ".f2py", ".os", ".system"}
    # an operator's own argument or output named like a payload is not one
    source = "def f(os, load=None):\n    return g(os, save=load).system\nT = nt('T', ['system'])\n"
    assert _payload_identifiers("m.py", source) == set()
    with pytest.raises(_InvalidOutput):
        _payload_identifiers("m.py", "x = '\n")
    with pytest.raises(AssertionError, match="without file:line"):
        _check_refusal(CodegenError("the generated ops.py is not valid Python"))
    with pytest.raises(AssertionError, match="short excerpt"):
        _check_refusal(CodegenError("x" * 5000, Location("a.yaml", 3)))
    _check_refusal(CodegenError("bad", Location("a.yaml", 3)))


@pytest.mark.skipif(
    resource is None or not Path("/proc/self/status").exists(),
    reason="the memory limit needs Linux (resource, /proc)",
)
def test_a_bounded_example_turns_a_runaway_allocation_into_memory_error() -> None:
    with pytest.raises(MemoryError):
        with _bounded(seconds=20, extra_memory=256 << 20):
            bytearray(1 << 30)


# -- the fast properties (CI) -------------------------------------------------------------


@_fast(120)
@given(pair=_schema_mutation())
def test_mutated_schemas_generate_or_are_refused_with_a_location(
    fuzzer: Fuzzer, pair: tuple[str, str]
) -> None:
    fuzzer(*pair)


@_fast(120)
@given(pair=_formula_mutation())
def test_mutated_formulas_generate_or_are_refused_with_a_location(
    fuzzer: Fuzzer, pair: tuple[str, str]
) -> None:
    fuzzer(*pair)


@_fast(100)
@given(pair=_entry_mutation())
def test_mutated_entries_generate_or_are_refused_with_a_location(
    fuzzer: Fuzzer, pair: tuple[str, str]
) -> None:
    fuzzer(*pair)


@_fast(100)
@given(pair=_document_mutation())
def test_mutated_documents_generate_or_are_refused_with_a_location(
    fuzzer: Fuzzer, pair: tuple[str | bytes, str | bytes]
) -> None:
    fuzzer(*pair)


def test_the_whole_generator_with_black_and_the_packages_import(
    full_fuzzer: Fuzzer,
) -> None:
    @_fast(12)
    @given(pair=st.one_of(_schema_mutation(), _formula_mutation(), _entry_mutation()))
    def run(pair: tuple[str, str]) -> None:
        full_fuzzer(*pair, keep=True)

    run()
    full_fuzzer.import_all()  # one interpreter imports every package generated


# -- the long run -------------------------------------------------------------------------


@pytest.mark.slow
@_long(2000)
@given(
    pair=st.one_of(
        _schema_mutation(), _formula_mutation(), _entry_mutation(), _document_mutation()
    )
)
def test_long_run_every_mutation(
    fuzzer: Fuzzer, pair: tuple[str | bytes, str | bytes]
) -> None:
    fuzzer(*pair)


@pytest.mark.slow
def test_long_run_whole_generator_and_import(full_fuzzer: Fuzzer) -> None:
    @_long(120)
    @given(pair=st.one_of(_schema_mutation(), _formula_mutation(), _entry_mutation()))
    def run(pair: tuple[str, str]) -> None:
        full_fuzzer(*pair, keep=True)

    run()
    full_fuzzer.import_all()


# -- defects the fuzzer found beyond issue 11 (minimal reproducers) -----------------------


@pytest.mark.parametrize(
    "kind",
    [
        "auto_element_wise",
        "auto_linear",
    ],
)
def test_an_auto_result_without_a_backward_formula_is_a_located_error(
    tmp_path: Path, kind: str
) -> None:
    native = "- func: fz(Tensor self) -> Tensor\n  numpy: self * 2\n"
    derivatives = f"- name: fz(Tensor self) -> Tensor\n  result: {kind}\n"
    native_path, derivatives_path = _write_pair(tmp_path, native, derivatives)
    try:
        generate(native_path, derivatives_path, tmp_path / "fzpkg", cache=False)
    except CodegenError as error:
        _check_refusal(error)
        assert "derivatives.yaml:" in str(error)


def test_grad_input_mask_in_a_single_input_formula_is_refused_or_works(
    tmp_path: Path,
) -> None:
    # derivatives.yaml's header allows grad_input_mask in multi-input formulas; in a
    # one-input formula it generates a Backward node that raises NameError when run.
    native = "- func: fz(Tensor self) -> Tensor\n  numpy: self * 2\n"
    derivatives = (
        "- name: fz(Tensor self) -> Tensor\n"
        "  self: grad * 2 if grad_input_mask[0] else None\n"
    )
    native_path, derivatives_path = _write_pair(tmp_path, native, derivatives)
    try:
        generate(native_path, derivatives_path, tmp_path / "fzpkg", cache=False)
    except CodegenError as error:
        _check_refusal(error)
        return
    script = (
        f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
        "import gradgen, fzpkg\n"
        "x = gradgen.tensor([1.0, 2.0], requires_grad=True)\n"
        "fzpkg.fz(x).sum().backward()\n"
        "print(x.grad.tolist())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-1000:]
    assert result.stdout.strip() == "[2.0, 2.0]"  # d(2x)/dx

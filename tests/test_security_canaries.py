"""One canary per code-injection class of issue 11: hostile input that, if it became
code, would create a file (the canary) in the test's temporary directory.

Each test generates a package from the hostile input into tmp_path. The generator may
refuse the input (a CodegenError) or generate a package; a generated package is then
imported, and its operator called (forward mode too where the payload sits in a JVP),
in a subprocess. Either way the canary must not exist afterwards. The payloads create
the canary with `pathlib.Path(...).touch()` (or `touch` through a shell where the path
is a shell command), always inside tmp_path: the subprocess runs there, and a payload
that cannot hold a `/` (a file name) names the canary relative to it.

Injection classes (issue 11, "Code runs that no check should have let through"):
1. a `str` default containing a quote leaves its string literal;
2. `\"\"\"` in a formula's string constant closes the docstring the formula is printed in
   (a backward formula: runs at import; a `result:` formula: runs when forward-mode AD
   calls the JVP);
3. `numpy:` expressions reach the system through numpy's attribute chains, methods of
   the arguments, or numpy's file functions;
4. input file names (native functions, derivatives, kernels) printed into docstrings;
5. the black-output cache trusted verbatim.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gradgen.codegen import CodegenError, generate

CANARY = "CANARY"

# file:line: at the start of each error
_LOCATED = re.compile(r"^[^\n:]+\.(yaml|yml|py):[1-9]\d*: ")

NATIVE = """\
- func: fz_op(Tensor self, Scalar factor=2) -> Tensor
  variants: function, method
  numpy: self * factor
"""

DERIVATIVES = """\
- name: fz_op(Tensor self, Scalar factor=2) -> Tensor
  self: grad * factor
  result: self_t * factor
"""

# Runs the operator forward, backward and in forward mode; every failure is printed,
# not raised: only the import must succeed.
EXERCISE = """
import gradgen
from gradgen.autograd import forward_ad
x = gradgen.tensor([1.0, 2.0], requires_grad=True)
for step in ("forward", "backward", "forward_ad"):
    try:
        if step == "forward":
            y = pkg.fz_op(x)
        elif step == "backward":
            pkg.fz_op(x).sum().backward()
        else:
            with forward_ad.dual_level():
                dual = forward_ad.make_dual(x.detach(), gradgen.ones(2))
                forward_ad.unpack_dual(pkg.fz_op(dual)).tangent
    except Exception as error:
        print(step, type(error).__name__, error)
"""


def touch(path: Path | str) -> str:
    """A Python expression, in double quotes only, that creates `path` (and is "")."""
    return f'str(__import__("pathlib").Path("{path}").touch() or "")[:0]'


def generate_here(
    directory: Path,
    native: str = NATIVE,
    derivatives: str = DERIVATIVES,
    native_name: str = "native_functions.yaml",
    derivatives_name: str = "derivatives.yaml",
    kernels: tuple[str, str] | None = None,
    out: str = "fzpkg",
) -> Path | None:
    """Generate from the given texts inside `directory` (the working directory, so that
    file names are relative as a user would type them); the package directory, or None
    if the generator refused (with a located CodegenError when `located`)."""
    (directory / native_name).write_text(native, encoding="utf-8")
    (directory / derivatives_name).write_text(derivatives, encoding="utf-8")
    if kernels is not None:
        (directory / kernels[0]).write_text(kernels[1], encoding="utf-8")
    previous = os.getcwd()
    os.chdir(directory)
    try:
        generate(
            Path(native_name),
            Path(derivatives_name),
            Path(out),
            cache=False,
            kernels=None if kernels is None else Path(kernels[0]),
        )
    except CodegenError as error:
        for one in getattr(error, "errors", None) or [error]:
            assert len(str(one)) < 2000, str(one)[:300]
        return None
    finally:
        os.chdir(previous)
    assert not (directory / CANARY).exists(), "the generator ran the payload"
    return directory / out


def run_package(
    package: Path, code: str = EXERCISE
) -> subprocess.CompletedProcess[str]:
    """Import the package (and run `code` with it as `pkg`) in a subprocess working in
    the package's parent directory; the import must succeed."""
    script = f"import sys\nsys.path.insert(0, {str(package.parent)!r})\nimport {package.name} as pkg\n{code}"
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=package.parent,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return result


def assert_closed(
    directory: Path, package: Path | None, must_import: bool = True
) -> None:
    """The input was refused, or its package imports and runs without the payload."""
    if package is not None:
        result = run_package(package)
        assert not (directory / CANARY).exists(), (
            "the payload ran: " + result.stdout[-500:]
        )
        if must_import:
            assert result.returncode == 0, result.stderr[-2000:]
    assert not (directory / CANARY).exists()


# -- the payloads work (the tests below are not vacuous) ----------------------------------


def test_the_payload_creates_the_canary_when_run(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-c", touch(tmp_path / CANARY)], check=True, cwd=tmp_path
    )
    assert (tmp_path / CANARY).exists()
    (tmp_path / CANARY).unlink()
    subprocess.run([sys.executable, "-c", touch(CANARY)], check=True, cwd=tmp_path)
    assert (tmp_path / CANARY).exists()


def test_a_clean_package_imports_and_runs(tmp_path: Path) -> None:
    package = generate_here(tmp_path)
    assert package is not None
    result = run_package(package)
    assert result.returncode == 0 and result.stdout == "", result.stdout + result.stderr


# -- 1. string defaults ---------------------------------------------------------------------


def _with_str_default(literal: str) -> tuple[str, str]:
    schema = f"fz_op(Tensor self, Scalar factor=2, str mode={literal}) -> Tensor"
    native = f"- func: {schema}\n  numpy: self * factor\n"
    derivatives = f"- name: {schema}\n  self: grad * factor\n"
    return native, derivatives


@pytest.mark.parametrize(
    "template",
    [
        # the issue's: a double quote in a single-quoted default
        "'\"+{touch}+\"'",
        '\'"""+{touch}+"""\'',  # a triple quote (schemas are also printed in docstrings)
        "\"'+{touch}+'\"",  # the other quote
    ],
    ids=["double-quote", "triple-quote", "single-quote"],
)
def test_1_a_str_default_stays_a_string(tmp_path: Path, template: str) -> None:
    native, derivatives = _with_str_default(
        template.format(touch=touch(tmp_path / CANARY))
    )
    assert_closed(tmp_path, generate_here(tmp_path, native, derivatives))


def test_1_pytorchs_double_quoted_defaults_generate(tmp_path: Path) -> None:
    # PyTorch writes `pad(..., str mode="constant", ...)`; it must generate, and the
    # default must be the string, unchanged.
    native, derivatives = _with_str_default('"constant"')
    native = native.replace(
        "numpy: self * factor", "numpy: self * factor if mode == 'constant' else self"
    )
    package = generate_here(tmp_path, native, derivatives)
    assert package is not None
    result = run_package(
        package, "import gradgen\nprint(pkg.fz_op(gradgen.tensor([1.0, 2.0])).tolist())"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[2.0, 4.0]"


# -- 2. formulas printed in docstrings --------------------------------------------------------


@pytest.mark.parametrize("key", ["self", "result"])
def test_2_a_triple_quote_in_a_formula_string_stays_in_the_string(
    tmp_path: Path, key: str
) -> None:
    # The string constant closes a docstring when printed verbatim: the backward
    # formula's in the Backward class (runs at import), the result: formula's in the
    # JVP function (runs when forward mode calls it).
    constant = '\'"""+' + touch(tmp_path / CANARY) + '+"""\''
    formula = {"self": "grad * factor", "result": "self_t * factor"}[key]
    derivatives = DERIVATIVES.replace(
        f"  {key}: {formula}\n", f"  {key}: {formula} if {constant} else {formula}\n"
    )
    assert derivatives != DERIVATIVES
    assert_closed(tmp_path, generate_here(tmp_path, NATIVE, derivatives))


def test_2_a_triple_quote_in_a_kernel_expression_stays_in_the_string(
    tmp_path: Path,
) -> None:
    constant = '\'"""+' + touch(tmp_path / CANARY) + '+"""\''
    native = NATIVE.replace(
        "numpy: self * factor", f"numpy: self * factor if {constant} else self"
    )
    assert_closed(tmp_path, generate_here(tmp_path, native, DERIVATIVES))


# -- 3. kernel expressions reaching the system ------------------------------------------------


def _pickle_bomb(path: Path, canary: Path) -> None:
    """A pickle that creates `canary` when loaded (what np.load(allow_pickle=True) runs)."""

    class Bomb:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.system, (f"touch '{canary}'",))

    path.write_bytes(pickle.dumps(Bomb()))


NUMPY_PATHS = {
    "f2py.os.system": "np.f2py.os.system('touch {canary}')",
    "_datasource.os.system": "np.lib._datasource.os.system('touch {canary}')",
    "ma.builtins.eval": 'np.ma.core.builtins.eval(\'__import__("pathlib").Path("{canary}").touch()\')',
    "f2py.subprocess.run": "np.f2py.subprocess.run(['touch', '{canary}'])",
    "self.tofile": "self.tofile('{canary}')",
    "np.save": "np.save('{canary}', self)",
    "np.load-pickle": "np.load('{bomb}', allow_pickle=True)",
}


@pytest.mark.parametrize("path", sorted(NUMPY_PATHS))
def test_3_a_kernel_expression_cannot_reach_the_system(
    tmp_path: Path, path: str
) -> None:
    canary = tmp_path / (CANARY + ".npy" if path == "np.save" else CANARY)
    bomb = tmp_path / "bomb.pickle"
    _pickle_bomb(bomb, tmp_path / CANARY)
    attack = NUMPY_PATHS[path].format(canary=canary, bomb=bomb)
    native = NATIVE.replace(
        "numpy: self * factor", f"numpy: (self * factor, {attack})[0]"
    )
    package = generate_here(tmp_path, native, DERIVATIVES)
    if package is not None:
        run_package(package)
    assert not canary.exists(), f"the kernel expression {attack!r} ran"
    assert not (tmp_path / CANARY).exists()


@pytest.mark.parametrize(
    "attack",
    [
        "np.f2py.os.system('touch {canary}')",
        "grad.numpy().tofile('{canary}')",
    ],
    ids=["np-in-formula", "tofile-in-formula"],
)
def test_3_a_formula_cannot_reach_the_system(tmp_path: Path, attack: str) -> None:
    attack = attack.format(canary=tmp_path / CANARY)
    derivatives = DERIVATIVES.replace(
        "self: grad * factor", f"self: (grad * factor, {attack})[0]"
    )
    assert_closed(
        tmp_path, generate_here(tmp_path, NATIVE, derivatives), must_import=False
    )


def test_3_the_refusals_are_located(tmp_path: Path) -> None:
    # Unknown names are refused today already; the error says file:line.
    native = NATIVE.replace(
        "numpy: self * factor", "numpy: __import__('os').system('true')"
    )
    (tmp_path / "native_functions.yaml").write_text(native, encoding="utf-8")
    (tmp_path / "derivatives.yaml").write_text(DERIVATIVES, encoding="utf-8")
    with pytest.raises(CodegenError) as refused:
        generate(
            tmp_path / "native_functions.yaml",
            tmp_path / "derivatives.yaml",
            tmp_path / "fzpkg",
            cache=False,
        )
    assert _LOCATED.match(str(refused.value)), str(refused.value)


# -- 4. file names -------------------------------------------------------------------------------

# The file name cannot hold a "/": the payload names the canary relative to the working
# directory, which is tmp_path both when generating and when importing.
HOSTILE_NAME = 'x"""+' + touch(CANARY) + '+""".yaml'


@pytest.mark.parametrize("which", ["native_functions", "derivatives", "kernels"])
def test_4_a_file_name_stays_a_string(tmp_path: Path, which: str) -> None:
    kernels = None
    native_name, derivatives_name = "native_functions.yaml", "derivatives.yaml"
    if which == "native_functions":
        native_name = HOSTILE_NAME
    elif which == "derivatives":
        derivatives_name = HOSTILE_NAME
    else:
        kernels = (
            HOSTILE_NAME[: -len(".yaml")] + ".py",
            '__all__ = ["twice"]\n\n\ndef twice(x):\n    return x * 2\n',
        )
    native = (
        NATIVE.replace("numpy: self * factor", "numpy: twice(self)")
        if kernels
        else NATIVE
    )
    package = generate_here(
        tmp_path,
        native,
        DERIVATIVES,
        native_name=native_name,
        derivatives_name=derivatives_name,
        kernels=kernels,
    )
    assert_closed(tmp_path, package)


# -- 5. the black cache --------------------------------------------------------------------------


def _poison(value: object, payload: str) -> object:
    """Every string of a JSON value with the payload appended as a statement."""
    if isinstance(value, str):
        return value + "\n" + payload
    if isinstance(value, list):
        return [_poison(v, payload) for v in value]
    if isinstance(value, dict):
        return {k: _poison(v, payload) for k, v in value.items()}
    return value


def _generate_with_cache(directory: Path, cache: Path, out: str) -> Path:
    (directory / "native_functions.yaml").write_text(NATIVE, encoding="utf-8")
    (directory / "derivatives.yaml").write_text(DERIVATIVES, encoding="utf-8")
    previous_cache = os.environ.get("GRADGEN_CODEGEN_CACHE")
    os.environ["GRADGEN_CODEGEN_CACHE"] = str(cache)
    try:
        generate(
            directory / "native_functions.yaml",
            directory / "derivatives.yaml",
            directory / out,
            cache=True,
        )
    finally:
        if previous_cache is None:
            del os.environ["GRADGEN_CODEGEN_CACHE"]
        else:
            os.environ["GRADGEN_CODEGEN_CACHE"] = previous_cache
    return directory / out


def _contents(package: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(package.glob("*.py"))}


def test_5_a_poisoned_black_cache_does_not_change_the_output(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    clean = _generate_with_cache(tmp_path, cache, "clean")
    cache_files = [p for p in cache.rglob("*") if p.is_file()]
    assert cache_files, "the first run wrote no cache"
    for path in cache_files:  # every cached block: its code plus the payload
        entries = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(
            json.dumps(_poison(entries, touch(tmp_path / CANARY))), encoding="utf-8"
        )
    package = _generate_with_cache(tmp_path, cache, "fzpkg")
    assert _contents(package) == _contents(clean)
    assert_closed(tmp_path, package)


@pytest.mark.parametrize(
    "content",
    [
        "[]",
        "42",
        '"text"',
        "null",
        '{"key": 1}',
        "{not json",
    ],
)
def test_5_a_cache_file_of_the_wrong_type_is_ignored(
    tmp_path: Path, content: str
) -> None:
    cache = tmp_path / "cache"
    clean = _generate_with_cache(tmp_path, cache, "clean")
    cache_files = [p for p in cache.rglob("*") if p.is_file()]
    assert cache_files
    for path in cache_files:
        path.write_text(content, encoding="utf-8")
    assert _contents(_generate_with_cache(tmp_path, cache, "again")) == _contents(clean)

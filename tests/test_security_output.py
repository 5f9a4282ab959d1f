"""Hostile or broken input to the generator's file layer (issue 11): the black cache is
an optimisation that cannot decide the generated code, the output directory is replaced
at once and only over the generator's own files, YAML input is bounded (no aliases, no
deep nesting, no control characters, UTF-8 only), error messages quote short excerpts,
and the command line reports bad input without a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gradgen.codegen import CodegenError, emit, generate, output
from gradgen.codegen.errors import excerpt
from gradgen.codegen.yaml_loader import MAX_DEPTH, load_entries

NATIVE = """\
- func: cube(Tensor self) -> Tensor
  variants: function, method
  numpy: self ** 3
  type_promotion: self
"""
DERIVATIVES = """\
- name: cube(Tensor self) -> Tensor
  self: grad * 3 * self * self
"""
CANARY = "__import__('os').system('touch CANARY')"


def _inputs(
    directory: Path, native: str = NATIVE, derivatives: str = DERIVATIVES
) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "native_functions.yaml").write_text(native)
    (directory / "derivatives.yaml").write_text(derivatives)
    return directory / "native_functions.yaml", directory / "derivatives.yaml"


def _contents(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The small package as black makes it, without any cache."""
    directory = tmp_path_factory.mktemp("reference")
    generate(*_inputs(directory), directory / "out", cache=False)
    return _contents(directory / "out")


@pytest.fixture()
def cache_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("GRADGEN_CODEGEN_CACHE", str(directory))
    return directory


def _cache_file(directory: Path) -> Path:
    import black

    return directory / f"black-{black.__version__}.json"


# -- the black cache -------------------------------------------------------------------


def test_poisoned_cache_entries_are_not_written(
    tmp_path: Path, cache_directory: Path, reference: dict[str, bytes]
) -> None:
    """Every real block key of the cache given code that runs a payload: the package
    written is still black's formatting of the generator's code, and the cache heals."""
    inputs = _inputs(tmp_path / "in")
    generate(*inputs, tmp_path / "first")
    path = _cache_file(cache_directory)
    entries = json.loads(path.read_text())
    assert len(entries) >= 8  # a block or more per generated file
    poisoned = {key: f"{value}\n{CANARY}" for key, value in entries.items()}
    path.write_text(json.dumps(poisoned))
    generate(*inputs, tmp_path / "second")
    assert _contents(tmp_path / "second") == reference
    assert all(CANARY not in text for text in json.loads(path.read_text()).values())


def test_cache_that_swaps_blocks_is_caught(
    tmp_path: Path, cache_directory: Path, reference: dict[str, bytes]
) -> None:
    """Valid, black-formatted code of *another* block under a key (same parse, other
    code) is refused as well: the check compares syntax trees, not validity."""
    inputs = _inputs(tmp_path / "in")
    generate(*inputs, tmp_path / "first")
    path = _cache_file(cache_directory)
    entries = json.loads(path.read_text())
    keys = sorted(entries)
    rotated = {key: entries[keys[(i + 1) % len(keys)]] for i, key in enumerate(keys)}
    path.write_text(json.dumps(rotated))
    generate(*inputs, tmp_path / "second")
    assert _contents(tmp_path / "second") == reference


def test_encoding_cookie_from_the_cache_is_refused(
    tmp_path: Path, cache_directory: Path, reference: dict[str, bytes]
) -> None:
    """A comment is not in the syntax tree, but `# coding: utf-7` on line 1 changes how
    Python reads the whole file (utf-7 turns `+AAo-` into a newline)."""
    inputs = _inputs(tmp_path / "in")
    generate(*inputs, tmp_path / "first")
    path = _cache_file(cache_directory)
    entries = json.loads(path.read_text())
    header = reference["ops.py"].decode().split("\n\n\n")[0]
    keys = [key for key, value in entries.items() if value == header]
    assert keys, "the header block of ops.py is in the cache"
    for key in keys:
        entries[key] = "# coding: utf-7\n" + header
    path.write_text(json.dumps(entries))
    generate(*inputs, tmp_path / "second")
    assert _contents(tmp_path / "second") == reference


def test_check_does_not_trust_a_cache_matching_a_tampered_file(
    tmp_path: Path, cache_directory: Path
) -> None:
    """A hand-edited generated file and a cache poisoned to match it: --check still
    reports the file stale (what is compared is verified first)."""
    inputs = _inputs(tmp_path / "in")
    out = tmp_path / "out"
    generate(*inputs, out)
    path = _cache_file(cache_directory)
    entries = json.loads(path.read_text())
    ops = (out / "ops.py").read_text()
    key, value = next(
        (k, v) for k, v in entries.items() if v in ops and v.startswith("def ")
    )
    entries[key] = value + "\n" + CANARY
    path.write_text(json.dumps(entries))
    (out / "ops.py").write_text(ops.replace(value, value + "\n" + CANARY))
    assert [p.name for p in generate(*inputs, out, check=True)] == ["ops.py"]
    assert [p.name for p in generate(*inputs, out)] == ["ops.py"]
    assert CANARY not in (out / "ops.py").read_text()


@pytest.mark.parametrize(
    "content",
    [
        b"[]",
        b'"text"',
        b"null",
        b'{"' + b"a" * 64 + b'": 1}',
        b'{"' + b"a" * 64 + b'": ["x"]}',
        b'{"not a hash": "x = 1"}',
        b"[" * 100_000,
        b'{"' + b"a" * 64 + b'": "x = ',  # truncated
        b"\xff\xfe\x00",
    ],
    ids=[
        "list",
        "string",
        "null",
        "int value",
        "list value",
        "bad key",
        "deep",
        "truncated",
        "binary",
    ],
)
def test_cache_files_of_the_wrong_shape_are_ignored(
    cache_directory: Path, content: bytes
) -> None:
    cache_directory.mkdir()
    _cache_file(cache_directory).write_bytes(content)
    assert emit.BlackCache(cache_directory).entries == {}


def test_truncated_cache_file_costs_only_time(
    tmp_path: Path, cache_directory: Path, reference: dict[str, bytes]
) -> None:
    inputs = _inputs(tmp_path / "in")
    generate(*inputs, tmp_path / "first")
    path = _cache_file(cache_directory)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    generate(*inputs, tmp_path / "second")
    assert _contents(tmp_path / "second") == reference
    assert json.loads(path.read_text())  # rewritten whole


def test_cache_save_does_not_write_through_a_link(
    tmp_path: Path, cache_directory: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    cache_directory.mkdir()
    _cache_file(cache_directory).symlink_to(victim)
    generate(*_inputs(tmp_path / "in"), tmp_path / "out")
    assert victim.read_text() == "precious"
    assert not _cache_file(cache_directory).is_symlink()


def test_same_code_compares_syntax_trees() -> None:
    source = 'def f(a,b):\n  """Doc\n     more."""\n  return {"k":a+b}'
    formatted = 'def f(a, b):\n    """Doc\n    more."""\n    return {"k": a + b}\n'
    assert emit.same_code(source, formatted)
    assert not emit.same_code(source, formatted.replace("a + b", "a - b"))
    assert not emit.same_code(source, formatted.replace('"k"', '"K"'))
    assert not emit.same_code(source, formatted + "import os\n")
    assert not emit.same_code(source, "# -*- coding: utf-7 -*-\n" + formatted)
    assert not emit.same_code(source, formatted.replace("return", "retur n"))
    assert not emit.same_code(source, formatted.replace("b):", "b=1):"))
    assert not emit.same_code("x = 1", "x = 1.0")
    assert not emit.same_code("x = 1", "x = True")
    assert emit.same_code("x = 1  # note", "x = 1  # note\n")


def test_the_committed_package_verifies_from_a_warm_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """black's own formatting of every block passes the check (else the cache would
    never save time): a warm run formats nothing."""
    root = Path(__file__).resolve().parent.parent
    inputs = (root / "native_functions.yaml", root / "derivatives.yaml")
    generate(*inputs, tmp_path / "cold")

    def no_black(jobs: list[object]) -> list[object]:
        assert not jobs, "a block was formatted again"
        return []

    monkeypatch.setattr(emit, "_format_batches", no_black)
    assert [p.name for p in generate(*inputs, tmp_path / "cold", check=True)] == []
    generate(*inputs, tmp_path / "warm")
    assert _contents(tmp_path / "warm") == _contents(tmp_path / "cold")


# -- bounded input and short errors ----------------------------------------------------


def _alias_bomb(levels: int) -> str:
    lines = [
        '  a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'
    ]
    for level in range(1, levels):
        items = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"  a{level}: &a{level} [{items}]")
    return (
        "- func: cube(Tensor self) -> Tensor\n  numpy: self\n" + "\n".join(lines) + "\n"
    )


def test_yaml_alias_bomb_is_refused_quickly_with_a_short_error(tmp_path: Path) -> None:
    bomb = _alias_bomb(9)  # 9**9 = 387 million strings if expanded
    assert len(bomb) < 1000
    native, derivatives = _inputs(tmp_path, native=bomb, derivatives="")
    started = time.perf_counter()
    with pytest.raises(CodegenError) as raised:
        generate(native, derivatives, tmp_path / "out")
    assert time.perf_counter() - started < 10
    assert len(str(raised.value)) < 300
    assert str(raised.value) == (
        "native_functions.yaml:3: YAML anchors and aliases (&name, *name) are not "
        "allowed; write the value out"
    )
    assert not (tmp_path / "out").exists()


def test_an_anchor_alone_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "n.yaml"
    path.write_text("- func: &f cube(Tensor self) -> Tensor\n  numpy: self\n")
    with pytest.raises(CodegenError, match=r"^n\.yaml:1: YAML anchors and aliases"):
        load_entries(path)


def test_huge_values_are_quoted_as_short_excerpts(tmp_path: Path) -> None:
    """A 100,000-item list where a string belongs: the message quotes a few items."""
    items = ", ".join(["function"] * 100_000)
    native, derivatives = _inputs(
        tmp_path,
        native=f"- func: cube(Tensor self) -> Tensor\n  numpy: self\n  variants: [{items}]\n",
        derivatives="",
    )
    with pytest.raises(CodegenError) as raised:
        generate(native, derivatives, tmp_path / "out")
    message = str(raised.value)
    assert message.startswith(
        "native_functions.yaml:1: cube: variants must be a string"
    )
    assert "['function', 'function'," in message and len(message) < 300


def test_excerpt_bounds_every_kind_of_value() -> None:
    assert excerpt("short") == "'short'"
    assert excerpt([1, 2]) == "[1, 2]"
    long_text = excerpt("x" * 100_000)
    assert len(long_text) < 200 and long_text.endswith("(100,000 characters)")
    nested: list[object] = []
    for _ in range(10_000):
        nested = [nested]
    assert len(excerpt(nested)) < 50
    assert len(excerpt(10**5000)) < 200  # repr() itself refuses ints this long
    assert len(str(CodegenError("y" * 1_000_000))) < 2100


@pytest.mark.parametrize("opening", ["[", "{a: "])
def test_deep_yaml_is_a_clean_error(tmp_path: Path, opening: str) -> None:
    path = tmp_path / "native_functions.yaml"
    path.write_text(
        "- func: cube(Tensor self) -> Tensor\n  numpy: " + opening * 10_000 + "\n"
    )
    with pytest.raises(CodegenError) as raised:
        load_entries(path)
    assert str(raised.value) == (
        f"native_functions.yaml:2: lists and mappings nested more than {MAX_DEPTH} deep"
    )


@pytest.mark.parametrize(
    "expression, message",
    [
        (" + ".join(["self"] * 100_000), "699,997 characters long"),
        ("-" * 100_000 + "self", "100,004 characters long"),
        ("-" * 9_000 + "self", "nested too deeply for Python's parser"),
    ],
    ids=["long sum", "long unary", "deep unary"],
)
def test_expressions_beyond_the_recursion_limit_are_clean_errors(
    tmp_path: Path, expression: str, message: str
) -> None:
    # Expressions are bounded where they are parsed (expressions.parse_expression;
    # tests/test_security_defects.py has the rest).
    native, derivatives = _inputs(
        tmp_path,
        native=f"- func: cube(Tensor self) -> Tensor\n  numpy: {expression}\n",
        derivatives="",
    )
    with pytest.raises(CodegenError) as raised:
        generate(native, derivatives, tmp_path / "out")
    assert str(raised.value).startswith(
        f"native_functions.yaml:1: cube: numpy expression is {message}"
    )


def test_type_with_thousands_of_suffixes_is_a_clean_error(tmp_path: Path) -> None:
    native, derivatives = _inputs(
        tmp_path,
        native="- func: cube(Tensor"
        + "[]" * 5000
        + " self) -> Tensor\n  numpy: self\n",
        derivatives="",
    )
    # The schema's own bound (4 levels of optionals and lists, as PyTorch's schemas
    # need at most 2) refuses it before anything recurses, quoting a short excerpt.
    with pytest.raises(
        CodegenError,
        match=r"^native_functions\.yaml:1: cube: type 'Tensor\[\]\[\].*"
        r"nests more than 4 optionals and lists",
    ) as raised:
        generate(native, derivatives, tmp_path / "out")
    assert len(str(raised.value)) < 500


@pytest.mark.parametrize("which", ["native_functions.yaml", "derivatives.yaml"])
def test_non_utf8_file_is_an_error_with_its_line(tmp_path: Path, which: str) -> None:
    native, derivatives = _inputs(tmp_path)
    path = tmp_path / which
    text = path.read_bytes()
    path.write_bytes(text + b"# caf\xe9 (Latin-1)\n")
    line = text.count(b"\n") + 1
    with pytest.raises(CodegenError) as raised:
        generate(native, derivatives, tmp_path / "out")
    assert (
        str(raised.value) == f"{which}:{line}: the file is not UTF-8 text (byte 0xe9)"
    )


def test_non_utf8_kernels_module_is_an_error_with_its_line(tmp_path: Path) -> None:
    kernels = tmp_path / "my_kernels.py"
    kernels.write_bytes(b"__all__ = []\n\n# caf\xe9\n")
    with pytest.raises(CodegenError) as raised:
        generate(*_inputs(tmp_path), tmp_path / "out", kernels=kernels)
    assert (
        str(raised.value) == "my_kernels.py:3: the file is not UTF-8 text (byte 0xe9)"
    )


@pytest.mark.parametrize("character", ["\x00", "\x01", "\x1b", "\x7f", "\ufffe"])
def test_control_characters_are_errors_with_their_line(
    tmp_path: Path, character: str
) -> None:
    path = tmp_path / "derivatives.yaml"
    path.write_text(
        DERIVATIVES.replace("grad *", f"grad{character} *"), encoding="utf-8"
    )
    with pytest.raises(CodegenError) as raised:
        load_entries(path)
    assert str(raised.value) == (
        f"derivatives.yaml:2: invalid YAML: the control character U+{ord(character):04X} "
        "is not allowed"
    )


WRONG_VALUES = [
    "[a, b]",
    "{a: 1}",
    "3",
    "true",
    "null",
    "1.5",
    "2020-01-01",
    "!!binary aGk=",
    "[[1]]",
    '""',
]


def test_a_key_of_the_wrong_type_is_a_clean_error(tmp_path: Path) -> None:
    """Every key of both files given every YAML type: a CodegenError naming the file
    and line, or success; never another exception (`composite: [list]` was a
    TypeError)."""
    from gradgen.codegen import load

    native_keys = [
        "func",
        "variants",
        "numpy",
        "composite",
        "type_promotion",
        "promote_integer_inputs_to_float",
        "python_binding",
    ]
    derivative_keys = ["name", "self", "result", "output_differentiability", "dispatch"]
    clean = 0
    for file, keys in (("native", native_keys), ("derivatives", derivative_keys)):
        for key in keys:
            for value in WRONG_VALUES:
                native_entry = {
                    "func": "foo(Tensor self) -> Tensor",
                    "numpy": "self * 2",
                }
                derivative_entry = {
                    "name": "foo(Tensor self) -> Tensor",
                    "self": "grad * 2",
                }
                (native_entry if file == "native" else derivative_entry)[key] = value
                native, derivatives = _inputs(
                    tmp_path,
                    native="- "
                    + "\n  ".join(f"{k}: {v}" for k, v in native_entry.items())
                    + "\n",
                    derivatives="- "
                    + "\n  ".join(f"{k}: {v}" for k, v in derivative_entry.items())
                    + "\n",
                )
                try:
                    load.load(native, derivatives, None)
                except CodegenError as error:
                    assert str(error).startswith(
                        ("native_functions.yaml:", "derivatives.yaml:")
                    ), str(error)
                    clean += 1
    assert clean >= 60  # most of the 120 cases are errors; none is a crash
    native, derivatives = _inputs(
        tmp_path,
        native="- func: foo(Tensor self) -> Tensor\n  composite: [a, b]\n",
        derivatives="",
    )
    with pytest.raises(CodegenError) as raised:
        load.load(native, derivatives, None)
    assert str(raised.value) == (
        "native_functions.yaml:1: foo: composite must be the name of a function in "
        "gradgen.composites, got list: ['a', 'b']"
    )


# -- the output directory --------------------------------------------------------------


@pytest.fixture()
def package(tmp_path: Path, reference: dict[str, bytes]) -> Path:
    """A generated package in tmp_path/out (as the reference, without black)."""
    out = tmp_path / "out"
    out.mkdir()
    for name, content in reference.items():
        (out / name).write_bytes(content)
    return out


SECOND_OPERATOR = NATIVE + """\
- func: twice(Tensor self) -> Tensor
  numpy: self * 2
  type_promotion: self
"""


def test_a_failure_while_writing_leaves_the_old_package(
    tmp_path: Path, package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _contents(package)
    calls = []

    def failing_open(
        path: object, mode: str = "r", *args: object, **kwargs: object
    ) -> object:
        if "x" in mode:  # a file of the new package
            calls.append(path)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return open(path, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(output, "open", failing_open, raising=False)
    with pytest.raises(CodegenError) as raised:
        generate(*_inputs(tmp_path / "in", native=SECOND_OPERATOR), package)
    assert (
        str(raised.value)
        == f"{package}: cannot write the package: No space left on device"
    )
    assert _contents(package) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]  # no leftovers


def test_a_failure_in_the_swap_puts_the_old_package_back(
    tmp_path: Path, package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _contents(package)
    renames = []
    real_rename = os.rename

    def rename(source: str, target: str) -> None:
        renames.append((source, target))
        if len(renames) == 2:  # the new directory into place
            raise OSError(16, "Device or resource busy")
        real_rename(source, target)

    monkeypatch.setattr(output.os, "rename", rename)
    with pytest.raises(CodegenError, match="Device or resource busy"):
        generate(*_inputs(tmp_path / "in", native=SECOND_OPERATOR), package)
    monkeypatch.undo()
    assert _contents(package) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]


def test_an_unchanged_package_is_not_touched(tmp_path: Path, package: Path) -> None:
    inputs = _inputs(tmp_path / "in")
    inode = package.stat().st_ino
    times = {p.name: p.stat().st_mtime_ns for p in package.iterdir()}
    assert generate(*inputs, package) == []
    assert package.stat().st_ino == inode
    assert {p.name: p.stat().st_mtime_ns for p in package.iterdir()} == times


def test_a_change_swaps_in_a_new_directory(tmp_path: Path, package: Path) -> None:
    kernels = tmp_path / "my_kernels.py"
    kernels.write_text("__all__ = []\n")
    inputs = _inputs(tmp_path / "in")
    generate(*inputs, package, kernels=kernels)
    (package / "__pycache__").mkdir()
    for stem in ("ops", "user_kernels"):
        (package / "__pycache__" / f"{stem}.cpython-311.pyc").write_bytes(b"compiled")
    ops_time = (package / "ops.py").stat().st_mtime_ns
    kernels.write_text("__all__ = []\n# changed\n")
    assert generate(*inputs, package, kernels=kernels) == [package / "user_kernels.py"]
    assert (package / "user_kernels.py").read_text() == "__all__ = []\n# changed\n"
    assert (package / "ops.py").stat().st_mtime_ns == ops_time
    assert sorted(p.name for p in (package / "__pycache__").iterdir()) == [
        "ops.cpython-311.pyc"
    ]
    # Without --kernels the copy goes: the package holds exactly what is generated.
    generate(*inputs, package)
    assert not (package / "user_kernels.py").exists()


@pytest.mark.parametrize(
    "foreign",
    ["notes.txt", "helpers.py", "ops.py", "data/"],
)
def test_files_the_generator_did_not_write_are_not_replaced(
    tmp_path: Path, package: Path, foreign: str
) -> None:
    if foreign.endswith("/"):
        (package / foreign).mkdir()
    else:
        (package / foreign).write_text("my own work\n")
    before = _contents(package)
    with pytest.raises(CodegenError) as raised:
        generate(*_inputs(tmp_path / "in", native=SECOND_OPERATOR), package)
    assert str(raised.value) == (
        f"{package}: --out holds 1 file(s) the generator did not write ({foreign}); it "
        "replaces only a directory of its own output: remove them or choose another --out"
    )
    assert _contents(package) == before


def test_user_kernels_copy_counts_only_in_a_generated_package(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "user_kernels.py").write_text("__all__ = []\n")
    with pytest.raises(CodegenError, match=r"did not write \(user_kernels\.py\)"):
        generate(*_inputs(tmp_path / "in"), out)


@pytest.mark.parametrize("kind", ["file", "directory"])
def test_links_in_the_output_directory_are_refused(
    tmp_path: Path, package: Path, kind: str
) -> None:
    outside = tmp_path / "outside"
    if kind == "file":
        outside.write_text('"""@generated, but elsewhere."""\n')
        (package / "ops.py").unlink()
        (package / "ops.py").symlink_to(outside)
    else:
        outside.mkdir()
        (package / "__pycache__").symlink_to(outside, target_is_directory=True)
    name = "ops.py" if kind == "file" else "__pycache__"
    with pytest.raises(CodegenError) as raised:
        generate(*_inputs(tmp_path / "in", native=SECOND_OPERATOR), package)
    assert str(raised.value) == (
        f"{package}: {name} in --out is a symbolic link; the generator does not write "
        "through links (remove it)"
    )
    if kind == "file":
        assert outside.read_text() == '"""@generated, but elsewhere."""\n'
    else:
        assert list(outside.iterdir()) == []


def test_out_that_is_a_link_is_refused(tmp_path: Path, package: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(package, target_is_directory=True)
    with pytest.raises(CodegenError, match="--out is a symbolic link"):
        generate(*_inputs(tmp_path / "in"), link)


def test_out_naming_a_file_is_a_clean_error(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("keep")
    native, derivatives = _inputs(tmp_path / "in")
    for check in (False, True):
        with pytest.raises(CodegenError) as raised:
            generate(native, derivatives, target, check=check)
        assert str(raised.value) == f"{target}: --out names a file, not a directory"
    assert target.read_text() == "keep"


# -- the command line ------------------------------------------------------------------


def _cli(
    *arguments: str, cwd: Path, prelude: str = ""
) -> subprocess.CompletedProcess[str]:
    code = (
        "import runpy, sys\n" + prelude + "\n"
        "sys.argv = ['gradgen-codegen', *sys.argv[1:]]\n"
        "runpy.run_module('gradgen.codegen', run_name='__main__')\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize("module", ["black", "jinja2", "yaml"])
def test_missing_codegen_extra_names_what_to_install(
    tmp_path: Path, module: str
) -> None:
    _inputs(tmp_path)
    result = _cli(
        "--native-functions",
        "native_functions.yaml",
        "--derivatives",
        "derivatives.yaml",
        "--out",
        "out",
        cwd=tmp_path,
        prelude=f"sys.modules[{module!r}] = None",
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    project = "pyyaml" if module == "yaml" else module
    assert result.stderr == (
        f"gradgen-codegen: the generator needs {project}, which is not installed; "
        "install gradgen's codegen extra: pip install 'gradgen[codegen]'\n"
    )


@pytest.mark.parametrize(
    "case",
    [
        "out is a file",
        "non-UTF-8",
        "control character",
        "deep",
        "alias bomb",
        "composite list",
    ],
)
def test_cli_reports_bad_input_without_a_traceback(tmp_path: Path, case: str) -> None:
    native = NATIVE
    out = "out"
    if case == "out is a file":
        (tmp_path / "out").write_text("")
    elif case == "composite list":
        native = "- func: foo(Tensor self) -> Tensor\n  composite: [a]\n"
    elif case == "deep":
        native = "- func: " + "[" * 10_000 + "\n"
    elif case == "alias bomb":
        native = _alias_bomb(9)
    elif case == "control character":
        native = NATIVE.replace("self ** 3", "self ** 3\x07")
    _inputs(
        tmp_path,
        native=native,
        derivatives="" if case == "composite list" else DERIVATIVES,
    )
    if case == "non-UTF-8":
        (tmp_path / "derivatives.yaml").write_bytes(b"- name: \xff\n")
    result = _cli(
        "--native-functions",
        "native_functions.yaml",
        "--derivatives",
        "derivatives.yaml",
        "--out",
        out,
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[-1] == "gradgen-codegen: 1 error(s); nothing was written"
    assert lines[0].startswith(("native_functions.yaml:", "derivatives.yaml:", "out:"))
    assert len(result.stderr) < 500


def test_a_generator_bug_is_a_short_message_and_a_traceback_only_with_verbose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gradgen.codegen import __main__ as cli

    def broken(*arguments: object, **keywords: object) -> list[Path]:
        raise KeyError("x" * 10_000)

    monkeypatch.setattr(cli, "generate", broken)
    argv = [
        "--native-functions",
        "n.yaml",
        "--derivatives",
        "d.yaml",
        "--out",
        str(tmp_path / "o"),
    ]
    assert cli.main(argv) == 3
    error = capsys.readouterr().err
    assert error.startswith(
        "gradgen-codegen: internal error, a bug in the generator: KeyError: "
    )
    assert "Traceback" not in error and len(error) < 600
    assert cli.main([*argv, "--verbose"]) == 3
    assert "Traceback (most recent call last)" in capsys.readouterr().err

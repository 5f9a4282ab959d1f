"""The generator's speed-ups change only the time taken (issue 14, the CODEGEN row):
black's second pass only on the blocks its first pass changed, jobs in forked workers
without the cycle collector, the cache checked block by block, runtime modules read
once per version of their file."""

from __future__ import annotations

import gc
import json
import os
import time
from pathlib import Path

import black
import pytest

from gradgen.codegen import emit, generate, load, workers

MODE = black.Mode(line_length=88, target_versions={black.TargetVersion.PY310})
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

# Blocks black leaves alone, changes once, or changes in a way its second pass looks
# at again (a trailing comma its first pass added).
BLOCKS = [
    'def f(a, b):\n    """Doc."""\n    return a + b',
    "def g(a,b):\n  return {'k':a+b}",
    "x = 1",
    "def long_signature(first_argument: int, second_argument: str, third_argument: "
    "float, fourth: bytes) -> tuple[int, str]:\n    return (first_argument, "
    "second_argument)",
    "y = call(argument_number_one, argument_number_two, argument_number_three, "
    "argument_number_four, five)",
    "class C:\n    __slots__ = ('a', )\n    def m(self): return [1,2,\n3]",
]


def _black(block: str) -> str:
    return black.format_str(block + "\n", mode=MODE).strip("\n")


def test_each_block_comes_out_as_black_formats_it_alone() -> None:
    """One pass over the batch, a second over the blocks the first changed: what
    black.format_str (both passes) makes of each block on its own."""
    pieces = emit._format_batch(("test.py", BLOCKS))
    assert pieces == [_black(block) for block in BLOCKS]
    assert pieces[0] == BLOCKS[0]  # left alone
    assert pieces[1] != BLOCKS[1]


def test_invalid_code_is_reported_not_formatted() -> None:
    result = emit._format_batch(("bad.py", ["def f(:\n    pass"]))
    assert isinstance(result, str) and "bad.py is not valid Python" in result


def _collector_state(_: int) -> tuple[bool, int]:
    return gc.isenabled(), os.getpid()


def test_jobs_run_in_order_in_workers_without_the_collector() -> None:
    items = list(range(3 * workers.JOBS_PER_WORKER))
    results = workers.run_jobs(_square, items)
    assert results == [i * i for i in items]
    states = workers.run_jobs(_collector_state, items)
    assert {enabled for enabled, _ in states} == {False}
    assert os.getpid() not in {pid for _, pid in states}
    # One pool per wave of JOBS_PER_WORKER jobs per worker: its workers exit after it.
    wave = min(workers.cpu_count(), len(items)) * workers.JOBS_PER_WORKER
    assert len({pid for _, pid in states}) >= -(-len(items) // wave) >= 2
    assert gc.isenabled()


def test_jobs_started_largest_first_come_back_in_order() -> None:
    items = list(range(2 * workers.JOBS_PER_WORKER + 5))
    costs = {item: (item * 7919) % 31 for item in items}
    assert workers.run_jobs(_square, items, costs.__getitem__) == [i * i for i in items]


def test_a_single_job_runs_here_with_the_collector_paused() -> None:
    assert workers.run_jobs(_collector_state, [0]) == [(False, os.getpid())]
    assert gc.isenabled()


def _square(value: int) -> int:
    return value * value


def test_parse_paused_restores_the_collector() -> None:
    tree = workers.parse_paused("x = 1")
    assert isinstance(tree.body[0], type(workers.parse_paused("y = 2").body[0]))
    assert gc.isenabled()
    gc.disable()
    try:
        workers.parse_paused("x = 1")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_string_opening_a_later_block_is_compared_exactly() -> None:
    """Only the file's first block holds its docstring (compared line by line without
    the whitespace at the ends); a string opening any other block is a statement."""
    source, formatted = '"""a  \n  b"""', '"""a\nb"""'
    assert emit.same_code(source, formatted)
    assert emit.same_code(source, formatted, first=True)
    assert not emit.same_code(source, formatted, first=False)
    assert emit.same_code(source, source, first=False)
    # Docstrings of functions and classes stay compared line by line in any block.
    function = 'def f():\n    """a  \n    b"""'
    assert emit.same_code(function, 'def f():\n    """a\n    b"""', first=False)


def _cache_file(directory: Path) -> Path:
    return directory / f"black-{black.__version__}.json"


def _inputs(directory: Path) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "native_functions.yaml").write_text(NATIVE)
    (directory / "derivatives.yaml").write_text(DERIVATIVES)
    return directory / "native_functions.yaml", directory / "derivatives.yaml"


def _contents(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.py*"))}


def test_a_tampered_later_block_is_formatted_anew_and_only_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cached block that is not the code it stands for is dropped and formatted
    again; the other blocks of its file still come from the cache."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("GRADGEN_CODEGEN_CACHE", str(cache))
    inputs = _inputs(tmp_path / "in")
    generate(*inputs, tmp_path / "first")
    reference = _contents(tmp_path / "first")
    entries = json.loads(_cache_file(cache).read_text())
    ops = reference["ops.py"].decode()
    key, value = next(
        (k, v)
        for k, v in entries.items()
        if v.startswith("def cube(") and v in ops  # a later block of ops.py
    )
    entries[key] = value.replace("return", "print('tampered')\n    return", 1)
    _cache_file(cache).write_text(json.dumps(entries))
    formatted: list[int] = []
    original = emit._format_batches

    def counting(jobs: list[tuple[str, list[str]]]) -> list[list[str]]:
        formatted.extend(len(batch) for _, batch in jobs)
        return original(jobs)

    monkeypatch.setattr(emit, "_format_batches", counting)
    generate(*inputs, tmp_path / "second")
    assert _contents(tmp_path / "second") == reference
    assert formatted == [1]  # the tampered block alone
    assert "tampered" not in _cache_file(cache).read_text()


def test_runtime_modules_are_read_again_when_they_change(tmp_path: Path) -> None:
    module = tmp_path / "family.py"
    module.write_text('__all__ = ["a"]\n\ndef a():\n    pass\n')
    first = load._runtime_module(module)
    assert first.exports == frozenset({"a"}) and first.functions == frozenset({"a"})
    assert load._runtime_module(module) is first  # read once
    time.sleep(0.01)
    module.write_text('__all__ = ["a", "bb"]\n\ndef a():\n    pass\n\ndef bb(): ...\n')
    second = load._runtime_module(module)
    assert second.exports == frozenset({"a", "bb"})
    assert second.functions == frozenset({"a", "bb"})


def test_runtime_export_lists_match_a_fresh_read() -> None:
    """The cached reading gives what reading the sources anew gives."""
    load._read_runtime_module.cache_clear()
    fresh = (load.exported_names("numpy_kernels"), load.defined_functions("composites"))
    again = (load.exported_names("numpy_kernels"), load.defined_functions("composites"))
    assert fresh == again and "negative" in fresh[0]

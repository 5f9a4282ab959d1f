"""The PyTorch oracle (tests/torch_oracle.py): answers survive the JSON round trip
exactly, a stale golden fails, a missing one skips (fails in CI), and the golden files
are written deterministically. None of this needs torch: a stand-in module is used."""

from __future__ import annotations

import json
import math
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import torch_oracle
from torch_oracle import decode, encode, oracle, same_answer

MODULE = "test_torch_oracle"


def round_trip(value: Any) -> Any:
    return decode(json.loads(json.dumps(encode(value))))


def test_plain_values_round_trip_with_their_types() -> None:
    value = {
        "none": None,
        "bools": [True, False],
        "int": 2**63 + 5,
        "floats": (0.1, -0.0, 1e-310, 1.7976931348623157e308),
        "complex": 1.5 - 2j,
        "str": 'quote " and \\ and \n',
        "nested": [(1, [2.5, "x"]), {"k": (3,)}],
    }
    got = round_trip(value)
    assert got == value
    assert type(got["floats"]) is tuple and type(got["nested"][0]) is tuple
    assert math.copysign(1.0, got["floats"][1]) == -1.0


def test_special_floats_round_trip() -> None:
    got = round_trip([math.nan, math.inf, -math.inf, complex(math.nan, -math.inf)])
    assert math.isnan(got[0]) and got[1:3] == [math.inf, -math.inf]
    assert math.isnan(got[3].real) and got[3].imag == -math.inf


@pytest.mark.parametrize(
    "dtype",
    ["bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64"]
    + ["complex64", "complex128"],
)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (2, 3)])
def test_arrays_round_trip_exactly(dtype: str, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(0)
    data = rng.uniform(-3, 3, shape) + (1j * rng.uniform(-3, 3, shape))
    array = np.asarray(data if dtype.startswith("complex") else data.real).astype(dtype)
    if array.dtype.kind == "f" and array.size:
        array.flat[0] = np.nan
        array.flat[-1] = -0.0
    got = round_trip(array)
    assert type(got) is np.ndarray and got.dtype == array.dtype
    assert got.shape == array.shape
    np.testing.assert_array_equal(got, array)
    assert np.array_equal(np.signbit(got.real), np.signbit(array.real))


def test_numpy_scalars_stay_scalars() -> None:
    got = round_trip([np.float32(0.1), np.int64(-3), np.bool_(True)])
    assert [type(v) for v in got] == [np.float32, np.int64, np.bool_]
    assert got[0] == np.float32(0.1)


def test_errors_come_back_as_exceptions_of_the_same_name() -> None:
    builtin = round_trip(TypeError("bad 'x'"))
    assert type(builtin) is TypeError and str(builtin) == "bad 'x'"

    class _LinAlgError(RuntimeError):
        pass

    custom = round_trip(_LinAlgError("singular"))
    assert type(custom).__name__ == "_LinAlgError" and str(custom) == "singular"
    assert isinstance(custom, Exception)
    assert type(round_trip(_LinAlgError("again"))) is type(custom)


@pytest.mark.parametrize("value", [object(), np.array(["a"]), {1: 2}, b"bytes"])
def test_anything_else_is_refused(value: Any) -> None:
    with pytest.raises(TypeError, match="cannot record|str keys"):
        encode(value)


def test_same_answer_allows_rounding_only() -> None:
    x = np.array([1.0, 2.0, np.nan, np.inf])
    assert same_answer(x, x.copy())
    assert same_answer(x, x * (1 + 1e-12))
    assert not same_answer(x, x * (1 + 1e-6))
    assert not same_answer(x, x.astype(np.float32))
    assert not same_answer(x, np.array([1.0, 2.0, 3.0, np.inf]))
    assert not same_answer(x, np.array([1.0, 2.0, np.nan, -np.inf]))
    single = np.array([1.0, 3.0], dtype=np.float32)
    assert same_answer(single, single * np.float32(1 + 1e-6))
    assert not same_answer(single, single * np.float32(1.01))
    assert same_answer(("ok", [1, "a"]), ("ok", [1, "a"]))
    assert not same_answer(("ok", [1, "a"]), ["ok", [1, "a"]])
    assert not same_answer(RuntimeError("a"), RuntimeError("b"))
    assert not same_answer(RuntimeError("a"), ValueError("a"))
    assert not same_answer(True, 1)


@pytest.fixture()
def fake_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in for torch (the computations below never touch it) and no golden."""
    monkeypatch.setattr(
        torch_oracle,
        "_torch",
        types.SimpleNamespace(__version__="0", Tensor=type("Tensor", (), {})),
    )
    monkeypatch.setattr(torch_oracle, "RECORD", False)
    monkeypatch.setattr(torch_oracle, "REQUIRED", False)
    monkeypatch.setitem(torch_oracle._loaded, MODULE, {})


def _record(test_id: str, key: str, value: Any) -> None:
    torch_oracle._loaded[MODULE][test_id] = {key: encode(value)}


def test_live_answer_matching_the_golden_is_returned(fake_torch: None) -> None:
    _record("test_live_answer_matching_the_golden_is_returned", "k", [1.5, "a"])
    assert oracle("k", lambda torch: [1.5, "a"]) == [1.5, "a"]


def test_a_stale_golden_fails(fake_torch: None) -> None:
    _record("test_a_stale_golden_fails", "k", [1.5, "a"])
    with pytest.raises(pytest.fail.Exception, match="test_torch_oracle.json is stale"):
        oracle("k", lambda torch: [1.25, "a"])


def test_a_missing_golden_fails_only_when_torch_is_required(
    fake_torch: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert oracle("k", lambda torch: 1) == 1
    monkeypatch.setattr(torch_oracle, "REQUIRED", True)
    with pytest.raises(pytest.fail.Exception, match="no PyTorch answer recorded"):
        oracle("k2", lambda torch: 1)


def test_without_torch_the_golden_is_read_or_the_test_skipped(
    fake_torch: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(torch_oracle, "_torch", None)
    _record(
        "test_without_torch_the_golden_is_read_or_the_test_skipped",
        "k",
        (np.arange(3), ZeroDivisionError("x")),
    )

    def never(torch: Any) -> Any:
        raise AssertionError("computed without torch")

    array, error = oracle("k", never)
    np.testing.assert_array_equal(array, np.arange(3))
    assert type(error) is ZeroDivisionError
    with pytest.raises(pytest.skip.Exception, match="no PyTorch answer is recorded"):
        oracle("other", never)
    monkeypatch.setattr(torch_oracle, "REQUIRED", True)
    with pytest.raises(pytest.fail.Exception, match="GRADGEN_REQUIRE_TORCH=1"):
        oracle("third", never)


def test_a_key_is_used_once_per_test(fake_torch: None) -> None:
    oracle("k", lambda torch: 1)
    with pytest.raises(RuntimeError, match="used twice"):
        oracle("k", lambda torch: 1)
    assert [torch_oracle.numbered("n") for _ in range(3)] == ["n", "n 2", "n 3"]


def test_golden_files_are_written_deterministically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(torch_oracle, "GOLDEN_DIR", tmp_path)
    monkeypatch.setattr(torch_oracle, "_loaded", {})
    answers = {
        "test_b[x]": {"z": encode(np.array([0.1, np.nan])), "a": encode("é")},
        "test_a": {"k": encode((1, -0.0))},
    }
    monkeypatch.setattr(torch_oracle, "_recorded", {"test_mod": answers})
    (path,) = torch_oracle.write_goldens()
    first = path.read_bytes()
    reversed_answers = {
        k: dict(reversed(v.items())) for k, v in reversed(answers.items())
    }
    monkeypatch.setattr(torch_oracle, "_recorded", {"test_mod": reversed_answers})
    monkeypatch.setattr(torch_oracle, "_loaded", {})
    path.unlink()
    torch_oracle.write_goldens()
    assert path.read_bytes() == first
    lines = first.decode().splitlines()
    assert lines[0] == "{" and lines[-1] == "}"
    assert lines[1].startswith('"test_a": ') and lines[2].startswith('"test_b[x]": ')
    assert json.loads(first) == {k: answers[k] for k in ("test_a", "test_b[x]")}

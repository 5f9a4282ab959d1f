"""PyTorch as a test oracle: live where torch is installed, recorded everywhere else.

Two ways for a test to ask PyTorch:

- `oracle(key, compute)` (preferred): `compute(torch)` returns PyTorch's answer as plain
  data (see `encode`: None, bool, int, float, complex, str, lists, tuples, str-keyed
  dicts, numpy arrays and scalars, torch tensors, exception objects). The answer is
  recorded in tests/golden/<test module>.json (its path under tests/, e.g.
  ops/test_loss) under the test's id and `key`, so:
  * with torch installed, it is computed live and, when a golden is recorded, checked
    against it (a stale golden fails, as CI runs with torch);
  * with GRADGEN_RECORD_GOLDEN=1 (`make golden`), the answers are written to the files;
  * without torch, the golden is read back: the test runs in full on a fresh machine;
  * without torch and without a golden, the test is skipped (failed in CI).
  The caller always gets `decode(encode(answer))`, with or without torch, so a test
  sees the same types in both modes (arrays as numpy arrays, errors as exceptions of
  the same class name and message).
- `require_torch()` (the `torch` fixture): the torch module, for the few tests that use
  torch beyond answers that can be recorded; skipped without torch.

GRADGEN_REQUIRE_TORCH=1 (as .ci/run sets) fails instead of skipping, so that CI can
never pass by skipping comparisons; GRADGEN_NO_TORCH=1 behaves as if torch were not
installed (to measure what a fresh machine runs).
"""

from __future__ import annotations

import builtins
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

_torch: Any
if os.environ.get("GRADGEN_NO_TORCH") == "1":
    _torch = None  # behave as on a machine without torch
else:
    try:
        import torch as _torch
    except ImportError:  # pragma: no cover - depends on the machine
        _torch = None

REQUIRED = os.environ.get("GRADGEN_REQUIRE_TORCH") == "1"
RECORD = os.environ.get("GRADGEN_RECORD_GOLDEN") == "1"
MISSING = "torch is not installed: comparison against PyTorch skipped"
NO_GOLDEN = (
    "torch is not installed and no PyTorch answer is recorded for this test "
    "(run `make golden` where torch is installed)"
)
GOLDEN_DIR = Path(__file__).resolve().parent / "golden"


def require_torch() -> Any:
    if _torch is None:
        if REQUIRED:
            pytest.fail(MISSING + " (GRADGEN_REQUIRE_TORCH=1 requires it)")
        pytest.skip(MISSING + " (this test uses torch beyond recorded answers)")
    return _torch


def torch_available() -> bool:
    return _torch is not None


# -- encoding: PyTorch's answers as deterministic JSON ----------------------------------


def _float(value: float) -> Any:
    if math.isfinite(value):
        return value
    return {"float": repr(value)}  # 'nan', 'inf', '-inf'


def encode(value: Any) -> Any:
    """Plain JSON data for `value`; TypeError for anything that is not an answer."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and not isinstance(value, np.generic):
        return value
    if isinstance(value, float) and not isinstance(value, np.generic):
        return _float(value)
    if isinstance(value, complex) and not isinstance(value, np.generic):
        return {"complex": [_float(value.real), _float(value.imag)]}
    if isinstance(value, BaseException):
        return {"error": type(value).__name__, "message": str(value)}
    if _torch is not None and isinstance(value, _torch.Tensor):
        value = value.detach().resolve_conj().resolve_neg().cpu().numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind not in "biufc":
            raise TypeError(f"cannot record an array of dtype {array.dtype}")
        items = array.reshape(-1).tolist()
        if array.dtype.kind in "fc":
            items = [encode(item) for item in items]
        kind = "array" if isinstance(value, np.ndarray) else "scalar"
        return {kind: items, "dtype": array.dtype.name, "shape": list(array.shape)}
    if isinstance(value, tuple):  # also torch.Size
        return {"tuple": [encode(item) for item in value]}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("only dicts with str keys can be recorded")
        return {"dict": {key: encode(item) for key, item in value.items()}}
    raise TypeError(
        f"cannot record a {type(value).__module__}.{type(value).__qualname__}: "
        "return plain data (str(dtype), tuple(shape), ...) from the oracle"
    )


_ERROR_CLASSES: dict[str, type[Exception]] = {}


def _error_class(name: str) -> type[Exception]:
    found = getattr(builtins, name, None)
    if isinstance(found, type) and issubclass(found, Exception):
        return found
    if name not in _ERROR_CLASSES:  # torch's own classes, e.g. _LinAlgError
        _ERROR_CLASSES[name] = type(name, (RuntimeError,), {})
    return _ERROR_CLASSES[name]


def _unfloat(item: Any) -> Any:
    return float(item["float"]) if isinstance(item, dict) else item


def _uncomplex(item: Any) -> Any:
    if isinstance(item, dict) and "complex" in item:
        real, imag = item["complex"]
        return complex(_unfloat(real), _unfloat(imag))
    return _unfloat(item)


def decode(data: Any) -> Any:
    """The value `encode` recorded (arrays as numpy arrays, errors as exceptions)."""
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict):
        return data
    if "float" in data:
        return float(data["float"])
    if "complex" in data:
        return _uncomplex(data)
    if "error" in data:
        return _error_class(data["error"])(data["message"])
    if "tuple" in data:
        return tuple(decode(item) for item in data["tuple"])
    if "dict" in data:
        return {key: decode(item) for key, item in data["dict"].items()}
    dtype = np.dtype(data["dtype"])
    items = data.get("array", data.get("scalar"))
    items = [_uncomplex(item) for item in items]
    array = np.array(items, dtype=dtype).reshape(data["shape"])
    return array if "array" in data else array[()]


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal up to the rounding a different CPU or build may give (scaled by |b|)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    finite = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(a[~finite & ~np.isnan(a)], b[~finite & ~np.isnan(b)]):
        return False
    bytes_per_real = a.dtype.itemsize // (2 if a.dtype.kind == "c" else 1)
    tolerance = 1e-9 if bytes_per_real >= 8 else 1e-4
    # Values that are rounding noise around 0 (a second derivative that is 0 in exact
    # arithmetic, ~1e-15) differ from CPU to CPU by as much as they are: an absolute
    # floor, far above that noise and far below any value a test asserts.
    floor = 1e-12 if bytes_per_real >= 8 else 1e-5
    scale = float(np.max(np.abs(b[finite]), initial=0.0))
    limit = max(tolerance * scale, floor)
    return bool(np.all(np.abs(a[finite] - b[finite]) <= limit))


def same_answer(recorded: Any, live: Any) -> bool:
    """Whether a golden (decoded) still equals torch's live answer (decoded)."""
    if isinstance(recorded, BaseException) or isinstance(live, BaseException):
        return type(recorded).__name__ == type(live).__name__ and str(recorded) == str(
            live
        )
    if isinstance(recorded, (np.ndarray, np.generic)) or isinstance(
        live, (np.ndarray, np.generic)
    ):
        return type(recorded) is type(live) and _close(
            np.asarray(recorded), np.asarray(live)
        )
    if isinstance(recorded, (float, complex)) and type(recorded) is type(live):
        return _close(np.asarray(recorded), np.asarray(live))
    if isinstance(recorded, (list, tuple)):
        return (
            type(recorded) is type(live)
            and len(recorded) == len(live)
            and all(same_answer(r, l) for r, l in zip(recorded, live))
        )
    if isinstance(recorded, dict):
        return (
            isinstance(live, dict)
            and recorded.keys() == live.keys()
            and all(same_answer(recorded[k], live[k]) for k in recorded)
        )
    return type(recorded) is type(live) and recorded == live


# -- the golden files -------------------------------------------------------------------

_loaded: dict[str, dict[str, dict[str, Any]]] = {}
_recorded: dict[str, dict[str, dict[str, Any]]] = {}
_current: list[Any] = [None]  # (module name, test id); set by conftest for each test
_used: set[str] = set()  # the keys the running test asked for
_counters: dict[str, int] = {}


def set_current_test(node: Any) -> None:
    """Called by conftest before each test: answers are filed under its id."""
    # The path under tests/ without .py ("test_nn", "ops/test_loss"): unique, while two
    # directories may hold modules of the same name.
    path = Path(str(node.path)).resolve()
    tests = GOLDEN_DIR.parent
    module = (
        path.relative_to(tests).with_suffix("").as_posix()
        if path.is_relative_to(tests)
        else path.stem
    )
    test_id = node.nodeid.split("::", 1)[1] if "::" in node.nodeid else node.name
    _current[0] = (module, test_id)
    _used.clear()
    _counters.clear()


def numbered(prefix: str) -> str:
    """`prefix`, then `prefix 2`, `prefix 3`... within one test: keys for a helper that
    a test may call several times (in a fixed order)."""
    count = _counters.get(prefix, 0) + 1
    _counters[prefix] = count
    return prefix if count == 1 else f"{prefix} {count}"


def _golden(module: str) -> dict[str, dict[str, Any]]:
    if module not in _loaded:
        path = GOLDEN_DIR / f"{module}.json"
        _loaded[module] = json.loads(path.read_text()) if path.exists() else {}
    return _loaded[module]


def oracle(key: str, compute: Callable[[Any], Any]) -> Any:
    """PyTorch's answer `compute(torch)`, live or recorded (see the module docstring)."""
    if _current[0] is None:
        raise RuntimeError("oracle() is only for use inside a test")
    module, test_id = _current[0]
    if key in _used:
        raise RuntimeError(f"oracle key {key!r} used twice in {test_id}")
    _used.add(key)
    recorded = _golden(module).get(test_id, {}).get(key)
    if _torch is None:
        if RECORD:
            pytest.fail("GRADGEN_RECORD_GOLDEN=1 needs torch installed")
        if recorded is None:
            if REQUIRED:
                pytest.fail(MISSING + " (GRADGEN_REQUIRE_TORCH=1 requires it)")
            pytest.skip(NO_GOLDEN)
        return decode(recorded)
    data = encode(compute(_torch))
    # Round-trip through JSON text, so that live answers are exactly what a golden holds.
    data = json.loads(json.dumps(data))
    live = decode(data)
    if RECORD:
        _recorded.setdefault(module, {}).setdefault(test_id, {})[key] = data
    elif recorded is None:
        if REQUIRED:
            pytest.fail(
                f"no PyTorch answer recorded for {module}::{test_id} [{key}]: "
                "run `make golden` and commit tests/golden/"
            )
    elif not same_answer(decode(recorded), live):
        pytest.fail(
            f"tests/golden/{module}.json is stale for {test_id} [{key}]: "
            f"recorded {recorded!r}, torch {torch_version()} says {data!r} "
            "(run `make golden`)"
        )
    return live


def outcome(compute: Callable[[], Any]) -> Any:
    """compute()'s result, or the exception it raised (to record torch's errors)."""
    try:
        return compute()
    except Exception as error:  # noqa: BLE001 - an error is an answer too
        return error


def torch_version() -> str:
    return "none" if _torch is None else str(_torch.__version__)


def write_goldens() -> list[Path]:
    """Write the answers recorded in this session (GRADGEN_RECORD_GOLDEN=1): one file
    per test module, keys sorted, one line per test, so regenerating is byte-stable."""
    written = []
    GOLDEN_DIR.mkdir(exist_ok=True)
    for module, tests in sorted(_recorded.items()):
        merged = dict(_golden(module))  # a partial run keeps the other tests' answers
        merged.update(tests)
        lines = [
            f"{json.dumps(test_id)}: {json.dumps(answers, sort_keys=True, separators=(',', ':'))}"
            for test_id, answers in sorted(merged.items())
        ]
        path = GOLDEN_DIR / f"{module}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{\n" + ",\n".join(lines) + "\n}\n")
        written.append(path)
    return written

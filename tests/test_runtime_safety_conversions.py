"""Runtime safety (issue 11): complex values copied into real tensors, and what a kernel
may return (see tests/test_runtime_safety_cases.py)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import gradgen

from torch_oracle import require_torch

# -- complex into real copies: the value's real part, with PyTorch's UserWarning ---------


def _complex_copies(lib: Any) -> list[tuple[list[float], str, str]]:
    results = []
    for write in (
        lambda t, src: t.copy_(src),
        lambda t, src: t.__setitem__(slice(None), src),
        lambda t, src: t.__setitem__(0, src[0]),
    ):
        t = lib.zeros(2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            write(t, lib.tensor([1 + 2j, 3j]))
        categories = {w.category.__name__ for w in caught}
        messages = {str(w.message).split(" (Triggered")[0] for w in caught}
        results.append(
            (t.tolist(), "/".join(sorted(categories)), "/".join(sorted(messages)))
        )
    return results


# One per write: the values kept and the warning. PyTorch warns once per process (its
# TORCH_WARN_ONCE), so only the first of its writes is compared for the warning.
COMPLEX_COPIES = [
    (
        [1.0, 0.0],
        "UserWarning",
        "Casting complex values to real discards the imaginary part",
    ),
    (
        [1.0, 0.0],
        "UserWarning",
        "Casting complex values to real discards the imaginary part",
    ),
    (
        [1.0, 0.0],
        "UserWarning",
        "Casting complex values to real discards the imaginary part",
    ),
]


def test_complex_into_real_copies_warn_as_pytorch() -> None:
    assert _complex_copies(gradgen) == COMPLEX_COPIES


def test_complex_into_real_copies_data_matches_torch() -> None:
    torch = require_torch()
    got = _complex_copies(torch)
    assert [values for values, _, _ in got] == [
        values for values, _, _ in COMPLEX_COPIES
    ]
    if got[0][1]:  # the first warning of this process (none if another test warned)
        assert got[0][1:] == COMPLEX_COPIES[0][1:]


# -- what a kernel returns ----------------------------------------------------------------


@pytest.mark.parametrize(
    "result",
    [np.array([1, "a"], dtype=object), np.array(["a"]), np.array([None]), [1, "a"]],
    ids=["object", "str", "None", "mixed list"],
)
@pytest.mark.parametrize(
    "result_dtype", [None, gradgen.float32], ids=["no dtype", "float32"]
)
def test_kernel_results_gradgen_cannot_hold_are_a_clear_error(
    result: Any, result_dtype: Any
) -> None:
    from gradgen.variable_type_utils import wrap_result

    with pytest.raises(TypeError, match="a kernel returned a numpy array of dtype"):
        wrap_result(result, result_dtype)


def test_unsigned_numpy_data_beyond_int64_is_refused_not_wrapped() -> None:
    # gradgen has no uint64 (PyTorch keeps such an array as uint64): converting it to
    # int64 would wrap 2**63 to -2**63, so it is an error; values that fit convert.
    with pytest.raises(
        RuntimeError, match="value cannot be converted to type int64 without overflow"
    ):
        gradgen.tensor(np.array([2**63], dtype=np.uint64))
    with pytest.raises(
        RuntimeError, match="value cannot be converted to type int32 without overflow"
    ):
        gradgen.tensor(np.array([2**31], dtype=np.uint32), dtype=gradgen.int32)
    fits = gradgen.tensor(np.array([2**63 - 1, 0], dtype=np.uint64))
    assert fits.tolist() == [2**63 - 1, 0] and fits.dtype is gradgen.int64
    assert gradgen.tensor(
        np.array([2**63], dtype=np.uint64), dtype=gradgen.float64
    ).tolist() == [2.0**63]

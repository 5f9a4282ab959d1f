"""PyTorch's factories beyond tensor/zeros/ones: the device= keyword, empty, eye,
linspace, logspace, *_like, randint, from_numpy, as_tensor. Compared with torch (recorded
in tests/golden/, see torch_oracle.py) where values are deterministic, with the definition elsewhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle


def _same(got: gradgen.Tensor, expected: np.ndarray) -> None:
    assert str(got.dtype).split(".")[-1] == expected.dtype.name
    assert tuple(got.shape) == expected.shape
    np.testing.assert_allclose(np.asarray(got.tolist()), expected, rtol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.eye(3),
        lambda L: L.eye(2, 4, dtype=L.float64),
        lambda L: L.linspace(-1, 2, 7),
        lambda L: L.linspace(0, 1, 1, dtype=L.float64),
        lambda L: L.logspace(0, 3, 4),
        lambda L: L.logspace(0, 3, 4, base=2.0),
        lambda L: L.empty(2, 3).fill_(0.0) if L is not gradgen else L.empty(2, 3),
        lambda L: L.full_like(L.ones(2, dtype=L.int64), 7),
        lambda L: L.full_like(L.ones(2), 7, dtype=L.float64),
        lambda L: L.zeros(2, device="cpu"),
        lambda L: L.ones(2, device=L.device("cpu")),
        lambda L: L.tensor([1.0], device="cpu"),
        lambda L: L.arange(3, device="cpu"),
        lambda L: (
            L.empty_like(L.ones(2, 2)).zero_()
            if L is not gradgen
            else L.empty_like(L.ones(2, 2))
        ),
    ],
    ids=[
        "eye",
        "eye n m",
        "linspace",
        "linspace 1",
        "logspace",
        "logspace base",
        "empty",
        "full_like",
        "full_like dtype",
        "zeros device",
        "ones device",
        "tensor device",
        "arange device",
        "empty_like",
    ],
)
def test_factories_match_torch(make: Any) -> None:
    _same(make(gradgen), oracle("made", make))


def test_random_factories_have_torchs_shapes_dtypes_and_ranges() -> None:
    gradgen.manual_seed(1)

    def made(lib: Any) -> list[Any]:
        return [
            lib.randint(3, 7, (1000,)),
            lib.randint(5, (2, 3)),
            lib.rand_like(lib.ones(2, 3, dtype=lib.float64)),
            lib.randn_like(lib.ones(4)),
        ]

    def facts(lib: Any) -> list[tuple[tuple[int, ...], str]]:
        return [(tuple(t.shape), str(t.dtype).split(".")[-1]) for t in made(lib)]

    a, b, _, _ = made(gradgen)
    assert int(a.min()) == 3 and int(a.max()) == 6  # 1000 draws reach both ends
    assert 0 <= int(b.min()) and int(b.max()) < 5
    assert facts(gradgen) == oracle("shapes and dtypes", facts)
    with pytest.raises(RuntimeError, match="expects 'from' to be less than 'to'"):
        gradgen.randint(3, 3, (2,))


def test_from_numpy_and_as_tensor_share_memory() -> None:
    array = np.arange(4.0)
    shared = gradgen.from_numpy(array)
    array[0] = 10.0
    assert shared.tolist()[0] == 10.0
    assert gradgen.as_tensor(array).tolist()[0] == 10.0
    converted = gradgen.as_tensor(array, dtype=gradgen.float32)
    array[1] = 20.0
    assert converted.tolist()[1] == 1.0  # a converted copy
    t = gradgen.ones(2)
    assert gradgen.as_tensor(t) is t
    assert gradgen.as_tensor([1, 2]).dtype == gradgen.int64
    with pytest.raises(TypeError, match="cannot share this array's memory"):
        gradgen.from_numpy(np.ones(2, dtype=np.uint16))
    with pytest.raises(TypeError, match="expected np.ndarray"):
        gradgen.from_numpy([1.0])


def test_other_devices_are_refused() -> None:
    for make in (
        lambda: gradgen.zeros(2, device="cuda"),
        lambda: gradgen.eye(2, device="cuda:0"),
        lambda: gradgen.tensor([1.0], device="mps"),
    ):
        with pytest.raises(RuntimeError, match="is not available"):
            make()

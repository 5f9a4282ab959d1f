"""Facts with one home (issue 17): PyTorch's dtype spellings and at::Reduction in
dtypes.py, one broadcast-error builder, one reshape; each checked against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional  # noqa: F401  (gradgen.nn.functional in _CALLS)
from gradgen.dtypes import ALL_DTYPES, Reduction, spelling
from torch_oracle import oracle, outcome


def test_reduction_values_are_pytorchs() -> None:
    ours = [Reduction.NONE, Reduction.MEAN, Reduction.SUM]
    theirs = oracle(
        "enum",
        lambda torch: [
            torch.nn._reduction.get_enum(name) for name in ("none", "mean", "sum")
        ],
    )
    assert ours == theirs == [0, 1, 2]
    assert all(type(value) is int for value in ours)  # saved and printed as ints


def test_legacy_tensor_names_are_pytorchs() -> None:
    names = [d.name for d in ALL_DTYPES]
    theirs = oracle(
        "types",
        lambda torch: [
            torch.empty(0, dtype=getattr(torch, name)).type() for name in names
        ],
    )
    assert ["torch." + spelling(d).legacy_tensor for d in ALL_DTYPES] == theirs


def test_a_dtype_pytorch_has_no_name_for_keeps_numpys_name() -> None:
    assert spelling(np.zeros(1, np.uint16)).scalar_type == "uint16"
    assert spelling(gradgen.float32).scalar_type == "Float"
    assert spelling(np.dtype("int64")).cpp == "int64_t"
    assert spelling(np.dtype("int64")).typeid == "long int"


# Shapes that disagree at two dimensions: PyTorch names the last one (infer_size walks
# from the end).
_CALLS = {
    "matmul": lambda m: m.matmul(m.ones(2, 3, 4, 5), m.ones(3, 2, 5, 6)),
    "mse_loss": lambda m: m.nn.functional.mse_loss(m.ones(2, 3), m.ones(3, 2)),
    "l1_loss": lambda m: m.nn.functional.l1_loss(m.ones(0, 3), m.ones(3, 3)),
    "add": lambda m: m.add(m.ones(2, 3), m.ones(3, 2)),
}


@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize("name", sorted(_CALLS))
def test_broadcast_error_names_the_last_mismatch_as_pytorch(name: str) -> None:
    theirs = oracle("error", lambda torch: outcome(lambda: _CALLS[name](torch)))
    assert isinstance(theirs, RuntimeError)
    with pytest.raises(RuntimeError) as ours:
        _CALLS[name](gradgen)
    assert str(ours.value) == str(theirs)


def _names(m: object, x: object) -> list[str]:
    y = x.t().reshape(12)  # type: ignore[attr-defined]
    return [type(y.grad_fn).__name__] + [
        type(f).__name__ for f, _ in y.grad_fn.next_functions
    ]


def test_reshape_of_a_transposed_tensor_records_pytorchs_graph() -> None:
    theirs = oracle(
        "names", lambda torch: _names(torch, torch.ones(3, 4, requires_grad=True))
    )
    assert theirs == ["UnsafeViewBackward0", "CloneBackward0"]
    x = gradgen.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    assert _names(gradgen, x) == theirs
    y = x.t().reshape(12)
    (y * gradgen.arange(12.0)).sum().backward()
    # y[k] = x.t().flatten()[k] = x[k % 3, k // 3]: x[i, j] receives 3 * j + i.
    assert x.grad.tolist() == [[3.0 * j + i for j in range(4)] for i in range(3)]


_DTYPE_NAMES = [d.name for d in ALL_DTYPES]


@pytest.mark.parametrize("name", _DTYPE_NAMES)
def test_expand_error_names_the_tensor_type_as_pytorch(name: str) -> None:
    def call(m: Any) -> Any:
        return m.ones(2, 3, dtype=getattr(m, name)).expand(3)

    theirs = oracle("error", lambda torch: outcome(lambda: call(torch)))
    assert isinstance(theirs, RuntimeError)
    with pytest.raises(RuntimeError) as ours:
        call(gradgen)
    assert str(ours.value) == str(theirs)
    assert str(theirs).startswith(
        f"expand({spelling(getattr(gradgen, name)).tensor_type}"
    )

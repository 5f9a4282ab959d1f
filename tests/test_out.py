"""out= keywords: `gradgen.add(a, b, out=c)` and the other functions whose PyTorch
schema has an out overload (native_functions.yaml's `out_overload:`), against PyTorch:
values, the returned tensor, dtype casting, resizing with PyTorch's warning, the
autograd refusal, writing through views, version counters; and the YAML's overload
names against PyTorch's own list."""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import gradgen
from gradgen.codegen.load import load
from torch_compare import same_error
from torch_oracle import oracle

ROOT = Path(__file__).resolve().parent.parent
A = np.arange(6, dtype=np.float32).reshape(2, 3) / 4 - 0.5
B = np.linspace(-1, 2, 6, dtype=np.float32).reshape(2, 3)
M = np.arange(12, dtype=np.float32).reshape(3, 4) / 10

# name -> (call given the library, the two inputs and out, out's shape)
CALLS: dict[str, tuple[Callable[..., Any], tuple[int, ...]]] = {
    "add": (lambda t, a, b, o: t.add(a, b, alpha=2, out=o), (2, 3)),
    "sub": (lambda t, a, b, o: t.sub(a, b, out=o), (2, 3)),
    "mul": (lambda t, a, b, o: t.mul(a, 3, out=o), (2, 3)),
    "div": (lambda t, a, b, o: t.div(a, b + 3, out=o), (2, 3)),
    "div_mode": (
        lambda t, a, b, o: t.div(a, b + 3, rounding_mode="floor", out=o),
        (2, 3),
    ),
    "exp": (lambda t, a, b, o: t.exp(a, out=o), (2, 3)),
    "pow": (lambda t, a, b, o: t.pow(b, 2, out=o), (2, 3)),
    "maximum": (lambda t, a, b, o: t.maximum(a, b, out=o), (2, 3)),
    "clamp": (lambda t, a, b, o: t.clamp(b, -0.5, 0.5, out=o), (2, 3)),
    "where": (lambda t, a, b, o: t.where(a > 0, a, b, out=o), (2, 3)),
    "matmul": (lambda t, a, b, o: t.matmul(a, t.ones(3, 4), out=o), (2, 4)),
    "mm": (lambda t, a, b, o: t.mm(a.t(), b, out=o), (3, 3)),
    "cat": (lambda t, a, b, o: t.cat([a, b], out=o), (4, 3)),
    "stack": (lambda t, a, b, o: t.stack([a, b], 1, out=o), (2, 2, 3)),
    "sum_dim": (lambda t, a, b, o: t.sum(a, 0, out=o), (3,)),
    "mean_dim": (lambda t, a, b, o: t.mean(b, 1, keepdim=True, out=o), (2, 1)),
    "softmax": (lambda t, a, b, o: t.softmax(a, 1, out=o), (2, 3)),
    "cumsum": (lambda t, a, b, o: t.cumsum(a, 1, out=o), (2, 3)),
    "tanh": (lambda t, a, b, o: t.tanh(a, out=o), (2, 3)),
    "addmm": (lambda t, a, b, o: t.addmm(a, a, t.ones(3, 3), out=o), (2, 3)),
}


def _run(lib: Any, name: str) -> dict[str, Any]:
    call, shape = CALLS[name]
    out = lib.full(shape, 7.0)
    version = out._version
    returned = call(lib, lib.tensor(A), lib.tensor(B), out)
    return {
        "same": returned is out,
        "value": out.numpy(),
        "bumped": out._version > version,
    }


@pytest.mark.parametrize("name", sorted(CALLS))
def test_result_is_written_into_out_and_returned(name: str) -> None:
    ours = _run(gradgen, name)
    theirs = oracle("run", lambda torch: _run(torch, name))
    assert ours["same"] and theirs["same"] and ours["bumped"]
    np.testing.assert_allclose(ours["value"], theirs["value"], rtol=1e-6, atol=1e-6)


def test_a_wider_out_dtype_takes_the_cast_result() -> None:
    def run(lib: Any) -> Any:
        out = lib.zeros(3, dtype=lib.float64)
        lib.add(lib.tensor([1.5, 2.5, 3.5]), 1, out=out)
        ints = lib.zeros(3, dtype=lib.int64)
        lib.add(lib.tensor([1, 2, 3], dtype=lib.int32), 1, out=ints)
        return [out.numpy(), ints.numpy()]

    ours = run(gradgen)
    theirs = oracle("cast", run)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "case",
    [
        lambda t: t.add(t.ones(3), t.ones(3), out=t.empty(3, dtype=t.int64)),
        lambda t: t.exp(t.ones(3), out=t.empty(3, dtype=t.int32)),
        lambda t: t.add(t.ones(3), 1, out=t.empty(3, dtype=t.bool)),
        lambda t: t.exp(t.ones(3), out=5),
        lambda t: t.mul(t.ones(3, requires_grad=True), 2, out=t.empty(3)),
        lambda t: t.add(t.ones(3), 2, out=t.empty(3, requires_grad=True)),
        lambda t: t.sum(t.ones(2, 3, requires_grad=True), 0, out=t.empty(3)),
        lambda t: t.cat([t.ones(2, requires_grad=True)], out=t.empty(2)),
    ],
    ids=[
        "float-into-long",
        "float-into-int",
        "into-bool",
        "not-a-tensor",
        "input-requires-grad",
        "out-requires-grad",
        "overloaded-requires-grad",
        "list-requires-grad",
    ],
)
def test_errors_are_pytorchs(case: Callable[[Any], Any]) -> None:
    same_error(case)


def test_no_grad_allows_tensors_that_require_grad() -> None:
    x = gradgen.ones(3, requires_grad=True)
    out = gradgen.empty(3, requires_grad=True)
    with gradgen.no_grad():
        gradgen.mul(x, 2, out=out)
    assert out.requires_grad and out.grad_fn is None
    np.testing.assert_array_equal(out.detach().numpy(), [2.0, 2.0, 2.0])


def _resize(lib: Any) -> dict[str, Any]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        full = lib.zeros(2)
        lib.add(lib.ones(3), 1, out=full)
        empty = lib.zeros(0)
        lib.add(lib.ones(2, 2), 1, out=empty)
        summed = lib.zeros(5)
        lib.sum(lib.ones(2, 3), 1, out=summed)
    messages = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    return {
        "messages": messages,
        "shapes": [tuple(full.shape), tuple(empty.shape), tuple(summed.shape)],
        "values": [full.numpy(), empty.numpy(), summed.numpy()],
    }


def test_a_wrong_shape_is_resized_with_pytorchs_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradgen.add(gradgen.ones(3), 1, out=gradgen.zeros(2))
        gradgen.sum(gradgen.ones(2, 3), 1, out=gradgen.zeros(5))
    assert [w.filename for w in caught] == [__file__, __file__]  # the user's line
    ours = _resize(gradgen)
    theirs = oracle("resize", _resize)
    assert ours["messages"] == theirs["messages"] and len(ours["messages"]) == 2
    assert ours["shapes"] == [tuple(s) for s in theirs["shapes"]]
    for a, b in zip(ours["values"], theirs["values"]):
        np.testing.assert_array_equal(a, b)


def _view(lib: Any) -> list[Any]:
    base = lib.zeros(6)
    lib.add(lib.ones(3), 1, out=base[::2])
    transposed = lib.zeros(2, 3).t()
    lib.mm(lib.ones(3, 2), lib.ones(2, 2), out=transposed)
    aliased = lib.tensor([1.0, 2.0])
    lib.mul(aliased, aliased, out=aliased)
    return [base.numpy(), transposed.numpy(), aliased.numpy(), base._version]


def test_out_may_be_a_view_or_an_input() -> None:
    ours = _view(gradgen)
    theirs = oracle("views", _view)
    for a, b in zip(ours[:3], theirs[:3]):
        np.testing.assert_array_equal(a, b)
    assert ours[3] == theirs[3] == 1  # the base's version counter is the view's


def test_overlapping_out_is_refused_as_pytorch_does() -> None:
    same_error(lambda t: t.add(t.ones(3), 1, out=t.zeros(1).expand(3)))


def test_methods_and_calls_without_out_are_unchanged() -> None:
    assert "out" in inspect.signature(gradgen.add).parameters
    assert "out" not in inspect.signature(gradgen.Tensor.add).parameters
    with pytest.raises(TypeError):
        gradgen.ones(2).add(1, out=gradgen.empty(2))  # type: ignore[call-arg]


def _torch_overloads(torch: Any) -> list[str]:
    schemas = torch._C._jit_get_all_schemas()
    return sorted(
        {
            f"{s.name.removeprefix('aten::')}.{s.overload_name}"
            for s in schemas
            if s.name.startswith("aten::") and any(a.is_out for a in s.arguments)
        }
    )


def test_every_out_overload_is_one_of_pytorchs() -> None:
    model = load(ROOT / "native_functions.yaml", ROOT / "derivatives.yaml")
    named = {f.name: f.out_overload for f in model.native_functions}
    ours = {f.out_overload for f in model.native_functions if f.out_overload}
    theirs = set(oracle("overloads", _torch_overloads))
    assert len(ours) > 100
    assert ours <= theirs, sorted(ours - theirs)
    assert named["add.Tensor"] == "add.out" and named["matmul"] == "matmul.out"
    for function in model.native_functions:
        if function.out_overload:
            public = getattr(gradgen, function.python_name)
            generated = getattr(public, "__module__", "") == "gradgen.generated.ops"
            if inspect.isfunction(public) and generated:  # not norm's own function
                assert "out" in inspect.signature(public).parameters, function.name


def _factories(lib: Any) -> list[Any]:
    long_out = lib.empty(0, dtype=lib.int64)
    lib.arange(5, out=long_out)
    float_out = lib.empty(0)
    lib.arange(4, out=float_out)  # computed in out's dtype
    zeros = lib.full((3,), 7.0)
    lib.zeros(2, 2, out=zeros)
    spaced = lib.empty(3, dtype=lib.float64)
    returned = lib.linspace(0, 1, 3, out=spaced)
    ones = lib.zeros(2, 2)
    view = ones[0]
    lib.ones(2, out=view)  # through a view of ones
    eye = lib.empty(2, 2)
    lib.eye(2, out=eye)
    drawn = lib.empty(5, dtype=lib.int64)
    lib.randperm(5, out=drawn)
    return [
        long_out.numpy(),
        float_out.numpy(),
        zeros.numpy(),
        spaced.numpy(),
        returned is spaced,
        ones.numpy(),
        eye.numpy(),
        sorted(drawn.tolist()),
        str(drawn.dtype).split(".")[-1],
        list(lib.randn(2, 3, out=lib.empty(0)).shape),
    ]


def test_factories_take_out() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the factories resize without a warning
        ours = _factories(gradgen)
    theirs = oracle("factories", _factories)
    for a, b in zip(ours, theirs):
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b


def _arange_warning(lib: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.arange(4, out=lib.empty(3))
    return [str(w.message).split(" (Triggered internally")[0] for w in caught]


def test_arange_warns_as_pytorch_when_out_has_other_elements() -> None:
    ours = _arange_warning(gradgen)
    assert ours == oracle("warning", _arange_warning) and len(ours) == 1


@pytest.mark.parametrize(
    "case",
    [
        lambda t: t.zeros(2, dtype=t.float64, out=t.empty(2)),
        lambda t: t.arange(3, dtype=t.int32, out=t.empty(3, dtype=t.int64)),
        lambda t: t.zeros(2, out=t.empty(2, requires_grad=True)),
        lambda t: t.ones(2, out=[1.0, 2.0]),
    ],
    ids=["dtype-mismatch", "int-dtype-mismatch", "out-requires-grad", "not-a-tensor"],
)
def test_factory_errors_are_pytorchs(case: Callable[[Any], Any]) -> None:
    same_error(case)


def _tuples(lib: Any) -> list[Any]:
    x = lib.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    values, indices = lib.empty(2), lib.empty(2, dtype=lib.int64)
    maxed = lib.max(x, 1, out=(values, indices))
    sorted_ = lib.sort(x, 1, descending=True, out=[lib.empty(0), lib.empty(0).long()])
    top = lib.topk(x, 2, out=(lib.empty(2, 2), lib.empty(2, 2, dtype=lib.int64)))
    low = lib.min(x, 0, keepdim=True, out=(lib.empty(1, 3), lib.empty(1, 3).long()))
    return [
        maxed.values is values and maxed.indices is indices,
        [maxed[0] is maxed.values, maxed[1] is maxed.indices],
        values.numpy(),
        indices.numpy(),
        sorted_.values.numpy(),
        sorted_.indices.numpy(),
        top.values.numpy(),
        top.indices.numpy(),
        low.values.numpy(),
        low.indices.numpy(),
    ]


def test_several_results_take_a_tuple_of_outs() -> None:
    ours = _tuples(gradgen)
    theirs = oracle("tuples", _tuples)
    assert ours[0] is True and theirs[0] is True
    assert ours[1] == theirs[1] == [True, True]
    for a, b in zip(ours[2:], theirs[2:]):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "case",
    [
        lambda t: t.max(t.ones(2, 3), 1, out=(t.empty(2),)),
        lambda t: t.add(t.ones(2), 1, out=(t.empty(2),)),
        lambda t: t.sort(
            t.ones(3, requires_grad=True), out=(t.empty(3), t.empty(3).long())
        ),
    ],
    ids=["too-few", "tuple-for-one", "requires-grad"],
)
def test_tuple_out_errors_are_pytorchs(case: Callable[[Any], Any]) -> None:
    same_error(case)

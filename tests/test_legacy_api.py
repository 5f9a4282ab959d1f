"""The legacy and everyday API, against PyTorch: autograd.Variable, the legacy tensor
types (FloatTensor, ...), Tensor.type(), format() of tensors, finfo/iinfo and the
default device."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import gradgen
from torch_compare import same_error
from torch_oracle import oracle, outcome


def _describe(t: Any) -> tuple[str, list[Any], list[int], bool, bool]:
    dtype = str(t.dtype).split(".")[-1]
    return dtype, t.detach().tolist(), list(t.shape), t.requires_grad, t.is_leaf


# -- Variable -----------------------------------------------------------------------------


def test_variable_returns_a_leaf_tensor_over_the_same_memory() -> None:
    def run(lib: Any) -> Any:
        x = lib.ones(2)
        v = lib.autograd.Variable(x, requires_grad=True)
        with lib.no_grad():
            v[0] = 5.0
        y = lib.ones(2, requires_grad=True) * 2
        return [
            _describe(v),
            x.tolist(),
            isinstance(v, lib.autograd.Variable),
            isinstance(x, lib.autograd.Variable),
            _describe(lib.autograd.Variable(y)),
            _describe(lib.autograd.Variable()),
        ]

    assert run(gradgen) == oracle("variable", run)
    assert type(gradgen.autograd.Variable(gradgen.ones(1))) is gradgen.Tensor


def test_variable_errors_and_volatile_warning() -> None:
    same_error(lambda lib: lib.autograd.Variable([1, 2]))
    same_error(
        lambda lib: lib.autograd.Variable(
            lib.ones(2, dtype=lib.long), requires_grad=True
        )
    )
    with pytest.warns(UserWarning, match="volatile was removed"):
        gradgen.autograd.Variable(gradgen.ones(2), volatile=True)


# -- legacy tensor types ------------------------------------------------------------------

CONSTRUCTIONS: list[Callable[[Any], Any]] = [
    lambda lib: lib.FloatTensor([1, 2]),
    lambda lib: lib.FloatTensor(2, 3).zero_(),  # PyTorch's memory is uninitialised
    lambda lib: lib.FloatTensor(),
    lambda lib: lib.DoubleTensor([[1, 2], [3, 4]]),
    lambda lib: lib.LongTensor([1.5, 2]),
    lambda lib: lib.LongTensor(3).zero_(),
    lambda lib: lib.IntTensor(2).zero_(),
    lambda lib: lib.ByteTensor([1, 2]),
    lambda lib: lib.BoolTensor([1, 0]),
    lambda lib: lib.FloatTensor(np.ones(2)),
    lambda lib: lib.FloatTensor(lib.ones(2)),
]


@pytest.mark.parametrize("make", CONSTRUCTIONS, ids=range(len(CONSTRUCTIONS)))
def test_legacy_types_construct_as_pytorch(make: Callable[[Any], Any]) -> None:
    assert _describe(make(gradgen)) == oracle("made", lambda t: _describe(make(t)))


def test_legacy_isinstance_checks_the_dtype() -> None:
    def checks(lib: Any) -> list[bool]:
        return [
            isinstance(lib.ones(2), lib.FloatTensor),
            isinstance(lib.ones(2, dtype=lib.float64), lib.FloatTensor),
            isinstance(lib.ones(2, dtype=lib.float64), lib.DoubleTensor),
            isinstance(lib.ones(2, dtype=lib.long), lib.LongTensor),
            isinstance(lib.ones(2, dtype=lib.int32), lib.LongTensor),
            isinstance(lib.ones(2, dtype=lib.bool), lib.BoolTensor),
            isinstance(lib.ones(2, dtype=lib.uint8), lib.ByteTensor),
            isinstance(3, lib.LongTensor),
            isinstance(lib.FloatTensor([1]), lib.Tensor),
        ]

    assert checks(gradgen) == oracle("isinstance", checks)


def test_a_legacy_type_refuses_a_tensor_of_another_dtype() -> None:
    with pytest.raises(TypeError):
        gradgen.FloatTensor(gradgen.ones(2, dtype=gradgen.float64))


# -- Tensor.type() ------------------------------------------------------------------------


def test_type_names_as_pytorch() -> None:
    def names(lib: Any) -> list[str]:
        kinds = ["float32", "float64", "float16", "int8", "int16", "int32", "int64"]
        kinds += ["uint8", "bool", "complex64", "complex128"]
        return [lib.ones(2, dtype=getattr(lib, kind)).type() for kind in kinds]

    assert names(gradgen) == oracle("names", names)


def test_type_converts() -> None:
    def converted(lib: Any) -> list[Any]:
        x = lib.tensor([1.5, -2.0])
        return [
            _describe(x.type("torch.LongTensor")),
            _describe(x.type(lib.IntTensor)),
            _describe(x.type(lib.float64)),
            _describe(x.type("torch.BoolTensor")),
            x.type(lib.float32) is x,
            x.type("torch.FloatTensor") is x,
        ]

    assert converted(gradgen) == oracle("converted", converted)


def test_type_errors() -> None:
    same_error(lambda lib: lib.ones(2).type("torch.float64"))
    same_error(lambda lib: lib.ones(2).type("float"))
    same_error(lambda lib: lib.ones(2).type(3))
    with pytest.raises(RuntimeError, match="CUDA"):
        gradgen.ones(2).type("torch.cuda.FloatTensor")


# -- format() -----------------------------------------------------------------------------

FORMATS: list[Callable[[Any], str]] = [
    lambda lib: "{:+.2f}".format(lib.tensor(3.14159)),
    lambda lib: "{:d}".format(lib.tensor(3)),
    lambda lib: "{:.2f}".format(lib.tensor(3)),
    lambda lib: f"{lib.tensor(2.5, requires_grad=True):.3f}",
    lambda lib: format(lib.tensor(True), ""),
    lambda lib: "{:>8.1e}".format(lib.tensor(12345.0, dtype=lib.float64)),
    lambda lib: "{}".format(lib.tensor([3.1, 2.0])),
]


@pytest.mark.parametrize("fmt", FORMATS, ids=range(len(FORMATS)))
def test_format_as_pytorch(fmt: Callable[[Any], str]) -> None:
    theirs = oracle("formatted", fmt).replace("torch.", "gradgen.")
    assert fmt(gradgen) == theirs


def test_format_of_a_tensor_with_elements_is_refused() -> None:
    same_error(lambda lib: "{:+.2f}".format(lib.tensor([3.14159])))
    same_error(lambda lib: "{:+.2f}".format(lib.tensor([3.1, 2.0])))
    same_error(lambda lib: format(lib.tensor([1.0, 2.0]), ">30"))


# -- default device, finfo, iinfo ---------------------------------------------------------


def test_default_device_is_the_cpu() -> None:
    assert gradgen.get_default_device() == gradgen.device("cpu")
    gradgen.set_default_device("cpu")
    gradgen.set_default_device(None)
    assert str(gradgen.get_default_device()) == "cpu"
    with pytest.raises(RuntimeError, match="use 'cpu'"):
        gradgen.set_default_device("cuda")


def _info(info: Any, names: tuple[str, ...]) -> list[Any]:
    return [getattr(info, name) for name in names] + [repr(info)]


FINFO = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "complex128", None])
def test_finfo_as_pytorch(name: str | None) -> None:
    def run(lib: Any) -> list[Any]:
        info = lib.finfo() if name is None else lib.finfo(getattr(lib, name))
        return _info(info, FINFO)

    assert run(gradgen) == oracle("finfo", run)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_as_pytorch(name: str) -> None:
    def run(lib: Any) -> list[Any]:
        return _info(lib.iinfo(getattr(lib, name)), ("bits", "max", "min", "dtype"))

    assert run(gradgen) == oracle("iinfo", run)


def test_info_errors() -> None:
    same_error(lambda lib: lib.finfo(lib.long))
    same_error(lambda lib: lib.iinfo(lib.float32))
    same_error(lambda lib: lib.iinfo(lib.bool))


def test_no_warning_from_the_everyday_calls() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradgen.FloatTensor([1.0]).type()
        format(gradgen.tensor(1.0), ".1f")


# -- NestedIOFunction -----------------------------------------------------------------


def _nested(lib: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return lib.autograd.function.NestedIOFunction()


def test_nested_io_function_is_importable_as_in_pytorch() -> None:
    def where(lib: Any) -> Any:
        base = lib.autograd.function.NestedIOFunction
        return [
            base is lib.autograd.NestedIOFunction,
            issubclass(base, lib.autograd.Function),
            "NestedIOFunction" in lib.autograd.function.__all__,
        ]

    assert where(gradgen) == oracle("importable", where)


def test_nested_io_function_bookkeeping_as_pytorch() -> None:
    def run(lib: Any) -> Any:
        fn, x, y = _nested(lib), lib.ones(2), lib.zeros(3)
        fn.save_for_backward(x, (y, [x, None]))
        fn.mark_dirty(x, other=y)
        fn.mark_non_differentiable([y, (x,)])
        return [
            [t.tolist() for t in fn.to_save],
            [t.tolist() for t in fn.dirty_tensors],
            [t.tolist() for t in fn.non_differentiable],
        ]

    assert run(gradgen) == oracle("bookkeeping", run)


def test_nested_io_function_errors_as_pytorch() -> None:
    same_error(lambda lib: _nested(lib)(lib.ones(2)))  # PyTorch 2.x cannot call it
    same_error(lambda lib: _nested(lib).save_for_backward(lib.ones(2), 3))


@pytest.mark.parametrize("method", ["forward_extended", "backward_extended"])
def test_nested_io_function_user_methods_must_be_written(method: str) -> None:
    def run(lib: Any) -> Any:
        return outcome(lambda: getattr(_nested(lib), method)(lib.ones(2)))

    theirs, mine = oracle("unwritten", run), run(gradgen)
    assert (type(mine), str(mine)) == (type(theirs), str(theirs))
    assert isinstance(mine, NotImplementedError)

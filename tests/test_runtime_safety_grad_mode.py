"""Runtime safety (issue 11): grad-mode and anomaly contexts as context managers,
decorators and around generators (see tests/test_runtime_safety_cases.py)."""

from __future__ import annotations

import threading
import warnings
from typing import Any

import pytest

import gradgen

from torch_oracle import require_torch

# -- grad mode: decorators, context managers, generators, nesting, exceptions ------------


def _grad_mode_trace(lib: Any) -> list[Any]:
    """Grad mode as seen at each step of the forms of every grad-mode context."""
    seen: list[Any] = []
    mode = lib.is_grad_enabled

    @lib.set_grad_enabled(False)
    def off() -> bool:
        return bool(mode())

    seen += [mode(), off(), mode()]  # decorating changes nothing; the call runs off

    @lib.set_grad_enabled(True)
    def on() -> bool:
        return bool(mode())

    with lib.no_grad():
        seen += [on(), mode()]
    lib.set_grad_enabled(False)  # the plain call switches at once ...
    seen.append(mode())
    lib.set_grad_enabled(True)
    with lib.set_grad_enabled(False):  # ... the block restores what was before it
        seen.append(mode())
    seen.append(mode())

    @lib.no_grad
    def bare() -> bool:  # without parentheses
        return bool(mode())

    @lib.enable_grad
    def bare_on() -> bool:
        return bool(mode())

    with lib.no_grad():
        seen += [bare(), bare_on(), mode()]
    seen.append(mode())

    @lib.set_grad_enabled(False)
    def raises() -> None:
        raise KeyError("inside")

    with pytest.raises(KeyError):
        raises()
    seen.append(mode())
    with pytest.raises(ValueError):
        with lib.no_grad():
            with lib.enable_grad():
                raise ValueError("nested")
    seen.append(mode())

    @lib.no_grad()
    def generator() -> Any:
        sent = yield mode()
        seen.append(("sent", sent))
        yield mode()

    steps = generator()
    seen += [next(steps), mode()]
    seen.append(steps.send("x"))  # the generator records ("sent", "x") first
    seen.append(mode())
    steps.close()

    @lib.set_grad_enabled(False)
    def generator_off() -> Any:
        yield mode()

    seen += [next(generator_off()), mode()]

    @lib.enable_grad()
    def generator_on() -> Any:
        yield mode()

    with lib.no_grad():
        seen += [next(generator_on()), mode()]

    @lib.inference_mode()
    def infer() -> tuple[bool, bool]:
        return bool(mode()), bool(lib.is_inference_mode_enabled())

    @lib.inference_mode
    def infer_bare() -> tuple[bool, bool]:
        return bool(mode()), bool(lib.is_inference_mode_enabled())

    seen += [infer(), infer_bare(), (mode(), lib.is_inference_mode_enabled())]
    with lib.inference_mode():
        with lib.inference_mode(False):
            seen.append((mode(), lib.is_inference_mode_enabled()))
        seen.append((mode(), lib.is_inference_mode_enabled()))
    with lib.no_grad():
        with lib.inference_mode(False):
            seen.append(mode())

    @lib.inference_mode()
    def infer_generator() -> Any:
        yield mode(), lib.is_inference_mode_enabled()

    seen += [next(infer_generator()), (mode(), lib.is_inference_mode_enabled())]

    @lib.no_grad()
    def named(a: int, b: int = 2) -> int:
        """doc"""
        return a + b

    seen.append((named.__name__, named.__doc__, named(1)))
    for value in (0, 1, None):
        with pytest.raises(TypeError) as error:
            lib.set_grad_enabled(value)
        seen.append(str(error.value))
    seen.append(type(lib.no_grad().clone()).__name__)
    seen.append(mode())
    return seen


GRAD_MODE_TRACE: list[Any] = [
    True,
    False,
    True,  # set_grad_enabled(False) as a decorator
    True,
    False,  # set_grad_enabled(True) decorator inside no_grad
    False,
    False,
    True,  # plain call, then the context manager
    False,
    True,
    False,
    True,  # @no_grad / @enable_grad without parentheses
    True,
    True,  # after exceptions
    False,
    True,
    ("sent", "x"),
    False,
    True,  # a no_grad generator, send() included
    False,
    True,  # a set_grad_enabled(False) generator
    True,
    False,  # an enable_grad generator under no_grad
    (False, True),
    (False, True),
    (True, False),  # inference_mode decorators
    (True, False),
    (False, True),  # inference_mode(False) inside inference_mode
    True,  # inference_mode(False) inside no_grad enables grad
    (False, True),
    (True, False),  # an inference_mode generator
    ("named", "doc", 3),
    "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not int",
    "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not int",
    "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not NoneType",
    "no_grad",
    True,
]


def test_grad_mode_contexts() -> None:
    assert _grad_mode_trace(gradgen) == GRAD_MODE_TRACE
    assert gradgen.is_grad_enabled()


def test_grad_mode_contexts_data_matches_torch() -> None:
    torch = require_torch()
    try:
        assert _grad_mode_trace(torch) == GRAD_MODE_TRACE
    finally:
        torch.set_grad_enabled(True)


def test_decorated_function_records_under_its_mode_only() -> None:
    @gradgen.set_grad_enabled(False)
    def predict(t: gradgen.Tensor) -> gradgen.Tensor:
        return t * 3

    x = gradgen.ones(2, requires_grad=True)
    assert (x * 2).grad_fn is not None  # decoration left recording on
    assert predict(x).grad_fn is None
    assert (x * 2).grad_fn is not None


def test_grad_mode_is_per_thread_under_decorators() -> None:
    seen: list[bool] = []

    @gradgen.no_grad()
    def worker() -> None:
        seen.append(gradgen.is_grad_enabled())

    with gradgen.no_grad():
        other = threading.Thread(target=lambda: seen.append(gradgen.is_grad_enabled()))
        other.start()
        other.join()
    worker()
    assert seen == [True, False] and gradgen.is_grad_enabled()


def _anomaly_trace(lib: Any) -> list[Any]:
    autograd = lib.autograd
    seen: list[Any] = []
    with autograd.set_detect_anomaly(True, check_nan=False):
        seen += [lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()]
    seen += [lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()]
    switch = autograd.set_detect_anomaly(True)  # the plain call switches at once
    seen.append(lib.is_anomaly_enabled())
    with switch:
        pass
    seen.append(lib.is_anomaly_enabled())
    with pytest.raises(TypeError) as error:
        autograd.set_detect_anomaly(1)
    seen.append(str(error.value))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly(check_nan=False):
            seen.append(lib.is_anomaly_enabled())
    seen.append(lib.is_anomaly_enabled())
    return seen


ANOMALY_TRACE = [
    True,
    False,
    False,
    True,
    True,
    False,
    "set_anomaly_enabled(): argument 'enabled' (position 1) must be bool, not int",
    True,
    False,
]


def test_anomaly_contexts() -> None:
    assert _anomaly_trace(gradgen) == ANOMALY_TRACE


def test_anomaly_contexts_data_matches_torch() -> None:
    torch = require_torch()
    try:
        assert _anomaly_trace(torch) == ANOMALY_TRACE
    finally:
        torch.autograd.set_detect_anomaly(False)


def test_detect_anomaly_decorator_restores_and_wraps_generators() -> None:
    # gradgen's addition (PyTorch's detect_anomaly is a context manager only).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @gradgen.autograd.detect_anomaly()
        def steps() -> Any:
            yield gradgen.is_anomaly_enabled()
            yield gradgen.is_anomaly_enabled()

        @gradgen.autograd.detect_anomaly()
        def fails() -> None:
            raise KeyError("inside")

    generator = steps()
    assert next(generator) is True
    assert gradgen.is_anomaly_enabled() is False  # off between the steps
    assert next(generator) is True
    with pytest.raises(KeyError):
        fails()
    assert gradgen.is_anomaly_enabled() is False


def test_dual_level_decorator() -> None:
    from gradgen.autograd import forward_ad

    @forward_ad.dual_level()
    def tangent_of_square(x: gradgen.Tensor) -> list[float]:
        dual = forward_ad.make_dual(x, gradgen.ones(2))
        return forward_ad.unpack_dual(dual * dual).tangent.tolist()  # type: ignore[union-attr]

    assert tangent_of_square(gradgen.tensor([1.0, 3.0])) == [2.0, 6.0]
    assert tangent_of_square(gradgen.tensor([2.0, 0.5])) == [4.0, 1.0]  # a new level

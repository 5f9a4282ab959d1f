"""Grad mode: whether operators record the graph, per thread.

`no_grad`, `enable_grad`, `set_grad_enabled` and `inference_mode` are context managers
and decorators, as in PyTorch. The flag lives in a `threading.local`, so a `no_grad`
block in one thread never changes what another thread records. The engine sets grad
mode to `create_graph` while it runs backward formulas, which is what makes
higher-order gradients work.

As decorators they change nothing when the function is decorated (even
`set_grad_enabled`, which as a plain call switches at once): each call of the
decorated function runs under the mode and restores the caller's afterwards, also
when it raises. A decorated generator function runs under the mode only while its
body runs, between the caller's `next()`/`send()` and the next `yield`, as PyTorch's.
`@no_grad`, `@enable_grad` and `@inference_mode` also work without parentheses.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Generator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _GradModeState(threading.local):
    enabled: bool = True


_state = _GradModeState()


def is_grad_enabled() -> bool:
    return _state.enabled


def _set_enabled(mode: bool) -> None:
    _state.enabled = mode


def python_type_name(value: object) -> str:
    """A type as PyTorch's argument errors print it: `int`, `Tensor`, `numpy.bool`."""
    cls = type(value)
    return f"numpy.{cls.__name__}" if cls.__module__ == "numpy" else cls.__name__


def check_bool_argument(function: str, name: str, position: int, value: object) -> bool:
    """PyTorch's TypeError for a `bool` parameter given anything else (0, 1, None...)."""
    if type(value) is not bool:
        raise TypeError(
            f"{function}(): argument '{name}' (position {position}) must be bool, not "
            f"{python_type_name(value)}"
        )
    return value


class DecoratorContext:
    """A context manager that is also a decorator.

    Each call of the decorated function runs inside a fresh copy (`clone()`) of the
    context; a generator function runs inside one only while its body executes.
    Subclasses define `__enter__`, `__exit__` and, if their constructor takes
    arguments, `clone`.
    """

    def clone(self) -> AbstractContextManager[Any]:
        return type(self)()

    def __enter__(self) -> Any:
        raise NotImplementedError

    def __exit__(self, *exc_info: object) -> None:
        raise NotImplementedError

    def __call__(self, function: F) -> F:
        make_context = self.clone
        if inspect.isgeneratorfunction(function):
            return wrap_generator(make_context, function)

        @functools.wraps(function)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with make_context():
                return function(*args, **kwargs)

        return decorated  # type: ignore[return-value]  # functools.wraps keeps F's signature


def wrap_generator(
    make_context: Callable[[], AbstractContextManager[Any]], function: F
) -> F:
    """`function` (a generator function) with each step of its body run inside a new
    context from `make_context`; the caller's code between steps runs outside it."""

    @functools.wraps(function)
    def generator(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        with make_context():
            inner = function(*args, **kwargs)
        request: Any = None
        thrown: BaseException | None = None
        while True:
            try:
                with make_context():
                    if thrown is None:
                        response = inner.send(request)
                    else:
                        error, thrown = thrown, None
                        response = inner.throw(error)
            except StopIteration as stop:
                return stop.value
            try:
                request = yield response
            except GeneratorExit:
                with make_context():
                    inner.close()
                raise
            except BaseException as error:  # thrown in by the caller: pass it on
                thrown = error

    return generator  # type: ignore[return-value]


class _GradModeContext(DecoratorContext):
    """Base of no_grad and enable_grad: sets grad mode to `_mode` while entered."""

    _mode: bool
    # One saved mode per entry, so nesting the same object restores correctly.
    _previous: list[bool]

    def __new__(cls, function: Callable[..., Any] | None = None) -> Any:
        # `with no_grad():` runs this and the two methods below only (no __init__:
        # the object is complete here). `@no_grad` without parentheses: decorate.
        if function is None:
            context = object.__new__(cls)
            context._previous = []
            return context
        return cls()(function)

    if TYPE_CHECKING:  # the signature type checkers read; nothing runs at a call

        def __init__(self, function: Callable[..., Any] | None = None) -> None: ...

    def __enter__(self) -> None:
        self._previous.append(_state.enabled)
        _state.enabled = self._mode

    def __exit__(self, *exc_info: object) -> None:
        _state.enabled = self._previous.pop()

    def __call__(self, function: F) -> F:
        if inspect.isgeneratorfunction(function):
            return wrap_generator(self.clone, function)
        return _with_mode(self._mode, function)


def _with_mode(mode: bool, function: F) -> F:
    """`function` run with grad mode `mode`, the caller's restored after (the fast
    path of the decorators: no context object per call)."""

    @functools.wraps(function)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        state = _state
        previous = state.enabled
        state.enabled = mode
        try:
            return function(*args, **kwargs)
        finally:
            state.enabled = previous

    return decorated  # type: ignore[return-value]  # functools.wraps keeps F's signature


class no_grad(_GradModeContext):
    """Disable gradient recording: ``with gradgen.no_grad(): ...``, ``@no_grad()`` or
    ``@no_grad``."""

    _mode = False


class enable_grad(_GradModeContext):
    """Enable gradient recording inside a `no_grad` region (also a decorator)."""

    _mode = True


class set_grad_enabled(DecoratorContext):
    """Set grad mode to `mode`. As a plain call it takes effect at once (and stays);
    as a context manager the block runs under `mode` and the mode from before the
    call is restored at its end; as a decorator it changes nothing until the
    decorated function runs."""

    def __init__(self, mode: bool) -> None:
        self._mode = check_bool_argument("set_grad_enabled", "enabled", 1, mode)
        self._previous = _state.enabled
        _state.enabled = mode

    def clone(self) -> set_grad_enabled:
        return set_grad_enabled(self._mode)

    def __enter__(self) -> None:
        _state.enabled = self._mode

    def __exit__(self, *exc_info: object) -> None:
        _state.enabled = self._previous

    def __call__(self, function: F) -> F:
        # Decorating is not calling: undo the switch the constructor made.
        _state.enabled = self._previous
        if inspect.isgeneratorfunction(function):
            return wrap_generator(self.clone, function)
        return _with_mode(self._mode, function)


class _InferenceModeState(threading.local):
    enabled: bool = False


_inference_state = _InferenceModeState()


def is_inference_mode_enabled() -> bool:
    return _inference_state.enabled


class inference_mode(DecoratorContext):
    """``with gradgen.inference_mode(): ...``, ``@inference_mode()`` or
    ``@inference_mode``: no graph is recorded, as under `no_grad`. PyTorch also marks
    the tensors made inside as inference tensors that autograd later refuses; gradgen
    does not mark them, so code that PyTorch accepts runs the same here.
    `inference_mode(False)` leaves inference mode and enables grad mode, as PyTorch's.
    """

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # `@inference_mode` without parentheses

    def __init__(self, mode: bool = True) -> None:
        self._mode = mode
        self._previous: list[tuple[bool, bool]] = []

    def clone(self) -> inference_mode:
        return inference_mode(self._mode)

    def __enter__(self) -> None:
        self._previous.append((_state.enabled, _inference_state.enabled))
        _state.enabled = not self._mode
        _inference_state.enabled = self._mode

    def __exit__(self, *exc_info: object) -> None:
        _state.enabled, _inference_state.enabled = self._previous.pop()

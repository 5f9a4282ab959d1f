"""gradgen.utils.checkpoint, as torch.utils.checkpoint: trade compute for memory.

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` without keeping the tensors
its operations save for backward; backward runs ``fn`` again to get them back.

- ``use_reentrant=False`` (recommended): built on saved-tensor hooks (see
  checkpoint_frame.py: holders, early stop, one recomputation per backward pass). The
  graph of the forward is recorded as usual, so ``autograd.grad`` and ``retain_graph``
  work. ``context_fn`` gives the contexts the forward and the recomputation run in;
  selective checkpointing (checkpoint_selective.py) is such a pair.
- ``use_reentrant=True``: ``fn`` runs under no_grad inside a custom Function; its
  backward re-runs ``fn`` with grad enabled and calls ``autograd.backward`` on it
  (a backward inside the backward), so it cannot serve ``autograd.grad``.

gradgen runs on the CPU only: the device functions (``get_device_states``,
``set_device_states``, ``DefaultDeviceType``) know the ``"cpu"`` device, which has no
per-device random state besides the global one checkpoint already keeps.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ContextManager

from .. import random as _random
from ..autograd import backward as _backward
from ..autograd.function import Function, FunctionCtx
from ..grad_mode import enable_grad, is_grad_enabled, no_grad
from ..graph import pop_saved_tensors_hooks, push_saved_tensors_hooks, task_state
from ..tensor import Tensor
from .checkpoint_debug import debug_context_and_callback
from .checkpoint_frame import METADATA_FNS, CheckpointFrame
from .checkpoint_frame import CheckpointError as CheckpointError
from .checkpoint_frame import GraphExecGroup as GraphExecGroup
from .checkpoint_selective import SAC_IGNORED_OPS as SAC_IGNORED_OPS
from .checkpoint_selective import CheckpointPolicy as CheckpointPolicy
from .checkpoint_selective import (
    SelectiveCheckpointContext as SelectiveCheckpointContext,
)
from .checkpoint_selective import (
    create_selective_checkpoint_contexts as create_selective_checkpoint_contexts,
)

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "get_device_states",
    "set_device_states",
    "noop_context_fn",
    "set_checkpoint_early_stop",
    "DefaultDeviceType",
    "set_checkpoint_debug_enabled",
    "CheckpointPolicy",
    "SelectiveCheckpointContext",
    "create_selective_checkpoint_contexts",
    "SAC_IGNORED_OPS",
    "GraphExecGroup",
]

USE_REENTRANT_WARNING = (
    "gradgen.utils.checkpoint: the use_reentrant parameter should be passed "
    "explicitly. Calling checkpoint without use_reentrant takes use_reentrant=True, "
    "as PyTorch does; use_reentrant=False is recommended. The two differ in what they "
    "support: see gradgen.utils.checkpoint's documentation."
)
REENTRANT_GRAD_ERROR = (
    "When use_reentrant=True, gradgen.utils.checkpoint is incompatible with .grad() "
    "or passing an `inputs` parameter to .backward(). To resolve this error, you can "
    "either set use_reentrant=False, or call .backward() without passing the `inputs` "
    "argument."
)
SUPPRESSED_ERROR = (
    "gradgen.utils.checkpoint: the forward context provided by context_fn suppressed "
    "an exception raised during the checkpointed forward. This is not supported "
    "because checkpoint cannot return a value for a failed forward."
)

ContextPair = tuple[ContextManager[Any], ContextManager[Any]]


# -- global switches -------------------------------------------------------------------


class _Switches:
    """The process-wide overrides of checkpoint's `debug` and `early_stop` (None: the
    call's own argument decides)."""

    debug: bool | None = None
    early_stop: bool | None = None


_switches = _Switches()


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Inside it, checkpoint's `debug` is `enabled` (None: each call's own)."""
    previous = _switches.debug
    _switches.debug = enabled
    try:
        yield
    finally:
        _switches.debug = previous


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Whether checkpoints whose forward runs inside it stop recomputing as soon as
    backward has every tensor it needs (the default) or run the whole function."""
    previous = _switches.early_stop
    _switches.early_stop = enable
    try:
        yield
    finally:
        _switches.early_stop = previous


# -- small public helpers ----------------------------------------------------------------


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """`inputs` with each tensor detached, keeping its requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    return tuple(
        x.detach().requires_grad_(x.requires_grad) if isinstance(x, Tensor) else x
        for x in inputs
    )


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn when no tensor among `inputs` requires grad."""
    if not any(x.requires_grad for x in inputs if isinstance(x, Tensor)):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None",
            stacklevel=2,
        )


class DefaultDeviceType:
    """The device type whose random states checkpoint keeps when no tensor argument
    names one: "cpu" (gradgen's only device) unless set."""

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


def get_device_states(*args: Any) -> tuple[list[int], list[Tensor]]:
    """The random states of the non-CPU devices of `args`' tensors: none in gradgen."""
    return [], []


def set_device_states(
    devices: Sequence[int], states: Sequence[Tensor], *, device_type: str | None = None
) -> None:
    """Set the random states of `devices`; gradgen has no device but the CPU, whose
    state is the global one (`gradgen.set_rng_state`)."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta" or not devices:
        return
    raise RuntimeError(
        "gradgen.utils.checkpoint.set_device_states: gradgen runs on the CPU only and "
        f"has no random state per device (got {device_type} devices {list(devices)}); "
        "set the CPU's with gradgen.set_rng_state"
    )


def noop_context_fn() -> ContextPair:
    """checkpoint's default `context_fn`: nothing around the forward or recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def _rng_state(state: Tensor | None) -> Iterator[None]:
    """Run with the random state `state` (None: as it is), restoring it after."""
    if state is None:
        yield
        return
    current = _random.get_rng_state()
    _random.set_rng_state(state)
    try:
        yield
    finally:
        _random.set_rng_state(current)


# -- checkpoint ------------------------------------------------------------------------------


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], ContextPair] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """`function(*args, **kwargs)`, whose saved tensors are recomputed in backward."""
    if use_reentrant is None:
        warnings.warn(USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when "
                "use_reentrant=False."
            )
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(
        function,
        preserve,
        context_fn,
        determinism_check,
        debug,
        early_stop,
        args,
        kwargs,
    )


def _checkpoint_without_reentrant(
    function: Callable[..., Any],
    preserve_rng_state: bool,
    context_fn: Callable[[], ContextPair],
    determinism_check: str,
    debug: bool,
    early_stop: bool,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    unpack_error_cb = None
    if _switches.debug if _switches.debug is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = debug_context_and_callback()
    if determinism_check not in METADATA_FNS:
        raise ValueError(
            f"determinism_check should be one of {list(METADATA_FNS)}, but got "
            f"{determinism_check}"
        )
    forward_context, recompute_context = context_fn()
    rng_state = _random.get_rng_state() if preserve_rng_state else None

    def recompute_fn(*inputs: Any) -> None:
        with _rng_state(rng_state), recompute_context:
            function(*inputs, **kwargs)

    frame = CheckpointFrame(
        recompute_fn,
        _switches.early_stop if _switches.early_stop is not None else early_stop,
        METADATA_FNS[determinism_check],
        unpack_error_cb,
    )
    if not is_grad_enabled():
        return function(*args, **kwargs)
    frame.saved_args = list(args)
    suppressed = True
    push_saved_tensors_hooks(frame.pack, frame.unpack)
    try:
        with forward_context:
            out = function(*args, **kwargs)
            suppressed = False
    finally:
        pop_saved_tensors_hooks()
    if suppressed:
        raise RuntimeError(SUPPRESSED_ERROR)
    frame.forward_completed = True
    return out


def checkpoint_sequential(
    functions: Any,
    segments: int,
    input: Any,
    use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Run `functions` (a Sequential or a list of modules) in `segments` chunks, each
    but the last checkpointed."""
    if use_reentrant is None:
        warnings.warn(USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    layers = (
        list(functions.children())
        if hasattr(functions, "children")
        else list(functions)
    )
    size = len(layers) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(
            _run_segment(layers[start : end + 1]),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve,
        )
    return _run_segment(layers[end + 1 :])(input)


def _run_segment(layers: Sequence[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    def run(input: Any) -> Any:
        for layer in layers:
            input = layer(input)
        return input

    return run


# -- use_reentrant=True --------------------------------------------------------------------


class CheckpointFunction(Function):
    @staticmethod
    def forward(
        ctx: FunctionCtx,
        run_function: Callable[..., Any],
        preserve_rng_state: bool,
        *args: Any,
    ) -> Any:
        ctx.run_function = run_function  # type: ignore[attr-defined]
        ctx.rng_state = _random.get_rng_state() if preserve_rng_state else None  # type: ignore[attr-defined]
        ctx.arguments = args  # type: ignore[attr-defined]
        check_backward_validity(args)
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        if task_state.exec_info is not None:
            raise RuntimeError(REENTRANT_GRAD_ERROR)
        inputs = detach_variable(tuple(ctx.arguments))  # type: ignore[attr-defined]
        with _rng_state(ctx.rng_state), enable_grad():  # type: ignore[attr-defined]
            outputs = ctx.run_function(*inputs)  # type: ignore[attr-defined]
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [
            (o, g)
            for o, g in zip(outputs, grads)
            if isinstance(o, Tensor) and o.requires_grad
        ]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not "
                "necessary"
            )
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (
            None,
            None,
            *[a.grad if isinstance(a, Tensor) else None for a in inputs],
        )

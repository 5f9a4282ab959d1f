"""gradgen.utils.checkpoint, as torch.utils.checkpoint: trade compute for memory.

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` without keeping the tensors
its operations save for backward; backward runs ``fn`` again to get them back.

- ``use_reentrant=False`` (recommended): built on saved-tensor hooks. The forward packs
  each saved tensor into a placeholder that remembers only its position, shape and
  dtype; the first unpack in backward re-runs ``fn`` (with the random state of the
  forward when ``preserve_rng_state``) under hooks that collect the tensors it saves,
  in order, and each placeholder unpacks to the tensor at its position. The graph of
  the forward is recorded as usual, so ``autograd.grad`` and ``retain_graph`` work.
- ``use_reentrant=True``: ``fn`` runs under no_grad inside a custom Function; its
  backward re-runs ``fn`` with grad enabled and calls ``autograd.backward`` on it
  (a backward inside the backward), so it cannot serve ``autograd.grad``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import random as _random
from ..autograd import backward as _backward
from ..autograd.function import Function, FunctionCtx
from ..autograd.graph import saved_tensors_hooks
from ..grad_mode import enable_grad, no_grad
from ..graph import task_state
from ..tensor import Tensor

__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential"]

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


class CheckpointError(RuntimeError):
    """The recomputation in backward did not save what the forward saved."""


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    preserve_rng_state: bool = True,
    determinism_check: str = "default",
    debug: bool = False,
    **kwargs: Any,
) -> Any:
    """`function(*args, **kwargs)`, whose saved tensors are recomputed in backward."""
    if use_reentrant is None:
        warnings.warn(USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(
            "determinism_check should be one of ['default', 'none'], but got "
            f"{determinism_check}"
        )
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    frame = _Frame(function, args, kwargs, preserve_rng_state, determinism_check)
    with saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


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
            **kwargs,
        )
    return _run_segment(layers[end + 1 :])(input)


def _run_segment(layers: Sequence[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    def run(input: Any) -> Any:
        for layer in layers:
            input = layer(input)
        return input

    return run


# -- use_reentrant=False -----------------------------------------------------------------


@dataclass(frozen=True)
class _Placeholder:
    """What the forward keeps of a saved tensor: its position, shape and dtype."""

    index: int
    shape: tuple[int, ...]
    dtype: Any


@dataclass
class _Frame:
    """One checkpointed call: what backward needs to run it again."""

    function: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    preserve_rng_state: bool
    determinism_check: str
    rng_state: Any = None
    placeholders: list[_Placeholder] = field(default_factory=list)
    recomputed: list[Tensor] | None = None

    def __post_init__(self) -> None:
        if self.preserve_rng_state:
            self.rng_state = _random.get_rng_state()

    def pack(self, tensor: Tensor) -> _Placeholder:
        placeholder = _Placeholder(
            len(self.placeholders), tuple(tensor.shape), tensor.dtype
        )
        self.placeholders.append(placeholder)
        return placeholder

    def unpack(self, placeholder: _Placeholder) -> Tensor:
        if self.recomputed is None:
            self.recomputed = self._recompute()
        return self.recomputed[placeholder.index]

    def _recompute(self) -> list[Tensor]:
        saved: list[Tensor] = []

        def collect(tensor: Tensor) -> None:
            saved.append(tensor.detach())

        current = _random.get_rng_state() if self.preserve_rng_state else None
        try:
            if self.preserve_rng_state:
                _random.set_rng_state(self.rng_state)
            with enable_grad(), saved_tensors_hooks(collect, _never_unpacked):
                self.function(*self.args, **self.kwargs)
        finally:
            if current is not None:
                _random.set_rng_state(current)
        self._check(saved)
        return saved

    def _check(self, saved: list[Tensor]) -> None:
        if len(saved) < len(self.placeholders):
            raise CheckpointError(
                "gradgen.utils.checkpoint: the recomputation saved "
                f"{len(saved)} tensors for backward, the forward {len(self.placeholders)}: "
                "the checkpointed function must do the same operations each time"
            )
        if self.determinism_check == "none":
            return
        differing = [
            f"tensor at position {p.index}:\n"
            f"saved metadata: {{'shape': {list(p.shape)}, 'dtype': {p.dtype}}}\n"
            f"recomputed metadata: {{'shape': {list(t.shape)}, 'dtype': {t.dtype}}}\n"
            for p, t in zip(self.placeholders, saved)
            if p.shape != tuple(t.shape) or p.dtype != t.dtype
        ]
        if differing:
            raise CheckpointError(
                "gradgen.utils.checkpoint: Recomputed values for the following tensors "
                "have different metadata than during the forward pass.\n"
                + "".join(differing)
            )


def _never_unpacked(packed: Any) -> Tensor:
    raise RuntimeError(
        "gradgen.utils.checkpoint: a tensor saved during recomputation was unpacked"
    )


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
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn(
                "None of the inputs have requires_grad=True. Gradients will be None",
                stacklevel=4,
            )
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        if task_state.exec_info is not None:
            raise RuntimeError(REENTRANT_GRAD_ERROR)
        inputs = [
            a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
            for a in ctx.arguments  # type: ignore[attr-defined]
        ]
        state = ctx.rng_state  # type: ignore[attr-defined]
        current = _random.get_rng_state() if state is not None else None
        try:
            if state is not None:
                _random.set_rng_state(state)
            with enable_grad():
                outputs = ctx.run_function(*inputs)  # type: ignore[attr-defined]
        finally:
            if current is not None:
                _random.set_rng_state(current)
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

"""Custom autograd Functions inside gradgen.func transforms, as torch.func runs them.

Inside a transform (grad, vjp, jacrev, vmap, ...) `Function.apply` asks this module
(through autograd's slots: autograd sits below func):

- a Function must define ``setup_context`` (forward without ctx), else PyTorch's error;
- under vmap, with an argument batched at the innermost level:
  * a ``vmap`` staticmethod runs: ``vmap(info, in_dims, *args)`` gets the arguments
    unwrapped (the batch where ``in_dims`` says, 0 or None) and returns
    ``(outputs, out_dims)``; the outputs are wrapped back at their out_dims;
  * ``generate_vmap_rule = True`` builds that rule: the Function is applied once on
    the unwrapped batch as a new Function whose forward, setup_context and backward
    run the user's under vmap. The node is recorded on the whole batch (as every
    batched operator's), and the tensors saved by ``setup_context`` are kept unwrapped
    and rewrapped for ``backward``, so backward may run after the vmap returned.
  * neither: PyTorch's error; both: PyTorch's error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ..autograd._transform_slots import slots
from ..autograd.function import Function
from ..factories import zeros
from ..generated import ops
from ..tensor import Tensor
from .batching import (
    BatchedTensor,
    batch_size,
    innermost_level,
    is_batched,
    top_level,
    unwrap,
)
from .vmap import vmap

EXTENDING = "https://pytorch.org/docs/main/notes/extending.func.html"


class VmapInfo(NamedTuple):
    """What a Function's vmap staticmethod learns about the vmap it runs in."""

    batch_size: int
    randomness: str


def _overrides_vmap(cls: type[Function]) -> bool:
    return getattr(cls, "vmap") is not getattr(Function, "vmap")


def _wrap_outputs(output: Any, out_dims: Any, level: int, name: str) -> Any:
    """The vmap staticmethod's outputs as BatchedTensors (batch moved to the front)."""
    single = isinstance(output, Tensor)
    outputs = (output,) if single else tuple(output)
    dims = (out_dims,) if isinstance(out_dims, int) or out_dims is None else out_dims
    if len(dims) == 1 and len(outputs) > 1:
        dims = dims * len(outputs)
    if not isinstance(dims, tuple) or len(dims) != len(outputs):
        raise ValueError(
            f"The vmap staticmethod of {name} returned out_dims {out_dims!r}, which do "
            f"not match its {len(outputs)} outputs"
        )
    wrapped = tuple(
        (
            BatchedTensor(ops.movedim(o, d, 0), level)
            if isinstance(o, Tensor) and d is not None
            else o
        )
        for o, d in zip(outputs, dims)
    )
    return wrapped[0] if single else wrapped


def _user_vmap(cls: type[Function], level: int, args: tuple[Any, ...]) -> Any:
    in_dims = tuple(0 if is_batched(a, level) else None for a in args)
    unwrapped = [unwrap(a, level) for a in args]
    info = VmapInfo(batch_size(level), "error")
    result = cls.vmap(info, in_dims, *unwrapped)
    if not isinstance(result, tuple) or len(result) != 2:
        raise RuntimeError(
            "Expected the vmap staticmethod to have two returns, an output and "
            f"out_dims with pytree structure compatible with the output. Got: {result}"
        )
    return _wrap_outputs(result[0], result[1], level, cls.__name__)


class _SavedCtx:
    """The ctx the user's setup_context/backward sees under the generated rule: the
    real node, except that saved tensors are kept unwrapped (and the level's flags)."""

    def __init__(self, node: Any, level: int | None) -> None:
        object.__setattr__(self, "_node", node)
        object.__setattr__(self, "_level", level)

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        level = self._level
        flags = tuple(level is not None and is_batched(t, level) for t in tensors)
        self._node.save_for_backward(*(unwrap(t, level) for t in tensors))
        self._node._vmap_saved_batched = flags

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        saved = self._node.saved_tensors
        flags = self._node.__dict__.get("_vmap_saved_batched", (False,) * len(saved))
        level = self._level
        return tuple(
            BatchedTensor(t, level) if flag and level is not None else t
            for t, flag in zip(saved, flags)
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._node, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._node, name, value)


def _generated_rule(cls: type[Function], level: int, args: tuple[Any, ...]) -> Any:
    """The Function applied once on the batch: forward, setup_context and backward
    run the user's under vmap (see the module docstring)."""
    in_dims = tuple(0 if is_batched(a, level) else None for a in args)
    unwrapped = tuple(unwrap(a, level) for a in args)
    batched_function = _vmapped_function(cls, in_dims)
    output = batched_function.apply(*unwrapped)
    single = isinstance(output, Tensor)
    outputs = (output,) if single else tuple(output)
    wrapped = tuple(
        BatchedTensor(o, level) if isinstance(o, Tensor) else o for o in outputs
    )
    return wrapped[0] if single else wrapped


def _as_batch(output: Any) -> Any:
    return tuple(output) if isinstance(output, (tuple, list)) else output


def _unbatch(grad: Tensor, in_dim: int | None) -> Tensor:
    """A batch of gradients for an input: summed over the batch when the input was
    the same for every example."""
    return grad if in_dim is not None else ops.sum(grad, [0])


def _vmapped_function(
    cls: type[Function], in_dims: tuple[int | None, ...]
) -> type[Function]:
    """A Function on the unwrapped batch whose pieces run `cls`'s under vmap."""

    def forward(*xs: Any) -> Any:
        return vmap(lambda *a: _as_batch(cls.forward(*a)), in_dims, 0)(*xs)

    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        outputs = output if isinstance(output, tuple) else (output,)
        out_dims = tuple(0 if isinstance(o, Tensor) else None for o in outputs)

        def run(*values: Any) -> Tensor:
            level = innermost_level()
            xs, outs = values[: len(inputs)], values[len(inputs) :]
            out = outs if isinstance(output, tuple) else outs[0]
            cls.setup_context(_SavedCtx(ctx, level), xs, out)
            return zeros([])  # vmap needs an output

        vmap(run, in_dims + out_dims, 0)(*inputs, *outputs)

    def backward(ctx: Any, *grads: Any) -> Any:
        present: list[bool] = []

        def run(*values: Any) -> Any:
            found = cls.backward(_SavedCtx(ctx, innermost_level()), *values)
            found = found if isinstance(found, tuple) else (found,)
            present[:] = [isinstance(g, Tensor) for g in found]
            return tuple(g for g in found if isinstance(g, Tensor))

        with_batch = iter(vmap(run, 0, 0)(*grads))
        return tuple(
            _unbatch(next(with_batch), dim) if here else None
            for here, dim in zip(present, in_dims)
        )

    return type(
        "Vmapped" + cls.__name__,
        (Function,),
        {
            "forward": staticmethod(forward),
            "setup_context": staticmethod(setup_context),
            "backward": staticmethod(backward),
        },
    )


def function_vmap(cls: type[Function], args: tuple[Any, ...]) -> Any:
    """Function.apply inside vmap (NotImplemented: nothing batched, apply as usual)."""
    level = top_level(args)
    if level is None:
        return NotImplemented
    name = cls.__name__
    if getattr(cls, "generate_vmap_rule", False):
        if _overrides_vmap(cls):
            raise RuntimeError(
                f"You tried to vmap over {name}, but it has both generate_vmap_rule=True "
                "and an overridden vmap staticmethod. Please set "
                "generate_vmap_rule=False or delete the overridden vmap staticmethod "
                f"to avoid ambiguity. For more details, please see {EXTENDING}"
            )
        return _generated_rule(cls, level, args)
    if not _overrides_vmap(cls):
        raise RuntimeError(
            f"You tried to vmap over {name}, but it does not have vmap support. Please "
            "override and implement the vmap staticmethod or set "
            f"generate_vmap_rule=True. For more details, please see {EXTENDING}"
        )
    return _user_vmap(cls, level, args)


def install(transform_active: Callable[[], bool]) -> None:
    slots.function_vmap = function_vmap
    slots.transform_active = transform_active

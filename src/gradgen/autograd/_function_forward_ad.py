"""Forward-mode AD through a custom ``Function``: its ``jvp`` staticmethod.

As PyTorch: ``forward`` runs with forward AD switched off (its operators compute no
tangents of their own), then, when an argument carries a tangent at the open level,
``jvp(ctx, *tangents)`` is called with one entry per forward argument (the tangent,
zeros for a Tensor without one while ``ctx.materialize_grads``, None for the rest) and
must return one tangent (or None) per forward output. Inside ``jvp``,
``ctx.saved_tensors`` gives what ``ctx.save_for_forward`` saved.
"""

from __future__ import annotations

from typing import Any

from ..dispatch import forward_ad_levels
from ..tensor import Tensor
from .forward_ad import in_jvp, set_fw_grad, tangent_size_error

JVP_COUNT_ERROR = (
    "Function's jvp returned an invalid number of forward gradients "
    "(expected {expected} but got {got})"
)
JVP_NOT_DIFFERENTIABLE_ERROR = (
    "Function's jvp returned a gradient at position {index}, but  the corresponding "
    "forward output is not a differentiable Tensor.You should return None at that "
    "position instead."
)


def forward_ad_open() -> bool:
    """Whether a forward-AD level is open (forward then runs without tangents)."""
    return bool(forward_ad_levels.count) and not in_jvp()


def has_tangent(args: tuple[Any, ...]) -> bool:
    return any(isinstance(arg, Tensor) and arg._fw_grad is not None for arg in args)


def input_tangents(ctx: Any, args: tuple[Any, ...]) -> list[Tensor | None]:
    tangents: list[Tensor | None] = []
    for arg in args:
        if not isinstance(arg, Tensor):
            tangents.append(None)
        elif arg._fw_grad is not None:
            tangents.append(arg._fw_grad)
        elif ctx.materialize_grads and arg._data.dtype.kind in "fc":
            tangents.append(arg.new_zeros(arg._data.shape))
        else:
            tangents.append(None)
    return tangents


def run_jvp(
    ctx: Any,
    args: tuple[Any, ...],
    outputs: tuple[Any, ...],
    differentiable: tuple[bool, ...],
) -> None:
    """Call the user's jvp and attach its tangents to `outputs`."""
    saved = ctx.__dict__.get("saved_for_forward")
    ctx._forward_saved = tuple(saved) if saved is not None else None
    try:
        result = ctx._forward_cls.jvp(ctx, *input_tangents(ctx, args))
    finally:
        ctx.__dict__.pop("_forward_saved", None)
    tangents = result if isinstance(result, tuple) else (result,)
    if len(tangents) != len(outputs):
        raise RuntimeError(
            JVP_COUNT_ERROR.format(expected=len(outputs), got=len(tangents))
        )
    for index, (output, tangent) in enumerate(zip(outputs, tangents)):
        if tangent is None:
            continue
        if not isinstance(tangent, Tensor):
            raise RuntimeError(
                f"expected Variable or None (got {type(tangent).__name__}) for grad "
                f"output {index}."
            )
        if not differentiable[index]:
            raise RuntimeError(JVP_NOT_DIFFERENTIABLE_ERROR.format(index=index))
        if tangent._data.shape != output._data.shape:
            raise tangent_size_error(output, tangent)
        set_fw_grad(output, tangent)

"""Forward-mode AD: dual tensors and the tangents generated operators propagate.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        primal_out, tangent_out = forward_ad.unpack_dual(y)

A tangent lives on its tensor (`Tensor._fw_grad`) only while the dual level is open:
leaving the level deletes every tangent it created. Each generated operator checks its
inputs' tangents (a slot read, so code that never uses forward AD pays almost nothing)
and, when one is set, runs the JVP generated from its derivatives.yaml `result:`
formula. While that JVP runs, nested operators do not compute JVPs of their own
(`in_jvp`), as PyTorch computes formulas on primals without tangents.
Only one level exists at a time, as in PyTorch ("Nested forward mode AD is not
supported at the moment").
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from ..dispatch import forward_ad_levels
from ..grad_mode import DecoratorContext
from ..tensor import Tensor


class _LevelState(threading.local):
    level: int | None = None
    computing_jvp: bool = False


_state = _LevelState()
# The tensors that carry a tangent at the current level, so leaving it can clear them.
_dual_tensors: weakref.WeakValueDictionary[int, Tensor] = weakref.WeakValueDictionary()


class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the primal and its tangent (None without one)."""

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    if _state.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _state.level = 0
    forward_ad_levels.count += 1
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    if _state.level is None or (level is not None and level != _state.level):
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    for tensor in list(_dual_tensors.values()):
        tensor._fw_grad = None
    _dual_tensors.clear()
    _state.level = None
    forward_ad_levels.count -= 1


class dual_level(DecoratorContext):
    """Open a forward-AD level for the duration of the block (``with dual_level():``
    gives the level) or of each call of a decorated function, as PyTorch's."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc_info: object) -> None:
        exit_dual_level()


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of `tensor` that carries `tangent` as its forward gradient."""
    if _state.level is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure "
            "to enter_dual_level() first."
        )
    for name, value in (("primal", tensor), ("tangent", tangent)):
        if value._data.dtype.kind not in "fc":
            raise ValueError(
                f"Expected {name} to be floating point or complex, but got: {value.dtype}"
            )
    if tangent._data.shape != tensor._data.shape:
        raise tangent_size_error(tensor, tangent)
    dual = tensor.view(tensor._data.shape)
    set_fw_grad(dual, tangent)
    return dual


def tangent_size_error(tensor: Tensor, tangent: Tensor) -> RuntimeError:
    """PyTorch's error for a tangent whose shape is not its tensor's."""
    return RuntimeError(
        "Trying to set a forward gradient that has a different size than that of the "
        "original Tensor, this is not supported. Tensor is of size "
        f"{list(tensor._data.shape)} while the given forward gradient is of size "
        f"{list(tangent._data.shape)}."
    )


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """The primal (a view without the tangent) and the tangent of `tensor`."""
    tangent = tensor._fw_grad if _state.level is not None else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    previous, _state.computing_jvp = _state.computing_jvp, True
    try:
        primal = tensor.view(tensor._data.shape)
    finally:
        _state.computing_jvp = previous
    return UnpackedDualTensor(primal, tangent)


# -- what generated code calls -----------------------------------------------------------


def in_jvp() -> bool:
    """Whether a JVP formula is running (its operators compute no JVPs of their own)."""
    return _state.computing_jvp


@contextmanager
def computing_jvp() -> Iterator[None]:
    previous, _state.computing_jvp = _state.computing_jvp, True
    try:
        yield
    finally:
        _state.computing_jvp = previous


def tangent_or_zeros(tensor: Tensor | None) -> Tensor | None:
    """An input's tangent, or zeros of its shape when it has none (PyTorch uses an
    efficient zero tensor there)."""
    if tensor is None:
        return None
    tangent = tensor._fw_grad
    if tangent is not None:
        return tangent
    return Tensor(np.zeros_like(tensor._data))


def set_fw_grad(tensor: Tensor, tangent: Any) -> None:
    """Attach a computed tangent (cast to the tensor's dtype, as PyTorch does)."""
    if tangent is None:
        return
    if not isinstance(tangent, Tensor):
        raise RuntimeError("a forward formula must return a Tensor")
    if tangent._data.shape != tensor._data.shape:
        tangent = tangent.expand(tensor._data.shape)
    if tangent._data.dtype != tensor._data.dtype:
        if tangent.is_complex() and not tensor.is_complex():
            tangent = tangent.real
        tangent = Tensor(tangent._data.astype(tensor._data.dtype))
    tensor._fw_grad = tangent
    _dual_tensors[id(tensor)] = tensor


def forward_ad_not_implemented(operator: str) -> RuntimeError:
    return RuntimeError(
        f"Trying to use forward AD with {operator} that does not support it because it "
        "has not been implemented yet.\nAdd a `result:` formula to its entry in "
        "derivatives.yaml (or `result: auto_element_wise` / `auto_linear`)."
    )


__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]

"""Composite operators: implemented with other operators, so they need no formula.

These are PyTorch's CompositeImplicitAutograd functions. native_functions.yaml names
them with ``composite: NAME``; the generated function and method call the function of
that name here, and autograd records whatever operators it calls.
"""

from __future__ import annotations

from .tensor import Tensor


def conj(self: Tensor) -> Tensor:
    """The complex conjugate; a real tensor is returned as it is (no graph node)."""
    if not self.is_complex():
        return self
    return self._conj()  # type: ignore[attr-defined,no-any-return]

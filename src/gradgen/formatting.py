"""Render a tensor's ``repr`` the way PyTorch 2.13 does, on top of numpy.

The single public entry point, :func:`format_tensor`, takes the tensor's data as
a numpy array plus a little metadata (its dtype name, the current default float
dtype, and an optional autograd suffix) and returns the text PyTorch's
``repr(tensor)`` would print with its default print options (precision 4,
threshold 1000, edgeitems 3, linewidth 80), except that dtype names are spelt
``gradgen.<name>`` instead of ``torch.<name>``.

The rules reproduced here (learned from reading ``torch/_tensor_str.py``):

* Per tensor (per real and imaginary part for complex tensors) a formatter looks
  at the finite, non-zero values (only the shown edge values when the tensor is
  summarized).  Floating tensors whose such values are all whole numbers print
  in "integer mode" (``2.``, ``-28.``); otherwise values print in fixed notation
  with 4 decimals, or in scientific notation when the largest/smallest
  magnitude ratio exceeds 1000, the largest magnitude exceeds 1e8 or the
  smallest is below 1e-4.  Every element is left-padded to a common width.
* Rows are wrapped so that a line holds ``(80 - indent) // element_width``
  elements, where the element width includes the ``", "`` separator.
* Tensors with more than 1000 elements are summarized: every dimension longer
  than 6 keeps its first and last 3 entries around a ``...`` marker.
* ``dtype=...`` is appended unless the dtype is the default float dtype, its
  matching complex dtype, ``int64`` or ``bool`` (empty tensors show every dtype
  other than the default float dtype, and a ``size=`` for non 1-d shapes).
* Trailing ``key=value`` parts move to a new line when they would push the last
  line past 80 columns.  That decision is made with torch's spelling
  (``torch.float64``), so the result is textually identical to torch's repr
  after replacing ``torch.`` by ``gradgen.``.

This module depends only on numpy and the standard library so that it can be
loaded in isolation (for instance with :mod:`importlib` from its file path).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["format_tensor"]

# PyTorch's default print options.
_PRECISION = 4
_THRESHOLD = 1000
_EDGEITEMS = 3
_LINEWIDTH = 80

_PREFIX = "tensor("
# How torch spells a dtype in the repr, and how this project spells it.
_TORCH_NAMESPACE = "torch."
_OUR_NAMESPACE = "gradgen."


class _ElementFormatter:
    """Decides how the scalars of one real-valued (or int/bool) array print.

    ``values`` holds every value that will be displayed (already reduced to the
    edge items when the tensor is summarized).
    """

    def __init__(self, values: np.ndarray) -> None:
        self.floating = bool(np.issubdtype(values.dtype, np.floating))
        self.int_mode = True
        self.sci_mode = False
        self.width = 1

        flat = values.reshape(-1)
        if not self.floating:
            for item in flat.tolist():
                self.width = max(self.width, len(str(item)))
            return

        shown = flat[np.isfinite(flat) & (flat != 0)]
        if shown.size == 0:
            return

        magnitudes = np.abs(shown).astype(np.float64)
        smallest = float(magnitudes.min())
        largest = float(magnitudes.max())
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        with np.errstate(over="ignore"):
            ratio = float(np.float64(largest) / np.float64(smallest))
        self.sci_mode = ratio > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4

        for item in shown.tolist():
            if self.sci_mode:
                text = f"{item:.{_PRECISION}e}"
            elif self.int_mode:
                # Room for the trailing "." that marks a whole float.
                text = f"{item:.0f}" + "."
            else:
                text = f"{item:.{_PRECISION}f}"
            self.width = max(self.width, len(text))

    def format(self, item: Any) -> str:
        """Render one Python scalar, left-padded to the common width."""
        if not self.floating:
            text = str(item)
        elif self.sci_mode:
            text = f"{item:{self.width}.{_PRECISION}e}"
        elif self.int_mode:
            text = f"{item:.0f}"
            if math.isfinite(item):
                text += "."
        else:
            text = f"{item:.{_PRECISION}f}"
        return text.rjust(self.width)


class _Layout:
    """Renders the bracketed body of a non-empty tensor."""

    def __init__(
        self,
        summarize: bool,
        real: _ElementFormatter,
        imag: _ElementFormatter | None = None,
    ) -> None:
        self.summarize = summarize
        self.real = real
        self.imag = imag

    def scalar(self, item: Any) -> str:
        if self.imag is None:
            return self.real.format(item)
        real_text = self.real.format(item.real)
        imag_text = (self.imag.format(item.imag) + "j").lstrip()
        if imag_text[0] in "+-":
            return real_text + imag_text
        return real_text + "+" + imag_text

    def element_width(self) -> int:
        # Each element is followed by ", " (or ",\n"); complex adds "j".
        width = self.real.width + 2
        if self.imag is not None:
            width += self.imag.width + 1
        return width

    def render(self, array: np.ndarray, indent: int) -> str:
        if array.ndim == 0:
            return self.scalar(array.item())
        if array.ndim == 1:
            return self._vector(array, indent)

        count = array.shape[0]
        if self.summarize and count > 2 * _EDGEITEMS:
            head = [self.render(array[i], indent + 1) for i in range(_EDGEITEMS)]
            tail = [
                self.render(array[i], indent + 1)
                for i in range(count - _EDGEITEMS, count)
            ]
            parts = head + ["..."] + tail
        else:
            parts = [self.render(array[i], indent + 1) for i in range(count)]
        separator = "," + "\n" * (array.ndim - 1) + " " * (indent + 1)
        return "[" + separator.join(parts) + "]"

    def _vector(self, array: np.ndarray, indent: int) -> str:
        per_line = max(1, (_LINEWIDTH - indent) // self.element_width())
        count = array.shape[0]
        if self.summarize and count > 2 * _EDGEITEMS:
            items = (
                [self.scalar(v) for v in array[:_EDGEITEMS].tolist()]
                + [" ..."]
                + [self.scalar(v) for v in array[-_EDGEITEMS:].tolist()]
            )
        else:
            items = [self.scalar(v) for v in array.tolist()]
        lines = [
            ", ".join(items[start : start + per_line])
            for start in range(0, len(items), per_line)
        ]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _edge_values(array: np.ndarray) -> np.ndarray:
    """Keep only the entries a summarized print shows (first/last edge items)."""
    for axis, size in enumerate(array.shape):
        if size > 2 * _EDGEITEMS:
            keep = list(range(_EDGEITEMS)) + list(range(size - _EDGEITEMS, size))
            array = np.take(array, keep, axis=axis)
    return array


def _body(array: np.ndarray, indent: int) -> str:
    summarize = array.size > _THRESHOLD
    shown = _edge_values(array) if summarize else array
    if np.iscomplexobj(array):
        layout = _Layout(
            summarize,
            _ElementFormatter(np.ascontiguousarray(shown.real)),
            _ElementFormatter(np.ascontiguousarray(shown.imag)),
        )
    else:
        layout = _Layout(summarize, _ElementFormatter(shown))
    return layout.render(array, indent)


def _join_suffixes(text: str, suffixes: Sequence[tuple[str, int]], indent: int) -> str:
    """Append ``(text, measured_length)`` suffixes and the closing parenthesis."""
    pieces = [text]
    # Mirrors torch's bookkeeping, including its "+ 1" on the last line length.
    line_length = len(text) - text.rfind("\n") + 1
    for suffix, length in suffixes:
        if line_length + length + 2 > _LINEWIDTH:
            pieces.append(",\n" + " " * indent + suffix)
            line_length = indent + length
        else:
            pieces.append(", " + suffix)
            line_length += length + 2
    pieces.append(")")
    return "".join(pieces)


def _bare_dtype_name(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _coerce(array: Any, dtype_name: str) -> np.ndarray:
    data = np.asarray(array)
    try:
        wanted = np.dtype(dtype_name)
    except TypeError:
        return data
    if data.dtype != wanted:
        data = data.astype(wanted)
    if data.dtype.kind == "V":  # ml_dtypes' bfloat16: its values print as floats
        data = data.astype(np.float32)
    return data


def format_tensor(
    array: np.ndarray,
    *,
    dtype_name: str,
    default_dtype_name: str,
    suffix: str | None = None,
) -> str:
    """Return the repr PyTorch 2.13 prints for a tensor holding ``array``.

    Args:
        array: the tensor's values; converted to ``dtype_name`` if its numpy
            dtype differs.
        dtype_name: the tensor's dtype, e.g. ``"float32"`` or ``"int64"``
            (a ``torch.``/``gradgen.`` prefix is tolerated).
        default_dtype_name: the current default float dtype, ``"float32"`` or
            ``"float64"``.
        suffix: an autograd annotation such as ``"grad_fn=<SubBackward0>"`` or
            ``"requires_grad=True"``, appended after every other part.

    Returns:
        e.g. ``"tensor([1., 2.], dtype=gradgen.float64, requires_grad=True)"``.
    """
    dtype = _bare_dtype_name(dtype_name)
    default = _bare_dtype_name(default_dtype_name)
    data = _coerce(array, dtype)
    indent = len(_PREFIX)

    dtype_suffix = (
        "dtype=" + _OUR_NAMESPACE + dtype,
        len("dtype=" + _TORCH_NAMESPACE + dtype),
    )
    suffixes: list[tuple[str, int]] = []
    if data.size == 0:
        if data.ndim != 1:
            size_text = "size=" + str(tuple(int(n) for n in data.shape))
            suffixes.append((size_text, len(size_text)))
        if dtype != default:
            suffixes.append(dtype_suffix)
        body = "[]"
    else:
        default_complex = "complex128" if default == "float64" else "complex64"
        if dtype not in (default, default_complex, "int64", "bool"):
            suffixes.append(dtype_suffix)
        body = _body(data, indent)
    if suffix:
        suffixes.append((suffix, len(suffix)))
    return _join_suffixes(_PREFIX + body, suffixes, indent)

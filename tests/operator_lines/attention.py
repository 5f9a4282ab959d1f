"""Operator-table lines of the attention family of native_functions.yaml."""

from __future__ import annotations

from typing import Any

from .common import Line, _f


def _attention(lib: Any, q: Any, k: Any, v: Any, mask: Any) -> Any:
    """Both outputs of the math attention (output and weights), with a float mask
    that broadcasts over the batch, and a causal call."""
    output, weights = _f("_scaled_dot_product_attention_math")(lib)(
        q, k, v, mask, scale=0.7
    )
    causal, _ = _f("_scaled_dot_product_attention_math")(lib)(q, k, v, is_causal=True)
    return output.sum(-1) + weights.sum(-1) * weights[..., 0] + causal.sum(-1)


LINES: dict[str, Line] = {
    "_scaled_dot_product_attention_math": Line(
        _attention, ((2, 3, 4), (2, 3, 4), (2, 3, 2), (3, 3))
    ),
}

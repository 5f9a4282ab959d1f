"""Composites of the attention family: PyTorch's math attention
(`_scaled_dot_product_attention_math`, the path its CPU takes), built from matmul,
softmax and dropout, so its gradients are those operators' (double backward and
forward mode included).

softmax(q k^T * scale + mask) v, where rows whose scores are all -inf (every key
masked) give zeros instead of NaN, as PyTorch's `_safe_softmax`.
"""

from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)

__all__ = ["_scaled_dot_product_attention_math"]


def _scaled_dot_product_attention_math(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    dropout_mask: Tensor | None = None,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> tuple[Tensor, Tensor]:
    """(attention output, attention weights). The scale (1/sqrt(E) by default) is split
    as sqrt(scale) on q and on k, as PyTorch does for stability; a bool attn_mask is
    added as 0/1 here (scaled_dot_product_attention converts it to 0/-inf first);
    `dropout_mask` (True: keep) replaces the random mask when dropout_p > 0."""
    negative = scale is not None and scale < 0
    magnitude = abs(scale) if scale is not None else 1.0 / math.sqrt(query.shape[-1])
    factor = math.sqrt(magnitude)
    scaled_query = query * (-factor if negative else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set "
                "when is_causal=True"
            )
        attn_mask = _causal_mask(query.shape[-2], key.shape[-2], query._data.dtype)
    key, value = _expand_groups(query, key, value, enable_gqa)
    attn = ops.matmul(scaled_query, key.transpose(-2, -1) * factor)
    if attn_mask is not None:
        attn = attn + attn_mask
    attn = _safe_softmax(attn)
    if dropout_p > 0.0:
        if dropout_mask is not None:
            attn = attn.masked_fill(dropout_mask.logical_not(), 0.0)
            return ops.matmul(attn, value * (1.0 / (1 - dropout_p))), attn
        attn = ops.dropout(attn, dropout_p, True)
    return ops.matmul(attn, value), attn


def _causal_mask(rows: int, columns: int, dtype: np.dtype) -> Tensor:
    """0 on and below the diagonal, -inf above it: (rows, columns), of `dtype`."""
    keep = np.tril(np.ones((rows, columns), bool))
    return Tensor(np.where(keep, 0.0, -np.inf).astype(dtype))


def _safe_softmax(scores: Tensor) -> Tensor:
    """softmax over the last dimension, zeros for the rows that are all -inf. Those
    rows are set to 0 before the softmax too, so no NaN reaches the gradients. Under
    vmap (a BatchedTensor) the dead rows are found by operators, each example's own."""
    if type(scores) is Tensor:
        dead = np.all(np.isneginf(scores._data), axis=-1, keepdims=True)
        if not dead.any():
            return ops.softmax(scores, -1)
        rows = Tensor(dead)
    else:
        rows = scores.eq(-math.inf).all(-1, keepdim=True)
    return ops.softmax(scores.masked_fill(rows, 0.0), -1).masked_fill(rows, 0.0)


def _expand_groups(
    query: Tensor, key: Tensor, value: Tensor, enable_gqa: bool
) -> tuple[Tensor, Tensor]:
    """Grouped-query attention: each of key's and value's heads (dimension -3)
    repeated so that they have as many as query (repeat_interleave)."""
    if not enable_gqa:
        return key, value
    heads = query.shape[-3]
    key_heads, value_heads = key.shape[-3], value.shape[-3]
    if heads == key_heads == value_heads:
        return key, value
    if heads % key_heads or heads % value_heads:
        raise RuntimeError(
            "Number of heads in key and value must divide the number of heads in query"
        )
    return _repeat_heads(key, heads // key_heads), _repeat_heads(
        value, heads // value_heads
    )


def _repeat_heads(tensor: Tensor, repeats: int) -> Tensor:
    """tensor.repeat_interleave(repeats, dim=-3)."""
    shape = tuple(tensor.shape)
    batch, heads, tail = shape[:-3], shape[-3], shape[-2:]
    spread = tensor.unsqueeze(-3).expand(*batch, heads, repeats, *tail)
    return spread.reshape(*batch, heads * repeats, *tail)

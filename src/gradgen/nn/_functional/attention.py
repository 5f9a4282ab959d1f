"""torch.nn.functional's attention: scaled_dot_product_attention (over the math
composite `_scaled_dot_product_attention_math`, PyTorch's CPU path) and
multi_head_attention_forward (nn.MultiheadAttention's computation).

Masks follow PyTorch's two conventions: scaled_dot_product_attention's bool attn_mask
says where attention is *allowed* (True: take part), while multi_head_attention_forward's
bool masks (attn_mask, key_padding_mask) say where it is *not* (True: masked). Float
masks are added to the scores in both.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from gradgen.dtypes import from_numpy, spelling
from gradgen.generated import ops
from gradgen.tensor import Size, Tensor

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


# -- scaled_dot_product_attention --------------------------------------------------------


def _validate_sdpa_input(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None
) -> None:
    """PyTorch's validate_sdpa_input: one dtype, at least 2-D, a bool or float mask."""
    names = [spelling(tensor.dtype).typeid for tensor in (query, key, value)]
    if len(set(names)) != 1:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got "
            f"query.dtype: {names[0]} key.dtype: {names[1]} and value.dtype: "
            f"{names[2]} instead."
        )
    if min(query.dim(), key.dim(), value.dim()) < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()} key.dim: {key.dim()} and value.dim: "
            f"{value.dim()} instead."
        )
    if attn_mask is None:
        return
    mask_name = spelling(attn_mask.dtype).typeid
    if mask_name not in ("bool", "float", names[0]):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but "
            f"got attn_mask.dtype: {mask_name} and  query.dtype: {names[0]} instead."
        )


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value over the last two dimensions
    (scale 1/sqrt(E) by default). A bool attn_mask keeps the True positions; a float one
    is added; is_causal masks the keys after each query; dropout_p drops attention
    weights (gradgen's generator); enable_gqa lets key and value have fewer heads
    (dimension -3) than query, each shared by a group of query heads."""
    _validate_sdpa_input(query, key, value, attn_mask)
    if attn_mask is not None and attn_mask.dtype.name == "bool":
        attn_mask = _additive_mask(attn_mask, True, query._data.dtype)
    output, _ = ops._scaled_dot_product_attention_math(
        query,
        key,
        value,
        attn_mask,
        dropout_p,
        is_causal,
        None,
        scale=scale,
        enable_gqa=enable_gqa,
    )
    return output


# -- multi_head_attention_forward: checks -----------------------------------------------


def _mha_shape_check(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    """Whether the input is batched (3-D query) or not (2-D), the other tensors' ranks
    checked to agree (PyTorch's messages)."""
    if query.dim() not in (2, 3):
        raise AssertionError(
            "query should be unbatched 2D or batched 3D tensor but received "
            f"{query.dim()}-D query tensor"
        )
    batched = query.dim() == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    rank = 3 if batched else 2
    if key.dim() != rank or value.dim() != rank:
        raise AssertionError(
            f"For {kind} `query`, expected `key` and `value` to be {rank}-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != rank - 1:
        raise AssertionError(
            f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
            f"{rank - 1}-D but found {key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.dim()}-D tensor instead"
            )
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(
                f"Expected `attn_mask` shape to be {expected} but got {_shape(attn_mask)}"
            )
    return batched


def _canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type: Any,
    other_name: str,
    target_type: Any,
    check_other: bool = True,
) -> Tensor | None:
    """A bool mask (True: masked) as a float one of target_type (-inf where True); a
    float mask unchanged; any other dtype an AssertionError."""
    if mask is None:
        return None
    is_bool = mask.dtype.name == "bool"
    if not is_bool and not mask.is_floating_point():
        raise AssertionError(
            f"only bool and floating types of {mask_name} are supported"
        )
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. "
            "Use same type for both instead.",
            stacklevel=3,
        )
    if not is_bool:
        return mask
    return _additive_mask(mask, False, target_type.numpy)


def _additive_mask(mask: Tensor, keep: bool, dtype: np.dtype) -> Tensor:
    """A bool mask as a float one of `dtype`: 0 where it is `keep`, -inf elsewhere.
    Under vmap (a BatchedTensor) by operators, so that each example keeps its own."""
    if type(mask) is Tensor:
        hidden = np.logical_not(mask._data) if keep else mask._data
        return Tensor(np.where(hidden, -np.inf, 0.0).astype(dtype))
    hidden = mask.logical_not() if keep else mask
    return ops.where(hidden, -math.inf, 0.0).to(from_numpy(dtype))


def _head_dim(embed_dim: int, embed_dim_to_check: int, num_heads: int) -> int:
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got "
            f"{embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(
            f"embed_dim {embed_dim} not divisible by num_heads {num_heads}"
        )
    return head_dim


def _shape(tensor: Tensor) -> str:
    """How a message shows a tensor's shape (gradgen.Size where PyTorch's torch.Size)."""
    return repr(tensor.shape)


# -- multi_head_attention_forward: steps ------------------------------------------------


def _in_projection_packed(
    q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None
) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v each through its third of the packed (3E, E) weight and (3E,) bias:
    one matrix product for self-attention (q, k and v the same tensor), two when only
    k and v are, as PyTorch does."""
    if k is v:
        if q is k:
            q_proj, k_proj, v_proj = ops.linear(q, w, b).chunk(3, -1)
            return q_proj, k_proj, v_proj
        w_q, w_kv = w.split([q.shape[-1], 2 * q.shape[-1]])
        b_q, b_kv = (
            (None, None) if b is None else b.split([q.shape[-1], 2 * q.shape[-1]])
        )
        k_proj, v_proj = ops.linear(k, w_kv, b_kv).chunk(2, -1)
        return ops.linear(q, w_q, b_q), k_proj, v_proj
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return ops.linear(q, w_q, b_q), ops.linear(k, w_k, b_k), ops.linear(v, w_v, b_v)


def _in_projection(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    weights: tuple[Tensor, Tensor, Tensor],
    b: Tensor | None,
) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v each through its own weight (E, Eq), (E, Ek), (E, Ev): kdim/vdim."""
    biases = (None, None, None) if b is None else b.chunk(3)
    dim = q.shape[-1]
    for name, x, weight, bias in zip(
        ("query", "key", "value"), (q, k, v), weights, biases
    ):
        if tuple(weight.shape) != (dim, x.shape[-1]):
            raise AssertionError(
                f"expecting {name} weights shape of {(dim, x.shape[-1])}, but got "
                f"{_shape(weight)}"
            )
        if bias is not None and tuple(bias.shape) != (dim,):
            raise AssertionError(
                f"expecting {name} bias shape of {(dim,)}, but got {_shape(bias)}"
            )
    return (
        ops.linear(q, weights[0], biases[0]),
        ops.linear(k, weights[1], biases[1]),
        ops.linear(v, weights[2], biases[2]),
    )


def _attn_mask_3d(
    attn_mask: Tensor | None, tgt_len: int, src_len: int, batch_heads: int
) -> Tensor | None:
    """A 2-D (L, S) mask as (1, L, S); a 3-D one checked to be (N * heads, L, S)."""
    if attn_mask is None:
        return None
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(
                f"The shape of the 2D attn_mask is {_shape(attn_mask)}, but should be "
                f"{(tgt_len, src_len)}."
            )
        return attn_mask.unsqueeze(0)
    if tuple(attn_mask.shape) != (batch_heads, tgt_len, src_len):
        raise RuntimeError(
            f"The shape of the 3D attn_mask is {_shape(attn_mask)}, but should be "
            f"{(batch_heads, tgt_len, src_len)}."
        )
    return attn_mask


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """One more (unmasked) key column."""
    return None if mask is None else ops.constant_pad_nd(mask, [0, 1], 0.0)


def _split_heads(
    x: Tensor, static: Tensor | None, name: str, batch_heads: int, head_dim: int
) -> Tensor:
    """(S, N, E) -> (N * heads, S, head_dim), or the given static_k / static_v."""
    if static is None:
        return x.reshape(x.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.shape[0] != batch_heads:
        raise AssertionError(
            f"expecting {name}.size(0) of {batch_heads}, but got {static.shape[0]}"
        )
    if static.shape[2] != head_dim:
        raise AssertionError(
            f"expecting {name}.size(2) of {head_dim}, but got {static.shape[2]}"
        )
    return static


def _append_bias_kv(
    k: Tensor,
    v: Tensor,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    static_k: Tensor | None,
    static_v: Tensor | None,
) -> tuple[Tensor, Tensor]:
    """add_bias_kv: bias_k and bias_v (1, 1, E) appended to the (S, N, E) key and value
    as one more position."""
    if bias_k is None:
        raise AssertionError("bias_v is set but bias_k is None")
    if bias_v is None:
        raise AssertionError("bias_k is set but bias_v is None")
    if static_k is not None:
        raise AssertionError("bias cannot be added to static key.")
    if static_v is not None:
        raise AssertionError("bias cannot be added to static value.")
    bsz = k.shape[1]
    return ops.cat([k, bias_k.repeat(1, bsz, 1)]), ops.cat(
        [v, bias_v.repeat(1, bsz, 1)]
    )


def _add_zero_attn(k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    """A key and a value of zeros appended along the sequence (dimension 1)."""
    zero_k = Tensor(np.zeros((k.shape[0], 1, k.shape[2]), k._data.dtype))
    zero_v = Tensor(np.zeros((v.shape[0], 1, v.shape[2]), v._data.dtype))
    return ops.cat([k, zero_k], 1), ops.cat([v, zero_v], 1)


def _merge_key_padding(
    attn_mask: Tensor | None,
    key_padding_mask: Tensor | None,
    bsz: int,
    num_heads: int,
    src_len: int,
) -> Tensor | None:
    """attn_mask plus the (N, S) key padding mask spread over the heads."""
    if key_padding_mask is None:
        return attn_mask
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(
            f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
            f"{key_padding_mask.shape[0]}"
        )
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(
            f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
            f"{key_padding_mask.shape[1]}"
        )
    spread = (
        key_padding_mask.reshape(bsz, 1, 1, src_len)
        .expand(bsz, num_heads, 1, src_len)
        .reshape(bsz * num_heads, 1, src_len)
    )
    return spread if attn_mask is None else attn_mask + spread


def _attention_with_weights(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
) -> tuple[Tensor, Tensor]:
    """(N * heads, L, head_dim) output and (N * heads, L, S) weights, written out as
    matrix products (need_weights=True): a plain softmax, so a fully masked row is NaN
    as in PyTorch."""
    q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
    if is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    scores = ops.bmm(q_scaled, k.transpose(-2, -1))
    if attn_mask is not None:
        scores = attn_mask + scores
    weights = ops.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = ops.dropout(weights, dropout_p, True)
    return ops.bmm(weights, v), weights


def _attention_by_sdpa(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
    shape: tuple[int, int, int, int],
) -> Tensor:
    """scaled_dot_product_attention over (N, heads, L or S, head_dim) (need_weights=False);
    the output as (L * N, E)."""
    bsz, num_heads, tgt_len, head_dim = shape
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, attn_mask.shape[-1])
    output = scaled_dot_product_attention(
        q.reshape(bsz, num_heads, tgt_len, head_dim),
        k.reshape(bsz, num_heads, k.shape[1], head_dim),
        v.reshape(bsz, num_heads, v.shape[1], head_dim),
        attn_mask,
        dropout_p,
        is_causal,
    )
    return output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, num_heads * head_dim)


def _prepare_masks(
    query: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    need_weights: bool,
    is_causal: bool,
) -> tuple[Tensor | None, Tensor | None, bool]:
    """The masks as float ones, and is_causal: the hint alone is passed on (the mask
    dropped) when there is neither a key padding mask nor a need for the weights."""
    key_padding_mask = _canonical_mask(
        key_padding_mask,
        "key_padding_mask",
        None if attn_mask is None else attn_mask.dtype,
        "attn_mask",
        query.dtype,
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the "
            "Transformer module method `generate_square_subsequent_mask` to create "
            "this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        return None, None, True
    attn_mask = _canonical_mask(
        attn_mask, "attn_mask", None, "", query.dtype, check_other=False
    )
    return key_padding_mask, attn_mask, is_causal and key_padding_mask is None


def _project(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    separate: tuple[Tensor | None, Tensor | None, Tensor | None] | None,
) -> tuple[Tensor, Tensor, Tensor]:
    """The in-projection: packed in_proj_weight, or q/k/v_proj_weight (separate)."""
    if separate is None:
        if key.shape != value.shape:
            raise AssertionError(
                f"key shape {_shape(key)} does not match value shape {_shape(value)}"
            )
        if in_proj_weight is None:
            raise AssertionError(
                "use_separate_proj_weight is False but in_proj_weight is None"
            )
        return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(
            f"key's sequence and batch dims {Size(key.shape[:2])!r} do not match "
            f"value's {Size(value.shape[:2])!r}"
        )
    for name, weight in zip(("q", "k", "v"), separate):
        if weight is None:
            raise AssertionError(
                f"use_separate_proj_weight is True but {name}_proj_weight is None"
            )
    weights = (separate[0], separate[1], separate[2])
    return _in_projection(query, key, value, weights, in_proj_bias)  # type: ignore[arg-type]


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention over (L, N, E) query and (S, N, E) key/value (or unbatched
    (L, E), (S, E)): project, split into heads, attend, join, project out. Returns the
    output and, when need_weights, the attention weights (averaged over the heads when
    average_attn_weights)."""
    batched = _mha_shape_check(
        query, key, value, key_padding_mask, attn_mask, num_heads
    )
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask, attn_mask, is_causal = _prepare_masks(
        query, key_padding_mask, attn_mask, need_weights, is_causal
    )
    head_dim = _head_dim(embed_dim, embed_dim_to_check, num_heads)
    separate = (q_proj_weight, k_proj_weight, v_proj_weight)
    q, k, v = _project(
        query,
        key,
        value,
        in_proj_weight,
        in_proj_bias,
        separate if use_separate_proj_weight else None,
    )
    batch_heads = bsz * num_heads
    attn_mask = _attn_mask_3d(attn_mask, tgt_len, key.shape[0], batch_heads)
    if bias_k is not None or bias_v is not None:
        k, v = _append_bias_kv(k, v, bias_k, bias_v, static_k, static_v)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    q = q.reshape(tgt_len, batch_heads, head_dim).transpose(0, 1)
    k = _split_heads(k, static_k, "static_k", batch_heads, head_dim)
    v = _split_heads(v, static_v, "static_v", batch_heads, head_dim)
    if add_zero_attn:
        k, v = _add_zero_attn(k, v)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    src_len = k.shape[1]
    attn_mask = _merge_key_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len)
    if not training:
        dropout_p = 0.0
    weights: Tensor | None = None
    shape = (bsz, num_heads, tgt_len, head_dim)
    if need_weights:
        heads, weights = _attention_with_weights(
            q, k, v, attn_mask, dropout_p, is_causal
        )
        joined = heads.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
    else:
        joined = _attention_by_sdpa(q, k, v, attn_mask, dropout_p, is_causal, shape)
    output = ops.linear(joined, out_proj_weight, out_proj_bias)
    output = output.reshape(tgt_len, bsz, output.shape[1])
    if not batched:
        output = output.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return output, weights

"""torch.nn's MultiheadAttention (in PyTorch's activation.py; here beside it, as
gradgen's activation.py holds the elementwise activations).

gradgen has no fused fast path: the module always runs
F.multi_head_attention_forward, which is PyTorch's slow path and gives its numbers.
"""

from __future__ import annotations

from typing import Any

from gradgen.factories import empty
from gradgen.tensor import Tensor

from .. import init
from .._functional.attention import _canonical_mask, multi_head_attention_forward
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


def _batch_second(
    query: Tensor, key: Tensor, value: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """(N, L, E) -> (L, N, E), keeping which of the three are the same tensor (the
    projection takes one matrix product for self-attention)."""
    query_t = query.transpose(1, 0)
    key_t = query_t if key is query else key.transpose(1, 0)
    if value is key:
        return query_t, key_t, key_t
    return query_t, key_t, value.transpose(1, 0)


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear (PyTorch's class name for MultiheadAttention.out_proj)."""


class MultiheadAttention(Module):
    """Attention with num_heads heads of embed_dim // num_heads features each: query,
    key and value projected (in_proj_weight, or q/k/v_proj_weight when kdim or vdim
    differ from embed_dim), attended per head, joined and projected by out_proj.
    Initialised as PyTorch's: xavier_uniform_ projections, zero biases, xavier_normal_
    bias_k/bias_v (add_bias_kv)."""

    embed_dim: int
    kdim: int
    vdim: int
    num_heads: int
    dropout: float
    batch_first: bool
    head_dim: int
    add_zero_attn: bool
    in_proj_weight: Parameter | None
    q_proj_weight: Parameter | None
    k_proj_weight: Parameter | None
    v_proj_weight: Parameter | None
    in_proj_bias: Parameter | None
    bias_k: Parameter | None
    bias_v: Parameter | None
    out_proj: NonDynamicallyQuantizableLinear

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                "embed_dim and num_heads must be greater than 0, got "
                f"embed_dim={embed_dim} and num_heads={num_heads} instead"
            )
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self._make_projections(embed_dim, bias, dtype)
        self.out_proj = NonDynamicallyQuantizableLinear(
            embed_dim, embed_dim, bias=bias, dtype=dtype
        )
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, dtype=dtype))
            self.bias_v = Parameter(empty(1, 1, embed_dim, dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _make_projections(self, embed_dim: int, bias: bool, dtype: Any) -> None:
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(
                empty(3 * embed_dim, embed_dim, dtype=dtype)
            )
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)

    def _reset_parameters(self) -> None:
        if self.in_proj_weight is not None:
            init.xavier_uniform_(self.in_proj_weight)
        for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            if weight is not None:
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            if self.out_proj.bias is not None:
                init.constant_(self.out_proj.bias, 0.0)
        for bias in (self.bias_k, self.bias_v):
            if bias is not None:
                init.xavier_normal_(bias)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """(output, attention weights or None). Inputs are (L, N, E) ((N, L, E) when
        batch_first) or unbatched (L, E); a bool mask is True where attention is not
        allowed."""
        batched = query.dim() == 3
        key_padding_mask = _canonical_mask(
            key_padding_mask,
            "key_padding_mask",
            None if attn_mask is None else attn_mask.dtype,
            "attn_mask",
            query.dtype,
        )
        attn_mask = _canonical_mask(
            attn_mask, "attn_mask", None, "", query.dtype, check_other=False
        )
        if self.batch_first and batched:
            query, key, value = _batch_second(query, key, value)
        separate = not self._qkv_same_embed_dim
        output, weights = multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and batched:
            output = output.transpose(1, 0)
        return output, weights

"""torch.nn's transformer layers: TransformerEncoderLayer, TransformerDecoderLayer,
TransformerEncoder, TransformerDecoder and Transformer ("Attention Is All You Need"),
with PyTorch's constructors, defaults, initialisation and parameter names.

gradgen runs PyTorch's reference computation only (no fused kernels), which gives the
numbers of PyTorch's fast paths too, but for one visible difference that gradgen
copies: in inference (eval mode, no gradient needed) with a src_key_padding_mask,
PyTorch's TransformerEncoder runs its layers on nested tensors and returns zeros at
the padded positions (before its final norm).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from gradgen.dtypes import as_dtype, get_default_dtype
from gradgen.grad_mode import is_grad_enabled
from gradgen.composites._common import unbatched
from gradgen.tensor import Tensor

from .. import functional as F
from .. import init
from .._functional.attention import _canonical_mask
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
]

Activation = str | Callable[[Tensor], Tensor]


def _generate_square_subsequent_mask(
    sz: int, device: Any = None, dtype: Any = None
) -> Tensor:
    """(sz, sz) float mask: -inf above the diagonal (a position attends to itself and
    the ones before it), 0 elsewhere."""
    numpy_dtype = (get_default_dtype() if dtype is None else as_dtype(dtype)).numpy
    return Tensor(np.triu(np.full((sz, sz), -np.inf), 1).astype(numpy_dtype))


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module: Module, n: int) -> ModuleList:
    """n independent deep copies of `module` (all starting from its parameters)."""
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.dim() == 2:
        return int(src.shape[0])
    return int(src.shape[1 if batch_first else 0])


def _detect_is_causal_mask(
    mask: Tensor | None, is_causal: bool | None = None, size: int | None = None
) -> bool:
    """is_causal when given; otherwise whether `mask` is exactly the square subsequent
    mask of `size` (its own size by default)."""
    if is_causal is not None or mask is None:
        return is_causal is True
    size = size if size is not None else mask.shape[-2]
    causal = _generate_square_subsequent_mask(size, dtype=mask.dtype)
    if tuple(mask.shape) != tuple(causal.shape):
        return False
    if not unbatched(mask):  # vmap's data-dependent control flow error, as PyTorch's
        return bool((mask == causal).all())
    return bool(np.array_equal(mask._data, causal._data))


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward network (linear1, activation, linear2), each
    with dropout, a residual connection and a LayerNorm: after the block (the default)
    or before it (norm_first)."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model,
            nhead,
            dropout=dropout,
            bias=bias,
            batch_first=batch_first,
            dtype=dtype,
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation_relu_or_gelu = (
            1 if activation is F.relu else 2 if activation is F.gelu else 0
        )
        self.activation = activation

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            None if src_mask is None else src_mask.dtype,
            "src_mask",
            src.dtype,
        )
        src_mask = _canonical_mask(
            src_mask, "src_mask", None, "", src.dtype, check_other=False
        )
        x = src
        if self.norm_first:
            x = x + self._sa_block(
                self.norm1(x), src_mask, src_key_padding_mask, is_causal
            )
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))  # type: ignore[no-any-return]

    def _sa_block(
        self,
        x: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)  # type: ignore[no-any-return]

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)  # type: ignore[no-any-return]


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention to the encoder's output (memory),
    then a feed-forward network; each with dropout, a residual connection and a
    LayerNorm (after the block, or before it with norm_first)."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model,
            nhead,
            dropout=dropout,
            batch_first=batch_first,
            bias=bias,
            dtype=dtype,
        )
        self.multihead_attn = MultiheadAttention(
            d_model,
            nhead,
            dropout=dropout,
            batch_first=batch_first,
            bias=bias,
            dtype=dtype,
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(
                self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal
            )
            x = x + self._mha_block(
                self.norm2(x),
                memory,
                memory_mask,
                memory_key_padding_mask,
                memory_is_causal,
            )
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(
            x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal)
        )
        x = self.norm2(
            x
            + self._mha_block(
                x, memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
        )
        return self.norm3(x + self._ff_block(x))  # type: ignore[no-any-return]

    def _sa_block(
        self,
        x: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout1(x)  # type: ignore[no-any-return]

    def _mha_block(
        self,
        x: Tensor,
        mem: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.multihead_attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(x)  # type: ignore[no-any-return]

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)  # type: ignore[no-any-return]


def _why_not_nested(layer: Module) -> str:
    """Why PyTorch's TransformerEncoder cannot run `layer` on nested tensors ("" if
    it can)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attention = layer.self_attn
    reasons = (
        (layer.norm_first, f"{name}.norm_first was True"),
        (
            not attention.batch_first,
            f"{name}.self_attn.batch_first was not True(use batch_first for better "
            "inference performance)",
        ),
        (
            not attention._qkv_same_embed_dim,
            f"{name}.self_attn._qkv_same_embed_dim was not True",
        ),
        (attention.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
        (
            not layer.activation_relu_or_gelu,
            f"{name}.activation_relu_or_gelu was not True",
        ),
        (
            layer.norm1.eps != layer.norm2.eps,
            f"{name}.norm1.eps was not equal to {name}.norm2.eps",
        ),
        (attention.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd"),
    )
    return next((reason for failed, reason in reasons if failed), "")


def _nested_under_vmap(src: Tensor, padding: Tensor, operator: str) -> None:
    """PyTorch's nested-tensor path under vmap: its operator has no batching rule."""
    if not (unbatched(src) and unbatched(padding)):
        raise RuntimeError(
            f"Batching rule not implemented for aten::{operator}. We could not "
            "generate a fallback."
        )


def _left_aligned(padding: Tensor) -> bool:
    """Every row of the (N, S) float padding mask keeps a prefix (pads only at the
    end)."""
    keep = padding._data == 0
    return bool(np.all(keep[:, :-1] | ~keep[:, 1:]))


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer (deep copies: same starting parameters), then
    `norm` when given."""

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        # gradgen has no nested tensors; use_nested_tensor only marks when PyTorch
        # would use them, which shows as zeros at padded positions (see forward).
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        reason = _why_not_nested(encoder_layer)
        if enable_nested_tensor and reason:
            warnings.warn(
                "enable_nested_tensor is True, but self.use_nested_tensor is False "
                f"because {reason}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            None if mask is None else mask.dtype,
            "mask",
            src.dtype,
        )
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        first = self.layers[0]
        seq_len = _get_seq_len(src, first.self_attn.batch_first)
        causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for layer in self.layers:
            output = layer(
                output,
                src_mask=mask,
                is_causal=causal,
                src_key_padding_mask=src_key_padding_mask,
            )
        if self._pads_with_zeros(src, mask, src_key_padding_mask):
            assert src_key_padding_mask is not None
            padding = src_key_padding_mask
            if unbatched(padding):
                padded = Tensor((padding._data != 0)[..., None])
            else:  # under vmap without mask_check (PyTorch's nested tensors fail)
                padded = padding.ne(0).unsqueeze(-1)
            output = output.masked_fill(padded, 0.0)
        return output if self.norm is None else self.norm(output)

    def _pads_with_zeros(
        self, src: Tensor, mask: Tensor | None, padding: Tensor | None
    ) -> bool:
        """Whether PyTorch would take its nested-tensor path: inference with a
        left-aligned key padding mask and no attention mask."""
        first = self.layers[0]
        if not self.use_nested_tensor or first.training or src.dim() != 3:
            return False
        if padding is None:
            return False
        if self.mask_check:
            _nested_under_vmap(src, padding, "_nested_tensor_from_mask_left_aligned")
            if not _left_aligned(padding):
                return False
        if mask is not None:
            return False
        tensors = [src] + list(first.parameters())
        return not (is_grad_enabled() and any(t.requires_grad for t in tensors))


class TransformerDecoder(Module):
    """num_layers copies of decoder_layer (deep copies), then `norm` when given."""

    def __init__(
        self,
        decoder_layer: TransformerDecoderLayer,
        num_layers: int,
        norm: Module | None = None,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for layer in self.layers:
            output = layer(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=causal,
                memory_is_causal=memory_is_causal,
            )
        return output if self.norm is None else self.norm(output)


class Transformer(Module):
    """An encoder (num_encoder_layers layers and a final LayerNorm) and a decoder
    (num_decoder_layers, LayerNorm) of the given sizes, or custom ones; every
    parameter of two or more dimensions re-initialised with xavier_uniform_."""

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        custom_encoder: Any = None,
        custom_decoder: Any = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation)
        layer_kwargs: dict[str, Any] = dict(
            layer_norm_eps=layer_norm_eps,
            batch_first=batch_first,
            norm_first=norm_first,
            bias=bias,
            dtype=dtype,
        )
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, **layer_kwargs),
                num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype),
            )
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, **layer_kwargs),
                num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype),
            )
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(
                "the feature number of src and tgt must be equal to d_model"
            )
        memory = self.encoder(
            src,
            mask=src_mask,
            src_key_padding_mask=src_key_padding_mask,
            is_causal=src_is_causal,
        )
        return self.decoder(  # type: ignore[no-any-return]
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(
        sz: int, device: Any = None, dtype: Any = None
    ) -> Tensor:
        """(sz, sz): -inf above the diagonal, 0 elsewhere (a causal float mask)."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)

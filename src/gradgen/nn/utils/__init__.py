"""torch.nn.utils: gradient clipping, parameters as one vector, and `rnn` (packed
sequences)."""

from __future__ import annotations

from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from . import rnn as rnn

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "parameters_to_vector",
    "vector_to_parameters",
    "rnn",
]

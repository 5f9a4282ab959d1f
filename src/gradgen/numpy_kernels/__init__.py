"""numpy functions that native_functions.yaml kernel expressions may call, one module
per family (shape, elementwise, reduction, indexing, linalg, activation, loss,
normalization, sparse); what two families share is in `_common`.

A kernel expression is one Python expression over numpy arrays; where one numpy call
does not say it (negative sizes in `expand`, summing to a shape), the helper is here.
`__all__` is the list the generator allows in kernel expressions (it reads this file
without importing it): a new helper goes in its family's module and its `__all__`, and
in the list below (tests/test_family_packages.py checks that they agree).
"""

from __future__ import annotations

import warnings

from ..checked_kernels import cat_arrays, negative, power, stack_arrays, subtract
from ._common import OVERLAPPING_WRITE_ERROR as OVERLAPPING_WRITE_ERROR
from ._common import broadcastable as broadcastable
from ._common import broadcast_error as broadcast_error
from ._common import broadcast_shape_error as broadcast_shape_error
from ._common import _wrap_dim as _wrap_dim  # PyTorch's maybe_wrap_dim, one definition
from .activation import *  # noqa: F403  (the names of its __all__)
from .elementwise import *  # noqa: F403  (the names of its __all__)
from .indexing import *  # noqa: F403  (the names of its __all__)
from .linalg import *  # noqa: F403  (the names of its __all__)
from .loss import *  # noqa: F403  (the names of its __all__)
from .normalization import *  # noqa: F403  (the names of its __all__)
from .reduction import *  # noqa: F403  (the names of its __all__)
from .shape import *  # noqa: F403  (the names of its __all__)
from .sparse import *  # noqa: F403  (the names of its __all__)

__all__ = [
    # shape
    "permute",
    "expand",
    "sum_to_size",
    "view",
    "unsafe_view",
    "squeeze",
    "unsqueeze",
    "transpose",
    "t",
    "select",
    "slice_",
    "split",
    "split_with_sizes",
    "unbind",
    "select_backward",
    "slice_backward",
    "flip",
    "roll",
    "repeat",
    "diagonal",
    "diagonal_backward",
    "diag_embed",
    "view_as_real",
    "view_as_complex",
    "constant_pad_nd",
    # elementwise
    "to_copy",
    "int_to_float",
    "absolute",
    "absolute_",
    "sign",
    "sgn",
    "sigmoid",
    "erf",
    "rounding",
    "round_decimals",
    "angle",
    "sigmoid_backward",
    "tanh_backward",
    "into",
    "div_true",
    "div_mode",
    "div_floor",
    "reverse_subtract",
    "extremum",
    "atan2_floating",
    "hypot_floating",
    "where_select",
    "clamp_scalars",
    "clamp_tensors",
    "modulo",
    "compare",
    "logical",
    "bitwise",
    "copy_from",
    "fill",
    "lerp",
    "addcmul",
    "addcdiv",
    "nan_to_num",
    # reduction
    "reduce_sum",
    "reduce_mean",
    "reduce_prod",
    "max_all",
    "max_dim",
    "amax",
    "argmax",
    "logsumexp",
    "reduce_var",
    "cumsum",
    "cumprod",
    "logical_reduction",
    "allclose",
    "tensor_equal",
    "sort",
    "topk",
    # indexing
    "index_select",
    "advanced_index",
    "index_put",
    "index_add",
    "gather",
    "scatter",
    "masked_fill",
    # linalg
    "mm",
    "bmm",
    "dot",
    "vdot",
    "mv",
    "addmm",
    "tril",
    "triu",
    "trace",
    "vector_norm",
    "dist",
    # activation
    "relu",
    "gelu",
    "silu",
    "threshold_backward",
    "gelu_backward",
    "silu_backward",
    "leaky_relu",
    "leaky_relu_backward",
    "elu",
    "elu_backward",
    "softplus",
    "softplus_backward",
    "log_sigmoid_forward",
    "log_sigmoid_backward",
    "hardtanh",
    "hardtanh_backward",
    "mish",
    "mish_backward",
    "softmax",
    "softmax_backward_data",
    # loss
    "mse_loss",
    "mse_loss_backward",
    "nll_loss_forward",
    "nll_loss_backward",
    "nll_loss2d_forward",
    "nll_loss2d_backward",
    "binary_cross_entropy",
    "binary_cross_entropy_backward",
    "smooth_l1_loss",
    "smooth_l1_loss_backward",
    "huber_loss",
    "huber_loss_backward",
    "binary_cross_entropy_with_logits",
    # normalization
    "native_layer_norm",
    "native_layer_norm_backward",
    # sparse
    "embedding",
    "embedding_dense_backward",
    "one_hot",
    # checked_kernels: kernels that check their arguments as PyTorch does
    "cat_arrays",
    "stack_arrays",
    "negative",
    "subtract",
    "power",
]

# Like the generated kernels, these helpers produce inf and nan silently (PyTorch
# does); numpy's floating-point warnings raised in this package are ignored (the module
# pattern is a prefix: it covers every family module).
warnings.filterwarnings(
    "ignore",
    message="(divide by zero|invalid value|overflow|underflow) encountered",
    category=RuntimeWarning,
    module=__name__,
)

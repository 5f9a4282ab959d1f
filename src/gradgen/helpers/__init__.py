"""Helper functions that derivatives.yaml formulas call (PyTorch's FunctionsManual), one
module per family (shape, elementwise, reduction, indexing, linalg, activation, loss,
normalization, sparse); the helpers every family uses are in `_common`.

Every helper is written with gradgen operators, never with raw numpy, so a formula
that calls it is itself differentiable: under ``create_graph=True`` the engine runs
formulas in grad mode and these calls record their own graph. Each follows the
PyTorch helper of the same name. `__all__` is the list of helper names a formula may
call; the generator reads it (without importing this package) to validate formulas: a
new helper goes in its family's module and its `__all__`, and in the list below
(tests/test_family_packages.py checks that they agree).

An undefined gradient is None; helpers that take a gradient pass None through.
"""

from __future__ import annotations

from ..grad_mode import is_grad_enabled
from ._common import *  # noqa: F403  (the names of its __all__)
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
    # shared by every family
    "is_grad_enabled",
    "handle_r_to_c",
    "maybe_multiply",
    "sum_to",
    "zeros_like",
    "scalar_conj",
    # shape
    "permute_backwards",
    "cat_tensors_backward",
    "stack_tensors_backward",
    "split_backward",
    "split_with_sizes_backward",
    "unbind_backward",
    "unsqueeze_to",
    "slice_backward_wrapper",
    "repeat_backward",
    "reverse_list",
    "reverse_list_symint",
    "fmap_neg",
    # elementwise
    "mul_tensor_backward",
    "pow_backward",
    "_to_copy_backward",
    "log1p_backward",
    "sgn_backward",
    "angle_backward",
    "pow_backward_self",
    "pow_backward_exponent",
    "div_tensor_self_backward",
    "div_tensor_other_backward",
    "atan2_backward",
    "clamp_backward",
    "clamp_backward_min_max",
    # reduction
    "sum_backward",
    "mean_backward",
    "prod_backward",
    "restore_reduced_dims",
    "scale_grad_by_count",
    "evenly_distribute_backward",
    "logsumexp_backward",
    "var_backward",
    "std_backward",
    "cumsum_backward",
    "cumprod_backward",
    # indexing
    "index_backward",
    "masked_fill_backward",
    # linalg
    "mm_mat1_backward",
    "mm_mat2_backward",
    "trace_backward",
    "norm_backward",
    "norm_jvp",
    "linalg_vector_norm_backward",
    # activation
    "gelu_double_backward",
    "infinitely_differentiable_silu_backward",
    "softmax_double_backward",
    "elu_double_backward",
    "softplus_double_backward",
    "log_sigmoid_double_backward",
    "infinitely_differentiable_mish_backward",
    # loss
    "apply_loss_reduction",
    "mse_loss_double_backward",
    "binary_cross_entropy_target_backward",
    "binary_cross_entropy_double_backward",
    "binary_cross_entropy_double_backward_target",
    "binary_cross_entropy_double_backward_grad_output",
    "smooth_l1_loss_double_backward",
    "huber_loss_double_backward",
    "huber_loss_double_backward_grad_output",
    "binary_cross_entropy_with_logits_backward",
    "binary_cross_entropy_with_logits_target_backward",
    # normalization
    "layer_norm_jvp",
    "layer_norm_double_backward",
    # sparse
    "embedding_dense_double_backward",
]

"""Composite operators: implemented with other operators, so they need no formula.

These are PyTorch's CompositeImplicitAutograd functions, one module per family (shape,
elementwise, reduction, indexing, linalg, activation, loss, normalization, sparse,
dropout). native_functions.yaml names them with ``composite: NAME``; the generated
function and method call the function of that name here, and autograd records whatever
operators it calls. `__all__` is the list of names ``composite:`` may give (the
generator reads it without importing this package): a new composite goes in its
family's module and its `__all__`, and in the list below (tests/test_family_packages.py
checks that they agree).
"""

from __future__ import annotations


from .activation import (
    softmax,
    log_softmax,
    log_sigmoid,
)
from .dropout import (
    dropout,
)
from .elementwise import (
    conj,
    square,
    imag,
    true_divide,
    where_scalar_other,
    where_scalar_self,
    where_scalar,
    isfinite,
    to_dtype,
    clip,
    clip_tensor,
    clip_,
    clip_tensor_,
)
from .indexing import (
    index_select_backward,
    gather_backward,
)
from .linalg import (
    outer,
    ger,
    matmul,
    linear,
    norm,
    norm_dim,
)
from .loss import (
    nll_loss,
    nll_loss2d,
    nll_loss_nd,
    cross_entropy_loss,
    l1_loss,
    kl_div,
)
from .normalization import (
    layer_norm,
)
from .reduction import (
    var,
    var_dim,
    std,
    std_dim,
    any_elements,
    all_elements,
    value_selecting_reduction_backward,
)
from .shape import (
    reshape,
    flatten,
    contiguous,
    narrow,
    split_sizes,
    chunk,
    expand_as,
    view_as,
    reshape_as,
    diag,
    detach_,
)
from .sparse import (
    embedding_backward,
)

__all__ = [
    # shape
    "reshape",
    "flatten",
    "contiguous",
    "narrow",
    "split_sizes",
    "chunk",
    "expand_as",
    "view_as",
    "reshape_as",
    "diag",
    "detach_",
    # elementwise
    "conj",
    "square",
    "imag",
    "true_divide",
    "where_scalar_other",
    "where_scalar_self",
    "where_scalar",
    "isfinite",
    "to_dtype",
    "clip",
    "clip_tensor",
    "clip_",
    "clip_tensor_",
    # reduction
    "var",
    "var_dim",
    "std",
    "std_dim",
    "any_elements",
    "all_elements",
    "value_selecting_reduction_backward",
    # indexing
    "index_select_backward",
    "gather_backward",
    # linalg
    "outer",
    "ger",
    "matmul",
    "linear",
    "norm",
    "norm_dim",
    # activation
    "softmax",
    "log_softmax",
    "log_sigmoid",
    # loss
    "nll_loss",
    "nll_loss2d",
    "nll_loss_nd",
    "cross_entropy_loss",
    "l1_loss",
    "kl_div",
    # normalization
    "layer_norm",
    # sparse
    "embedding_backward",
    # dropout
    "dropout",
]

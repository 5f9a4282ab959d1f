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


from .activation import *  # noqa: F403  (the names of its __all__)
from .dropout import *  # noqa: F403  (the names of its __all__)
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

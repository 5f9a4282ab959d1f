"""numpy functions that native_functions.yaml kernel expressions may call, one module
per family (shape, elementwise, reduction, indexing, linalg, activation, loss,
normalization, sparse, special); what two families share is in `_common`.

A kernel expression is one Python expression over numpy arrays; where one numpy call
does not say it (negative sizes in `expand`, summing to a shape), the helper is here.
`__all__` is the list the generator allows in kernel expressions (it reads this file
without importing it): a new helper goes in its family's module and its `__all__`.
"""

from __future__ import annotations

from importlib import import_module

import warnings

from ._checked import add_scaled, alpha_scaled, cat_arrays, negative, power
from ._checked import stack_arrays, sub_check, subtract
from ._common import OVERLAPPING_WRITE_ERROR as OVERLAPPING_WRITE_ERROR
from ._common import broadcastable as broadcastable
from ._common import broadcast_error as broadcast_error
from ._common import broadcast_shape_error as broadcast_shape_error
from ._common import random_generator as random_generator
from ._common import _wrap_dim as _wrap_dim  # PyTorch's maybe_wrap_dim, one definition
from .activation import *  # noqa: F403  (the names of its __all__)
from .conv import *  # noqa: F403  (the names of its __all__)
from .elementwise import *  # noqa: F403  (the names of its __all__)
from .elementwise_quantize import *  # noqa: F403  (the names of its __all__)
from .fft import *  # noqa: F403  (the names of its __all__)
from .indexing import *  # noqa: F403  (the names of its __all__)
from .linalg import *  # noqa: F403  (the names of its __all__)
from .linalg_decompositions import *  # noqa: F403  (the names of its __all__)
from .linalg_distance import *  # noqa: F403  (the names of its __all__)
from .linalg_factorizations import *  # noqa: F403  (the names of its __all__)
from .linalg_products import *  # noqa: F403  (the names of its __all__)
from .loss import *  # noqa: F403  (the names of its __all__)
from .normalization import *  # noqa: F403  (the names of its __all__)
from .pooling import *  # noqa: F403  (the names of its __all__)
from .reduction import *  # noqa: F403  (the names of its __all__)
from .reduction_segments import *  # noqa: F403  (the names of its __all__)
from .resampling import *  # noqa: F403  (the names of its __all__)
from .rnn import *  # noqa: F403  (the names of its __all__)
from .shape import *  # noqa: F403  (the names of its __all__)
from .shape_strided import *  # noqa: F403  (the names of its __all__)
from .shape_building import *  # noqa: F403  (the names of its __all__)
from .sparse import *  # noqa: F403  (the names of its __all__)
from .special import *  # noqa: F403  (the names of its __all__)

# The package's own names; each family module's `__all__` adds its names below
# (the generator reads the same lists from the files, without running them).
__all__: list[str] = [
    "cat_arrays",
    "stack_arrays",
    "negative",
    "subtract",
    "sub_check",
    "alpha_scaled",
    "add_scaled",
    "power",
    "random_generator",
]
for _family in (
    "activation",
    "conv",
    "elementwise",
    "elementwise_quantize",
    "fft",
    "indexing",
    "linalg",
    "linalg_decompositions",
    "linalg_distance",
    "linalg_factorizations",
    "linalg_products",
    "loss",
    "normalization",
    "pooling",
    "reduction",
    "reduction_segments",
    "resampling",
    "rnn",
    "shape",
    "shape_strided",
    "shape_building",
    "sparse",
    "special",
):
    __all__ += import_module(f".{_family}", __name__).__all__
del _family

# Like the generated kernels, these helpers produce inf and nan silently (PyTorch
# does); numpy's floating-point warnings raised in this package are ignored (the module
# pattern is a prefix: it covers every family module).
warnings.filterwarnings(
    "ignore",
    message="(divide by zero|invalid value|overflow|underflow) encountered",
    category=RuntimeWarning,
    module=__name__,
)

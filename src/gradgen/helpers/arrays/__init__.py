"""Array twins of the operators and helpers derivatives.yaml formulas call: the
functions of a Backward node's array form (generated/functions.py), which runs when the
backward records no graph.

Each twin has the name of the operator, Tensor method or helper (PyTorch's
FunctionsManual name) it stands for, takes and returns numpy arrays (a numpy scalar
counts as a 0-d array, a Python number as a wrapped number) and computes the same
values in the same dtype as its tensor form: the same numpy kernel after the same type
promotion, so the two forms agree to the last bit (the operator table checks it). A
method `x.name(args)` and an operator `name(x, args)` share one twin; Python's
operators are `add`, `sub`, `mul`, `div`, `pow`, `neg` and the comparisons.

The generator reads `__all__` and each twin's return annotation (an array, a tuple of
arrays, or a plain value) without importing this package: a formula gets an array form
only when every call in it has a twin here (or is in VALUE_HELPERS, helpers that touch
no tensor and run as they are).
"""

from __future__ import annotations

import warnings
from importlib import import_module

from ._common import *  # noqa: F403  (the names of its __all__)
from .activation import *  # noqa: F403  (the names of its __all__)
from .conv import *  # noqa: F403  (the names of its __all__)
from .elementwise import *  # noqa: F403  (the names of its __all__)
from .indexing import *  # noqa: F403  (the names of its __all__)
from .linalg import *  # noqa: F403  (the names of its __all__)
from .loss import *  # noqa: F403  (the names of its __all__)
from .normalization import *  # noqa: F403  (the names of its __all__)
from .pooling import *  # noqa: F403  (the names of its __all__)
from .reduction import *  # noqa: F403  (the names of its __all__)
from .shape import *  # noqa: F403  (the names of its __all__)
from .shape_ops import *  # noqa: F403  (the names of its __all__)
from .special import *  # noqa: F403  (the names of its __all__)

# Helpers of gradgen.helpers that compute plain values (sizes, flags, scalars) from
# plain values: an array form calls them as the tensor form does.
VALUE_HELPERS = (
    "fmap_neg",
    "is_grad_enabled",
    "reverse_list",
    "reverse_list_symint",
)

# Each family module's `__all__` adds its names (the generator reads the same lists
# from the files, without running them).
__all__: list[str] = []
for _family in (
    "_common",
    "activation",
    "conv",
    "elementwise",
    "indexing",
    "linalg",
    "loss",
    "normalization",
    "pooling",
    "reduction",
    "shape",
    "shape_ops",
    "special",
):
    __all__ += import_module(f".{_family}", __name__).__all__
del _family

# As the kernels their tensor forms run (numpy_kernels), the twins produce inf and nan
# silently, as PyTorch's backward does (a mean over no target under vmap(grad)
# divides by 0): numpy's floating-point warnings raised in this package are ignored
# (the module pattern is a prefix: it covers every family module).
warnings.filterwarnings(
    "ignore",
    message="(divide by zero|invalid value|overflow|underflow) encountered",
    category=RuntimeWarning,
    module=__name__,
)

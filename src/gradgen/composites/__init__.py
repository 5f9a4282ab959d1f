"""Composite operators: implemented with other operators, so they need no formula.

These are PyTorch's CompositeImplicitAutograd functions, one module per family (shape,
elementwise, reduction, indexing, linalg, activation, loss, normalization, sparse,
rnn, attention, dropout, special). native_functions.yaml names them with
``composite: NAME``; the generated function and method call the function of that name
here, and autograd records whatever operators it calls. `__all__` is the list of names
``composite:`` may give (the generator reads it without importing this package): a new
composite goes in its family's module and its `__all__`.
"""

from __future__ import annotations

from importlib import import_module


from .activation import *  # noqa: F403  (the names of its __all__)
from .attention import *  # noqa: F403  (the names of its __all__)
from .conv import *  # noqa: F403  (the names of its __all__)
from .dropout import *  # noqa: F403  (the names of its __all__)
from .elementwise import *  # noqa: F403  (the names of its __all__)
from .fft import *  # noqa: F403  (the names of its __all__)
from .indexing import *  # noqa: F403  (the names of its __all__)
from .linalg import *  # noqa: F403  (the names of its __all__)
from .linalg_decompositions import *  # noqa: F403  (the names of its __all__)
from .linalg_products import *  # noqa: F403  (the names of its __all__)
from .loss import *  # noqa: F403  (the names of its __all__)
from .normalization import *  # noqa: F403  (the names of its __all__)
from .pooling import *  # noqa: F403  (the names of its __all__)
from .reduction import *  # noqa: F403  (the names of its __all__)
from .resampling import *  # noqa: F403  (the names of its __all__)
from .rnn import *  # noqa: F403  (the names of its __all__)
from .shape import *  # noqa: F403  (the names of its __all__)
from .shape_joining import *  # noqa: F403  (the names of its __all__)
from .sparse import *  # noqa: F403  (the names of its __all__)
from .special import *  # noqa: F403  (the names of its __all__)

# Each family module's `__all__` (the generator reads the same lists from the
# files, without running them).
__all__: list[str] = []
for _family in (
    "activation",
    "attention",
    "conv",
    "dropout",
    "elementwise",
    "fft",
    "indexing",
    "linalg",
    "linalg_decompositions",
    "linalg_products",
    "loss",
    "normalization",
    "pooling",
    "reduction",
    "resampling",
    "rnn",
    "shape",
    "shape_joining",
    "sparse",
    "special",
):
    __all__ += import_module(f".{_family}", __name__).__all__
del _family

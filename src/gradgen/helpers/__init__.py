"""Helper functions that derivatives.yaml formulas call (PyTorch's FunctionsManual), one
module per family (shape, elementwise, reduction, indexing, linalg, activation, loss,
normalization, sparse, special); the helpers every family uses are in `_common`.

Every value a helper computes from a differentiable input is computed with gradgen
operators, so a formula that calls it is itself differentiable: under
``create_graph=True`` the engine runs formulas in grad mode and these calls record
their own graph. numpy appears only for what the derivative treats as a constant:
shapes and counts, zeros/ones/eye of a size, an eps, a clamp's offset (PyTorch
clamps in place under no_grad), integer bookkeeping such as bincount. Each follows the
PyTorch helper of the same name. `__all__` is the list of helper names a formula may
call; the generator reads it (without importing this package) to validate formulas: a
new helper goes in its family's module and its `__all__`.

An undefined gradient is None; helpers that take a gradient pass None through.
"""

from __future__ import annotations

from importlib import import_module

from ..grad_mode import is_grad_enabled
from ._common import *  # noqa: F403  (the names of its __all__)
from .activation import *  # noqa: F403  (the names of its __all__)
from .conv import *  # noqa: F403  (the names of its __all__)
from .elementwise import *  # noqa: F403  (the names of its __all__)
from .fft import *  # noqa: F403  (the names of its __all__)
from .indexing import *  # noqa: F403  (the names of its __all__)
from .linalg import *  # noqa: F403  (the names of its __all__)
from .linalg_decompositions import *  # noqa: F403  (the names of its __all__)
from .linalg_factorizations import *  # noqa: F403  (the names of its __all__)
from .linalg_lu_lstsq import *  # noqa: F403  (the names of its __all__)
from .loss import *  # noqa: F403  (the names of its __all__)
from .normalization import *  # noqa: F403  (the names of its __all__)
from .pooling import *  # noqa: F403  (the names of its __all__)
from .reduction import *  # noqa: F403  (the names of its __all__)
from .reduction_segments import *  # noqa: F403  (the names of its __all__)
from .resampling import *  # noqa: F403  (the names of its __all__)
from .rnn import *  # noqa: F403  (the names of its __all__)
from .shape import *  # noqa: F403  (the names of its __all__)
from .shape_strided import *  # noqa: F403  (the names of its __all__)
from .sparse import *  # noqa: F403  (the names of its __all__)
from .special import *  # noqa: F403  (the names of its __all__)

# The package's own names; each family module's `__all__` adds its names below
# (the generator reads the same lists from the files, without running them).
__all__: list[str] = [
    "is_grad_enabled",
]
for _family in (
    "_common",
    "activation",
    "conv",
    "elementwise",
    "fft",
    "indexing",
    "linalg",
    "linalg_decompositions",
    "linalg_factorizations",
    "linalg_lu_lstsq",
    "loss",
    "normalization",
    "pooling",
    "reduction",
    "reduction_segments",
    "resampling",
    "rnn",
    "shape",
    "shape_strided",
    "sparse",
    "special",
):
    __all__ += import_module(f".{_family}", __name__).__all__
del _family

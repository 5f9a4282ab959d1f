"""gradgen.nn: PyTorch's torch.nn namespace, for the part gradgen has: `functional`,
`init`, `utils`, `Parameter`, `Module`, the containers and the layers of
`gradgen.nn.modules`."""

from __future__ import annotations

from . import functional as functional, init as init, utils as utils
from . import parallel as parallel
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel as DataParallel
from .parameter import Buffer as Buffer
from .parameter import Parameter as Parameter
from .parameter import UninitializedBuffer as UninitializedBuffer
from .parameter import UninitializedParameter as UninitializedParameter

__all__ = [
    "functional",
    "init",
    "utils",
    "parallel",
    "DataParallel",
    "Parameter",
    "Buffer",
    "UninitializedParameter",
    "UninitializedBuffer",
] + list(_modules_all)

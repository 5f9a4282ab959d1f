"""gradgen.nn: PyTorch's torch.nn namespace, for the part gradgen has: `functional`,
`init`, `utils`, `grad`, `parallel`, `Parameter`, `Buffer`, `Module`, the containers
and the layers of `gradgen.nn.modules`, and `factory_kwargs`."""

from __future__ import annotations

from typing import Any

from . import functional as functional, init as init, utils as utils
from . import grad as grad, parallel as parallel
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
    "grad",
    "factory_kwargs",
    "DataParallel",
    "Parameter",
    "Buffer",
    "UninitializedParameter",
    "UninitializedBuffer",
] + list(_modules_all)

_FACTORY_KEYS = {"device", "dtype", "memory_format"}


def factory_kwargs(kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """The factory arguments (device, dtype, memory_format) among a layer's
    **kwargs, merged with those given as `factory_kwargs=`; unknown keys and keys
    given both ways are TypeErrors, as PyTorch's."""
    if kwargs is None:
        return {}
    unexpected = kwargs.keys() - (_FACTORY_KEYS | {"factory_kwargs"})
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    merged = dict(kwargs.get("factory_kwargs", {}))
    for key in _FACTORY_KEYS & kwargs.keys():
        if key in merged:
            raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
        merged[key] = kwargs[key]
    return merged

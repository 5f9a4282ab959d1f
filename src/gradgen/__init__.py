"""gradgen: autograd operators generated from YAML, on numpy, with PyTorch's API.

    import gradgen as torch

runs PyTorch code for the subset gradgen covers (see README.md). The operators
(`gradgen.add`, `tensor.mul`, ...) are generated from native_functions.yaml and
derivatives.yaml into `gradgen.generated`; everything else here is the hand-written
runtime.
"""

from __future__ import annotations

import typing as _typing

# Imported floor by floor (docs/architecture.md, "Floors"): every module below imports
# only from its own floor or lower ones, so this order is the order they load in.
# `name as name`: the explicit re-exports of a typed package (PEP 484), so that type
# checkers in strict mode accept `gradgen.tensor`, `gradgen.no_grad`, ...
from . import dtypes as dtypes
from .dtypes import (
    bool as bool,
    complex64 as complex64,
    complex128 as complex128,
    dtype as dtype,
    finfo as finfo,
    float16 as float16,
    float32 as float32,
    float64 as float64,
    get_default_dtype as get_default_dtype,
    iinfo as iinfo,
    int8 as int8,
    int16 as int16,
    int32 as int32,
    int64 as int64,
    set_default_dtype as set_default_dtype,
    uint8 as uint8,
)

if dtypes.HAS_BFLOAT16:
    from .dtypes import bfloat16 as bfloat16
from .anomaly_mode import (
    is_anomaly_check_nan_enabled as is_anomaly_check_nan_enabled,
    is_anomaly_enabled as is_anomaly_enabled,
)
from .grad_mode import (
    enable_grad as enable_grad,
    inference_mode as inference_mode,
    is_inference_mode_enabled as is_inference_mode_enabled,
    is_grad_enabled as is_grad_enabled,
    no_grad as no_grad,
    set_grad_enabled as set_grad_enabled,
)
from .devices import (
    cuda as cuda,
    device as device,
    get_default_device as get_default_device,
    set_default_device as set_default_device,
)
from .tensor import (
    Size as Size,
    Tensor as Tensor,
    install_methods,
    is_tensor as is_tensor,
)
from .factories import (
    arange as arange,
    as_tensor as as_tensor,
    empty as empty,
    empty_like as empty_like,
    eye as eye,
    from_numpy as from_numpy,
    full as full,
    full_like as full_like,
    linspace as linspace,
    logspace as logspace,
    ones as ones,
    ones_like as ones_like,
    tensor as tensor,
    zeros as zeros,
    zeros_like as zeros_like,
)
from . import random as random
from .random import (
    Generator as Generator,
    default_generator as default_generator,
    get_rng_state as get_rng_state,
    initial_seed as initial_seed,
    manual_seed as manual_seed,
    multinomial as multinomial,
    normal as normal,
    rand as rand,
    rand_like as rand_like,
    randint as randint,
    randint_like as randint_like,
    randn as randn,
    randn_like as randn_like,
    randperm as randperm,
    seed as seed,
    set_rng_state as set_rng_state,
)
from . import autograd as autograd

# The generated operators: importing them registers their kernels with the dispatcher.
from . import generated
from .generated.ops import *  # noqa: F401,F403

# PyTorch's Python-level norm (p optional with dim, "fro"), over the schema overloads.
from .norms import norm as norm  # type: ignore[no-redef]  # replaces the generated norm
from .functional import nonzero as nonzero  # PyTorch binding's as_tuple

# torch.functional's spellings, over the generated operators of the same names
from .functional import (  # type: ignore[no-redef,assignment]
    atleast_1d as atleast_1d,
    atleast_2d as atleast_2d,
    atleast_3d as atleast_3d,
    broadcast_shapes as broadcast_shapes,
    block_diag as block_diag,
    broadcast_tensors as broadcast_tensors,
    cartesian_prod as cartesian_prod,
    cdist as cdist,
    chain_matmul as chain_matmul,
    einsum as einsum,
    meshgrid as meshgrid,
    tensordot as tensordot,
    unique as unique,
    unique_consecutive as unique_consecutive,
)
from . import tensor_api
from .legacy_tensors import (
    BoolTensor as BoolTensor,
    ByteTensor as ByteTensor,
    CharTensor as CharTensor,
    DoubleTensor as DoubleTensor,
    FloatTensor as FloatTensor,
    HalfTensor as HalfTensor,
    IntTensor as IntTensor,
    LongTensor as LongTensor,
    ShortTensor as ShortTensor,
)
from . import fft as fft, linalg as linalg, special as special
from . import nn as nn, optim as optim, serialization, utils as utils, viz as viz
from . import profiler as profiler
from .serialization import load as load, save as save
from . import func as func
from .func import vmap as vmap  # torch.vmap, torch.func.vmap's alias
from .compile import _dynamo as _dynamo
from .compile import compile as compile

# gradgen.autograd.functional sits on floor 6 (it uses func), above autograd/, so
# autograd/__init__.py cannot import it: importing it here makes it the attribute.
from .autograd import functional as _autograd_functional

del _autograd_functional

# The Tensor methods: the generated operators', then the hand-written ones that call
# them (the Python operators of tensor_api look the generated methods up once).
install_methods(Tensor, generated.METHODS)
tensor_api.install(Tensor)
serialization.install(Tensor)

# PyTorch's dtype aliases.
float = float32  # noqa: A001
double = float64
long = int64
int = int32  # noqa: A001
cfloat = complex64
cdouble = complex128
half = float16
short = int16

# Memory formats, as the strings the operators take (PyTorch's torch.contiguous_format).
contiguous_format = "contiguous_format"
preserve_format = "preserve_format"

__version__ = "0.1.0"


if not _typing.TYPE_CHECKING:  # type checkers should report unknown names, not see this

    def __getattr__(name: str) -> object:
        # Only reached for names the module lacks: bfloat16 without ml_dtypes.
        if name == "bfloat16":
            raise AttributeError(dtypes.BFLOAT16_MISSING)
        raise AttributeError(f"module 'gradgen' has no attribute '{name}'")

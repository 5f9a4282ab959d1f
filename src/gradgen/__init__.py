"""gradgen: autograd operators generated from YAML, on numpy, with PyTorch's API.

    import gradgen as torch

runs PyTorch code for the subset gradgen covers (see README.md). The operators
(`gradgen.add`, `tensor.mul`, ...) are generated from native_functions.yaml and
derivatives.yaml into `gradgen.generated`; everything else here is the hand-written
runtime.
"""

from __future__ import annotations

from . import dtypes

# `name as name`: the explicit re-exports of a typed package (PEP 484), so that type
# checkers in strict mode accept `gradgen.tensor`, `gradgen.no_grad`, ...
from .dtypes import (
    bool as bool,
    complex64 as complex64,
    complex128 as complex128,
    dtype as dtype,
    float32 as float32,
    float64 as float64,
    get_default_dtype as get_default_dtype,
    int32 as int32,
    int64 as int64,
    set_default_dtype as set_default_dtype,
)
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
from .tensor import (
    Size as Size,
    Tensor as Tensor,
    install_methods,
    is_tensor as is_tensor,
)
from .devices import cuda as cuda, device as device

# The generated operators: importing them registers their kernels with the dispatcher.
from . import generated  # noqa: E402  (after Tensor, which generated code imports)
from .generated.ops import *  # noqa: E402,F401,F403

install_methods(Tensor, generated.METHODS)

# PyTorch's Python-level norm (p optional with dim, "fro"), over the schema overloads.
from .norms import norm as norm, tensor_norm as _tensor_norm  # noqa: E402

setattr(Tensor, "norm", _tensor_norm)

from . import autograd, nn, optim, utils, viz  # noqa: E402
from .serialization import load as load, save as save  # noqa: E402
from .factories import (  # noqa: E402
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
    manual_seed as manual_seed,
    ones as ones,
    ones_like as ones_like,
    rand as rand,
    rand_like as rand_like,
    randint as randint,
    randn as randn,
    randn_like as randn_like,
    tensor as tensor,
    zeros as zeros,
    zeros_like as zeros_like,
)

# PyTorch's dtype aliases.
float = float32  # noqa: A001
double = float64
long = int64
int = int32  # noqa: A001
cfloat = complex64
cdouble = complex128

# Memory formats, as the strings the operators take (PyTorch's torch.contiguous_format).
contiguous_format = "contiguous_format"
preserve_format = "preserve_format"

__version__ = "0.1.0"

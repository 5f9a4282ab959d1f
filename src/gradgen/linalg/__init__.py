"""gradgen.linalg, PyTorch's torch.linalg: the operators native_functions.yaml declares
with `python_module: linalg` (linalg_vector_norm is gradgen.linalg.vector_norm)."""

from ..generated.linalg import *  # noqa: F401,F403
from ..generated.linalg import __all__ as __all__

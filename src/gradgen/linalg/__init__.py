"""gradgen.linalg, PyTorch's torch.linalg: the operators native_functions.yaml declares
with `python_module: linalg` (linalg_vector_norm is gradgen.linalg.vector_norm), and
LinAlgError, the error of a matrix that cannot be factorised (torch.linalg.LinAlgError).
"""

from ..generated.linalg import *  # noqa: F401,F403
from ..generated.linalg import __all__ as _generated_all
from ..numpy_kernels.linalg_decompositions import LinAlgError as LinAlgError

__all__ = [*_generated_all, "LinAlgError"]

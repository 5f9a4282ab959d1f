"""gradgen.special, PyTorch's torch.special: the operators native_functions.yaml declares
with `python_module: special` (special_erfcx is gradgen.special.erfcx)."""

from ..generated.special import *  # noqa: F401,F403
from ..generated.special import __all__ as __all__

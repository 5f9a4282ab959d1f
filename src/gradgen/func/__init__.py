"""gradgen.func: composable function transforms, as torch.func."""

from __future__ import annotations

from .batching import debug_unwrap as debug_unwrap
from .eager_transforms import (
    functionalize as functionalize,
    grad as grad,
    grad_and_value as grad_and_value,
    jvp as jvp,
    linearize as linearize,
    vjp as vjp,
)
from .jacobians import hessian as hessian, jacfwd as jacfwd, jacrev as jacrev
from .functional_call import (
    functional_call as functional_call,
    replace_all_batch_norm_modules_ as replace_all_batch_norm_modules_,
    stack_module_state as stack_module_state,
)
from .vmap import vmap as vmap
from .einops import rearrange as rearrange

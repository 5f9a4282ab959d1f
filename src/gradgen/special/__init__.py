"""gradgen.special: PyTorch's torch.special, the `special_*` operators of
native_functions.yaml under their names without the prefix
(`gradgen.special.erfcx` is the operator special_erfcx)."""

from __future__ import annotations

from ..generated.ops import special_entr as entr
from ..generated.ops import special_ndtri as ndtri
from ..generated.ops import special_log_ndtr as log_ndtr
from ..generated.ops import special_expm1 as expm1
from ..generated.ops import special_exp2 as exp2
from ..generated.ops import special_psi as psi
from ..generated.ops import special_digamma as digamma
from ..generated.ops import special_gammaln as gammaln
from ..generated.ops import special_erf as erf
from ..generated.ops import special_erfc as erfc
from ..generated.ops import special_erfcx as erfcx
from ..generated.ops import special_erfinv as erfinv
from ..generated.ops import special_ndtr as ndtr
from ..generated.ops import special_xlog1py as xlog1py
from ..generated.ops import special_xlogy as xlogy
from ..generated.ops import special_zeta as zeta
from ..generated.ops import special_i0 as i0
from ..generated.ops import special_i0e as i0e
from ..generated.ops import special_i1 as i1
from ..generated.ops import special_i1e as i1e
from ..generated.ops import special_logit as logit
from ..generated.ops import special_polygamma as polygamma
from ..generated.ops import special_logsumexp as logsumexp
from ..generated.ops import special_expit as expit
from ..generated.ops import special_sinc as sinc
from ..generated.ops import special_round as round
from ..generated.ops import special_log1p as log1p
from ..generated.ops import special_log_softmax as log_softmax
from ..generated.ops import special_gammainc as gammainc
from ..generated.ops import special_gammaincc as gammaincc
from ..generated.ops import special_multigammaln as multigammaln
from ..generated.ops import special_softmax as softmax
from ..generated.ops import special_bessel_j0 as bessel_j0
from ..generated.ops import special_bessel_j1 as bessel_j1

__all__ = [
    "entr",
    "ndtri",
    "log_ndtr",
    "expm1",
    "exp2",
    "psi",
    "digamma",
    "gammaln",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "ndtr",
    "xlog1py",
    "xlogy",
    "zeta",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "logit",
    "polygamma",
    "logsumexp",
    "expit",
    "sinc",
    "round",
    "log1p",
    "log_softmax",
    "gammainc",
    "gammaincc",
    "multigammaln",
    "softmax",
    "bessel_j0",
    "bessel_j1",
]

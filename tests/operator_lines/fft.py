"""Operator-table lines of the fft family of native_functions.yaml (torch.fft)."""

from __future__ import annotations

from typing import Any

from .common import Line


def _fft(name: str) -> Any:
    """torch.fft.NAME / gradgen.fft.NAME."""
    return lambda lib: getattr(lib.fft, name)


def _norms(lib: Any, name: str, a: Any, **arguments: Any) -> Any:
    """The transform under the three norms (and the default), its results added."""
    function = _fft(name)(lib)
    total = function(a, **arguments)
    for norm in ("forward", "ortho", "backward"):
        total = total + function(a, norm=norm, **arguments)
    return total


LINES: dict[str, Line] = {
    "_fft_r2c": Line(
        lambda lib, a: lib._fft_r2c(a, [0, 1], 1, True).sum(0)
        + lib._fft_r2c(a, [1], 2, False).sum(0)[:3],
        ((4, 5),),
    ),
    "_fft_c2r": Line(
        lambda lib, a: lib.cat(
            [lib._fft_c2r(a, [0, 1], 1, 4).flatten(), lib._fft_c2r(a, [1], 2, 5)[0]]
        ),
        ((4, 3),),
        complex=True,
    ),
    "_fft_c2c": Line(
        lambda lib, a: lib._fft_c2c(a, [0, 1], 1, True)
        * lib._fft_c2c(a, [1], 2, False),
        ((3, 4),),
        complex=True,
    ),
    "fft_fft": Line(
        lambda lib, a: _norms(lib, "fft", a, n=6) + _fft("fft")(lib)(a * 1j, dim=0)[0],
        ((4, 6),),
    ),
    "fft_ifft": Line(
        lambda lib, a: _norms(lib, "ifft", a, n=3, dim=0)
        + _fft("ifft")(lib)(a.real)[:3],
        ((4, 5),),
        complex=True,
    ),
    "fft_rfft": Line(
        lambda lib, a: _norms(lib, "rfft", a) + _fft("rfft")(lib)(a, 4)[:, 0:1],
        ((2, 5),),
    ),
    "fft_irfft": Line(
        lambda lib, a: _norms(lib, "irfft", a) + _fft("irfft")(lib)(a, 5)[:, :4],
        ((2, 3),),
        complex=True,
    ),
    "fft_hfft": Line(
        lambda lib, a: _norms(lib, "hfft", a, n=5), ((2, 3),), complex=True
    ),
    "fft_ihfft": Line(lambda lib, a: _norms(lib, "ihfft", a, dim=0), ((5, 2),)),
    "fft_fft2": Line(lambda lib, a: _norms(lib, "fft2", a, s=(2, 4)), ((3, 3),)),
    "fft_ifft2": Line(lambda lib, a: _norms(lib, "ifft2", a), ((3, 4),), complex=True),
    "fft_rfft2": Line(lambda lib, a: _norms(lib, "rfft2", a, dim=(1, 0)), ((3, 4),)),
    "fft_irfft2": Line(
        lambda lib, a: _norms(lib, "irfft2", a, s=(3, 5)), ((3, 3),), complex=True
    ),
    "fft_fftn": Line(
        lambda lib, a: _norms(lib, "fftn", a, s=(4, -1), dim=(0, 2)).sum(1),
        ((2, 2, 3),),
        complex=True,
    ),
    "fft_ifftn": Line(lambda lib, a: _norms(lib, "ifftn", a), ((2, 3, 2),)),
    "fft_rfftn": Line(lambda lib, a: _norms(lib, "rfftn", a, s=(3, 4)), ((2, 3, 3),)),
    "fft_irfftn": Line(
        lambda lib, a: _norms(lib, "irfftn", a, dim=(0, 2)), ((2, 2, 3),), complex=True
    ),
    "fft_fftshift": Line(
        lambda lib, a: _fft("fftshift")(lib)(a) * _fft("fftshift")(lib)(a, dim=(-1,)),
        ((3, 4),),
    ),
    "fft_ifftshift": Line(
        lambda lib, a: _fft("ifftshift")(lib)(a) * _fft("ifftshift")(lib)(a, dim=0),
        ((3, 5),),
    ),
}

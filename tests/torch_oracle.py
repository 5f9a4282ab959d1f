"""PyTorch as a test oracle: optional on a developer's machine, required in CI.

`require_torch()` returns the torch module, or skips the test with a visible reason
when torch cannot be imported, or fails it when GRADGEN_REQUIRE_TORCH=1 (as .ci/run
sets), so that CI can never pass by skipping every comparison.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

try:
    import torch as _torch
except ImportError:  # pragma: no cover - depends on the machine
    _torch = None

REQUIRED = os.environ.get("GRADGEN_REQUIRE_TORCH") == "1"
MISSING = "torch is not installed: comparison against PyTorch skipped"


def require_torch() -> Any:
    if _torch is None:
        if REQUIRED:
            pytest.fail(MISSING + " (GRADGEN_REQUIRE_TORCH=1 requires it)")
        pytest.skip(MISSING)
    return _torch

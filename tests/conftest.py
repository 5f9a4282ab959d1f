"""Shared fixtures."""

from __future__ import annotations

from typing import Any

import pytest

from torch_oracle import require_torch


@pytest.fixture()
def torch() -> Any:
    """The torch module (skips, or fails in CI, when it is not installed)."""
    return require_torch()

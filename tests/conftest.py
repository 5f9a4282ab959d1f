"""Shared fixtures."""

from __future__ import annotations

from typing import Any

import pytest

from torch_oracle import require_torch


@pytest.fixture()
def torch() -> Any:
    """The torch module (skips, or fails in CI, when it is not installed)."""
    return require_torch()


@pytest.fixture(autouse=True, scope="session")
def _codegen_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests format generated code with their own black cache, not ~/.cache."""
    import os

    os.environ["GRADGEN_CODEGEN_CACHE"] = str(tmp_path_factory.mktemp("codegen-cache"))

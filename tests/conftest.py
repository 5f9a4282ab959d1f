"""Shared fixtures, and the recording of PyTorch's answers (see torch_oracle.py)."""

from __future__ import annotations

from typing import Any

import pytest

import torch_oracle
from torch_oracle import require_torch


@pytest.fixture()
def torch() -> Any:
    """The torch module (skips, or fails in CI, when it is not installed). Prefer
    torch_oracle.oracle(key, compute): its answers are recorded (`make golden`), so the
    test also runs where torch is not installed."""
    return require_torch()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """oracle() files PyTorch's answers under the running test's id."""
    torch_oracle.set_current_test(item)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if torch_oracle.RECORD:
        for path in torch_oracle.write_goldens():
            print(f"\nwrote {path}")


@pytest.fixture(autouse=True, scope="session")
def _codegen_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests format generated code with their own black cache, not ~/.cache."""
    import os

    os.environ["GRADGEN_CODEGEN_CACHE"] = str(tmp_path_factory.mktemp("codegen-cache"))

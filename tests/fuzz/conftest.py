"""Fixtures of the fuzz tests: a Fuzzer with black replaced by a parse, and one with
the whole generator."""

from __future__ import annotations

from pathlib import Path

import pytest


from fuzz.oracle import Fuzzer


@pytest.fixture()
def fuzzer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fuzzer:
    return Fuzzer(tmp_path, monkeypatch, black=False)


@pytest.fixture()
def full_fuzzer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fuzzer:
    return Fuzzer(tmp_path, monkeypatch, black=True)

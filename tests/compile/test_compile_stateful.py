"""Stateful layers compile without a graph break and equal eager bit for bit:
BatchNorm in training (the running statistics and num_batches_tracked written back
into the buffers), dropout (the mask drawn from gradgen's generator in eager's order,
so the same seed gives the same result), and RNN layers with dropout between layers.
What cannot be handled breaks with a clear reason."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen as torch
from gradgen import nn
from gradgen.nn import functional as F


def _equal(got: list[np.ndarray], expected: list[np.ndarray]) -> None:
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b)


def _train(make: Any, compiled: bool, steps: int = 3) -> tuple[list[np.ndarray], Any]:
    """A few SGD steps of make()'s model on fresh batches; what it computed and
    holds afterwards (outputs, parameters, buffers), and the runner."""
    torch.manual_seed(0)
    model, shape = make()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    runner = torch.compile(model) if compiled else model
    seen = []
    for _ in range(steps):
        optimizer.zero_grad()
        out = runner(torch.randn(*shape))
        out = out[0] if isinstance(out, tuple) else out
        out.sum().backward()
        optimizer.step()
        seen.append(out.detach().numpy())
    seen += [p.detach().numpy() for p in model.parameters()]
    seen += [b.numpy() for b in model.buffers()]
    return seen, runner


def _batchnorm() -> tuple[nn.Module, tuple[int, ...]]:
    model = nn.Sequential(
        nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2)
    )
    return model, (16, 4)


def test_batchnorm_training_updates_its_buffers_as_eager_does() -> None:
    expected, _ = _train(_batchnorm, compiled=False)
    got, compiled = _train(_batchnorm, compiled=True)
    _equal(got, expected)
    assert compiled.breaks == [] and compiled.compiles == 1
    (entry,) = compiled.cache.values()
    assert "np.copyto(" in entry.program.source  # num_batches_tracked += 1
    norm = compiled._orig_mod[1]
    assert norm.num_batches_tracked.item() == 3  # once per call, not per trace/check
    # its version counter moves as eager's: one write per call (after the one the
    # buffer's creation made), none for the trace or the check against eager
    assert norm.num_batches_tracked._version == 1 + 3
    assert norm.running_mean._version == 1


def test_batchnorm_eval_after_training_reads_the_running_statistics() -> None:
    torch.manual_seed(0)
    norm = nn.BatchNorm2d(3)
    compiled = torch.compile(norm)
    for _ in range(2):
        compiled(torch.randn(4, 3, 2, 2))
    norm.eval()
    x = torch.randn(2, 3, 2, 2)
    expected = norm._call_impl(x) if hasattr(norm, "_call_impl") else norm(x)
    got = compiled(x)
    assert np.array_equal(got.detach().numpy(), expected.detach().numpy())
    assert compiled.compiles == 2 and compiled.breaks == []  # training is a guard


def test_batchnorm_with_a_cumulative_average_breaks_with_a_reason() -> None:
    torch.manual_seed(0)
    norm = nn.BatchNorm1d(3, momentum=None)  # reads num_batches_tracked.item()
    reference = nn.BatchNorm1d(3, momentum=None)
    compiled = torch.compile(norm)
    for _ in range(2):
        x = torch.randn(5, 3)
        got, expected = compiled(x), reference(x)
        assert np.array_equal(got.detach().numpy(), expected.detach().numpy())
    (record,) = compiled.breaks
    assert "in-place operator" in record.reason and "split" in record.reason
    assert np.array_equal(norm.running_var.numpy(), reference.running_var.numpy())


def _dropout() -> tuple[nn.Module, tuple[int, ...]]:
    model = nn.Sequential(
        nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 2), nn.Dropout(0.5)
    )
    return model, (16, 4)


def test_dropout_draws_the_masks_eager_draws() -> None:
    expected, _ = _train(_dropout, compiled=False)
    got, compiled = _train(_dropout, compiled=True)
    _equal(got, expected)
    assert compiled.breaks == [] and compiled.compiles == 1
    (entry,) = compiled.cache.values()
    assert entry.program.source.count("random_generator(") == 2


def test_two_draws_are_not_merged_and_an_unused_draw_is_kept() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        F.dropout(x, 0.5)  # unused, but it moves the generator as in eager
        return F.dropout(x, 0.5) + F.dropout(x, 0.5)

    x = torch.ones(64)
    compiled = torch.compile(fn)
    for seed in (0, 1):
        torch.manual_seed(seed)
        expected = fn(x)
        after_eager = torch.rand(2)
        torch.manual_seed(seed)
        got = compiled(x)
        after_compiled = torch.rand(2)
        assert np.array_equal(got.numpy(), expected.numpy())
        assert np.array_equal(after_compiled.numpy(), after_eager.numpy())
    assert compiled.breaks == [] and compiled.compiles == 1
    assert 2.0 in got.tolist() and 4.0 in got.tolist()  # two masks, not one twice


def test_a_random_operator_with_its_own_generator_breaks() -> None:
    generator = torch.Generator()

    def fn(x: torch.Tensor) -> torch.Tensor:
        return x * torch.bernoulli(x, generator=generator)

    generator.manual_seed(0)
    expected = fn(torch.full((8,), 0.5))
    generator.manual_seed(0)
    compiled = torch.compile(fn)
    got = compiled(torch.full((8,), 0.5))
    assert np.array_equal(got.numpy(), expected.numpy())
    (record,) = compiled.breaks
    assert "generator of its own" in record.reason and "bernoulli" in record.reason


@pytest.mark.parametrize("layer", ["LSTM", "GRU", "RNN"])
def test_rnn_layers_with_dropout_between_layers_compile(layer: str) -> None:
    def make() -> tuple[nn.Module, tuple[int, ...]]:
        return getattr(nn, layer)(4, 3, num_layers=2, dropout=0.4), (5, 2, 4)

    expected, _ = _train(make, compiled=False, steps=2)
    got, compiled = _train(make, compiled=True, steps=2)
    _equal(got, expected)
    assert compiled.breaks == [] and compiled.compiles == 1

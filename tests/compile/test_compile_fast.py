"""The fast path of a compiled call (compile/fast.py, runtime.run_alone): the same
gradients as the engine path and as eager, to the last bit, and the engine taken
whenever something needs it (hooks, retain_grad, a leaf used twice, grad=, inputs=)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen as torch
from gradgen import engine


def _q(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return 3 * a**3 - b**2


def _leaves() -> tuple[torch.Tensor, torch.Tensor]:
    return (
        torch.tensor([2.0, -1.5], requires_grad=True),
        torch.tensor([6.0, 0.25], requires_grad=True),
    )


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the engine's backward passes (the fast path makes none)."""
    calls: list[int] = []
    execute, execute_root = engine.execute, engine.execute_root

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return execute(*args, **kwargs)

    def counted_root(*args: Any, **kwargs: Any) -> Any:
        try:
            ran = execute_root(*args, **kwargs)  # False: nothing ran, execute follows
        except RuntimeError:
            calls.append(1)  # a pass the engine ran and refused
            raise
        if ran:
            calls.append(1)
        return ran

    # backward() enters the engine through either (execute_root: one root, one seed)
    monkeypatch.setattr(engine, "execute", counted)
    monkeypatch.setattr(engine, "execute_root", counted_root)
    return calls


def test_fast_path_accumulates_in_place_as_the_engine_does(no_engine) -> None:
    compiled = torch.compile(lambda a, b: _q(a, b).sum())
    a, b = _leaves()
    compiled(a, b).backward()
    grad_a = a.grad
    compiled(a, b).backward()  # the second gradient adds into the same .grad
    assert no_engine == []
    assert a.grad is grad_a and grad_a._version == 1
    # 2 * dQ/da = 2 * 9a^2, 2 * dQ/db = 2 * -2b
    assert a.grad.tolist() == [72.0, 40.5] and b.grad.tolist() == [-24.0, -1.0]
    ea, eb = _leaves()
    for _ in range(2):
        _q(ea, eb).sum().backward()
    assert np.array_equal(a.grad.numpy(), ea.grad.numpy())
    assert np.array_equal(b.grad.numpy(), eb.grad.numpy())


def test_gradients_that_are_one_array_are_not_shared_between_leaves(no_engine) -> None:
    # d(a + b)/da and d(a + b)/db are the same value; each .grad owns its memory.
    compiled = torch.compile(lambda a, b: (a + b).sum())
    a, b = _leaves()
    compiled(a, b).backward()
    assert no_engine == []
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    compiled(a, b).backward()
    assert a.grad.tolist() == [2.0, 2.0] and b.grad.tolist() == [2.0, 2.0]


def test_the_seed_is_not_handed_out_as_a_gradient(no_engine) -> None:
    compiled = torch.compile(lambda x: x.sum())
    x = torch.tensor(3.0, requires_grad=True)
    for expected in (1.0, 2.0, 3.0):
        compiled(x).backward()
        assert x.grad.item() == expected
    assert no_engine == []


def test_hooks_and_retain_grad_take_the_engine(no_engine) -> None:
    compiled = torch.compile(lambda a, b: _q(a, b).sum())
    a, b = _leaves()
    a.register_hook(lambda g: g * 10)
    seen: list[float] = []
    b.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.sum().item()))
    loss = compiled(a, b)
    loss.retain_grad()
    loss.backward()
    assert len(no_engine) == 1
    assert a.grad.tolist() == [360.0, 202.5] and seen == [-12.5]
    assert loss.grad.item() == 1.0


def test_a_leaf_used_twice_takes_the_engine(no_engine) -> None:
    compiled = torch.compile(lambda a, b: (a * b).sum())
    a, _ = _leaves()
    compiled(a, a).backward()
    assert len(no_engine) == 1 and a.grad.tolist() == [4.0, -3.0]


def test_explicit_gradient_or_inputs_take_the_engine(no_engine) -> None:
    compiled = torch.compile(_q)
    a, b = _leaves()
    compiled(a, b).backward(torch.tensor([1.0, 2.0]))
    compiled(a, b).sum().backward(inputs=[a])
    assert len(no_engine) == 2
    assert a.grad.tolist() == [72.0, 60.75] and b.grad.tolist() == [-12.0, -1.0]


def test_graph_is_freed_unless_retained(no_engine) -> None:
    compiled = torch.compile(lambda a, b: _q(a, b).sum())
    a, b = _leaves()
    loss = compiled(a, b)
    loss.backward(retain_graph=True)
    loss.backward()
    assert a.grad.tolist() == [72.0, 40.5]
    with pytest.raises(RuntimeError, match="backward through the graph a second"):
        loss.backward()
    assert len(no_engine) == 1  # the refused third pass went to the engine


def test_a_saved_input_changed_in_place_is_refused_on_the_fast_path() -> None:
    compiled = torch.compile(lambda a, b: (a * b).sum())
    a, b = _leaves()
    c = b.detach()
    loss = compiled(a, c)
    c.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_guard_misses_recompile_or_reuse_and_stay_correct() -> None:
    factor = 2.0

    def fn(x: torch.Tensor) -> torch.Tensor:
        return (x * factor).sum()

    compiled = torch.compile(fn)
    x = torch.ones(3, requires_grad=True)
    y = torch.ones(4, requires_grad=True)
    for tensor in (x, y, x, y):
        compiled(tensor).backward()
    assert compiled.compiles == 2
    assert x.grad.tolist() == [4.0] * 3 and y.grad.tolist() == [4.0] * 4
    with torch.no_grad():
        assert compiled(x).grad_fn is None
    assert compiled(x.detach()).grad_fn is None
    assert compiled.compiles == 4  # no_grad, and an input without requires_grad
    factor = 3.0  # a guarded closure cell: recompiles
    x.grad = None
    compiled(x).backward()
    assert x.grad.tolist() == [3.0] * 3 and compiled.compiles == 5


def test_a_replaced_parameter_is_read_again() -> None:
    model = torch.nn.Linear(3, 1)
    compiled = torch.compile(model)
    x = torch.ones(2, 3)
    compiled(x).sum().backward()
    with torch.no_grad():
        model.weight = torch.nn.Parameter(torch.full((1, 3), 2.0))
    out = compiled(x)
    assert np.array_equal(out.detach().numpy(), model(x).detach().numpy())
    out.sum().backward()
    assert model.weight.grad.tolist() == [[2.0, 2.0, 2.0]]


def test_views_and_subclasses_of_tensor_take_the_general_path() -> None:
    compiled = torch.compile(lambda x: (x * 2).sum())
    base = torch.ones(2, 3, requires_grad=True)
    compiled(base[0]).backward()
    compiled(base[1]).backward()
    assert base.grad.tolist() == [[2.0] * 3] * 2
    parameter = torch.nn.Parameter(torch.ones(3))
    compiled(parameter).backward()
    assert parameter.grad.tolist() == [2.0] * 3


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_zero_dim_programs_equal_eager_to_the_last_bit(dtype, no_engine) -> None:
    # float64 0-d inputs run on numpy scalars (fast.py's scalar mode), float32 not:
    # both give eager's bits, over calls with other values of the same signature.
    compiled = torch.compile(lambda a, b: 3 * a**3 - b**2 / a)
    for x, y in ((2.0, 6.0), (-0.7, 1e-3), (3.3, -2.5)):
        a, b = (torch.tensor(v, dtype=dtype, requires_grad=True) for v in (x, y))
        ea, eb = (torch.tensor(v, dtype=dtype, requires_grad=True) for v in (x, y))
        out = compiled(a, b)
        expected = 3 * ea**3 - eb**2 / ea
        assert out.dtype == dtype and out.shape == ()
        assert out.detach().numpy().tobytes() == expected.detach().numpy().tobytes()
        out.backward()
        assert no_engine == []
        expected.backward()
        no_engine.clear()
        for got, want in ((a.grad, ea.grad), (b.grad, eb.grad)):
            assert type(got.numpy()) is np.ndarray and got.dtype == dtype
            assert got.numpy().tobytes() == want.numpy().tobytes()
    assert compiled.compiles == 1


def test_helpers_whose_checks_the_signature_decides_are_inlined() -> None:
    def fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return -((x - y) ** 3)

    compiled = torch.compile(fn)
    floats = [torch.tensor([1.5, -2.0]), torch.tensor([0.5, 4.0])]
    ints = [torch.tensor([3, -2]), torch.tensor([1, 4])]
    for args in (floats, ints):
        assert np.array_equal(compiled(*args).numpy(), fn(*args).numpy())
    float_source, int_source = (e.program.source for e in compiled.cache.values())
    assert "v3 = v2 ** 3" in float_source and "power(" not in float_source
    assert "v2 = v0 - v1" in float_source and "v4 = -v3" in float_source
    # An integer base keeps the helper, whose rules for integers PyTorch's are.
    assert "power(v2, 3)" in int_source
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        torch.compile(lambda x: x**-1)(ints[0])

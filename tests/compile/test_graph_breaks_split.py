"""Graph breaks split a compiled function into compiled pieces (torch.compile's
behaviour): the operators before a break are one program, the Python code that breaks
runs, the operators after it are the next program. Values and gradients equal eager's
to the last bit; the pieces' operators do not run eagerly at a later call; a call that
takes another branch after a break runs on eagerly; explain() lists every break."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen as torch
from gradgen import nn
from gradgen.compile import Unsupported
from gradgen.compile.split import SplitEntry
from gradgen.dispatch import OperatorHandle
from operator_lines import table
from operator_lines.common import Line


def _same(a: Any, b: Any) -> None:
    assert a is not None and b is not None
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def _split(compiled: Any) -> SplitEntry:
    (entry,) = compiled.cache.values()
    assert isinstance(entry, SplitEntry)
    return entry


class _Eager:
    """Counts the operators that run eagerly (through call_unobserved) by name."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: list[str] = []
        original = OperatorHandle.call_unobserved

        def counted(handle: OperatorHandle, *args: Any) -> Any:
            self.names.append(handle.name)
            return original(handle, *args)

        monkeypatch.setattr(OperatorHandle, "call_unobserved", counted)


def _branchy(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = (x * w).exp()
    if h.sum() > 7:  # a break: the rest is the second piece
        y = h * 3 + x
    else:
        y = h * 2
    return y.sin().sum()


def _pair(scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal(6) * scale, requires_grad=True)
    w = torch.tensor(rng.standard_normal(6), requires_grad=True)
    return x, w


def test_pieces_on_both_sides_of_a_break_equal_eager_and_run_compiled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x, w = _pair(2.0)
    expected = _branchy(x, w)
    expected.backward()
    compiled = torch.compile(_branchy)
    eager = _Eager(monkeypatch)
    for _ in range(3):
        cx, cw = _pair(2.0)
        eager.names.clear()
        got = compiled(cx, cw)
        got.backward()
        _same(got.detach().numpy(), expected.detach().numpy())
        _same(cx.grad.numpy(), x.grad.numpy())
        _same(cw.grad.numpy(), w.grad.numpy())
        assert got.grad_fn.name() == "CompiledFunctionBackward"
    split = _split(compiled)
    # mul exp sum gt | mul add sin sum
    assert [len(p.ops) for p in split.pieces] == [4, 4]
    assert compiled.compiles == 1 and split.replays == 3 and split.diverged == 0
    # The last call ran no operator eagerly: both pieces' programs served them all.
    assert eager.names == []


def test_another_branch_after_the_break_runs_on_eagerly() -> None:
    compiled = torch.compile(_branchy)
    compiled(*_pair(2.0))  # traced with h.sum() > 7
    x, w = _pair(0.1)  # h.sum() is about 6 (7.7 above): the else branch
    expected = _branchy(x, w)
    expected.backward()
    cx, cw = _pair(0.1)
    got = compiled(cx, cw)
    got.backward()
    _same(got.detach().numpy(), expected.detach().numpy())
    _same(cx.grad.numpy(), x.grad.numpy())
    _same(cw.grad.numpy(), w.grad.numpy())
    split = _split(compiled)
    assert split.diverged == 1 and compiled.compiles == 1


def test_hand_math_through_a_break() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        s = (x * x).sum()
        return x * s.item() + s  # the .item() value is baked into the second piece

    compiled = torch.compile(fn)
    for _ in range(2):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = compiled(x)
        assert y.tolist() == [10.0, 15.0]  # s = 5: x * 5 + 5
        y.sum().backward()
        # d/dx_i: 5 (the item is a constant) + 2 * 2 x_i (s is used twice, as s)
        assert x.grad.tolist() == [9.0, 13.0]
    assert len(_split(compiled).pieces) == 2


def test_explain_lists_each_break_with_its_reason_and_line() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        a = x.exp()
        n = a.sum().item()
        b = a * n
        print("b", b.mean())
        return b.tanh()

    explanation = torch._dynamo.explain(fn)(torch.ones(3))
    assert explanation.graph_count == 3 and explanation.graph_break_count == 2
    first, second = explanation.break_reasons
    assert "Tensor.item" in first.reason and "n = a.sum().item()" in first.line
    assert "Tensor.__str__" in second.reason or "Tensor.__format__" in second.reason
    assert 'print("b", b.mean())' in second.line
    assert "test_graph_breaks_split.py" in first.line
    text = str(explanation)
    assert "Break Reason 2" in text and "n = a.sum().item()" in text


def test_fullgraph_still_raises_at_the_first_break() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        n = x.sum().item()
        return x * n if x.max() > 0 else x

    with pytest.raises(Unsupported, match=r"Tensor\.item .*n = x\.sum\(\)\.item\(\)"):
        torch.compile(fn, fullgraph=True)(torch.ones(2))


def test_a_training_loop_with_a_print_between_layers_equals_eager(capsys) -> None:
    def run(compiled: bool) -> list[np.ndarray]:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(4, 3), torch.randn(4, 2)

        def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            h = model[1](model[0](x))
            print("mean activation", h.mean())
            return ((model[2](h) - y) ** 2).mean()

        runner = torch.compile(step) if compiled else step
        for _ in range(3):
            optimizer.zero_grad()
            runner(x, y).backward()
            optimizer.step()
        if compiled:
            split = _split(runner)
            assert len(split.pieces) == 2 and split.replays == 3
        return [p.detach().numpy() for p in model.parameters()]

    for got, expected in zip(run(True), run(False)):
        _same(got, expected)
    printed = capsys.readouterr().out
    assert printed.count("mean activation") == 3 + 1 + 3  # the trace prints once more


def test_a_tensor_made_inside_is_an_input_of_the_next_piece() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        noise = torch.rand(3)  # a random draw: no operator made it
        return (x.exp() * noise).sum()

    compiled = torch.compile(fn)
    for seed in (0, 1):
        x = torch.tensor([0.5, 1.0, -1.0], requires_grad=True)
        torch.manual_seed(seed)
        y = compiled(x)
        y.backward()
        e = torch.tensor([0.5, 1.0, -1.0], requires_grad=True)
        torch.manual_seed(seed)
        z = fn(e)
        z.backward()
        _same(y.detach().numpy(), z.detach().numpy())
        _same(x.grad.numpy(), e.grad.numpy())
    split = _split(compiled)
    assert split.replays == 2 and "random draw" in split.breaks[0].reason


def test_a_view_handed_to_python_shares_its_base_version_counter() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        h = x.exp()
        if h.sum() > 0:
            return h.t()
        return h

    compiled = torch.compile(fn)
    compiled(torch.ones(2, 3, requires_grad=True))
    x = torch.ones(2, 3, requires_grad=True)
    out = compiled(x)
    assert out._base is not None  # the view ran eagerly, as a view of the piece's h
    out.mul_(2)  # exp saved its result: eager refuses the backward, and so does this
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def _line_inputs(line: Line) -> list[torch.Tensor]:
    rng = np.random.default_rng(5)
    made = []
    for shape in line.shapes:
        low = 0.5 if line.positive else -2.0
        data = rng.uniform(low, 2.0, shape)
        if line.complex:
            data = data + 1j * rng.uniform(-2.0, 2.0, shape)
        made.append(torch.tensor(data, requires_grad=True))
    return made


def _line_run(line: Line, runner: Any) -> tuple[np.ndarray, list[np.ndarray]]:
    primals = _line_inputs(line)
    torch.manual_seed(0)
    out = runner(*primals)
    rng = np.random.default_rng(3)
    cotangent = rng.uniform(-1, 1, tuple(out.shape))
    grads = torch.autograd.grad(out, primals, torch.tensor(cotangent))
    return out.detach().numpy(), [g.numpy() for g in grads]


SPLIT_LINES = [
    "dropout",
    "gru.data",
    "lstm.data",
    "quantile",
    "rnn_tanh.data",
    "linalg_pinv",
    "embedding_bag",
]


@pytest.mark.parametrize("name", SPLIT_LINES)
def test_operator_lines_that_break_compile_in_pieces_equal_to_eager(name: str) -> None:
    line = table()[name]

    def function(*xs: Any) -> Any:
        return line.function(torch, *xs)

    compiled = torch.compile(function)
    expected, expected_grads = _line_run(line, function)
    for _ in range(2):  # the trace's call, then a replay
        got, got_grads = _line_run(line, compiled)
        _same(got, expected)
        for g, e in zip(got_grads, expected_grads, strict=True):
            _same(g, e)
    assert _split(compiled).replays == 2

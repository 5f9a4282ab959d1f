"""gradgen.compile: values and gradients equal to eager to the last bit, the MLP
training step, guards and recompiles, graph breaks, hooks and autograd.grad around the
compiled node."""

from __future__ import annotations

import numpy as np
import pytest

import gradgen as torch
from gradgen import nn
from gradgen.compile import CompiledFunctionBackward, Unsupported
from torch_oracle import oracle


def _leaves(*arrays: np.ndarray) -> list[torch.Tensor]:
    return [torch.tensor(a, requires_grad=True) for a in arrays]


def _same(a: torch.Tensor | None, b: torch.Tensor | None) -> None:
    assert a is not None and b is not None
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a.detach().numpy(), b.detach().numpy(), equal_nan=True)


def _q(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return 3 * a**3 - b**2


def test_documents_example_values_and_gradients_match_hand_math_and_torch() -> None:
    a, b = _leaves(np.array([2.0, 3.0]), np.array([6.0, 4.0]))
    compiled = torch.compile(_q)
    q = compiled(a, b)
    assert isinstance(q.grad_fn, CompiledFunctionBackward)
    q.backward(torch.tensor([1.0, 1.0]))
    # dQ/da = 9a^2, dQ/db = -2b
    assert a.grad.tolist() == [36.0, 81.0] and b.grad.tolist() == [-12.0, -8.0]
    expected = oracle(
        "q",
        lambda t: (lambda a, b: (3 * a**3 - b**2).detach().numpy())(
            t.tensor([2.0, 3.0]), t.tensor([6.0, 4.0])
        ),
    )
    assert np.array_equal(q.detach().numpy(), expected)
    assert compiled.breaks == []


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_gradients_equal_eager_to_the_last_bit(dtype: str) -> None:
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((4, 5)).astype(dtype)
    w0 = rng.standard_normal((5, 3)).astype(dtype)
    b0 = rng.standard_normal(3).astype(dtype)

    def fn(x, w, b):
        h = torch.tanh(x @ w + b)  # b broadcasts: its gradient is summed down
        return (h * h).sum(dim=0).exp().mean() + h.sigmoid().sum()

    eager = _leaves(x0, w0, b0)
    compiled = _leaves(x0, w0, b0)
    out_e = fn(*eager)
    out_c = torch.compile(fn)(*compiled)
    _same(out_e, out_c)
    out_e.backward()
    out_c.backward()
    for e, c in zip(eager, compiled):
        _same(e.grad, c.grad)


def test_a_tensor_used_twice_accumulates_as_the_engine_does() -> None:
    (x,) = _leaves(np.array([0.5, -1.5, 2.0]))
    (y,) = _leaves(np.array([0.5, -1.5, 2.0]))

    def fn(t):
        return (t * t.sin() + t.exp() * t).sum()

    fn(x).backward()
    torch.compile(fn)(y).backward()
    _same(x.grad, y.grad)


def test_mlp_training_step_compiles_without_break_and_trains() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    reference = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    reference.load_state_dict(model.state_dict())
    loss_fn = nn.MSELoss()
    x, y = torch.randn(5, 8), torch.randn(5, 2)
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt_ref = torch.optim.SGD(reference.parameters(), lr=0.1)
    for _ in range(3):
        for net, optimizer in ((compiled, opt), (reference, opt_ref)):
            optimizer.zero_grad()
            loss_fn(net(x), y).backward()
            optimizer.step()
    for p, q in zip(model.parameters(), reference.parameters()):
        _same(p, q)
    assert compiled.breaks == [] and len(compiled.cache) == 1


def test_compiled_as_a_decorator_and_its_generated_source() -> None:
    @torch.compile(debug=False)
    def fn(x):
        return (x * 2).relu()

    (x,) = _leaves(np.array([-1.0, 1.0]))
    fn(x).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0]
    (entry,) = fn.cache.values()
    source = entry.program.source
    assert "def forward(" in source and "def backward(" in source
    assert "# relu <- " in source and "ReluBackward0 (derivatives.yaml)" in source


def test_guards_recompile_on_shape_dtype_requires_grad_and_grad_mode() -> None:
    compiled = torch.compile(lambda x: x * 3)
    compiled(torch.ones(2))
    compiled(torch.ones(2))
    assert compiled.compiles == 1
    compiled(torch.ones(3))
    compiled(torch.ones(2, dtype=torch.float64))
    compiled(torch.ones(2, requires_grad=True))
    with torch.no_grad():
        out = compiled(torch.ones(2, requires_grad=True))
    assert out.grad_fn is None
    assert compiled.compiles == 5


def test_python_scalars_are_guarded() -> None:
    compiled = torch.compile(lambda x, k: x * k)
    assert compiled(torch.ones(1), 2.0).tolist() == [2.0]
    assert compiled(torch.ones(1), 5.0).tolist() == [5.0]
    assert compiled.compiles == 2


def test_recompile_limit_then_eager() -> None:
    compiled = torch.compile(lambda x: x + 1)
    for n in range(1, 12):
        assert compiled(torch.zeros(n)).tolist() == [1.0] * n
    assert compiled.compiles == 8


def test_module_training_flag_is_a_guard() -> None:
    layer = nn.Dropout(0.5)
    compiled = torch.compile(layer)
    layer.eval()
    x = torch.ones(4)
    assert compiled(x).tolist() == [1.0] * 4
    layer.train()
    torch.manual_seed(1)
    expected = layer(x)
    torch.manual_seed(1)
    got = compiled(x)  # a second program, its mask drawn as eager draws it
    assert compiled.compiles == 2 and compiled.breaks == []
    assert got.tolist() == expected.tolist() and 0.0 in got.tolist()


def test_parameters_are_read_by_reference() -> None:
    w = torch.tensor([1.0, 2.0], requires_grad=True)

    def fn(x):
        return (x * w).sum()

    compiled = torch.compile(fn)
    x = torch.tensor([1.0, 1.0])
    assert compiled(x).item() == 3.0
    with torch.no_grad():
        w.mul_(2)
    loss = compiled(x)
    assert loss.item() == 6.0
    loss.backward()
    assert w.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    "body, reason",
    [
        (lambda x: x * 2 if x.sum() > 0 else x, "Tensor.__bool__"),
        (lambda x: x * x.sum().item(), "Tensor.item"),
        (lambda x: x * len(x.tolist()), "Tensor.tolist"),
        (lambda x: print(x) or x * 2, "Tensor.__str__"),
        (lambda x: x.add_(1) * 2, "changes an input"),
        (lambda x: x * torch.rand(3), "no recorded operator made"),
    ],
)
def test_graph_breaks_are_explained(body, reason: str) -> None:
    x = torch.tensor([1.0, 2.0, 3.0])
    expected = body(x.clone())
    compiled = torch.compile(body)
    torch.manual_seed(0)
    got = compiled(x.clone())
    if "recorded" not in reason:
        _same(got, expected)
    (record,) = compiled.breaks
    assert reason in record.reason
    explanation = torch._dynamo.explain(body)(x.clone())
    # A value read, or a tensor no operator made, splits the function into compiled
    # pieces; the others run eagerly.
    pieces = 1 if reason.startswith("Tensor.") or "recorded" in reason else 0
    assert explanation.graph_break_count == 1
    assert explanation.graph_count >= pieces and explanation.graph_count <= 2 * pieces
    assert reason in str(explanation)


def test_fullgraph_raises_naming_the_line() -> None:
    def fn(x):
        return x * x.sum().item()

    with pytest.raises(Unsupported, match=r"graph break: Tensor\.item .*test_compile"):
        torch.compile(fn, fullgraph=True)(torch.ones(2))


def test_explain_counts_graphs_and_operators() -> None:
    explanation = torch._dynamo.explain(_q)(*_leaves(np.ones(2), np.ones(2)))
    assert explanation.graph_count == 1 and explanation.graph_break_count == 0
    assert explanation.op_count > 4


def test_hooks_on_leaves_run_and_autograd_grad_works() -> None:
    a, b = _leaves(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    seen = []
    a.register_hook(lambda g: seen.append(g.tolist()))
    q = torch.compile(_q)(a, b)
    (ga,) = torch.autograd.grad(q.sum(), [a], retain_graph=True)
    assert ga.tolist() == [9.0, 36.0] and seen == [[9.0, 36.0]]
    assert a.grad is None
    q.sum().backward()
    assert a.grad.tolist() == [9.0, 36.0] and b.grad.tolist() == [-6.0, -8.0]
    with pytest.raises(RuntimeError, match="backward through the graph a second"):
        q.sum().backward()


def test_saved_input_changed_in_place_is_an_error() -> None:
    (a,) = _leaves(np.array([1.0, 2.0]))
    x = torch.tensor([3.0, 4.0])
    y = torch.compile(lambda a, x: a * x)(a, x)
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_double_backward_is_refused() -> None:
    (a,) = _leaves(np.array([1.0, 2.0]))
    y = torch.compile(lambda a: a * a)(a).sum()
    with pytest.raises(RuntimeError, match="does not support double backward"):
        torch.autograd.grad(y, [a], create_graph=True)


def test_outputs_that_are_inputs_or_repeated_keep_their_identity() -> None:
    (a,) = _leaves(np.array([1.0, 2.0]))
    compiled = torch.compile(lambda a: (a, a * 2, a * 2))
    same, doubled, again = compiled(a)
    assert same is a and doubled is again
    doubled.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]


def test_multiple_outputs_and_unused_gradient() -> None:
    (a,) = _leaves(np.array([1.0, 2.0]))
    u, v = torch.compile(lambda a: (a.exp(), a * 3))(a)
    v.sum().backward()  # u's gradient never arrives: zeros in its place
    assert a.grad.tolist() == [3.0, 3.0]


def test_module_hooks_break_the_graph() -> None:
    layer = nn.Linear(2, 1)
    calls = []
    layer.register_forward_hook(lambda module, args, out: calls.append(1))
    compiled = torch.compile(layer)
    compiled(torch.ones(2))
    compiled(torch.ones(2))
    assert calls == [1, 1]  # eager: the hook runs at every call
    (record,) = compiled.breaks
    assert "module hook" in record.reason and "Linear" in record.reason


def test_factory_tensors_are_constants_of_the_program() -> None:
    def fn(x):
        scale = torch.tensor([1.0, 2.0, 3.0])  # Python data: a constant
        return (x * scale + torch.zeros_like(x)).sum()

    x = torch.tensor([1.0, 1.0, 1.0], requires_grad=True)
    compiled = torch.compile(fn)
    for _ in range(2):
        x.grad = None
        out = compiled(x)
        out.backward()
        assert out.item() == 6.0 and x.grad.tolist() == [1.0, 2.0, 3.0]
    assert compiled.breaks == []


def test_a_constant_gradient_is_not_shared_with_the_program() -> None:
    x = torch.tensor([1.5, -2.5], requires_grad=True)
    compiled = torch.compile(lambda x: x.trunc().sum())  # trunc's gradient: zeros
    (grad,) = torch.autograd.grad(compiled(x), [x])
    grad.add_(1)  # changes the array the backward returned
    (grad,) = torch.autograd.grad(compiled(x), [x])
    assert grad.tolist() == [0.0, 0.0] and compiled.breaks == []


def test_debug_prints_the_generated_source(monkeypatch, capsys) -> None:
    monkeypatch.setenv("GRADGEN_COMPILE_DEBUG", "1")
    compiled = torch.compile(lambda x: x.exp() + x)
    compiled(torch.tensor([1.0]))
    compiled(torch.tensor([2.0]))  # the cached program: printed once
    err = capsys.readouterr().err
    assert err.count("def forward(") == 1 and "# exp <- " in err

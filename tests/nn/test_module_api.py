"""nn.Module's API against torch.nn: buffers, containers, the named walks, state_dict
and load_state_dict, hooks (forward and full backward), repr, .to()/.double(),
copy.deepcopy. Each program runs on gradgen and on torch (recorded in tests/golden/,
see torch_oracle.py) and gives plain data to compare."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle

W1 = np.array([[0.5, -1.0, 0.25], [1.5, 0.75, -0.5]], dtype=np.float32)
B1 = np.array([0.1, -0.2], dtype=np.float32)
W2 = np.array([[2.0, -1.0]], dtype=np.float32)
X = np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 3.0]], dtype=np.float32)


def _set(lib: Any, param: Any, values: np.ndarray) -> None:
    with lib.no_grad():
        param.copy_(lib.tensor(values))


def _model(lib: Any) -> Any:
    """A model that uses every container, a shared block and buffers."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(3, 2)
            self.register_buffer("running", lib.zeros(2))
            self.register_buffer("scratch", lib.ones(1), persistent=False)

        def forward(self, x: Any) -> Any:
            return self.lin(x) + self.running

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.ModuleList([Block(), Block()])
            self.heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.Identity()})
            self.scales = nn.ParameterList([nn.Parameter(lib.ones(2)), lib.zeros(1)])
            self.extra = nn.ParameterDict({"p": nn.Parameter(lib.ones(3))})
            self.shared = self.blocks[0]
            self.register_buffer("steps", lib.tensor(0))

        def forward(self, x: Any) -> Any:
            x = self.blocks[0](x) + self.blocks[1](x)
            return self.heads["a"](x * self.scales[0]) + self.scales[1]

    return Net()


def test_named_walks_match_torch() -> None:
    def run(lib: Any) -> Any:
        net = _model(lib)
        return {
            "parameters": [n for n, _ in net.named_parameters()],
            "all parameters": [
                n for n, _ in net.named_parameters(remove_duplicate=False)
            ],
            "own parameters": [
                n for n, _ in net.blocks[0].named_parameters("x", False)
            ],
            "buffers": [n for n, _ in net.named_buffers()],
            "buffers no dup": [n for n, _ in net.named_buffers(remove_duplicate=False)],
            "prefixed buffers": [n for n, _ in net.named_buffers(prefix="m")],
            "modules": [n for n, _ in net.named_modules()],
            "all modules": [n for n, _ in net.named_modules(remove_duplicate=False)],
            "children": [n for n, _ in net.named_children()],
            "counts": [
                len(list(net.parameters())),
                len(list(net.buffers())),
                len(list(net.modules())),
                len(list(net.children())),
            ],
            "state_dict": list(net.state_dict()),
            "submodule": type(net.get_submodule("blocks.1.lin")).__name__,
            "parameter shape": list(net.get_parameter("heads.a.weight").shape),
            "buffer": net.get_buffer("blocks.0.running").tolist(),
            "lens": [len(net.blocks), len(net.heads), len(net.scales), len(net.extra)],
            "keys": [list(net.heads.keys()), list(net.extra.keys()), "a" in net.heads],
        }

    assert run(gradgen) == oracle("walks", run)


def test_lookup_errors_match_torch() -> None:
    def run(lib: Any) -> Any:
        net = _model(lib)
        out = []
        for call in (
            lambda: net.get_submodule("blocks.7"),
            lambda: net.get_submodule("steps"),
            lambda: net.get_parameter("blocks.0.nothing"),
            lambda: net.get_parameter("steps"),
            lambda: net.get_buffer("blocks.0.lin.weight"),
            lambda: net.blocks[2],
            lambda: net.register_buffer("a.b", None),
            lambda: net.register_buffer("blocks", None),
            lambda: net.register_buffer("x", 3),
            lambda: net.add_module("x", 3),
            lambda: net.register_parameter("w", lib.ones(2)),
            lambda: setattr(net, "steps", 3),
            lambda: net.to(lib.int64),
            lambda: net.load_state_dict([1]),
            lambda: net.heads.update(3),
            lambda: net.heads.update([("a",)]),
            lambda: net.extra[1],
            lambda: net.scales(),
        ):
            try:
                call()
                out.append(None)
            except Exception as error:  # noqa: BLE001 - the error is the answer
                out.append(f"{type(error).__name__}: {error}")
        return out

    theirs = [
        None if t is None else t.replace("torch.int64", "torch.int64")
        for t in oracle("errors", run)
    ]
    ours = run(gradgen)
    # "<class 'list'>" is the same text in both; the Python type of the dict-like
    # error is named the same way.
    assert ours == theirs


def test_state_dict_round_trip_and_buffers_match_torch() -> None:
    def run(lib: Any) -> Any:
        net = _model(lib)
        state = net.state_dict()
        state["blocks.0.running"] = lib.tensor([1.0, 2.0])
        state["steps"] = lib.tensor(5)
        other = _model(lib)
        result = other.load_state_dict(state)
        keep = other.state_dict(keep_vars=True)
        return {
            "result": repr(result),
            "metadata": sorted(state._metadata),
            "version": state._metadata["blocks.0"],
            "running": other.blocks[0].running.tolist(),
            "steps": other.steps.item(),
            "keep_vars": keep["heads.a.weight"] is other.heads.a.weight,
            "detached": net.state_dict()["heads.a.weight"].requires_grad,
        }

    assert run(gradgen) == oracle("round trip", run)


def test_load_state_dict_errors_match_torch() -> None:
    def run(lib: Any) -> Any:
        out = []
        nn = lib.nn
        for strict in (True, False):
            net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
            state = net.state_dict()
            del state["2.bias"]
            state["1.weight"] = lib.zeros(1)
            state["5.bias"] = lib.zeros(1)
            state["0.weight"] = lib.zeros(3, 3)
            state["0.bias"] = "not a tensor"
            try:
                out.append(repr(net.load_state_dict(state, strict=strict)))
            except RuntimeError as error:
                out.append(str(error))
        net = nn.Linear(2, 1)
        keys = net.load_state_dict(
            {"weight": lib.ones(1, 2), "bias": lib.ones(1)}, strict=False
        )
        out.append([repr(keys), keys.missing_keys, keys.unexpected_keys])
        net.register_load_state_dict_post_hook(lambda m, k: k.missing_keys.clear())
        out.append(repr(net.load_state_dict({"weight": lib.ones(1, 2)})))
        return out

    theirs = oracle("errors", run)
    theirs = [t.replace("torch.Size", "gradgen.Size") for t in theirs[:2]] + theirs[2:]
    assert run(gradgen) == theirs


def test_assign_and_persistent_flags() -> None:
    net = gradgen.nn.Linear(2, 1)
    weight = gradgen.ones(1, 2)
    net.load_state_dict({"weight": weight, "bias": gradgen.zeros(1)}, assign=True)
    assert isinstance(net.weight, gradgen.nn.Parameter)
    assert net.weight.requires_grad and net.weight.tolist() == [[1.0, 1.0]]
    net.register_buffer("tmp", gradgen.ones(1), persistent=False)
    net.register_buffer("tmp", gradgen.ones(2))  # registered again: now persistent
    assert "tmp" in net.state_dict()
    del net.tmp
    assert "tmp" not in dict(net.named_buffers())


def _hooked(lib: Any) -> Any:
    lin = lib.nn.Linear(3, 2)
    _set(lib, lin.weight, W1)
    _set(lib, lin.bias, B1)
    return lin


def test_forward_hooks_match_torch() -> None:
    def run(lib: Any) -> Any:
        lin = _hooked(lib)
        calls = []
        h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        h2 = lin.register_forward_hook(lambda m, args, out: out + 1)
        h3 = lin.register_forward_hook(
            lambda m, args, kwargs, out: calls.append(sorted(kwargs)), with_kwargs=True
        )
        h4 = lin.register_forward_pre_hook(
            lambda m, args: calls.append("first"), prepend=True
        )
        h5 = lin.register_forward_pre_hook(
            lambda m, args, kwargs: (args, kwargs), with_kwargs=True
        )
        x = lib.tensor(X)
        hooked = lin(x).tolist()
        for handle in (h1, h2, h3, h4, h5):
            handle.remove()
        plain = lin(x).tolist()
        with lin.register_forward_hook(lambda m, a, o: o * 0):
            zeroed = lin(x).tolist()
        bad = lin.register_forward_pre_hook(lambda m, a, k: 3, with_kwargs=True)
        try:
            lin(x)
        except RuntimeError as error:
            calls.append(str(error))
        bad.remove()
        return hooked, plain, zeroed, calls, lin(x).tolist() == plain

    assert run(gradgen) == oracle("forward hooks", run)


def test_full_backward_hooks_match_torch() -> None:
    def run(lib: Any) -> Any:
        lin = _hooked(lib)
        seen: list[Any] = []

        def pre_hook(module: Any, grad_output: Any) -> Any:
            seen.append(["pre", [g.tolist() for g in grad_output]])
            return (grad_output[0] * 2,)

        def hook(module: Any, grad_input: Any, grad_output: Any) -> Any:
            seen.append(
                [
                    "full",
                    [None if g is None else g.tolist() for g in grad_input],
                    [g.tolist() for g in grad_output],
                ]
            )
            return None if grad_input[0] is None else (grad_input[0] * 10,)

        lin.register_full_backward_pre_hook(pre_hook)
        handle = lin.register_full_backward_hook(hook)
        x = lib.tensor(X, requires_grad=True)
        (lin(x) * lib.tensor([1.0, -1.0])).sum().backward()
        grads = [x.grad.tolist(), lin.weight.grad.tolist(), lin.bias.grad.tolist()]
        # An input that takes no gradient: the hook sees None for it (and warns).
        with pytest.warns(UserWarning, match="Full backward hook is firing"):
            (lin(lib.tensor(X)) ** 2).sum().backward()
        handle.remove()
        return seen, grads

    assert run(gradgen) == oracle("backward hooks", run)


def test_state_dict_hooks() -> None:
    net = gradgen.nn.Linear(2, 1)
    seen = []
    net.register_state_dict_pre_hook(lambda m, prefix, keep: seen.append(prefix))
    handle = net.register_state_dict_post_hook(
        lambda m, state, prefix, meta: state.pop(prefix + "bias")
    )
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        net.state_dict()
    handle.remove()
    net.register_state_dict_post_hook(
        lambda m, state, prefix, meta: state.__delitem__(prefix + "bias")
    )
    assert list(net.state_dict(prefix="top.")) == ["top.weight"]
    assert seen == ["", "top."]


def test_repr_matches_torch() -> None:
    def run(lib: Any) -> Any:
        nn = lib.nn
        net = _model(lib)
        seq = nn.Sequential(
            OrderedDict(
                [("first", nn.Linear(2, 2, bias=False)), ("act", nn.GELU("tanh"))]
            )
        )
        repeated = nn.ModuleList(
            [nn.ReLU(), nn.ReLU(), nn.Tanh(), nn.Tanh(), nn.ReLU()]
        )
        return [
            repr(net),
            repr(seq),
            repr(seq[1:]),
            repr(repeated),
            repr(nn.ModuleList()),
            repr(nn.ParameterDict()),
        ]

    theirs = [
        text.replace("torch.float32", "gradgen.float32") for text in oracle("repr", run)
    ]
    assert run(gradgen) == theirs


def test_containers_edit_like_torch() -> None:
    def run(lib: Any) -> Any:
        nn = lib.nn
        seq = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())
        seq.insert(1, nn.Identity())
        seq.append(nn.ReLU6())
        popped = type(seq.pop(0)).__name__
        del seq[1]
        seq[0] = nn.SiLU()
        lst = nn.ModuleList([nn.ReLU()])
        lst += [nn.Tanh()]
        lst.insert(1, nn.Identity())
        lst.extend([nn.GELU()])
        del lst[0]
        both = lst + nn.ModuleList([nn.ReLU()])
        params = nn.ParameterList([lib.ones(1)])
        params.append(lib.zeros(2))
        params.extend([nn.Parameter(lib.ones(3))])
        pdict = nn.ParameterDict({"a": lib.ones(1)})
        pdict.update([("b", lib.zeros(2))])
        pdict["c"] = "text"
        popped_value = pdict.pop("a").tolist()
        mdict = nn.ModuleDict([("x", nn.ReLU())])
        mdict.update({"y": nn.Tanh()})
        return [
            popped,
            [type(m).__name__ for m in seq],
            list(dict(seq.named_children())),
            [type(m).__name__ for m in lst],
            list(dict(lst.named_children())),
            [type(m).__name__ for m in both],
            [type(p).__name__ for p in params],
            [n for n, _ in params.named_parameters()],
            list(pdict.keys()),
            [n for n, _ in pdict.named_parameters()],
            popped_value,
            pdict.get("c"),
            list(mdict),
            [type(m).__name__ for m in mdict.values()],
            type(mdict.pop("x")).__name__,
            len(mdict),
        ]

    assert run(gradgen) == oracle("edits", run)


def test_to_double_and_float_convert_parameters_and_buffers() -> None:
    def run(lib: Any) -> Any:
        net = _model(lib)
        weight = net.heads.a.weight
        net.double()
        after_double = [
            str(weight.dtype).split(".")[-1],
            weight is net.heads.a.weight,
            str(net.blocks[0].running.dtype).split(".")[-1],
            str(net.steps.dtype).split(".")[-1],
        ]
        net.float()
        net.to(lib.float64)
        net.to(dtype=lib.float32)
        return after_double, [
            str(t.dtype).split(".")[-1] for t in net.state_dict().values()
        ]

    assert run(gradgen) == oracle("conversions", run)


def test_zero_grad_requires_grad_apply_and_train() -> None:
    def run(lib: Any) -> Any:
        net = _model(lib)
        out = net(lib.tensor(X)).sum()
        out.backward()
        has_grad = [p.grad is not None for p in net.parameters()]
        net.zero_grad(set_to_none=False)
        zeroed = [
            p.grad.abs().sum().item() for p in net.parameters() if p.grad is not None
        ]
        net.zero_grad()
        cleared = [p.grad is None for p in net.parameters()]
        net.requires_grad_(False)
        frozen = [p.requires_grad for p in net.parameters()]
        names: list[str] = []
        net.apply(lambda m: names.append(type(m).__name__))
        net.eval()
        modes = [m.training for m in net.modules()]
        return has_grad, zeroed, cleared, frozen, names, modes

    assert run(gradgen) == oracle("grads and modes", run)


def test_deepcopy_copies_parameters_buffers_and_structure() -> None:
    net = _model(gradgen)
    net(gradgen.tensor(X)).sum().backward()
    clone = copy.deepcopy(net)
    assert [n for n, _ in clone.named_parameters()] == [
        n for n, _ in net.named_parameters()
    ]
    assert clone.shared is clone.blocks[0]  # sharing kept
    for (_, mine), (_, theirs) in zip(
        net.state_dict(keep_vars=True).items(), clone.state_dict(keep_vars=True).items()
    ):
        assert mine is not theirs
        assert np.array_equal(mine.detach().numpy(), theirs.detach().numpy())
    cloned_weight = clone.heads.a.weight
    assert isinstance(cloned_weight, gradgen.nn.Parameter)
    assert cloned_weight.requires_grad and cloned_weight.grad is None  # as PyTorch's
    with gradgen.no_grad():
        cloned_weight.mul_(0.0)
    assert net.heads.a.weight.abs().sum().item() > 0

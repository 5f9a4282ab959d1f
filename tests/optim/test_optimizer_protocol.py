"""The Optimizer protocol against torch.optim: state dicts (structure, keys, shapes,
values; a state dict made by PyTorch loads and steps on), param groups and their
errors, repr, zero_grad, closures, version counters, and PyTorch's argument errors."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import optim
from gradgen.optim.optimizer import required
from torch_oracle import oracle, outcome

STATE_CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("Adam", dict(amsgrad=True)),
    ("AdamW", dict()),
    ("RMSprop", dict(centered=True, momentum=0.5)),
    ("Adagrad", dict()),
    ("Adadelta", dict()),
    ("Adamax", dict()),
    ("NAdam", dict()),
    ("RAdam", dict()),
    ("Rprop", dict()),
    ("ASGD", dict(t0=1)),
    ("LBFGS", dict(max_iter=3)),
]


def plain(value: Any) -> Any:
    """A state value as recordable data: tensors as arrays, containers item by item."""
    if hasattr(value, "detach"):
        return value.detach().numpy().copy()
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    return value


def stepped(lib: Any, name: str, options: dict[str, Any]) -> Any:
    """An optimizer over two groups (one parameter unused) after two steps."""
    w = lib.tensor(np.array([[0.5, -1.0], [2.0, 0.25]]), requires_grad=True)
    b = lib.tensor(np.array([0.1, -0.3]), requires_grad=True)
    unused = lib.tensor(np.array([1.0]), requires_grad=True)
    if name == "LBFGS":
        optimizer = lib.optim.LBFGS([w, b, unused], **options)
    else:
        groups = [{"params": [w]}, {"params": [b, unused], "lr": 0.05}]
        optimizer = getattr(lib.optim, name)(groups, **options)

    def closure() -> Any:
        optimizer.zero_grad()
        loss = ((w @ b).sin() ** 2).sum() + (b**3).sum()
        loss.backward()
        return loss

    for _ in range(2):
        optimizer.step(closure)
    return optimizer


def packed(optimizer: Any) -> dict[str, Any]:
    """A state dict as recordable data; the order of keys (which a golden's JSON does
    not keep) as lists of names."""
    state = optimizer.state_dict()
    return {
        "state": [[index, plain(value)] for index, value in state["state"].items()],
        "param_groups": [plain(group) for group in state["param_groups"]],
        "order": [list(state)]
        + [list(value) for value in state["state"].values()]
        + [list(group) for group in state["param_groups"]],
    }


def same(ours: Any, theirs: Any) -> None:
    """Equal data: arrays to float64 rounding and of the same dtype and shape."""
    if isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray) and ours.dtype == theirs.dtype
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (ours, theirs)
        for mine, torchs in zip(ours, theirs):
            same(mine, torchs)
    elif isinstance(theirs, dict):
        assert sorted(ours) == sorted(theirs), (list(ours), list(theirs))
        for key in theirs:
            same(ours[key], theirs[key])
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-12)
    else:
        assert ours == theirs


@pytest.mark.parametrize(("name", "options"), STATE_CONFIGS)
def test_state_dict_is_pytorchs(name: str, options: dict[str, Any]) -> None:
    ours = packed(stepped(gradgen, name, options))
    theirs = oracle("state dict", lambda torch: packed(stepped(torch, name, options)))
    same(ours, theirs)


def test_state_dict_from_pytorch_loads_and_steps_on() -> None:
    """PyTorch's Adam state dict, rebuilt with gradgen tensors, loads into gradgen's
    Adam, and the next step moves the parameters where PyTorch's next step does."""

    def run(lib: Any) -> dict[str, Any]:
        optimizer = stepped(lib, "Adam", dict(amsgrad=True))
        params = _params(optimizer)
        before = [p.detach().numpy().copy() for p in params]
        state = packed(optimizer)
        for p in params:
            p.grad = lib.ones_like(p)
        optimizer.step()
        after = [p.detach().numpy() for p in params]
        return {"state": state, "before": before, "after": after}

    theirs = oracle("run", run)
    params = [gradgen.tensor(value, requires_grad=True) for value in theirs["before"]]
    optimizer = optim.Adam([{"params": params[:1]}, {"params": params[1:]}])
    saved = theirs["state"]
    optimizer.load_state_dict(
        {
            "state": {
                index: {key: gradgen.tensor(v) for key, v in value.items()}
                for index, value in saved["state"]
            },
            "param_groups": [
                dict(group, betas=tuple(group["betas"]))
                for group in saved["param_groups"]
            ],
        }
    )
    assert optimizer.param_groups[1]["lr"] == 0.05
    assert optimizer.param_groups[0]["amsgrad"] is True
    assert optimizer.state[params[1]]["step"].dtype == gradgen.float32
    for p in params:
        p.grad = gradgen.ones_like(p)
    optimizer.step()
    for mine, torchs in zip(params, theirs["after"]):
        np.testing.assert_allclose(mine.detach().numpy(), torchs, rtol=0, atol=1e-14)


def _params(optimizer: Any) -> list[Any]:
    return [p for group in optimizer.param_groups for p in group["params"]]


@pytest.mark.parametrize(("name", "options"), STATE_CONFIGS[:-1])
def test_state_dict_round_trip_continues_identically(
    name: str, options: dict[str, Any]
) -> None:
    first = stepped(gradgen, name, options)
    second = stepped(gradgen, name, options)
    saved = first.state_dict()
    third = getattr(optim, name)(
        [{"params": second.param_groups[0]["params"]}, {"params": _params(second)[1:]}],
        **options,
    )
    third.load_state_dict(saved)
    assert third.param_groups[1]["lr"] == first.param_groups[1]["lr"]
    for optimizer in (first, third):
        for p in _params(optimizer):
            p.grad = gradgen.full_like(p, 0.5)
        optimizer.step()
    # Equal but for NAdam's "mu_product" and ASGD's "eta" and "mu", float32 tensors
    # that become the parameters' float64 when loaded (PyTorch casts every state
    # tensor but "step").
    rtol = 1e-6 if name in ("NAdam", "ASGD") else 0.0
    for mine, other in zip(_params(first), _params(third)):
        np.testing.assert_allclose(
            mine.detach().numpy(), other.detach().numpy(), rtol=rtol, atol=0
        )
    # gradgen copies what it loads (PyTorch may share the tensors), so both states
    # stepped once each and still agree.
    if name not in ("NAdam", "ASGD"):  # (float64 after the load)
        same(packed(first)["state"], packed(third)["state"])


def test_load_state_dict_errors_match_torch() -> None:
    def attempt(lib: Any) -> list[Any]:
        optimizer = stepped(lib, "Adam", {})
        one_group = lib.optim.Adam([lib.tensor([1.0], requires_grad=True)])
        other = lib.optim.Adam(
            [
                {"params": [lib.tensor([1.0], requires_grad=True)]},
                {"params": [lib.tensor([1.0], requires_grad=True)]},
            ]
        )
        return [
            outcome(lambda: one_group.load_state_dict(optimizer.state_dict())),
            outcome(lambda: other.load_state_dict(optimizer.state_dict())),
        ]

    ours, theirs = attempt(gradgen), oracle("errors", attempt)
    for mine, torchs in zip(ours, theirs):
        assert type(mine) is type(torchs) and str(mine) == str(torchs)


# -- groups ----------------------------------------------------------------------------


def group_errors(lib: Any) -> list[Any]:
    p = lib.tensor([1.0], requires_grad=True)
    q = lib.tensor([2.0], requires_grad=True)
    sgd = lib.optim.SGD([p], lr=0.1)
    return [
        outcome(lambda: sgd.add_param_group({"params": [p]})),
        outcome(lambda: sgd.add_param_group([q])),
        outcome(lambda: sgd.add_param_group({"params": {q}})),
        outcome(lambda: sgd.add_param_group({"params": [[1.0]]})),
        outcome(lambda: sgd.add_param_group({"params": [q * 2]})),
        outcome(lambda: lib.optim.SGD([], lr=0.1)),
        outcome(lambda: lib.optim.SGD(p, lr=0.1)),
        outcome(lambda: lib.optim.SGD([("w", p), q], lr=0.1)),
        outcome(lambda: lib.optim.Optimizer([q], {"lr": required_of(lib)})),
    ]


def required_of(lib: Any) -> Any:
    return sys.modules[lib.optim.__name__ + ".optimizer"].required


def test_param_group_errors_match_torch() -> None:
    ours, theirs = group_errors(gradgen), oracle("errors", group_errors)
    for index, (mine, torchs) in enumerate(zip(ours, theirs)):
        assert type(mine).__name__ == type(torchs).__name__, index
        # torch.typename names torch's classes: gradgen names its own.
        assert str(mine) == str(torchs).replace("torch.", "gradgen."), index


def test_param_groups_defaults_names_and_duplicates() -> None:
    p = gradgen.tensor([1.0], requires_grad=True)
    q = gradgen.tensor([2.0], requires_grad=True)
    optimizer = optim.Adam([("w", p)], lr=0.5)
    assert optimizer.param_groups[0]["param_names"] == ["w"]
    optimizer.add_param_group({"params": [("b", q)], "betas": (0.5, 0.6)})
    assert optimizer.param_groups[1]["lr"] == 0.5
    assert optimizer.param_groups[1]["betas"] == (0.5, 0.6)
    with pytest.raises(ValueError, match="cannot add param group without names"):
        optimizer.add_param_group(
            {"params": [gradgen.tensor([0.0], requires_grad=True)]}
        )
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([p, p], lr=0.1)
    with pytest.raises(
        ValueError, match="didn't specify a value of required optimization parameter lr"
    ):
        optim.Optimizer([p], {"lr": required})


def test_repr_matches_torch() -> None:
    def text(lib: Any) -> list[str]:
        p = lib.tensor([1.0], requires_grad=True)
        q = lib.tensor([1.0], requires_grad=True)
        return [
            repr(lib.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.5}], lr=0.1)),
            repr(lib.optim.AdamW([p])),
            repr(lib.optim.LBFGS([p], line_search_fn="strong_wolfe")),
        ]

    assert text(gradgen) == oracle("text", text)


def test_defaults_match_torch() -> None:
    names = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax"]
    names += ["NAdam", "RAdam", "Rprop", "ASGD", "LBFGS"]

    def defaults(lib: Any) -> dict[str, Any]:
        p = lib.tensor([1.0], requires_grad=True)
        return {name: getattr(lib.optim, name)([p]).defaults for name in names}

    same(defaults(gradgen), oracle("defaults", defaults))


# -- arguments -------------------------------------------------------------------------

BAD_ARGUMENTS = [
    ("SGD", dict(lr=-0.1)),
    ("SGD", dict(momentum=-1)),
    ("SGD", dict(weight_decay=-1)),
    ("SGD", dict(nesterov=True)),
    ("Adam", dict(lr=-1)),
    ("Adam", dict(betas=(1.0, 0.9))),
    ("Adam", dict(fused=True, foreach=True)),
    ("Adam", dict(fused=True, differentiable=True)),
    ("AdamW", dict(eps=-1)),
    ("RMSprop", dict(alpha=-0.5)),
    ("RMSprop", dict(momentum=-0.5)),
    ("Adagrad", dict(lr_decay=-1)),
    ("Adagrad", dict(initial_accumulator_value=-1)),
    ("Adadelta", dict(rho=1.5)),
    ("Adamax", dict(betas=(0.9, -0.1))),
    ("NAdam", dict(momentum_decay=-1)),
    ("RAdam", dict(weight_decay=-1)),
    ("LBFGS", dict(lr=-1)),
    ("Rprop", dict(etas=(0.5, 0.9))),
    ("ASGD", dict(weight_decay=-1)),
]


@pytest.mark.parametrize(("name", "options"), BAD_ARGUMENTS)
def test_argument_errors_match_torch(name: str, options: dict[str, Any]) -> None:
    def attempt(lib: Any) -> Any:
        p = lib.tensor([1.0], requires_grad=True)
        return outcome(lambda: getattr(lib.optim, name)([p], **options))

    ours, theirs = attempt(gradgen), oracle("error", attempt)
    assert isinstance(theirs, Exception)
    assert type(ours).__name__ == type(theirs).__name__ and str(ours) == str(theirs)


# -- stepping --------------------------------------------------------------------------


@pytest.mark.parametrize("name", [name for name, _ in STATE_CONFIGS[1:]])
def test_step_in_place_without_graph(name: str) -> None:
    p = gradgen.tensor([1.0, -2.0], requires_grad=True)
    optimizer = getattr(optim, name)([p])
    counts = []

    def closure() -> gradgen.Tensor:
        assert gradgen.is_grad_enabled()
        counts.append(p._version)
        optimizer.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with gradgen.no_grad():
        loss = optimizer.step(closure)
    assert isinstance(loss, gradgen.Tensor) and loss.item() == 5.0
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    assert p._version > counts[0]
    assert not np.allclose(p.detach().numpy(), [1.0, -2.0])


def test_zero_grad_and_skipped_parameters() -> None:
    p = gradgen.tensor([1.0, 2.0], requires_grad=True)
    unused = gradgen.tensor([5.0], requires_grad=True)
    optimizer = optim.RMSprop([p, unused])
    (p * p).sum().backward()
    grad = p.grad
    version = grad._version
    optimizer.zero_grad(set_to_none=False)
    assert p.grad is grad and p.grad.tolist() == [0.0, 0.0]
    assert grad._version == version + 1
    optimizer.zero_grad()
    assert p.grad is None
    (p * p).sum().backward()
    optimizer.step()
    assert unused.item() == 5.0 and unused not in optimizer.state
    # Adagrad keeps state for every parameter from the start, as PyTorch does.
    adagrad = optim.Adagrad([p, unused], initial_accumulator_value=0.5)
    assert adagrad.state[unused]["sum"].tolist() == [0.5]


def test_tensor_lr_and_scheduling_a_group_rate() -> None:
    p = gradgen.tensor([1.0], requires_grad=True)
    optimizer = optim.SGD([p], lr=gradgen.tensor(0.5))
    (p * p).sum().backward()
    optimizer.step()
    assert p.item() == pytest.approx(0.0)


def test_no_warning_on_ordinary_use() -> None:
    p = gradgen.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        optimizer = optim.NAdam([p])
        (p * 3).sum().backward()
        optimizer.step()


# -- hooks -----------------------------------------------------------------------------


def hook_calls(lib: Any) -> list[Any]:
    """The order and arguments PyTorch calls an optimizer's hooks with."""
    calls: list[Any] = []
    module = sys.modules[lib.optim.__name__ + ".optimizer"]
    p = lib.tensor([1.0], requires_grad=True)
    optimizer = lib.optim.SGD([p], lr=0.5)

    def pre(opt: Any, args: Any, kwargs: Any) -> Any:
        calls.append(["pre", opt is optimizer, len(args), sorted(kwargs)])
        return args[:1], {"closure": None}  # the optimizer, then no closure

    handles = [
        optimizer.register_step_pre_hook(pre),
        optimizer.register_step_post_hook(
            lambda opt, args, kwargs: calls.append(["post", sorted(kwargs)])
        ),
        module.register_optimizer_step_pre_hook(
            lambda opt, args, kwargs: calls.append(["global pre"])
        ),
        module.register_optimizer_step_post_hook(
            lambda opt, args, kwargs: calls.append(["global post"])
        ),
        optimizer.register_state_dict_pre_hook(lambda opt: calls.append(["sd pre"])),
        optimizer.register_state_dict_post_hook(
            lambda opt, sd: calls.append(["sd post", sorted(sd)])
        ),
        optimizer.register_load_state_dict_pre_hook(
            lambda opt, sd: calls.append(["load pre"]), prepend=True
        ),
        optimizer.register_load_state_dict_post_hook(
            lambda opt: calls.append(["load post"])
        ),
    ]
    p.grad = lib.ones_like(p)
    optimizer.step(lambda: None)
    optimizer.load_state_dict(optimizer.state_dict())
    for handle in handles:
        handle.remove()
    optimizer.step()
    optimizer.state_dict()
    calls.append(["p", float(p.detach()[0])])
    return calls


def test_hooks_are_called_as_in_torch() -> None:
    assert hook_calls(gradgen) == oracle("calls", hook_calls)


def test_a_step_calling_its_parents_step_runs_the_hooks_once() -> None:
    class Slow(optim.SGD):
        def step(self, closure: Any = None) -> Any:
            return super().step(closure)

    p = gradgen.tensor([1.0], requires_grad=True)
    optimizer = Slow([p], lr=0.1)
    calls: list[str] = []
    optimizer.register_step_post_hook(lambda *args: calls.append("post"))
    p.grad = gradgen.ones_like(p)
    optimizer.step()
    assert calls == ["post"] and p.item() == pytest.approx(0.9)
    optimizer.register_step_pre_hook(lambda *args: "bad")
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        optimizer.step()

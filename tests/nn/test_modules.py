"""gradgen.nn: Parameter, Module registration, Linear (values, gradients, init) and
the small layers, checked against numpy computations and torch.nn (recorded in
tests/golden/, see torch_oracle.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import nn
from gradgen.nn import functional as F
from gradgen.nn.modules.module import _overwrite_
from torch_oracle import oracle


def f64(values: Any) -> gradgen.Tensor:
    return gradgen.tensor(np.asarray(values, dtype=np.float64))


def linear64(in_features: int, out_features: int, bias: bool = True) -> nn.Linear:
    return nn.Linear(in_features, out_features, bias=bias, dtype=gradgen.float64)


# -- Parameter -------------------------------------------------------------------------


def test_parameter_is_a_leaf_tensor_that_requires_grad() -> None:
    data = gradgen.tensor([1.0, 2.0])
    p = nn.Parameter(data)
    assert isinstance(p, gradgen.Tensor)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    assert p.tolist() == [1.0, 2.0]
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    # Results of operators are plain tensors with a history.
    q = p * 2
    assert type(q) is gradgen.Tensor and q.grad_fn is not None


def test_parameter_options_and_errors() -> None:
    assert not nn.Parameter(gradgen.zeros(2), requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(gradgen.tensor([1, 2]))
    with pytest.raises(TypeError, match="must be a Tensor"):
        nn.Parameter([1.0, 2.0])  # type: ignore[arg-type]


# -- Module registration ---------------------------------------------------------------


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.scale = nn.Parameter(gradgen.ones(4))
        self.not_a_parameter = gradgen.ones(4, requires_grad=True)
        self.act = nn.ReLU()

    def forward(self, x: gradgen.Tensor) -> gradgen.Tensor:
        return self.act(self.fc(x)) * self.scale


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Parameter(gradgen.zeros(1))
        self.block = Block()
        self.head = nn.Linear(4, 2, bias=False)
        self.tied = self.head  # the same module twice: its parameters count once

    def forward(self, x: gradgen.Tensor) -> gradgen.Tensor:
        return self.head(self.block(x)) + self.first


def test_named_parameters_in_registration_order() -> None:
    net = Net()
    # A module's own parameters come before its children's (as PyTorch).
    names = [name for name, _ in net.named_parameters()]
    assert names == [
        "first",
        "block.scale",
        "block.fc.weight",
        "block.fc.bias",
        "head.weight",
    ]
    assert [p for p in net.parameters()][2] is net.block.fc.weight
    assert [name for name, _ in net.named_parameters(recurse=False)] == ["first"]
    assert [name for name, _ in net.named_modules()] == [
        "",
        "block",
        "block.fc",
        "block.act",
        "head",
    ]
    assert [name for name, _ in net.named_children()] == ["block", "head"]
    assert [name for name, _ in net.named_parameters(remove_duplicate=False)][
        -1
    ] == "tied.weight"


def test_named_parameters_match_torch() -> None:
    def theirs(torch: Any) -> dict[str, Any]:
        tnn = torch.nn

        class TorchBlock(tnn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.fc = tnn.Linear(3, 4)
                self.scale = tnn.Parameter(torch.ones(4))
                self.act = tnn.ReLU()

        class TorchNet(tnn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.first = tnn.Parameter(torch.zeros(1))
                self.block = TorchBlock()
                self.head = tnn.Linear(4, 2, bias=False)
                self.tied = self.head

        reference = tnn.Sequential(
            tnn.Linear(2, 8), tnn.Tanh(), tnn.Linear(8, 1), tnn.Sigmoid()
        )
        return {
            "net": [(n, tuple(p.shape)) for n, p in TorchNet().named_parameters()],
            "sequential": [n for n, _ in reference.named_parameters()],
            "repr": repr(reference),
            "relu repr": repr(tnn.ReLU(inplace=True)),
        }

    expected = oracle("names and reprs", theirs)
    ours = [(n, tuple(p.shape)) for n, p in Net().named_parameters()]
    assert ours == expected["net"]
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1), nn.Sigmoid())
    assert [n for n, _ in model.named_parameters()] == expected["sequential"]
    assert repr(model) == expected["repr"]
    assert repr(nn.ReLU(inplace=True)) == expected["relu repr"]
    assert repr(Net().block) != ""  # custom modules print their children


def test_attribute_assignment_rules() -> None:
    net = Net()
    # A tensor that is not a Parameter stays a plain attribute.
    assert all(p is not net.block.not_a_parameter for p in net.parameters())
    # None may replace a parameter or a module; anything else may not.
    net.block.scale = None
    assert "block.scale" not in dict(net.named_parameters())
    with pytest.raises(
        TypeError, match="cannot assign 'torch.FloatTensor' as parameter 'scale'"
    ):
        net.block.scale = gradgen.ones(4)
    with pytest.raises(TypeError, match="as child module 'fc'"):
        net.block.fc = 3
    # Re-assigning a name moves it between registries.
    net.block.act = nn.Parameter(gradgen.zeros(1))
    assert "block.act" in dict(net.named_parameters())
    assert "act" not in net.block._modules
    del net.block.act
    assert "block.act" not in dict(net.named_parameters())
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'missing'"):
        net.missing


def test_assignment_before_init_is_an_error() -> None:
    class Early(nn.Module):
        def __init__(self) -> None:
            self.w = nn.Parameter(gradgen.zeros(1))

    with pytest.raises(AttributeError, match=r"before Module.__init__\(\) call"):
        Early()


def test_register_parameter_and_add_module() -> None:
    module = nn.Module()
    module.register_parameter("w", nn.Parameter(gradgen.zeros(2)))
    module.add_module("child", nn.Linear(2, 2))
    assert [n for n, _ in module.named_parameters()] == [
        "w",
        "child.weight",
        "child.bias",
    ]
    with pytest.raises(KeyError, match="parameter name can.*contain"):
        module.register_parameter("a.b", None)
    with pytest.raises(TypeError, match="torch.nn.Parameter or None required"):
        module.register_parameter("v", gradgen.zeros(2))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="is not a Module subclass"):
        module.add_module("x", 3)  # type: ignore[arg-type]


def test_forward_missing() -> None:
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(gradgen.zeros(1))


def test_train_and_eval_reach_every_submodule() -> None:
    net = Net()
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())


def test_module_zero_grad() -> None:
    net = Net()
    net(gradgen.randn(5, 3)).sum().backward()
    grads = {name: p.grad for name, p in net.named_parameters()}
    assert all(g is not None for g in grads.values())
    net.zero_grad(set_to_none=False)
    for name, p in net.named_parameters():
        assert p.grad is grads[name]  # zeroed in place, as PyTorch
        assert np.all(p.grad.numpy() == 0) and p.grad.shape == p.shape
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_zero_grad_in_place_clears_nan() -> None:
    p = nn.Parameter(gradgen.zeros(3))
    p.grad = gradgen.tensor([np.nan, np.inf, 1.0])
    version = p.grad._version
    holder = nn.Module()
    holder.p = p
    holder.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0, 0.0]
    assert p.grad._version == version + 1


# -- Linear ----------------------------------------------------------------------------


def test_linear_forward_and_backward_by_hand() -> None:
    rng = np.random.default_rng(1)
    layer = linear64(3, 4)
    x_np = rng.standard_normal((5, 3))
    g_np = rng.standard_normal((5, 4))
    x = f64(x_np).requires_grad_()
    y = layer(x)
    W, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    np.testing.assert_allclose(y.detach().numpy(), x_np @ W.T + b, rtol=1e-12)
    (y * f64(g_np)).sum().backward()
    np.testing.assert_allclose(layer.weight.grad.numpy(), g_np.T @ x_np, rtol=1e-12)
    np.testing.assert_allclose(layer.bias.grad.numpy(), g_np.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), g_np @ W, rtol=1e-12)


def test_linear_without_bias_and_batch_dimensions() -> None:
    layer = linear64(3, 2, bias=False)
    assert layer.bias is None
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    x_np = np.arange(24, dtype=np.float64).reshape(2, 4, 3)
    y = layer(f64(x_np))
    assert y.shape == (2, 4, 2)
    np.testing.assert_allclose(
        y.detach().numpy(), x_np @ layer.weight.detach().numpy().T
    )


def test_linear_matches_torch() -> None:
    rng = np.random.default_rng(2)
    gradgen.manual_seed(2)  # the same weights in every run: they go to torch too
    ours = linear64(6, 3)
    weight, bias = ours.weight.detach().numpy(), ours.bias.detach().numpy()
    x_np = rng.standard_normal((7, 6))

    def theirs(torch: Any) -> tuple[Any, ...]:
        layer = torch.nn.Linear(6, 3, dtype=torch.float64)
        with torch.no_grad():
            layer.weight.copy_(torch.tensor(weight))
            layer.bias.copy_(torch.tensor(bias))
        y = layer(torch.tensor(x_np))
        node = type(y.grad_fn).__name__
        y.tanh().sum().backward()
        return node, y.detach(), layer.weight.grad, layer.bias.grad

    node, y_theirs, weight_grad, bias_grad = oracle("node, value, grads", theirs)
    y_ours = ours(f64(x_np))
    assert type(y_ours.grad_fn).__name__ == node == "AddmmBackward0"
    np.testing.assert_allclose(y_ours.detach().numpy(), y_theirs, rtol=1e-12)
    y_ours.tanh().sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), weight_grad, rtol=1e-12)
    np.testing.assert_allclose(ours.bias.grad.numpy(), bias_grad, rtol=1e-12)


def test_linear_wrong_input_width() -> None:
    with pytest.raises(
        RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(5x3 and 2x4\)"
    ):
        nn.Linear(2, 4)(gradgen.randn(5, 3))


def test_linear_bad_sizes() -> None:
    with pytest.raises(TypeError, match="in_features must be an int"):
        nn.Linear(2.0, 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="out_features must be non-negative"):
        nn.Linear(2, -1)


def test_linear_init_bounds() -> None:
    gradgen.manual_seed(0)
    layer = nn.Linear(100, 400)
    bound = 1 / np.sqrt(100)
    w = layer.weight.detach().numpy()
    b = layer.bias.detach().numpy()
    assert w.dtype == np.float32 and w.shape == (400, 100) and b.shape == (400,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # Uniform on [-bound, bound]: fills the interval, mean 0, std bound / sqrt(3).
    assert w.min() < -0.99 * bound and w.max() > 0.99 * bound
    assert abs(w.mean()) < 0.01 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.01 * bound
    assert b.min() < -0.9 * bound and b.max() > 0.9 * bound
    assert (
        layer.weight.is_leaf
        and layer.weight.requires_grad
        and layer.weight.grad_fn is None
    )
    small = nn.Linear(4, 3)
    assert np.abs(small.bias.detach().numpy()).max() <= 0.5


def test_linear_init_is_reproducible_with_manual_seed() -> None:
    gradgen.manual_seed(42)
    a = nn.Linear(5, 3)
    gradgen.manual_seed(42)
    b = nn.Linear(5, 3)
    c = nn.Linear(5, 3)
    assert np.array_equal(a.weight.detach().numpy(), b.weight.detach().numpy())
    assert np.array_equal(a.bias.detach().numpy(), b.bias.detach().numpy())
    assert not np.array_equal(b.weight.detach().numpy(), c.weight.detach().numpy())


def test_linear_init_statistics_match_torch() -> None:
    # The generators differ; the distributions must not.
    ours = nn.Linear(64, 2000).weight.detach().numpy()

    def statistics(torch: Any) -> list[float]:
        torch.manual_seed(0)  # a reproducible answer to record
        theirs = torch.nn.Linear(64, 2000).weight.detach().numpy()
        return [float(theirs.max()), float(theirs.min()), float(theirs.std())]

    high, low, std = oracle("max, min, std", statistics)
    assert abs(ours.max() - high) < 1e-3 and abs(ours.min() - low) < 1e-3
    assert abs(ours.std() - std) < 1e-3


def test_reset_parameters_keeps_the_same_tensors() -> None:
    layer = nn.Linear(3, 3)
    weight = layer.weight
    before = weight.detach().numpy().copy()
    version = weight._version
    layer.reset_parameters()
    assert layer.weight is weight and weight._version > version
    assert not np.array_equal(before, weight.detach().numpy())


# -- activations, Sequential, losses ---------------------------------------------------


def test_activations() -> None:
    x_np = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    x = f64(x_np)
    np.testing.assert_allclose(nn.ReLU()(x).numpy(), np.maximum(x_np, 0))
    np.testing.assert_allclose(nn.Tanh()(x).numpy(), np.tanh(x_np), rtol=1e-12)
    np.testing.assert_allclose(
        nn.Sigmoid()(x).numpy(), 1 / (1 + np.exp(-x_np)), rtol=1e-12
    )
    y = f64(x_np)
    out = nn.ReLU(inplace=True)(y)
    assert out is y and y.tolist() == [0.0, 0.0, 0.0, 0.5, 2.0]


def test_sequential() -> None:
    first, second = linear64(2, 3), linear64(3, 1)
    model = nn.Sequential(first, nn.Tanh(), second)
    assert len(model) == 3 and model[0] is first and model[-1] is second
    assert list(model)[1].__class__ is nn.Tanh
    assert isinstance(model[1:], nn.Sequential) and len(model[1:]) == 2
    with pytest.raises(IndexError):
        model[3]
    x_np = np.array([[0.5, -1.0], [2.0, 0.25]])
    expected = np.tanh(
        x_np @ first.weight.detach().numpy().T + first.bias.detach().numpy()
    )
    expected = (
        expected @ second.weight.detach().numpy().T + second.bias.detach().numpy()
    )
    np.testing.assert_allclose(model(f64(x_np)).detach().numpy(), expected, rtol=1e-12)
    model.append(nn.Sigmoid())
    assert len(model) == 4 and [n for n, _ in model.named_children()][-1] == "3"


def test_loss_modules() -> None:
    logits = f64([[2.0, -1.0, 0.5], [0.0, 0.0, 3.0]])
    target = gradgen.tensor([0, 2])
    log_probs = logits.numpy() - np.log(
        np.exp(logits.numpy()).sum(axis=1, keepdims=True)
    )
    expected = -(log_probs[0, 0] + log_probs[1, 2]) / 2
    assert nn.CrossEntropyLoss()(logits, target).item() == pytest.approx(
        expected, rel=1e-12
    )
    assert nn.CrossEntropyLoss(reduction="sum")(logits, target).item() == pytest.approx(
        2 * expected, rel=1e-12
    )
    a, b = f64([1.0, 2.0, 4.0]), f64([1.0, 0.0, 1.0])
    assert nn.MSELoss()(a, b).item() == pytest.approx((0 + 4 + 9) / 3)
    assert F.mse_loss(a, b, reduction="sum").item() == pytest.approx(13.0)


# -- Module.to / double / apply / state_dict / load_state_dict ---------------------------


def _mlp(lib: Any) -> Any:
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))


def test_state_dict_round_trips_and_matches_torch_keys() -> None:
    model, other = _mlp(gradgen), gradgen.nn.Sequential(
        gradgen.nn.Linear(3, 4), gradgen.nn.Tanh(), gradgen.nn.Linear(4, 2)
    )
    state = model.state_dict()
    assert list(state) == oracle("keys", lambda torch: list(_mlp(torch).state_dict()))
    assert all(not t.requires_grad for t in state.values())
    versions = [p._version for p in other.parameters()]
    result = other.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    x = gradgen.randn(5, 3)
    np.testing.assert_array_equal(model(x).detach().numpy(), other(x).detach().numpy())
    assert [p._version for p in other.parameters()] == [v + 1 for v in versions]
    assert all(p.is_leaf and p.requires_grad for p in other.parameters())


def test_load_state_dict_reports_like_torch() -> None:
    def run(lib: Any) -> tuple[str, list[str], list[str]]:
        model = _mlp(lib)
        bad = {"0.weight": lib.ones(2, 2), "extra": lib.ones(1)}
        with pytest.raises(RuntimeError) as error:
            model.load_state_dict(bad)
        message = str(error.value).replace("torch.Size", "gradgen.Size")
        loose = model.load_state_dict(
            {"0.bias": lib.zeros(4), "extra": lib.ones(1)}, strict=False
        )
        return message, list(loose.missing_keys), list(loose.unexpected_keys)

    ours, theirs = run(gradgen), oracle("message and keys", run)
    assert ours == theirs
    assert ours[1:] == (["0.weight", "2.weight", "2.bias"], ["extra"])


def test_module_to_converts_parameters_in_place() -> None:
    model = _mlp(gradgen)
    weight = model[0].weight
    assert model.double() is model
    assert model[0].weight is weight and weight.dtype == gradgen.float64
    assert model(gradgen.ones(1, 3, dtype=gradgen.float64)).dtype == gradgen.float64
    model.to("cpu")
    assert weight.dtype == gradgen.float64
    model.to(dtype=gradgen.float32)
    assert weight.dtype == gradgen.float32 and weight.is_leaf and weight.requires_grad
    with pytest.raises(RuntimeError, match="is not available"):
        model.to("cuda")


def test_apply_visits_children_first() -> None:
    model = _mlp(gradgen)
    seen: list[str] = []
    model.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "Tanh", "Linear", "Sequential"]


# -- LeakyReLU, ELU, Softplus, Dropout, LayerNorm, Embedding ---------------------------


def test_leaky_relu_elu_softplus_modules() -> None:
    x_np = np.array([-2.0, -0.5, 0.0, 0.5, 25.0])
    x = f64(x_np)
    np.testing.assert_allclose(
        nn.LeakyReLU(0.2)(x).numpy(), np.where(x_np > 0, x_np, 0.2 * x_np)
    )
    np.testing.assert_allclose(
        nn.ELU(0.5)(x).numpy(),
        np.where(x_np > 0, x_np, 0.5 * np.expm1(x_np)),
        rtol=1e-12,
    )
    softplus = np.where(2 * x_np > 10, x_np, np.log1p(np.exp(2 * x_np)) / 2)
    np.testing.assert_allclose(nn.Softplus(2, 10)(x).numpy(), softplus, rtol=1e-12)
    for module in (nn.LeakyReLU(inplace=True), nn.ELU(inplace=True)):
        y = f64(x_np)
        assert module(y) is y and y.numpy()[0] < 0
    a = gradgen.tensor(x_np, requires_grad=True)
    nn.LeakyReLU(0.1)(a).sum().backward()
    assert a.grad.tolist() == [0.1, 0.1, 0.1, 1.0, 1.0]


def test_layer_modules_print_and_register_as_torch() -> None:
    def modules(tnn: Any) -> list[Any]:
        return [
            tnn.LeakyReLU(),
            tnn.LeakyReLU(0.2, inplace=True),
            tnn.ELU(),
            tnn.ELU(0.5, True),
            tnn.Softplus(),
            tnn.Softplus(2, 10),
            tnn.Dropout(),
            tnn.Dropout(0.2, True),
            tnn.LayerNorm(4),
            tnn.LayerNorm([3, 4], eps=1e-3, elementwise_affine=False),
            tnn.LayerNorm(4, bias=False),
            tnn.Embedding(5, 3),
            tnn.Embedding(5, 3, padding_idx=-1, max_norm=2.0, scale_grad_by_freq=True),
            tnn.Embedding(5, 3, max_norm=1, norm_type=1.0),
            tnn.Sequential(
                tnn.Linear(3, 4), tnn.LayerNorm(4), tnn.LeakyReLU(), tnn.Dropout(0.1)
            ),
        ]

    def facts(tnn: Any) -> list[Any]:
        return [
            (repr(m), [(n, tuple(p.shape)) for n, p in m.named_parameters()])
            for m in modules(tnn)
        ]

    assert facts(nn) == oracle("reprs and parameters", lambda torch: facts(torch.nn))


def test_dropout_module_follows_train_and_eval() -> None:
    gradgen.manual_seed(1)
    layer = nn.Dropout(0.5)
    x = gradgen.ones(40, 50, dtype=gradgen.float64)
    assert layer.training
    out = layer(x).numpy()
    assert set(np.unique(out)) == {0.0, 2.0} and 0.4 < (out == 0).mean() < 0.6
    model = nn.Sequential(nn.Linear(50, 2), layer)
    model.eval()
    assert not layer.training and layer(x) is x
    model.train()
    assert layer.training and layer(x) is not x
    assert nn.Dropout(0.0)(x) is x
    inplace = nn.Dropout(0.5, inplace=True)
    y = gradgen.ones(3, 4)
    assert inplace(y) is y
    for p in (-0.1, 1.1):
        with pytest.raises(
            ValueError, match="^dropout probability has to be between 0 and 1, but got"
        ):
            nn.Dropout(p)


def test_layer_norm_module_matches_torch() -> None:
    rng = np.random.default_rng(0)
    weight, bias = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    x = rng.normal(size=(2, 3, 4))
    cotangent = rng.normal(size=(2, 3, 4))

    def theirs(torch: Any) -> dict[str, Any]:
        module = torch.nn.LayerNorm((3, 4), dtype=torch.float64)
        initial = (module.weight.tolist(), module.bias.tolist())
        with torch.no_grad():
            module.weight.copy_(torch.tensor(weight))
            module.bias.copy_(torch.tensor(bias))
        a_t = torch.tensor(x, requires_grad=True)
        out_t = module(a_t)
        node = out_t.grad_fn.name()
        out_t.backward(torch.tensor(cotangent))
        plain = torch.nn.LayerNorm(4, elementwise_affine=False)
        return {
            "normalized_shape": module.normalized_shape,
            "initial": initial,
            "out": out_t.detach(),
            "node": node,
            "grads": [a_t.grad, module.weight.grad, module.bias.grad],
            "plain": plain(torch.tensor(x[0], dtype=torch.float32)).detach(),
        }

    expected = oracle("layer norm", theirs)
    ours = nn.LayerNorm((3, 4), dtype=gradgen.float64)
    assert ours.normalized_shape == expected["normalized_shape"] == (3, 4)
    assert (ours.weight.tolist(), ours.bias.tolist()) == expected["initial"]

    with gradgen.no_grad():
        _overwrite_(ours.weight, weight)
        _overwrite_(ours.bias, bias)
    a = gradgen.tensor(x, requires_grad=True)
    out = ours(a)
    np.testing.assert_allclose(out.detach().numpy(), expected["out"], rtol=1e-12)
    assert out.grad_fn.name() == expected["node"] == "NativeLayerNormBackward0"
    out.backward(gradgen.tensor(cotangent))
    for p, p_t in zip((a, ours.weight, ours.bias), expected["grads"], strict=True):
        np.testing.assert_allclose(p.grad.numpy(), p_t, rtol=1e-10)
    plain = nn.LayerNorm(4, elementwise_affine=False)
    assert (
        list(plain.parameters()) == [] and plain.weight is None and plain.bias is None
    )
    np.testing.assert_allclose(
        plain(gradgen.tensor(x[0], dtype=gradgen.float32)).numpy(),
        expected["plain"],
        rtol=1e-5,
        atol=1e-6,
    )
    no_bias = nn.LayerNorm(4, bias=False)
    assert no_bias.bias is None and [n for n, _ in no_bias.named_parameters()] == [
        "weight"
    ]
    version = ours.weight._version
    ours.reset_parameters()
    assert ours.weight._version > version and ours.weight.tolist() == [[1.0] * 4] * 3


def test_embedding_module_init_padding_and_gradients() -> None:
    gradgen.manual_seed(4)
    first = nn.Embedding(1000, 16, padding_idx=2)
    gradgen.manual_seed(4)
    second = nn.Embedding(1000, 16, padding_idx=2)
    values = first.weight.detach().numpy()
    np.testing.assert_array_equal(values, second.weight.detach().numpy())
    assert first.weight.dtype == gradgen.float32 and first.weight.shape == (1000, 16)
    assert (
        not np.any(values[2])
        and abs(values.std() - 1.0) < 0.02
        and abs(values.mean()) < 0.02
    )
    indices = gradgen.tensor([[0, 2], [5, 0]])
    out = first(indices)
    assert out.shape == (2, 2, 16) and out.grad_fn.name() == "EmbeddingBackward0"
    out.sum().backward()
    grad = first.weight.grad.numpy()
    assert grad[0].tolist() == [2.0] * 16 and grad[5].tolist() == [1.0] * 16
    assert not np.any(grad[2])  # padding_idx gets no gradient
    assert nn.Embedding(5, 3, padding_idx=-2).padding_idx == 3


def test_embedding_module_matches_torch() -> None:
    rng = np.random.default_rng(5)
    weight = rng.normal(size=(6, 3)) * 2
    indices = np.array([[1, 4, 1], [0, 1, 5]])
    for kwargs in (
        {},
        {"padding_idx": 1, "scale_grad_by_freq": True},
        {"max_norm": 1.0},
    ):

        def run(lib: Any, module: Any) -> tuple[Any, ...]:
            embedding = module.Embedding.from_pretrained(
                lib.tensor(weight), freeze=False, **kwargs
            )
            out = embedding(lib.tensor(indices))
            (out * out).sum().backward()
            return (
                repr(embedding),
                out.detach().numpy(),
                embedding.weight.grad.numpy(),
                embedding.weight.detach().numpy(),
            )

        ours = run(gradgen, nn)
        theirs = oracle(str(kwargs), lambda torch: run(torch, torch.nn))
        assert ours[0] == theirs[0]
        for got, want in zip(ours[1:], theirs[1:]):
            np.testing.assert_allclose(got, want, rtol=1e-12)
    frozen = nn.Embedding.from_pretrained(gradgen.tensor(weight))
    assert (
        not frozen.weight.requires_grad and frozen(gradgen.tensor([0])).grad_fn is None
    )


def test_embedding_module_errors() -> None:
    for padding_idx in (5, -6):
        with pytest.raises(
            AssertionError, match="^Padding_idx must be within num_embeddings$"
        ):
            nn.Embedding(5, 3, padding_idx=padding_idx)
    with pytest.raises(
        AssertionError,
        match="^Shape of weight does not match num_embeddings and embedding_dim$",
    ):
        nn.Embedding(5, 3, _weight=gradgen.ones(3, 2))
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(gradgen.ones(3))
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.Embedding(5, 3, sparse=True)(gradgen.tensor([1]))
    with pytest.raises(IndexError, match="^index out of range in self$"):
        nn.Embedding(5, 3)(gradgen.tensor([5]))


def test_small_transformer_style_block_trains() -> None:
    """Embedding -> LayerNorm -> Linear -> cross entropy, a few SGD steps."""
    from gradgen.optim import SGD

    gradgen.manual_seed(0)
    embedding, norm = nn.Embedding(10, 8), nn.LayerNorm(8)
    head = nn.Linear(8, 10)
    model = nn.Sequential(embedding, norm, nn.LeakyReLU(), nn.Dropout(0.1), head)
    optimizer = SGD(model.parameters(), lr=0.5)
    tokens = gradgen.tensor([1, 2, 3, 4, 5])
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = nn.CrossEntropyLoss()(model(tokens), tokens)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] * 0.5

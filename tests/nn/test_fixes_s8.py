"""Session 8's fixes in torch.nn.functional, against PyTorch: gaussian_nll_loss for
every kind of var (a float, an int, numpy values, tensors of each shape PyTorch takes
or rejects), and gumbel_softmax under gradgen.compile (its noise is drawn by a random
operator, so a compiled call draws afresh each time, as eager does under one seed).
PyTorch's answers are recorded in tests/golden/ (see torch_oracle.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from gradgen import nn
from gradgen.autograd import gradcheck, gradgradcheck
from torch_oracle import oracle, outcome

RNG = np.random.default_rng(808)
INPUT = RNG.normal(size=(3, 4))
TARGET = RNG.normal(size=(3, 4))
VARIANCE = RNG.uniform(0.5, 2.0, size=(3, 4))

# var given as: a name -> a builder from the library (torch or gradgen) and numpy.
VARS: dict[str, Callable[[Any], Any]] = {
    "float": lambda lib: 2.0,
    "negative float": lambda lib: -1.0,
    "zero float": lambda lib: 0.0,
    "int": lambda lib: 2,
    "negative int": lambda lib: -1,
    "bool": lambda lib: True,
    "numpy float64": lambda lib: np.float64(2.0),
    "numpy float32": lambda lib: np.float32(2.0),
    "numpy int64": lambda lib: np.int64(2),
    "numpy array": lambda lib: np.ones((3, 4)),
    "list": lambda lib: [1.0, 2.0],
    "None": lambda lib: None,
    "same size": lambda lib: lib.tensor(VARIANCE),
    "negative entry": lambda lib: lib.tensor(VARIANCE - 1.0),
    "input without its last dim": lambda lib: lib.tensor(VARIANCE[:, 0]),
    "one size-1 dim (last)": lambda lib: lib.tensor(VARIANCE[:, :1]),
    "one size-1 dim (first)": lambda lib: lib.tensor(VARIANCE[:1, :]),
    "two size-1 dims": lambda lib: lib.ones(1, 1, dtype=lib.float64),
    "0-d tensor": lambda lib: lib.tensor(2.0, dtype=lib.float64),
    "one-element tensor": lambda lib: lib.tensor([2.0], dtype=lib.float64),
    "last dim only": lambda lib: lib.ones(4, dtype=lib.float64),
    "wrong size": lambda lib: lib.ones(2, 4, dtype=lib.float64),
    "one dim more": lambda lib: lib.ones(1, 3, 4, dtype=lib.float64),
    "integer tensor": lambda lib: lib.ones(3, 4, dtype=lib.int64),
}


def _gaussian(lib: Any, var_name: str, reduction: str = "mean") -> Any:
    """The loss and input's gradient, or the error, as plain data."""
    x = lib.tensor(INPUT, requires_grad=True)
    var = VARS[var_name](lib)
    loss = lib.nn.functional.gaussian_nll_loss(
        x, lib.tensor(TARGET), var, full=True, reduction=reduction
    )
    loss.sum().backward()
    return {"loss": loss.detach().numpy(), "grad": x.grad.numpy()}


@pytest.mark.parametrize("var_name", list(VARS))
def test_gaussian_nll_loss_takes_var_as_pytorch_does(var_name: str) -> None:
    theirs = oracle("result", lambda torch: outcome(lambda: _gaussian(torch, var_name)))
    ours = outcome(lambda: _gaussian(gradgen, var_name))
    if isinstance(theirs, Exception):
        assert type(ours) is type(theirs), ours
        if var_name == "integer tensor":
            # PyTorch's clamp_ with a Scalar bound names the dtype as C++ does
            # ("long int"); gradgen's in-place cast check names it as elsewhere
            # ("Long"): the same error up to that name.
            cast = "result type Float can't be cast to the desired output type "
            assert str(ours).startswith(cast) and str(theirs).startswith(cast)
            return
        assert str(ours) == str(theirs)
        return
    assert not isinstance(ours, Exception), ours
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=1e-12)
    np.testing.assert_allclose(ours["grad"], theirs["grad"], rtol=1e-12)


@pytest.mark.parametrize("var_name", ["int", "float", "input without its last dim"])
def test_gaussian_nll_loss_module_passes_var_through(var_name: str) -> None:
    def run(lib: Any) -> Any:
        loss = lib.nn.GaussianNLLLoss(reduction="none")
        return loss(lib.tensor(INPUT), lib.tensor(TARGET), VARS[var_name](lib)).numpy()

    theirs = oracle("result", lambda torch: outcome(lambda: run(torch)))
    ours = outcome(lambda: run(gradgen))
    if isinstance(theirs, Exception):
        assert (type(ours), str(ours)) == (type(theirs), str(theirs))
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_gaussian_nll_loss_of_an_int_var_by_hand() -> None:
    """The float that an int var stands for gives the loss PyTorch documents (by hand:
    0.5 * (log var + (x - t)^2 / var))."""
    x, t = gradgen.tensor(INPUT), gradgen.tensor(TARGET)
    loss = GF.gaussian_nll_loss(x, t, 2.0, reduction="none").numpy()
    np.testing.assert_allclose(
        loss, 0.5 * (np.log(2.0) + (INPUT - TARGET) ** 2 / 2.0), rtol=1e-12
    )


# -- gumbel_softmax under gradgen.compile -------------------------------------------

LOGITS = RNG.normal(size=(6, 5))


def _gumbel(hard: bool) -> Callable[[Any], Any]:
    def sample(logits: Any) -> Any:
        return GF.gumbel_softmax(logits, tau=0.7, hard=hard)

    return sample


@pytest.mark.parametrize("hard", [False, True])
def test_compiled_gumbel_softmax_draws_afresh_on_every_call(hard: bool) -> None:
    compiled = gradgen.compile(_gumbel(hard), fullgraph=True)
    logits = gradgen.tensor(LOGITS, requires_grad=True)
    gradgen.manual_seed(11)
    compiled_samples = [compiled(logits).detach().numpy() for _ in range(4)]
    gradgen.manual_seed(11)
    eager_samples = [_gumbel(hard)(logits).detach().numpy() for _ in range(4)]
    for one, other in zip(compiled_samples, compiled_samples[1:]):
        assert not np.array_equal(one, other)
    for ours, eager in zip(compiled_samples, eager_samples):
        np.testing.assert_allclose(ours, eager, rtol=1e-6)


def test_compiled_hard_gumbel_softmax_is_one_hot_with_straight_through_gradient() -> (
    None
):
    compiled = gradgen.compile(_gumbel(True), fullgraph=True)
    upstream = np.linspace(-1.0, 1.0, LOGITS.size).reshape(LOGITS.shape)
    for seed in (5, 6):
        logits = gradgen.tensor(LOGITS, requires_grad=True)
        gradgen.manual_seed(seed)
        hard = compiled(logits)
        (hard * gradgen.tensor(upstream)).sum().backward()
        values = hard.detach().numpy()
        assert set(np.unique(values)) <= {0.0, 1.0}
        np.testing.assert_array_equal(values.sum(axis=-1), np.ones(6))
        # straight through: the gradient is the soft sample's, drawn with the same
        # noise (eager, same seed).
        soft_logits = gradgen.tensor(LOGITS, requires_grad=True)
        gradgen.manual_seed(seed)
        soft = GF.gumbel_softmax(soft_logits, tau=0.7)
        (soft * gradgen.tensor(upstream)).sum().backward()
        np.testing.assert_array_equal(
            values.argmax(-1), soft.detach().numpy().argmax(-1)
        )
        assert logits.grad is not None and soft_logits.grad is not None
        np.testing.assert_allclose(
            logits.grad.numpy(), soft_logits.grad.numpy(), rtol=1e-6, atol=1e-12
        )


def test_gumbel_softmax_noise_is_gumbel_distributed() -> None:
    """With zero logits and tau 1, log of the soft sample is g - logsumexp(g): its
    differences between classes are differences of Gumbel(0, 1) draws, a logistic
    distribution of mean 0 and variance pi^2 / 3."""
    gradgen.manual_seed(1)
    sample = GF.gumbel_softmax(gradgen.zeros(20000, 2, dtype=gradgen.float64))
    logs = np.log(sample.numpy())
    difference = logs[:, 0] - logs[:, 1]
    assert abs(difference.mean()) < 0.05
    assert abs(difference.var() - np.pi**2 / 3) < 0.15


def test_gumbel_softmax_module_free_use_of_nn() -> None:
    """nn has no GumbelSoftmax module (as PyTorch): the functional is the one entry."""
    assert not hasattr(nn, "GumbelSoftmax")
    assert oracle("has", lambda torch: hasattr(torch.nn, "GumbelSoftmax")) is False


# -- nn names added in session 8 besides the lazy modules (test_lazy_modules.py) ------


def _buffers(lib: Any) -> dict[str, Any]:
    """Assigning nn.Buffer registers a buffer (persistent or not); a plain tensor
    assigned stays an attribute."""
    module = lib.nn.Module()
    module.kept = lib.nn.Buffer(lib.ones(2))
    module.dropped = lib.nn.Buffer(lib.zeros(3), persistent=False)
    module.plain = lib.ones(1)
    grad = lib.nn.Buffer(lib.ones(2, requires_grad=True))
    module.double()
    return {
        "buffers": sorted(name for name, _ in module.named_buffers()),
        "state": list(module.state_dict()),
        "dtype": str(module.kept.dtype).split(".")[-1],
        "persistent": [lib.nn.Buffer(lib.ones(1)).persistent, grad.requires_grad],
        "leaf": [grad.is_leaf, grad.grad_fn is None],
        "empty": list(lib.nn.Buffer().shape),
    }


def test_buffer_assignment_registers_a_buffer() -> None:
    assert _buffers(gradgen) == oracle("buffers", _buffers)


def test_buffer_shares_memory_with_its_data() -> None:
    data = gradgen.zeros(3)
    buffer = nn.Buffer(data)
    buffer.add_(1.0)
    np.testing.assert_array_equal(data.numpy(), np.ones(3))


def _sync_batchnorm(lib: Any) -> dict[str, Any]:
    """SyncBatchNorm without a process group normalizes as BatchNorm; convert
    replaces every BatchNorm below a module, keeping its parameters."""
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
    with lib.no_grad():
        model[0].weight.copy_(lib.tensor(np.cos(np.arange(12.0)).reshape(4, 3)))
        model[0].bias.copy_(lib.tensor(np.sin(np.arange(4.0))))
    weight = model[1].weight
    converted = lib.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    x = lib.tensor(INPUT[:, :3], dtype=lib.float32, requires_grad=True)
    out = converted(x)
    (out * lib.tensor(TARGET[:, :4], dtype=lib.float32)).sum().backward()
    errors = [
        outcome(lambda: lib.nn.SyncBatchNorm(3)(lib.ones(3))),
        outcome(lambda: lib.nn.SyncBatchNorm(3)(lib.ones(2, 0, 2))),
    ]
    return {
        "repr": repr(converted),
        "same weight": converted[1].weight is weight,
        "out": out.detach().numpy(),
        "grad": x.grad.numpy(),
        "running": converted[1].running_mean.numpy(),
        "errors": errors,
    }


def test_sync_batchnorm_in_one_process_is_batchnorm() -> None:
    theirs = oracle("sync", _sync_batchnorm)
    ours = _sync_batchnorm(gradgen)
    assert (ours["repr"], ours["same weight"]) == (
        theirs["repr"],
        theirs["same weight"],
    )
    for key in ("out", "grad", "running"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-6)
    for got, expected in zip(ours["errors"], theirs["errors"]):
        assert (type(got), str(got)) == (type(expected), str(expected))


CHANNELS = RNG.normal(size=(2, 7, 3, 3))


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 9])
def test_cross_map_lrn2d_values_as_pytorch(size: int) -> None:
    def run(lib: Any) -> Any:
        layer = lib.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.75, k=1.5)
        return {"out": layer(lib.tensor(CHANNELS)).numpy(), "repr": repr(layer)}

    theirs = oracle("lrn", run)
    ours = run(gradgen)
    assert ours["repr"] == theirs["repr"]
    np.testing.assert_allclose(ours["out"], theirs["out"], rtol=1e-12)


@pytest.mark.parametrize("size", [1, 3, 4])
def test_cross_map_lrn2d_gradient_is_its_forwards(size: int) -> None:
    """The gradient of the composite, checked numerically (PyTorch's hand-written
    backward does not differentiate its own forward's window, and fails for size 1:
    not a reference here)."""
    layer = nn.CrossMapLRN2d(size, alpha=0.3, beta=0.75, k=1.5)
    x = gradgen.tensor(CHANNELS[:1, :5, :2, :2], requires_grad=True)
    assert gradcheck(layer, (x,))
    assert gradgradcheck(layer, (x,))


def test_cross_map_lrn2d_wants_4d_input() -> None:
    def run(lib: Any) -> Any:
        return outcome(lambda: lib.nn.CrossMapLRN2d(3)(lib.ones(2, 3, 4)))

    theirs, ours = oracle("error", run), run(gradgen)
    assert (type(ours), str(ours)) == (type(theirs), str(theirs))


def _numpy_or_none(value: Any) -> Any:
    return None if value is None else value.numpy()


def _adaptive(lib: Any, head_bias: bool, unbatched: bool) -> dict[str, Any]:
    """AdaptiveLogSoftmaxWithLoss with fixed weights: output, loss, gradients,
    log_prob and predict."""
    module = lib.nn.AdaptiveLogSoftmaxWithLoss(
        8, 10, [3, 6], div_value=2.0, head_bias=head_bias
    ).double()
    state = module.state_dict()
    with lib.no_grad():
        for salt, (key, value) in enumerate(state.items()):
            shape = tuple(value.shape)
            numbers = np.cos(np.arange(int(np.prod(shape))) * 0.9 + salt) * 0.8
            value.copy_(lib.tensor(numbers.reshape(shape)))
    features = np.sin(np.arange(48.0) * 1.3).reshape(6, 8) * 2.0
    x = lib.tensor(features, requires_grad=True)
    target = lib.tensor([0, 4, 9, 2, 7, 5])
    if unbatched:
        result = module(x[3], target[3])
    else:
        result = module(x, target)
    result.loss.backward()
    return {
        "keys": list(state),
        "output": result.output.detach().numpy(),
        "loss": result.loss.detach().numpy(),
        "grad": x.grad.numpy(),
        "head grad": module.head.weight.grad.numpy(),
        "tail grad": _numpy_or_none(module.tail[1][0].weight.grad),
        "log_prob": module.log_prob(x.detach()).detach().numpy(),
        "predict": module.predict(x.detach()).numpy(),
    }


@pytest.mark.parametrize(
    "head_bias,unbatched", [(False, False), (True, False), (False, True)]
)
def test_adaptive_log_softmax_as_pytorch(head_bias: bool, unbatched: bool) -> None:
    theirs = oracle("adaptive", lambda torch: _adaptive(torch, head_bias, unbatched))
    ours = _adaptive(gradgen, head_bias, unbatched)
    assert ours["keys"] == theirs["keys"]
    np.testing.assert_array_equal(ours["predict"], theirs["predict"])
    assert (ours["tail grad"] is None) == (theirs["tail grad"] is None)
    for key in ("output", "loss", "grad", "head grad", "tail grad", "log_prob"):
        if theirs[key] is not None:
            np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-10, atol=1e-12)


def _adaptive_errors(lib: Any) -> list[Any]:
    make = lib.nn.AdaptiveLogSoftmaxWithLoss
    module = make(4, 6, [2, 4])
    return [
        outcome(lambda: make(4, 6, [])),
        outcome(lambda: make(4, 6, [4, 2])),
        outcome(lambda: make(4, 6, [2, 6])),
        outcome(lambda: module(lib.ones(3, 4), lib.tensor([0, 1]))),
        outcome(lambda: module(lib.ones(3, 4, 1), lib.tensor([0, 1, 2]))),
        outcome(lambda: module(lib.ones(3, 4), lib.tensor(1))),
        outcome(lambda: module(lib.ones(3, 4), lib.ones(3, 1, dtype=lib.int64))),
        outcome(lambda: module(lib.ones(2, 4), lib.tensor([0, 7]))),
    ]


def test_adaptive_log_softmax_errors_as_pytorch() -> None:
    theirs = oracle("errors", _adaptive_errors)
    for got, expected in zip(_adaptive_errors(gradgen), theirs):
        assert type(got) is type(expected), got
        assert str(got) == str(expected).replace("torch.Size", "gradgen.Size")


# -- ctc_loss / CTCLoss -----------------------------------------------------------

LOGITS_CTC = RNG.normal(size=(6, 3, 5))
TARGETS_CTC = np.array([[1, 1, 2], [3, 0, 0], [2, 4, 2]])
CTC_CASES = {
    "padded": ((6, 4, 6), (3, 1, 3), "padded"),
    "too short to align": ((2, 4, 6), (3, 0, 2), "padded"),
    "empty targets": ((6, 6, 5), (0, 0, 1), "padded"),
    "concatenated": ((6, 5, 6), (3, 1, 2), "concatenated"),
}


def _ctc(lib: Any, case: str, reduction: str, zero_infinity: bool) -> Any:
    """The loss of log_softmax(logits) and the logits' gradient (PyTorch's gradient
    with respect to log_probs presumes they are normalized: through log_softmax
    both are the true gradient)."""
    input_lengths, target_lengths, layout = CTC_CASES[case]
    logits = lib.tensor(LOGITS_CTC, requires_grad=True)
    if layout == "padded":
        targets = lib.tensor(TARGETS_CTC)
    else:
        rows = [TARGETS_CTC[n, :length] for n, length in enumerate(target_lengths)]
        targets = lib.tensor(np.concatenate(rows))
    loss = lib.nn.CTCLoss(reduction=reduction, zero_infinity=zero_infinity)(
        logits.log_softmax(2),
        targets,
        lib.tensor(input_lengths),
        lib.tensor(target_lengths),
    )
    loss.sum().backward()
    return {"loss": loss.detach().numpy(), "grad": logits.grad.numpy()}


@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", list(CTC_CASES))
def test_ctc_loss_as_pytorch(case: str, reduction: str, zero_infinity: bool) -> None:
    theirs = oracle("ctc", lambda torch: _ctc(torch, case, reduction, zero_infinity))
    ours = _ctc(gradgen, case, reduction, zero_infinity)
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=1e-10)
    if np.isfinite(theirs["loss"]).all():
        np.testing.assert_allclose(ours["grad"], theirs["grad"], rtol=1e-8, atol=1e-12)


def test_ctc_loss_gradient_with_respect_to_log_probs_is_numerical() -> None:
    log_probs = gradgen.tensor(LOGITS_CTC[:4, :2], requires_grad=True)

    def loss(x: Any) -> Any:
        return GF.ctc_loss(x, gradgen.tensor(TARGETS_CTC[:2, :2]), (4, 3), (2, 1))

    assert gradcheck(loss, (log_probs,))


def test_ctc_loss_unbatched_as_pytorch() -> None:
    def run(lib: Any) -> Any:
        log_probs = lib.tensor(LOGITS_CTC[:, 0]).log_softmax(1)
        target = lib.tensor(TARGETS_CTC[0])
        return lib.nn.functional.ctc_loss(
            log_probs, target, lib.tensor(6), lib.tensor(3), reduction="none"
        ).numpy()

    np.testing.assert_allclose(run(gradgen), oracle("unbatched", run), rtol=1e-10)


def _ctc_errors(lib: Any) -> list[Any]:
    F = lib.nn.functional
    log_probs = lib.tensor(LOGITS_CTC).log_softmax(2)
    targets = lib.tensor(TARGETS_CTC)
    return [
        outcome(lambda: F.ctc_loss(log_probs, targets, (7, 4, 6), (3, 1, 3))),
        outcome(lambda: F.ctc_loss(log_probs, targets, (6, 4, 6), (4, 1, 3))),
        outcome(lambda: F.ctc_loss(log_probs, targets, (6,), (3,))),
        outcome(lambda: F.ctc_loss(log_probs, targets, (6, 4, 6), (3, 1, 3), blank=5)),
        outcome(
            lambda: F.ctc_loss(log_probs, targets, (6, 4, 6), (3, 1, 3), reduction="x")
        ),
    ]


def test_ctc_loss_errors_as_pytorch() -> None:
    theirs = oracle("errors", _ctc_errors)
    for got, expected in zip(_ctc_errors(gradgen), theirs):
        assert (type(got), str(got)) == (type(expected), str(expected))


# -- linear_cross_entropy / LinearCrossEntropyLoss -------------------------------

LCE_CASES: dict[str, dict[str, Any]] = {
    "plain": {},
    "bias, sum": {"bias": True, "reduction": "sum"},
    "weights, ignore": {"class_weight": True, "ignore_index": 2},
    "smoothing, none": {"label_smoothing": 0.2, "reduction": "none"},
    "out_features": {"out_features": (2,), "bias": True},
    "probabilities": {"probabilities": True},
    "unbatched": {"unbatched": True},
    "options": {"options": True},
}


def _lce(lib: Any, case: str) -> dict[str, Any]:
    spec = LCE_CASES[case]
    out_features = spec.get("out_features", ())
    weight = lib.tensor([0.5, 1.0, 2.0, 1.5]) if spec.get("class_weight") else None
    options = lib.nn.LinearCrossEntropyOptions() if spec.get("options") else None
    module = lib.nn.LinearCrossEntropyLoss(
        5,
        4,
        out_features=out_features,
        bias=spec.get("bias", False),
        reduction=spec.get("reduction", "mean"),
        weight=weight,
        ignore_index=spec.get("ignore_index"),
        label_smoothing=spec.get("label_smoothing", 0.0),
        options=options,
    ).double()
    with lib.no_grad():
        for salt, param in enumerate(module.parameters()):
            numbers = np.cos(np.arange(param.numel()) * 0.8 + salt)
            param.copy_(lib.tensor(numbers.reshape(tuple(param.shape))))
    features = np.sin(np.arange(15.0) * 1.7).reshape(3, 5)
    x = lib.tensor(features if not spec.get("unbatched") else features[0])
    x.requires_grad_(True)
    classes = np.array([0, 2, 3])
    if out_features:
        target = lib.tensor(np.stack([classes, classes[::-1]], 1))
    elif spec.get("probabilities"):
        target = lib.tensor(np.abs(np.sin(np.arange(12.0))).reshape(3, 4)).softmax(1)
    elif spec.get("unbatched"):
        target = lib.tensor(2)
    else:
        target = lib.tensor(classes)
    loss = module(x, target)
    loss.sum().backward()
    return {
        "repr": repr(module),
        "loss": loss.detach().numpy(),
        "grad": x.grad.numpy(),
        "weight grad": module.linear.weight.grad.numpy(),
    }


@pytest.mark.parametrize("case", list(LCE_CASES))
def test_linear_cross_entropy_as_pytorch(case: str) -> None:
    theirs = oracle("lce", lambda torch: _lce(torch, case))
    ours = _lce(gradgen, case)
    assert ours["repr"] == theirs["repr"]
    for key in ("loss", "grad", "weight grad"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-10, atol=1e-12)


def _lce_errors(lib: Any) -> list[Any]:
    F = lib.nn.functional
    w = lib.ones(4, 5)
    options = lib.nn.LinearCrossEntropyOptions
    return [
        outcome(lambda: F.linear_cross_entropy(lib.ones(2, 3, 5), w, lib.tensor([0]))),
        outcome(
            lambda: F.linear_cross_entropy(lib.ones(2, 5), lib.ones(5), lib.tensor([0]))
        ),
        outcome(lambda: F.linear_cross_entropy(lib.ones(2, 4), w, lib.tensor([0, 1]))),
        outcome(
            lambda: F.linear_cross_entropy(
                lib.ones(2, 5), w, lib.tensor([0, 1]), linear_bias=lib.ones(3)
            )
        ),
        outcome(
            lambda: F.linear_cross_entropy(
                lib.ones(5), lib.ones(4, 2, 5), lib.tensor(0)
            )
        ),
        outcome(
            lambda: F.linear_cross_entropy(
                lib.ones(2, 5), w, lib.ones(2, 4) / 4, ignore_index=1
            )
        ),
        outcome(lambda: lib.nn.LinearCrossEntropyLoss(5, 4, weight=lib.ones(3))),
        outcome(lambda: lib.nn.LinearCrossEntropyLoss(5, 4, label_smoothing=1.5)),
        outcome(lambda: options(acc_policy="fast")),
        outcome(lambda: options(chunking_method="rows:2")),
        outcome(lambda: options(batch_chunk_size=0)),
    ]


def test_linear_cross_entropy_errors_as_pytorch() -> None:
    theirs = oracle("errors", _lce_errors)
    for got, expected in zip(_lce_errors(gradgen), theirs):
        assert (type(got), str(got)) == (type(expected), str(expected))


def test_linear_cross_entropy_options_warning_as_pytorch() -> None:
    def run(lib: Any) -> Any:
        with pytest.warns(UserWarning) as record:
            lib.nn.functional.linear_cross_entropy(
                lib.ones(2, 5),
                lib.ones(4, 5),
                lib.tensor([0, 1]),
                label_smoothing=0.1,
                options=lib.nn.LinearCrossEntropyOptions(),
            )
        return str(record[0].message)

    theirs = oracle("warning", run).replace("torch.", "gradgen.")
    ours = run(gradgen)
    assert theirs.startswith(ours)  # PyTorch adds its tracing and bias state


def _data_parallel(lib: Any) -> dict[str, Any]:
    """Without accelerators DataParallel calls its module on the whole batch."""
    inner = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        inner.weight.copy_(lib.tensor(np.cos(np.arange(6.0)).reshape(2, 3)))
        inner.bias.copy_(lib.tensor([0.5, -0.25]))
    wrapped = lib.nn.DataParallel(inner)
    x = lib.tensor(np.sin(np.arange(12.0)).reshape(4, 3), requires_grad=True)
    out = wrapped(x)
    out.sum().backward()
    return {
        "repr": repr(wrapped),
        "keys": list(wrapped.state_dict()),
        "device_ids": list(wrapped.device_ids),
        "out": out.detach().numpy(),
        "grad": inner.weight.grad.numpy(),
        "functional": outcome(
            lambda: lib.nn.parallel.data_parallel(inner, lib.ones(2, 3))
        ),
    }


def test_data_parallel_on_the_cpu_as_pytorch() -> None:
    theirs = oracle("dp", _data_parallel)
    ours = _data_parallel(gradgen)
    for key in ("repr", "keys", "device_ids"):
        assert ours[key] == theirs[key], key
    for key in ("out", "grad"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-12)
    got, expected = ours["functional"], theirs["functional"]
    assert (type(got), str(got)) == (type(expected), str(expected))


# -- torch.nn.grad and factory_kwargs ------------------------------------------------

CONV_GRAD_CASES = {
    1: ((2, 4, 9), (6, 2, 3), {"stride": 2, "padding": 1, "groups": 2}),
    2: ((2, 4, 7, 6), (6, 2, 3, 2), {"stride": 2, "padding": 1, "groups": 2}),
    3: ((1, 2, 5, 4, 4), (3, 2, 2, 2, 2), {"dilation": 2, "padding": 1}),
}


def _conv_grads(lib: Any, dims: int) -> dict[str, Any]:
    input_size, weight_size, options = CONV_GRAD_CASES[dims]
    x = lib.tensor(np.sin(np.arange(np.prod(input_size))).reshape(input_size))
    w = lib.tensor(np.cos(np.arange(np.prod(weight_size)) * 0.3).reshape(weight_size))
    conv = getattr(lib.nn.functional, f"conv{dims}d")
    out_shape = tuple(conv(x, w, **options).shape)
    g = lib.tensor(np.cos(np.arange(np.prod(out_shape)) * 0.7).reshape(out_shape))
    grads = lib.nn.grad
    return {
        "input": getattr(grads, f"conv{dims}d_input")(
            input_size, w, g, **options
        ).numpy(),
        "weight": getattr(grads, f"conv{dims}d_weight")(
            x, weight_size, g, **options
        ).numpy(),
    }


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_nn_grad_convolution_gradients_as_pytorch(dims: int) -> None:
    theirs = oracle("grads", lambda torch: _conv_grads(torch, dims))
    ours = _conv_grads(gradgen, dims)
    for key in ("input", "weight"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-10, atol=1e-12)


def _factory(lib: Any) -> list[Any]:
    merge = lib.nn.factory_kwargs
    return [
        merge(None),
        sorted(merge({"dtype": 1, "factory_kwargs": {"device": "cpu"}}).items()),
        outcome(lambda: merge({"size": 3})),
        outcome(lambda: merge({"dtype": 1, "factory_kwargs": {"dtype": 2}})),
    ]


def test_factory_kwargs_as_pytorch() -> None:
    theirs = oracle("factory", _factory)
    ours = _factory(gradgen)
    assert ours[:2] == [theirs[0], [tuple(pair) for pair in theirs[1]]]
    for got, expected in zip(ours[2:], theirs[2:]):
        assert (type(got), str(got)) == (type(expected), str(expected))

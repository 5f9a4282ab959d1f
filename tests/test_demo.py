"""The demo: the spirals data, the training (accuracy recomputed here in numpy from
the trained weights), the progress bar, the pictures and the command line."""

from __future__ import annotations

import importlib.util
import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import gradgen
from gradgen import demo

# A budget that reaches > 95% in well under a second on the spirals.
SMALL = dict(epochs=250, n_per_class=200, hidden=32, lr=0.02)


def numpy_forward(model: gradgen.nn.Sequential, points: np.ndarray) -> np.ndarray:
    """The MLP's logits computed with numpy from its parameters."""
    h = points.astype(np.float64)
    for layer in model:
        if isinstance(layer, gradgen.nn.Linear):
            h = h @ layer.weight.detach().numpy().T + layer.bias.detach().numpy()
        elif isinstance(layer, gradgen.nn.Tanh):
            h = np.tanh(h)
        else:  # pragma: no cover - the demo's model has only these
            raise AssertionError(f"unexpected layer {layer}")
    return h


# -- data ------------------------------------------------------------------------------


def test_spirals_shape_labels_and_seed() -> None:
    points, labels = demo.make_spirals(100, seed=3)
    assert points.shape == (200, 2) and points.dtype == np.float32
    assert labels.dtype == np.int64 and labels.tolist() == [0] * 100 + [1] * 100
    again, _ = demo.make_spirals(100, seed=3)
    other, _ = demo.make_spirals(100, seed=4)
    assert np.array_equal(points, again) and not np.array_equal(points, other)


def test_spirals_geometry() -> None:
    points, _ = demo.make_spirals(300, turns=2.0, noise=0.0, seed=0)
    arm, opposite = points[:300], points[300:]
    np.testing.assert_array_equal(opposite, -arm)  # class 1 is class 0 turned by pi
    radius = np.hypot(arm[:, 0], arm[:, 1])
    angle = radius * 2.0 * 2 * np.pi  # the radius grows with the angle, to 1 at 2 turns
    np.testing.assert_allclose(arm[:, 0], radius * np.cos(angle), atol=1e-5)
    np.testing.assert_allclose(arm[:, 1], radius * np.sin(angle), atol=1e-5)
    assert radius.max() <= 1.0
    with pytest.raises(ValueError, match="n_per_class"):
        demo.make_spirals(0)


# -- training --------------------------------------------------------------------------


def test_training_reaches_95_percent() -> None:
    result = demo.train_spirals(**SMALL)
    logits = numpy_forward(result.model, result.points)
    numpy_accuracy = float(np.mean(logits.argmax(axis=1) == result.labels))
    assert numpy_accuracy > 0.95
    assert result.train_accuracy == pytest.approx(numpy_accuracy, abs=1e-9)
    test_points, test_labels = demo.make_spirals(200, seed=1)
    held_out = float(
        np.mean(numpy_forward(result.model, test_points).argmax(1) == test_labels)
    )
    assert result.test_accuracy == pytest.approx(held_out, abs=1e-9)
    assert held_out > 0.9
    # The loss went down; the first one is that of a nearly untrained model (~log 2).
    assert len(result.losses) == SMALL["epochs"]
    assert result.losses[0] == pytest.approx(np.log(2), abs=0.1)
    assert result.losses[-1] < 0.2 * result.losses[0]


def test_training_loss_matches_numpy_cross_entropy() -> None:
    result = demo.train_spirals(epochs=1, n_per_class=50, hidden=8)
    # After one step, recompute the first loss from a freshly seeded model.
    gradgen.manual_seed(0)
    model = demo.make_model(8)
    logits = numpy_forward(model, result.points)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    expected = -log_probs[np.arange(len(result.labels)), result.labels].mean()
    assert result.losses[0] == pytest.approx(expected, rel=1e-5)


def test_training_is_reproducible() -> None:
    a = demo.train_spirals(epochs=5, n_per_class=20, hidden=8, seed=7)
    b = demo.train_spirals(epochs=5, n_per_class=20, hidden=8, seed=7)
    assert a.losses == b.losses
    with pytest.raises(ValueError, match="epochs"):
        demo.train_spirals(epochs=0)


# -- progress --------------------------------------------------------------------------


def test_progress_plain_lines_when_not_a_terminal() -> None:
    stream = io.StringIO()
    result = demo.train_spirals(
        epochs=40, n_per_class=20, hidden=8, progress=demo.Progress(40, stream=stream)
    )
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    # epoch 1, then every tenth of the run.
    assert [int(re.match(r"epoch +(\d+)/40", line).group(1)) for line in lines] == [
        1,
        4,
        8,
        12,
        16,
        20,
        24,
        28,
        32,
        36,
        40,
    ]
    assert f"loss {result.losses[-1]:.4f}" in lines[-1]
    assert re.search(r"accuracy +\d+\.\d%", lines[-1])


def test_progress_bar_on_a_terminal() -> None:
    stream = io.StringIO()
    progress = demo.Progress(10, stream=stream, interactive=True, width=10)
    for epoch in range(1, 11):
        if progress.due(epoch):
            progress.show(epoch, 1.0 / epoch, epoch / 10)
    text = stream.getvalue()
    assert text.startswith("\r[#---------] epoch  1/10  loss 1.0000  accuracy  10.0%")
    assert text.endswith("\n") and text.count("\n") == 1
    assert "\r[##########] epoch 10/10  loss 0.1000  accuracy 100.0%" in text


# -- pictures --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_result() -> demo.TrainResult:
    return demo.train_spirals(**SMALL)


def _need_matplotlib() -> None:
    """Skip without matplotlib, or fail when GRADGEN_REQUIRE_MATPLOTLIB=1 (CI installs it,
    so the picture tests run there)."""
    if importlib.util.find_spec("matplotlib") is None:
        if os.environ.get("GRADGEN_REQUIRE_MATPLOTLIB") == "1":
            pytest.fail(
                "matplotlib is not installed (GRADGEN_REQUIRE_MATPLOTLIB=1 requires it)"
            )
        pytest.skip("matplotlib is not installed")


def test_decision_boundary_picture(
    small_result: demo.TrainResult, tmp_path: pathlib.Path
) -> None:
    _need_matplotlib()
    path = demo.plot_decision_boundary(small_result, tmp_path / "sub" / "boundary.png")
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000


def test_step_graph_picture(
    small_result: demo.TrainResult, tmp_path: pathlib.Path
) -> None:
    dot_text = demo.render_step_graph(small_result, tmp_path / "graph.dot").read_text()
    for name in (
        "NllLossBackward0",
        "LogSoftmaxBackward0",
        "AddmmBackward0",
        "TanhBackward0",
    ):
        assert name in dot_text
    for name in ("0.weight", "2.bias", "4.weight"):
        assert name in dot_text
    if shutil.which("dot") is None:
        pytest.skip("Graphviz 'dot' is not installed")
    svg = demo.render_step_graph(small_result, tmp_path / "graph.svg").read_text()
    assert "<svg" in svg and "AddmmBackward0" in svg


def test_write_pictures_without_matplotlib_or_graphviz(
    small_result: demo.TrainResult,
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    monkeypatch.setattr(gradgen.viz.shutil, "which", lambda name: None)
    written = demo.write_pictures(small_result, tmp_path)
    out = capsys.readouterr().out
    assert "matplotlib is not installed" in out
    assert "Graphviz's `dot` is not installed" in out
    assert written == [tmp_path / "training-step-graph.dot"]
    assert "digraph" in written[0].read_text()


def test_write_pictures_with_the_tools(
    small_result: demo.TrainResult, tmp_path: pathlib.Path
) -> None:
    _need_matplotlib()
    if shutil.which("dot") is None:
        pytest.skip("Graphviz 'dot' is not installed")
    written = demo.write_pictures(small_result, tmp_path)
    assert written == [
        tmp_path / "decision-boundary.png",
        tmp_path / "training-step-graph.svg",
    ]
    assert all(path.stat().st_size > 1000 for path in written)


# -- command line ----------------------------------------------------------------------


def test_main_prints_example_and_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--epochs", "3", "--no-pictures", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "Q = 3*a**3 - b**2 = tensor(-12., grad_fn=<SubBackward0>)" in out
    assert "Linear(in_features=2, out_features=64, bias=True)" in out
    assert re.search(r"final accuracy: train \d+\.\d%, held-out \d+\.\d%", out)
    assert "wrote" not in out


def test_main_rejects_bad_epochs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        demo.main(["--epochs", "0"])
    assert exit_info.value.code == 2
    assert "--epochs must be at least 1" in capsys.readouterr().err


@pytest.mark.slow
def test_make_demo_run(tmp_path: pathlib.Path) -> None:
    """`python -m gradgen.demo` as `make demo` runs it: > 95% in under a minute."""
    environment = {
        k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")
    }
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "gradgen.demo", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        check=False,
    )
    seconds = time.perf_counter() - started
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    match = re.search(r"final accuracy: train (\d+\.\d)%, held-out (\d+\.\d)%", out)
    assert match, out
    assert float(match.group(1)) > 95.0 and float(match.group(2)) > 90.0
    assert seconds < 60, f"the demo took {seconds:.1f} s"
    assert "epoch 500/500" in out and "\r" not in out  # not a terminal: plain lines
    if importlib.util.find_spec("matplotlib") is None:
        assert "matplotlib is not installed" in out
    else:
        assert (tmp_path / "decision-boundary.png").stat().st_size > 10_000
    if shutil.which("dot"):
        assert (tmp_path / "training-step-graph.svg").exists()

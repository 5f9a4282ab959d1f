"""`python -m gradgen.demo --mnist-like`: the rendered digits, a short training run
(loss falls, accuracy well above chance, the reloaded checkpoint scores the same), the
command line, and (slow) the full run's stated accuracy and time."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import time

import numpy as np
import pytest

import gradgen
from gradgen import demo
from gradgen.demo import mnist_like


def test_the_font_has_ten_distinct_seven_by_five_digits() -> None:
    glyphs = [mnist_like.glyph(d) for d in range(10)]
    assert all(g.shape == (7, 5) for g in glyphs)
    assert len({g.tobytes() for g in glyphs}) == 10
    # 8 is 0 with a middle bar here: the middle row tells them apart.
    assert mnist_like.glyph(8)[3].sum() == 3 and mnist_like.glyph(0)[3].sum() == 3
    assert mnist_like.glyph(1)[:, 2].sum() == 7  # the stem


def test_digits_are_seeded_and_shaped() -> None:
    images, labels = mnist_like.make_digits(50, seed=3)
    again, same = mnist_like.make_digits(50, seed=3)
    assert images.shape == (50, 1, 16, 16) and images.dtype == np.float32
    assert labels.dtype == np.int64 and set(labels.tolist()) <= set(range(10))
    assert np.array_equal(images, again) and np.array_equal(labels, same)
    assert not np.array_equal(images, mnist_like.make_digits(50, seed=4)[0])


def test_a_short_run_learns_and_the_checkpoint_reloads(tmp_path: pathlib.Path) -> None:
    result = mnist_like.train(
        epochs=3,
        n_train=1000,
        n_test=200,
        seed=1,
        checkpoint_dir=tmp_path,
        verbose=False,
    )
    assert len(result.losses) == len(result.accuracies) == 3
    assert result.losses[2] < result.losses[1] < result.losses[0]
    assert result.accuracies[-1] > 0.4  # chance is 0.1 (seed 1 gives 0.595)
    assert result.reloaded_accuracy == result.accuracies[-1]
    assert result.checkpoint == tmp_path / "mnist_like_cnn.pt"
    state = gradgen.load(result.checkpoint)
    assert "1.running_mean" in state and "9.weight" in state


def test_epochs_must_be_positive() -> None:
    with pytest.raises(ValueError, match="epochs must be at least 1"):
        mnist_like.train(epochs=0)


def test_the_flag_runs_the_cnn_demo(
    tmp_path: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mnist_like, "train", _small_train)
    assert demo.main(["--mnist-like", "--epochs", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "== A CNN on rendered digits (--mnist-like) ==" in out
    assert "The documents' example" not in out
    assert re.search(r"epoch  1/1: train loss \d+\.\d{4}, held-out accuracy", out)
    assert re.search(r"loaded into a fresh model: held-out accuracy \d+\.\d%", out)
    args = demo.parse_args([])
    assert args.epochs is None and not args.mnist_like


_TRAIN = mnist_like.train


def _small_train(**kwargs: object) -> mnist_like.Result:
    return _TRAIN(n_train=200, n_test=100, **kwargs)  # type: ignore[arg-type]


@pytest.mark.slow
def test_the_full_run_reaches_its_stated_accuracy(tmp_path: pathlib.Path) -> None:
    """`python -m gradgen.demo --mnist-like`: over 95% held-out in under a minute."""
    environment = {
        k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")
    }
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "gradgen.demo", "--mnist-like", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
        env=environment,
        check=False,
    )
    seconds = time.perf_counter() - started
    assert completed.returncode == 0, completed.stderr
    final = re.search(r"final held-out accuracy (\d+\.\d)%", completed.stdout)
    reloaded = re.search(r"fresh model: held-out accuracy (\d+\.\d)%", completed.stdout)
    assert final and reloaded, completed.stdout
    assert float(final.group(1)) > 95.0
    assert reloaded.group(1) == final.group(1)
    assert seconds < 60

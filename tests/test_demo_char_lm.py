"""The character-level language model demo (gradgen.demo.char_lm): the generated text,
a short training run (its first loss is a uniform guess's, log(alphabet), and it
falls well below), sampling, the loss curve and the command line (`--char-lm`); the
full run, as `python -m gradgen.demo --char-lm`, under a minute (slow)."""

from __future__ import annotations

import importlib.util
import math
import os
import pathlib
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from gradgen import demo
from gradgen.demo import char_lm

# A short run: a few seconds.
SHORT = dict(epochs=3, steps=12, batch=16, length=32, hidden=48, report=False)


@pytest.fixture(scope="module")
def short_run() -> char_lm.CharLMResult:
    return char_lm.train_char_lm(char_lm.make_text(12, seed=1), **SHORT)


def test_text_is_seeded_sentences_in_paragraphs() -> None:
    text = char_lm.make_text(5, seed=3)
    assert text == char_lm.make_text(5, seed=3) != char_lm.make_text(5, seed=4)
    paragraphs = text.split("\n\n")
    assert len(paragraphs) == 5
    for paragraph in paragraphs:
        sentences = re.findall(r"[A-Z][^.]*\.", paragraph)
        assert 4 <= len(sentences) <= 7
        assert " ".join(sentences) == paragraph
    with pytest.raises(ValueError, match="paragraphs must be at least 1"):
        char_lm.make_text(0)


def test_short_training_learns(short_run: char_lm.CharLMResult) -> None:
    alphabet = short_run.alphabet
    assert alphabet == "".join(sorted(set(char_lm.make_text(12, seed=1))))
    steps = SHORT["epochs"] * SHORT["steps"]
    assert len(short_run.step_losses) == steps
    assert len(short_run.epoch_losses) == SHORT["epochs"]
    # Small initial weights: the first prediction is nearly uniform.
    assert short_run.step_losses[0] == pytest.approx(math.log(len(alphabet)), abs=0.1)
    assert short_run.epoch_losses[-1] < 0.8 * math.log(len(alphabet))
    np.testing.assert_allclose(
        short_run.epoch_losses,
        np.mean(np.reshape(short_run.step_losses, (SHORT["epochs"], -1)), axis=1),
    )


def test_sample_is_seeded_and_uses_the_alphabet(
    short_run: char_lm.CharLMResult,
) -> None:
    text = char_lm.sample(short_run, prompt="The ", characters=50, seed=2)
    assert text.startswith("The ") and len(text) == 54
    assert set(text) <= set(short_run.alphabet)
    assert text == char_lm.sample(short_run, prompt="The ", characters=50, seed=2)


def test_loss_curve_is_drawn(
    short_run: char_lm.CharLMResult, tmp_path: pathlib.Path
) -> None:
    if importlib.util.find_spec("matplotlib") is None:
        with pytest.raises(ImportError):
            char_lm.plot_losses(short_run, tmp_path / "loss.png")
        return
    path = char_lm.plot_losses(short_run, tmp_path / "loss.png")
    assert path.stat().st_size > 5_000


def test_command_line_through_the_demo(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    argv = ["--char-lm", "--epochs", "2", "--steps", "2", "--hidden", "16"]
    assert demo.main([*argv, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "epoch 1/2  loss" in out and "epoch 2/2  loss" in out
    assert "trained 4 steps" in out and "sample:\nThe " in out
    assert "== The documents' example ==" not in out  # the spirals demo did not run
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "char-lm-loss.png").exists()


def test_command_line_rejects_bad_epochs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        demo.main(["--char-lm", "--epochs", "0"])
    assert exit_info.value.code == 2
    assert "--epochs and --steps must be at least 1" in capsys.readouterr().err


@pytest.mark.slow
def test_full_run_under_a_minute(tmp_path: pathlib.Path) -> None:
    """`python -m gradgen.demo --char-lm`: the loss falls to under a third of a
    uniform guess's, in under a minute."""
    environment = {
        k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")
    }
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "gradgen.demo", "--char-lm", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        check=False,
    )
    seconds = time.perf_counter() - started
    assert completed.returncode == 0, completed.stderr
    losses = [
        float(x)
        for x in re.findall(r"epoch +\d+/10  loss (\d+\.\d+)", completed.stdout)
    ]
    assert len(losses) == 10, completed.stdout
    uniform = float(re.search(r"= (\d+\.\d+) nats", completed.stdout).group(1))
    assert losses[-1] < uniform / 3
    assert seconds < 60, f"the demo took {seconds:.1f} s"

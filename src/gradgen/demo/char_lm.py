"""`python -m gradgen.demo --char-lm`: a character-level language model trained with
gradgen.

The text is generated here, seeded, from a small grammar of English sentences (a few
paragraphs about animals, weather and travellers; nothing is downloaded). The model
reads characters through an `nn.Embedding`, an `nn.LSTM` and an `nn.Linear` to the
next character's logits; it is trained on random windows of the text with
`optim.AdamW` and `nn.utils.clip_grad_norm_`, prints the mean loss of each epoch
(next to log(vocabulary), the loss of a uniform guess), samples text from the trained
model at the end and, when matplotlib is installed, draws the loss curve.

    python -m gradgen.demo --char-lm [--epochs N] [--steps N] [--hidden N]
        [--out DIR] [--no-pictures] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import pathlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

import gradgen
from gradgen import nn
from gradgen.nn import functional as F

# -- the text ----------------------------------------------------------------------------

_SUBJECTS = (
    "the old fox", "a small bird", "the tired traveller", "my neighbour",
    "the grey cat", "a young farmer", "the quiet river", "the north wind",
    "an old sailor", "the little dog",
)  # fmt: skip
_VERBS = (
    "watches", "follows", "finds", "remembers", "carries", "crosses", "greets",
    "leaves", "paints", "hears",
)  # fmt: skip
_OBJECTS = (
    "the green hill", "a warm loaf of bread", "the long road", "a silver coin",
    "the open gate", "the evening sky", "a red apple", "the wooden bridge",
    "the sleeping town", "a letter from home",
)  # fmt: skip
_ENDINGS = (
    "before the rain", "after dinner", "in the morning", "near the mill",
    "under the stars", "without a word", "at the end of the day", "once again",
)  # fmt: skip
_WEATHER = (
    "the sky was clear", "it rained all night", "the snow came early",
    "the sun was warm", "a cold wind blew", "the fog lay on the fields",
)  # fmt: skip


def _pick(rng: np.random.Generator, words: tuple[str, ...]) -> str:
    return words[int(rng.integers(len(words)))]


def _sentence(rng: np.random.Generator) -> str:
    """One sentence of the grammar: subject, verb, object, maybe an ending, maybe a
    clause about the weather."""
    text = f"{_pick(rng, _SUBJECTS)} {_pick(rng, _VERBS)} {_pick(rng, _OBJECTS)}"
    if rng.random() < 0.6:
        text += f" {_pick(rng, _ENDINGS)}"
    if rng.random() < 0.3:
        text += f", because {_pick(rng, _WEATHER)}"
    return text[0].upper() + text[1:] + "."


def make_text(paragraphs: int = 40, seed: int = 0) -> str:
    """`paragraphs` paragraphs of 4 to 7 generated sentences, separated by blank
    lines (about 250 characters each)."""
    if paragraphs < 1:
        raise ValueError(f"paragraphs must be at least 1, got {paragraphs}")
    rng = np.random.default_rng(seed)
    return "\n\n".join(
        " ".join(_sentence(rng) for _ in range(int(rng.integers(4, 8))))
        for _ in range(paragraphs)
    )


# -- the model ---------------------------------------------------------------------------


class CharLM(nn.Module):
    """Embedding -> LSTM -> Linear: the logits of the next character at each step."""

    def __init__(self, vocabulary: int, embedding: int = 32, hidden: int = 128):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, embedding)
        self.lstm = nn.LSTM(embedding, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocabulary)

    def forward(
        self,
        indices: gradgen.Tensor,
        state: tuple[gradgen.Tensor, gradgen.Tensor] | None = None,
    ) -> tuple[gradgen.Tensor, tuple[gradgen.Tensor, gradgen.Tensor]]:
        output, state = self.lstm(self.embedding(indices), state)
        return self.head(output), state


@dataclass
class CharLMResult:
    """What `train_char_lm` returns: the model, its alphabet, the loss of every step
    and the mean loss of every epoch."""

    model: CharLM
    alphabet: str
    step_losses: list[float] = field(default_factory=list)
    epoch_losses: list[float] = field(default_factory=list)
    seconds: float = 0.0


def _batch(
    codes: np.ndarray, rng: np.random.Generator, batch: int, length: int
) -> tuple[gradgen.Tensor, gradgen.Tensor]:
    """Random windows of the text: inputs (batch, length) and their next characters."""
    starts = rng.integers(0, len(codes) - length - 1, size=batch)
    windows = np.stack([codes[s : s + length + 1] for s in starts])
    return gradgen.tensor(windows[:, :-1]), gradgen.tensor(windows[:, 1:])


def train_char_lm(
    text: str,
    epochs: int = 10,
    steps: int = 40,
    batch: int = 32,
    length: int = 48,
    hidden: int = 128,
    lr: float = 0.005,
    seed: int = 0,
    report: bool = True,
) -> CharLMResult:
    """Train a CharLM on `text`: `epochs` epochs of `steps` AdamW steps on `batch`
    random windows of `length` characters, gradients clipped to norm 1."""
    if epochs < 1 or steps < 1:
        raise ValueError(f"epochs and steps must be at least 1, got {epochs}, {steps}")
    alphabet = "".join(sorted(set(text)))
    codes = np.array([alphabet.index(ch) for ch in text], dtype=np.int64)
    gradgen.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = CharLM(len(alphabet), hidden=hidden)
    optimizer = gradgen.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    result = CharLMResult(model, alphabet)
    started = time.perf_counter()
    for epoch in range(1, epochs + 1):
        for _ in range(steps):
            inputs, targets = _batch(codes, rng, batch, length)
            logits, _ = model(inputs)
            loss = F.cross_entropy(
                logits.reshape(-1, len(alphabet)), targets.reshape(-1)
            )
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            result.step_losses.append(float(loss.item()))  # type: ignore[arg-type]
        result.epoch_losses.append(float(np.mean(result.step_losses[-steps:])))
        if report:
            print(
                f"epoch {epoch:>{len(str(epochs))}}/{epochs}  loss "
                f"{result.epoch_losses[-1]:.3f}  {time.perf_counter() - started:5.1f} s",
                flush=True,
            )
    result.seconds = time.perf_counter() - started
    return result


def sample(
    result: CharLMResult,
    prompt: str = "The ",
    characters: int = 240,
    temperature: float = 0.7,
    seed: int = 0,
) -> str:
    """`prompt` continued by `characters` characters drawn one at a time from the
    model's softmax at `temperature` (numpy's generator, seeded)."""
    alphabet, model = result.alphabet, result.model
    rng = np.random.default_rng(seed)
    known = "".join(ch for ch in prompt if ch in alphabet) or alphabet[0]
    text = known
    with gradgen.no_grad():
        indices = gradgen.tensor([[alphabet.index(ch) for ch in known]])
        logits, state = model(indices)
        for _ in range(characters):
            scaled = logits[0, -1].numpy().astype(np.float64) / temperature
            probabilities = np.exp(scaled - scaled.max())
            probabilities /= probabilities.sum()
            code = int(rng.choice(len(alphabet), p=probabilities))
            text += alphabet[code]
            logits, state = model(gradgen.tensor([[code]]), state)
    return text


def plot_losses(result: CharLMResult, path: pathlib.Path) -> pathlib.Path:
    """Draw every step's loss and each epoch's mean to `path` (PNG). Needs
    matplotlib (ImportError otherwise)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps_per_epoch = len(result.step_losses) // len(result.epoch_losses)
    figure, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot(result.step_losses, color="tab:blue", alpha=0.4, label="step")
    ends = [steps_per_epoch * (k + 1) - 1 for k in range(len(result.epoch_losses))]
    ax.plot(ends, result.epoch_losses, "o-", color="tab:red", label="epoch mean")
    uniform = math.log(len(result.alphabet))
    ax.axhline(uniform, color="gray", linestyle="--", label="uniform guess")
    ax.set_xlabel("step")
    ax.set_ylabel("cross entropy (nats per character)")
    ax.set_title("gradgen character-level LSTM")
    ax.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, bbox_inches="tight")
    plt.close(figure)
    return path


# -- command line --------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m gradgen.demo --char-lm",
        description="A character-level LSTM language model trained with gradgen on "
        "generated text.",
    )
    parser.add_argument("--epochs", type=int, default=10, help="epochs (10)")
    parser.add_argument("--steps", type=int, default=40, help="steps per epoch (40)")
    parser.add_argument("--hidden", type=int, default=128, help="LSTM size (128)")
    parser.add_argument(
        "--out",
        type=pathlib.Path,
        default=pathlib.Path("demo-output"),
        help="directory for the loss curve (./demo-output)",
    )
    parser.add_argument("--no-pictures", action="store_true", help="draw nothing")
    parser.add_argument("--seed", type=int, default=0, help="seed (0)")
    args = parser.parse_args(argv)
    if args.epochs < 1 or args.steps < 1:
        parser.error("--epochs and --steps must be at least 1")
    return args


def run(
    epochs: int = 10,
    steps: int = 40,
    hidden: int = 128,
    out: pathlib.Path = pathlib.Path("demo-output"),
    pictures: bool = True,
    seed: int = 0,
) -> CharLMResult:
    """Generate the text, train, print the losses and a sample, draw the curve."""
    text = make_text(seed=seed)
    alphabet = sorted(set(text))
    print("== A character-level LSTM language model ==")
    print(
        f"Text: {len(text)} generated characters, {len(alphabet)} distinct (a uniform "
        f"guess costs log({len(alphabet)}) = {math.log(len(alphabet)):.3f} nats); "
        "AdamW(lr=0.005) with gradients clipped to norm 1."
    )
    result = train_char_lm(text, epochs=epochs, steps=steps, hidden=hidden, seed=seed)
    print(result.model)
    print(f"trained {epochs * steps} steps in {result.seconds:.1f} s")
    print("sample:")
    print(sample(result, seed=seed))
    if pictures:
        try:
            print(f"wrote {plot_losses(result, out / 'char-lm-loss.png')}")
        except ImportError:
            print(
                "matplotlib is not installed: no loss curve (pip install matplotlib, "
                "or pip install -e '.[demo]')"
            )
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    run(args.epochs, args.steps, args.hidden, args.out, not args.no_pictures, args.seed)
    return 0

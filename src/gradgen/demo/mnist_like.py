"""`python -m gradgen.demo --mnist-like`: a small CNN on digits rendered here.

The data: the ten digits of a 5 x 7 bitmap font, drawn at a random scale (2x or
1.5x-ish, by nearest-neighbour resampling), thickened or not, shifted anywhere in a 16
x 16 image, with random stroke intensity and Gaussian noise (numpy, seeded; nothing is
downloaded). The model: Conv2d -> BatchNorm2d -> ReLU -> MaxPool2d, twice, then Linear,
trained with `DataLoader` (shuffled minibatches), `AdamW` and `OneCycleLR` on the
cross entropy. After training the model's `state_dict` is saved with `gradgen.save`
(PyTorch's file format), loaded with `gradgen.load` into a fresh model, and that model
is evaluated again: the same accuracy. Loss and accuracy are printed per epoch, and
drawn when matplotlib is installed.

With the defaults (6000 training images, 6 epochs) it reaches over 95% held-out
accuracy (95.6% with seed 0) in about 15 s on two busy cores.
"""

from __future__ import annotations

import argparse
import pathlib
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

import gradgen
from gradgen import nn
from gradgen.nn import functional as F
from gradgen.optim.lr_scheduler import OneCycleLR
from gradgen.utils.data import DataLoader, TensorDataset

SIZE = 16  # images are SIZE x SIZE

# A 5 x 7 bitmap font: one string of 7 rows of 5 pixels per digit.
FONT = {
    0: ".###.#...##..###.#.###..##...#.###.",
    1: "..#...##....#....#....#....#...###.",
    2: ".###.#...#....#...#...#...#...#####",
    3: "#####...#...#...###.....##...#.###.",
    4: "...#...##..#.#.#..#.#####...#....#.",
    5: "######....####.....#....##...#.###.",
    6: "..##..#...#....####.#...##...#.###.",
    7: "#####....#...#...#...#....#....#...",
    8: ".###.#...##...#.###.#...##...#.###.",
    9: ".###.#...##...#.####....#...#..##..",
}


def glyph(digit: int) -> np.ndarray:
    """The digit's 7 x 5 bitmap (float32, 1 where the stroke is)."""
    return np.array([c == "#" for c in FONT[digit]], dtype=np.float32).reshape(7, 5)


def _render(digit: int, rng: np.random.Generator) -> np.ndarray:
    """One SIZE x SIZE image of `digit`: scaled, maybe thickened, shifted, noisy."""
    bitmap = glyph(digit)
    height = int(rng.integers(9, 15))  # 9..14 pixels tall
    width = int(rng.integers(6, 11))
    rows = (np.arange(height) * 7 / height).astype(int)
    columns = (np.arange(width) * 5 / width).astype(int)
    scaled = bitmap[rows][:, columns]
    if rng.random() < 0.5:  # a bolder stroke: the bitmap or-ed with itself moved right
        scaled = np.maximum(scaled, np.roll(scaled, 1, axis=1) * (columns > 0))
    image = np.zeros((SIZE, SIZE), dtype=np.float32)
    top = int(rng.integers(0, SIZE - height + 1))
    left = int(rng.integers(0, SIZE - width + 1))
    image[top : top + height, left : left + width] = scaled * rng.uniform(0.6, 1.0)
    image += rng.normal(0.0, 0.25, size=image.shape).astype(np.float32)
    return image


def make_digits(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`n` images (n, 1, SIZE, SIZE) float32 and their labels (n,) int64."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, size=n).astype(np.int64)
    images = np.stack([_render(int(d), rng) for d in labels])[:, None]
    return images.astype(np.float32), labels


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * (SIZE // 4) ** 2, 10),
    )


@dataclass
class Result:
    losses: list[float] = field(default_factory=list)  # mean training loss per epoch
    accuracies: list[float] = field(default_factory=list)  # held-out, per epoch
    reloaded_accuracy: float = 0.0  # the checkpoint's model, loaded again
    checkpoint: pathlib.Path | None = None
    seconds: float = 0.0


def accuracy(model: nn.Module, loader: DataLoader) -> float:
    """The share of correctly classified images (eval mode, no graph)."""
    model.eval()
    correct = total = 0
    with gradgen.no_grad():
        for images, labels in loader:
            predicted = model(images).argmax(1)
            correct += int((predicted == labels).sum().item())
            total += int(labels.shape[0])
    return correct / total


def _train_epoch(
    model: nn.Module,
    loader: DataLoader,
    optimizer: gradgen.optim.Optimizer,
    scheduler: OneCycleLR,
) -> float:
    model.train()
    total = 0.0
    for images, labels in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        scheduler.step()
        total += float(loss) * int(labels.shape[0])
    return total / len(loader.dataset)


EPOCHS = 6


def train(
    epochs: int = EPOCHS,
    n_train: int = 6000,
    n_test: int = 1000,
    batch_size: int = 64,
    seed: int = 0,
    checkpoint_dir: pathlib.Path | None = None,
    verbose: bool = True,
) -> Result:
    """Train, save, reload and re-evaluate; print one line per epoch if `verbose`."""
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")
    started = time.perf_counter()
    gradgen.manual_seed(seed)
    train_set = TensorDataset(*map(gradgen.tensor, make_digits(n_train, seed)))
    test_set = TensorDataset(*map(gradgen.tensor, make_digits(n_test, seed + 1)))
    generator = gradgen.Generator().manual_seed(seed)
    train_loader = DataLoader(
        train_set, batch_size=batch_size, shuffle=True, generator=generator
    )
    test_loader = DataLoader(test_set, batch_size=256)
    model = make_model()
    optimizer = gradgen.optim.AdamW(model.parameters(), lr=0.01, weight_decay=1e-4)
    scheduler = OneCycleLR(
        optimizer, max_lr=0.02, epochs=epochs, steps_per_epoch=len(train_loader)
    )
    result = Result()
    for epoch in range(1, epochs + 1):
        result.losses.append(_train_epoch(model, train_loader, optimizer, scheduler))
        result.accuracies.append(accuracy(model, test_loader))
        if verbose:
            print(
                f"epoch {epoch:2d}/{epochs}: train loss {result.losses[-1]:.4f}, "
                f"held-out accuracy {result.accuracies[-1]:.1%}, "
                f"lr {scheduler.get_last_lr()[0]:.5f}",
                flush=True,
            )
    result.checkpoint, result.reloaded_accuracy = _save_and_reload(
        model, test_loader, checkpoint_dir
    )
    result.seconds = time.perf_counter() - started
    return result


def _save_and_reload(
    model: nn.Module, loader: DataLoader, directory: pathlib.Path | None
) -> tuple[pathlib.Path, float]:
    """Save the state dict, load it into a fresh model, and evaluate that one."""
    directory = directory or pathlib.Path(tempfile.mkdtemp(prefix="gradgen-demo-"))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "mnist_like_cnn.pt"
    gradgen.save(model.state_dict(), path)
    fresh = make_model()
    fresh.load_state_dict(gradgen.load(path))
    return path, accuracy(fresh, loader)


def write_curves(result: Result, directory: pathlib.Path) -> list[pathlib.Path]:
    """The loss and accuracy curves as a PNG, when matplotlib is installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: no curves drawn)")
        return []
    directory.mkdir(parents=True, exist_ok=True)
    epochs = range(1, len(result.losses) + 1)
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.plot(epochs, result.losses, marker="o")
    left.set(title="training loss", xlabel="epoch", ylabel="cross entropy")
    right.plot(epochs, [100 * a for a in result.accuracies], marker="o")
    right.set(title="held-out accuracy", xlabel="epoch", ylabel="%")
    figure.tight_layout()
    path = directory / "mnist_like_curves.png"
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return [path]


def run(args: argparse.Namespace) -> int:
    """The `--mnist-like` demo from the parsed command line."""
    epochs = args.epochs if args.epochs is not None else EPOCHS
    print("== A CNN on rendered digits (--mnist-like) ==")
    print(
        f"Data: 6000 training and 1000 held-out {SIZE}x{SIZE} digits from a bitmap "
        f"font, scaled, shifted and noisy (numpy, seed {args.seed}); DataLoader "
        "(batch 64, shuffled), AdamW and OneCycleLR on the cross entropy."
    )
    print(make_model())
    result = train(epochs=epochs, seed=args.seed, checkpoint_dir=args.out)
    print(
        f"saved {result.checkpoint} with gradgen.save; loaded into a fresh model: "
        f"held-out accuracy {result.reloaded_accuracy:.1%}"
    )
    print(
        f"final held-out accuracy {result.accuracies[-1]:.1%} "
        f"({epochs} epochs in {result.seconds:.1f} s)"
    )
    if not args.no_pictures:
        for path in write_curves(result, args.out):
            print(f"wrote {path}")
    return 0

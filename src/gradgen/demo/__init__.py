"""`make demo` / `python -m gradgen.demo`: the documents' example, then a small
classifier trained with gradgen.

1. The documents' example: Q = 3a^3 - b^2 from two leaves, the graph autograd
   recorded (node names and their next functions) and the gradients backward
   computes: dQ/da = 9a^2 = 36 and dQ/db = -2b = -12 at a = 2, b = 6.
2. Two interleaved spirals (generated here with numpy, seeded) classified by an MLP
   2 -> 64 -> 64 -> 2 built from `gradgen.nn` layers, trained full batch with
   `gradgen.optim.Adam` on the cross entropy, with a progress bar. It prints the
   final train and held-out accuracy and, when matplotlib is installed, writes a
   picture of the decision boundary; with Graphviz's `dot`, a picture of the graph
   of one training step (`gradgen.viz`).

    python -m gradgen.demo [--epochs N] [--out DIR] [--no-pictures] [--seed S]

`--char-lm` runs the character-level LSTM language model instead (`char_lm.py`; the
other arguments are then its own: `python -m gradgen.demo --char-lm --help`).
`--mnist-like` runs the CNN demo of gradgen.demo.mnist_like instead.
"""

from __future__ import annotations

import argparse
import math
import os
import pathlib
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np

import gradgen
from gradgen import nn
from gradgen.graph import Node
from gradgen.nn import functional as F

from . import char_lm, mnist_like

# -- the documents' example ------------------------------------------------------------


def describe(node: Node | None, indent: str = "") -> list[str]:
    """The graph below `node` as indented lines (iterative: no recursion limit)."""
    lines: list[str] = []
    stack: list[tuple[Node | None, str]] = [(node, indent)]
    while stack:
        current, prefix = stack.pop()
        if current is None:
            lines.append(f"{prefix}None (no gradient needed)")
            continue
        label = current.name()
        variable = getattr(current, "variable", None)
        if variable is not None:
            label += f" -> leaf {variable!r}"
        lines.append(prefix + label)
        for child, _ in reversed(current.next_functions):
            stack.append((child, prefix + "    "))
    return lines


def example() -> None:
    """Print the documents' example: Q = 3a^3 - b^2, its graph and its gradients."""
    a = gradgen.tensor(2.0, requires_grad=True)
    b = gradgen.tensor(6.0, requires_grad=True)
    Q = 3 * a**3 - b**2
    print(f"a = {a!r}")
    print(f"b = {b!r}")
    print(f"Q = 3*a**3 - b**2 = {Q!r}")
    print("graph of Q:")
    print("\n".join("  " + line for line in describe(Q.grad_fn)))
    Q.backward(gradient=gradgen.tensor(1.0))
    print(f"dQ/da = 9*a**2 = {a.grad!r}")
    print(f"dQ/db = -2*b   = {b.grad!r}")


# -- the data --------------------------------------------------------------------------


def make_spirals(
    n_per_class: int = 500, turns: float = 2.0, noise: float = 0.03, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaved spirals in the unit disc: points (2 * n_per_class, 2) float32
    and labels (2 * n_per_class,) int64 (class 1 is class 0 turned by half a turn),
    with Gaussian noise of standard deviation `noise`."""
    if n_per_class < 1:
        raise ValueError(f"n_per_class must be at least 1, got {n_per_class}")
    rng = np.random.default_rng(seed)
    # sqrt spreads the points evenly along the arms (more of them far out).
    angle = np.sqrt(rng.random(n_per_class)) * turns * 2 * np.pi
    radius = angle / (turns * 2 * np.pi)
    arm = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    points = np.concatenate([arm, -arm]) + noise * rng.standard_normal(
        (2 * n_per_class, 2)
    )
    labels = np.repeat(np.arange(2, dtype=np.int64), n_per_class)
    return points.astype(np.float32), labels


# -- the model and its training --------------------------------------------------------


def make_model(hidden: int = 64) -> nn.Sequential:
    """The classifier: 2 -> hidden -> hidden -> 2 logits, tanh activations."""
    return nn.Sequential(
        nn.Linear(2, hidden),
        nn.Tanh(),
        nn.Linear(hidden, hidden),
        nn.Tanh(),
        nn.Linear(hidden, 2),
    )


def accuracy(logits: gradgen.Tensor, labels: gradgen.Tensor) -> float:
    """The fraction of rows whose largest logit is at the label."""
    correct = (gradgen.argmax(logits, 1) == labels).sum()
    return float(correct) / len(labels)


class Progress:
    """A one-line progress bar redrawn with \\r on a terminal; elsewhere (a log, a
    pipe) a plain line every tenth of the run, so logs stay readable."""

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        interactive: bool | None = None,
        width: int = 24,
    ) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stdout
        if interactive is None:
            isatty = getattr(self.stream, "isatty", None)
            interactive = bool(isatty and isatty())
        self.interactive = interactive
        self.width = width
        self.every = max(1, total // 10)
        self.started = time.perf_counter()
        self._last_draw = -math.inf

    def due(self, epoch: int) -> bool:
        """Whether `show` would print something for `epoch` (1-based): callers skip
        computing the accuracy otherwise."""
        if epoch == self.total or epoch == 1:
            return True
        if self.interactive:
            return time.perf_counter() - self._last_draw >= 0.1
        return epoch % self.every == 0

    def show(self, epoch: int, loss: float, acc: float) -> None:
        elapsed = time.perf_counter() - self.started
        text = (
            f"epoch {epoch:>{len(str(self.total))}}/{self.total}  loss {loss:.4f}  "
            f"accuracy {acc:6.1%}  {elapsed:5.1f} s"
        )
        if self.interactive:
            filled = round(self.width * epoch / self.total)
            bar = "#" * filled + "-" * (self.width - filled)
            self.stream.write(f"\r[{bar}] {text}")
            if epoch == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self._last_draw = time.perf_counter()


@dataclass
class TrainResult:
    """What `train_spirals` returns."""

    model: nn.Sequential
    points: np.ndarray
    labels: np.ndarray
    losses: list[float] = field(default_factory=list)
    train_accuracy: float = 0.0
    test_accuracy: float = 0.0
    seconds: float = 0.0


def train_spirals(
    epochs: int = 500,
    n_per_class: int = 500,
    hidden: int = 64,
    lr: float = 0.01,
    seed: int = 0,
    progress: Progress | None = None,
) -> TrainResult:
    """Train `make_model(hidden)` on `make_spirals(n_per_class, seed=seed)`, full
    batch, with Adam(lr) for `epochs` steps; report train accuracy and accuracy on a
    held-out set drawn with seed + 1."""
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")
    points, labels = make_spirals(n_per_class, seed=seed)
    test_points, test_labels = make_spirals(n_per_class, seed=seed + 1)
    gradgen.manual_seed(seed)
    model = make_model(hidden)
    optimizer = gradgen.optim.Adam(model.parameters(), lr=lr)
    x, y = gradgen.tensor(points), gradgen.tensor(labels)
    result = TrainResult(model, points, labels)

    started = time.perf_counter()
    for epoch in range(1, epochs + 1):
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        result.losses.append(float(loss.item()))  # type: ignore[arg-type]
        if progress is not None and progress.due(epoch):
            # The accuracy of the logits this step computed (before its update).
            progress.show(epoch, result.losses[-1], accuracy(logits, y))

    with gradgen.no_grad():
        result.train_accuracy = accuracy(model(x), y)
        result.test_accuracy = accuracy(
            model(gradgen.tensor(test_points)), gradgen.tensor(test_labels)
        )
    result.seconds = time.perf_counter() - started
    return result


# -- pictures --------------------------------------------------------------------------


def plot_decision_boundary(result: TrainResult, path: pathlib.Path) -> pathlib.Path:
    """Draw the model's probability of class 1 over the plane, its 0.5 contour and
    the training points to `path` (PNG). Needs matplotlib (ImportError otherwise)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points, labels = result.points, result.labels
    low, high = points.min() - 0.15, points.max() + 0.15
    axis = np.linspace(low, high, 300, dtype=np.float32)
    grid_x, grid_y = np.meshgrid(axis, axis)
    grid = np.stack([grid_x.ravel(), grid_y.ravel()], axis=1)
    with gradgen.no_grad():
        probability = gradgen.softmax(result.model(gradgen.tensor(grid)), 1)
    p1 = probability.numpy()[:, 1].reshape(grid_x.shape)

    figure, ax = plt.subplots(figsize=(6, 6), dpi=100)
    ax.contourf(
        grid_x, grid_y, p1, levels=20, cmap="RdBu_r", alpha=0.35, vmin=0, vmax=1
    )
    ax.contour(grid_x, grid_y, p1, levels=[0.5], colors="k", linewidths=1.2)
    for label, color in ((0, "tab:blue"), (1, "tab:red")):
        chosen = points[labels == label]
        ax.scatter(
            chosen[:, 0],
            chosen[:, 1],
            s=10,
            c=color,
            edgecolors="white",
            linewidths=0.3,
        )
    ax.set_title(
        f"gradgen MLP on two spirals: train accuracy {result.train_accuracy:.1%}"
    )
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, bbox_inches="tight")
    plt.close(figure)
    return path


def render_step_graph(result: TrainResult, path: pathlib.Path) -> pathlib.Path:
    """Render the autograd graph of one training step's loss (forward pass and
    cross entropy on the training set) with gradgen.viz; needs Graphviz's `dot`
    unless `path` ends in .dot (RuntimeError otherwise)."""
    x, y = gradgen.tensor(result.points), gradgen.tensor(result.labels)
    loss = F.cross_entropy(result.model(x), y)
    return gradgen.viz.render(loss, path, params=dict(result.model.named_parameters()))


def write_pictures(result: TrainResult, out: pathlib.Path) -> list[pathlib.Path]:
    """Write the pictures the installed tools allow; say in one line what is missing."""
    written: list[pathlib.Path] = []
    try:
        written.append(plot_decision_boundary(result, out / "decision-boundary.png"))
    except ImportError:
        print(
            "matplotlib is not installed: no decision-boundary picture "
            "(pip install matplotlib, or pip install -e '.[demo]')"
        )
    try:
        written.append(render_step_graph(result, out / "training-step-graph.svg"))
    except RuntimeError:
        dot_file = render_step_graph(result, out / "training-step-graph.dot")
        written.append(dot_file)
        print(
            "Graphviz's `dot` is not installed: wrote the step's graph as DOT text only "
            f"(apt-get install graphviz, then dot -Tsvg {dot_file})"
        )
    return written


# -- command line ----------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m gradgen.demo",
        description="The documents' example, then an MLP trained with gradgen on two "
        "spirals.",
    )
    parser.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="full-batch Adam steps (500), or epochs with --mnist-like (6)",
    )
    parser.add_argument(
        "--mnist-like", action="store_true", help="a CNN on rendered digits instead"
    )
    parser.add_argument(
        "--out",
        type=pathlib.Path,
        default=pathlib.Path("demo-output"),
        help="directory for the pictures (./demo-output)",
    )
    parser.add_argument("--no-pictures", action="store_true", help="write no pictures")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of data and weights (0)"
    )
    parser.add_argument(
        "--char-lm",
        action="store_true",
        help="train the character-level LSTM language model instead (its own "
        "options: python -m gradgen.demo --char-lm --help)",
    )
    args = parser.parse_args(argv)
    if args.epochs is not None and args.epochs < 1:
        parser.error(f"--epochs must be at least 1, got {args.epochs}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: `argv` as sys.argv[1:] (None: the real command line)."""
    started = time.perf_counter()
    arguments = sys.argv[1:] if argv is None else list(argv)
    if "--char-lm" in arguments:
        return char_lm.main([a for a in arguments if a != "--char-lm"])
    args = parse_args(arguments)
    if args.mnist_like:
        return mnist_like.run(args)
    args.epochs = 500 if args.epochs is None else args.epochs
    print("== The documents' example ==")
    example()

    print()
    print("== An MLP on two spirals ==")
    print(
        "Data: 2 x 500 points on two interleaved spirals (numpy, seed "
        f"{args.seed}); training full batch with Adam(lr=0.01) on the cross entropy."
    )
    print(make_model())
    result = train_spirals(
        epochs=args.epochs, seed=args.seed, progress=Progress(args.epochs)
    )
    print(
        f"final accuracy: train {result.train_accuracy:.1%}, held-out "
        f"{result.test_accuracy:.1%} ({args.epochs} epochs in {result.seconds:.1f} s)"
    )
    if not args.no_pictures:
        for path in write_pictures(result, args.out):
            print(f"wrote {path}")
    print(f"demo finished in {time.perf_counter() - started:.1f} s")
    return 0


_BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _restart_with_one_blas_thread() -> None:
    """Run this module again with one BLAS thread, unless the user chose a number.

    The model's matrices are small (1000 x 64): a second BLAS thread only adds
    synchronisation, and on a busy 2-core machine it made every matrix product
    about 100x slower. numpy reads these variables when it is first imported,
    which `python -m gradgen.demo` has already done, hence the restart.
    """
    if os.name != "posix" or any(v in os.environ for v in _BLAS_THREAD_VARIABLES):
        return
    environment = dict(os.environ, **{v: "1" for v in _BLAS_THREAD_VARIABLES})
    sys.stdout.flush()
    os.execve(
        sys.executable,
        [sys.executable, "-m", "gradgen.demo", *sys.argv[1:]],
        environment,
    )

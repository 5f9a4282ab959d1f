"""Anomaly detection: forward stacks for failing backwards, NaN checks, hints."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import gradgen
from gradgen import autograd
from gradgen.graph import Node
from gradgen.variable_type_utils import collect_next_edges, set_history


def test_entering_warns_and_nodes_record_the_forward_stack() -> None:
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = autograd.detect_anomaly()
    with mode:
        assert autograd.is_anomaly_enabled()
        y = gradgen.tensor([1.0], requires_grad=True) * 2.0
    assert not autograd.is_anomaly_enabled()
    stack = "".join(y.grad_fn.metadata["traceback_"])
    assert "test_anomaly.py" in stack and "test_entering_warns" in stack


def test_nan_in_a_backward_is_reported_with_the_node() -> None:
    x = gradgen.tensor([0.0, 1.0], dtype=gradgen.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly():
            z = (x**0.5) * 0.0  # d/dx sqrt at 0 is inf, times 0 is nan
            with pytest.raises(RuntimeError) as raised:
                z.backward(gradient=gradgen.ones(2, dtype=gradgen.float64))
    assert (
        str(raised.value)
        == "Function 'PowBackward0' returned nan values in its 0th output."
    )


def test_nan_check_can_be_turned_off() -> None:
    x = gradgen.tensor([0.0], dtype=gradgen.float64, requires_grad=True)
    autograd.set_detect_anomaly(True, check_nan=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter(
                "ignore"
            )  # pytest's filters show numpy's inf warnings
            ((x**0.5) * 0.0).backward(gradient=gradgen.ones(1, dtype=gradgen.float64))
    finally:
        autograd.set_detect_anomaly(False)
    assert np.isnan(x.grad.numpy()).all()


class FailingBackward(Node):
    def apply(self, grads):
        raise ValueError("broken formula")


def test_a_failing_backward_warns_with_the_forward_stack() -> None:
    x = gradgen.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly():
            node = FailingBackward()
            node.set_next_edges(collect_next_edges(x))
            y = gradgen.Tensor(np.ones(1, dtype=np.float32))
            set_history(y, node)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with autograd.detect_anomaly():
            with pytest.raises(ValueError, match="broken formula"):
                y.backward(gradient=gradgen.ones(1))
    messages = [str(w.message) for w in caught]
    assert any(
        m.startswith(
            "Error detected in FailingBackward. Traceback of forward call that "
            "caused the error:"
        )
        and "test_a_failing_backward" in m
        for m in messages
    )


def test_saved_tensor_hint_changes_under_anomaly_mode() -> None:
    a = gradgen.tensor([1.0], requires_grad=True)
    b = a * 2
    c = b * b
    b.add_(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly():
            with pytest.raises(RuntimeError) as raised:
                c.backward(gradient=gradgen.ones(1))
    assert str(raised.value).endswith(
        "Hint: the backtrace further above shows the operation that failed to compute its "
        "gradient. The variable in question was changed in there or anywhere later. Good "
        "luck!"
    )


def test_kernels_produce_inf_and_nan_silently_as_pytorch() -> None:
    # In a fresh interpreter: pytest installs warning filters of its own.
    code = (
        "import gradgen; x = gradgen.tensor([0.0, -1.0]); "
        "print((x ** -1.0).tolist(), (x ** 0.5).tolist())"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[inf, -1.0] [0.0, nan]"
    assert result.stderr == ""


def test_the_forward_stack_keeps_user_files_in_a_folder_named_gradgen(
    tmp_path: Path,
) -> None:
    """gradgen's own frames are dropped by module name, not by a path containing
    'gradgen' (a checkout or project folder may be called so)."""
    folder = tmp_path / "gradgen"
    folder.mkdir()
    script = folder / "user_model.py"
    script.write_text(
        "import gradgen\n"
        "def forward():\n"
        "    return gradgen.tensor([1.0], requires_grad=True) * 2.0\n"
    )
    namespace: dict[str, object] = {"__name__": "user_model"}
    exec(compile(script.read_text(), str(script), "exec"), namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly():
            y = namespace["forward"]()
    stack = "".join(y.grad_fn.metadata["traceback_"])
    assert "user_model.py" in stack and "in forward" in stack
    assert "anomaly_mode.py" not in stack and "tensor.py" not in stack

"""gradgen.save / gradgen.load in PyTorch's checkpoint format, both ways.

torch -> gradgen: tests/data/torch_checkpoint.pt was written by torch.save from
`torch_checkpoint(torch)` (run this file as a script, with torch installed, to write it
again); where torch is installed a test writes it afresh and checks that gradgen reads
the same. gradgen -> torch: torch.load reads what gradgen.save wrote (recorded answers
without torch).
"""

from __future__ import annotations

import io
import os
import pathlib
import pickle
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import serialization
from gradgen.nn import Parameter
from torch_oracle import oracle, outcome, require_torch, torch_available

CHECKPOINT = pathlib.Path(__file__).parent / "data" / "torch_checkpoint.pt"


def torch_checkpoint(torch: Any) -> dict[str, Any]:
    """What tests/data/torch_checkpoint.pt holds (deterministic values only)."""
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    linear = torch.nn.Linear(3, 2)
    with torch.no_grad():
        linear.weight.copy_(torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]))
        linear.bias.copy_(torch.tensor([0.1, -0.2]))
    stepped = torch.nn.Linear(3, 2)  # not `linear`: its state dict shares memory
    optimizer = torch.optim.Adam(stepped.parameters(), lr=0.5)
    stepped(torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    optimizer.step()  # state: step 1, exp_avg = 0.1 * grad
    return {
        "optimizer": optimizer.state_dict(),
        "matrix": base,
        "column": base[:, 1],  # a view: shares the storage of "matrix"
        "long": torch.tensor([1, -2, 3], dtype=torch.int64),
        "int": torch.tensor([[7]], dtype=torch.int32),
        "double": torch.tensor(2.5, dtype=torch.float64),
        "bool": torch.tensor([True, False]),
        "complex": torch.tensor([1 + 2j, -3j], dtype=torch.complex64),
        "empty": torch.zeros(0, 2),
        "requires": torch.tensor([1.0, 2.0], requires_grad=True),
        "parameter": torch.nn.Parameter(torch.tensor([3.0])),
        "linear": linear.state_dict(),
        "number": 3,
        "real": 1.5,
        "text": "hello",
        "bytes": b"\x00\xff",
        "nested": [1, (2.0, None), {"k": [True]}],
        "size": torch.Size([2, 3]),
        "dtype": torch.float64,
    }


def _check_checkpoint(loaded: dict[str, Any]) -> None:
    """The values `torch_checkpoint` saved, checked by hand."""
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(loaded["matrix"].numpy(), matrix)
    np.testing.assert_array_equal(loaded["column"].numpy(), matrix[:, 1])
    assert loaded["long"].dtype == gradgen.int64 and loaded["long"].tolist() == [
        1,
        -2,
        3,
    ]
    assert loaded["int"].dtype == gradgen.int32 and loaded["int"].tolist() == [[7]]
    assert loaded["double"].dtype == gradgen.float64 and loaded["double"].item() == 2.5
    assert loaded["bool"].tolist() == [True, False]
    assert loaded["complex"].dtype == gradgen.complex64
    assert loaded["complex"].tolist() == [1 + 2j, -3j]
    assert loaded["empty"].shape == (0, 2)
    assert loaded["requires"].requires_grad and loaded["requires"].is_leaf
    assert type(loaded["parameter"]) is Parameter
    assert loaded["parameter"].requires_grad and loaded["parameter"].tolist() == [3.0]
    assert type(loaded["linear"]) is OrderedDict and list(loaded["linear"]) == [
        "weight",
        "bias",
    ]
    assert loaded["linear"]._metadata == {"": {"version": 1}}
    assert loaded["linear"]["bias"].tolist() == pytest.approx([0.1, -0.2])
    optimizer = loaded["optimizer"]
    assert optimizer["param_groups"][0]["params"] == [0, 1]
    assert optimizer["param_groups"][0]["betas"] == (0.9, 0.999)
    weight_state = optimizer["state"][0]
    assert weight_state["step"].item() == 1.0
    np.testing.assert_allclose(
        weight_state["exp_avg"].numpy(), 0.1 * np.array([[1.0, 2, 3]] * 2), rtol=1e-6
    )
    assert (loaded["number"], loaded["real"], loaded["text"]) == (3, 1.5, "hello")
    assert loaded["bytes"] == b"\x00\xff"
    assert loaded["nested"] == [1, (2.0, None), {"k": [True]}]
    assert loaded["size"] == (2, 3) and isinstance(loaded["size"], gradgen.Size)
    assert loaded["dtype"] == gradgen.float64
    # the view still shares memory with its base, as in PyTorch
    loaded["matrix"][0, 1] = -1.0
    assert loaded["column"][0].item() == -1.0


def test_a_checkpoint_torch_wrote_loads() -> None:
    _check_checkpoint(gradgen.load(CHECKPOINT))


def test_the_committed_checkpoint_is_what_torch_writes_today(tmp_path: Any) -> None:
    torch = require_torch()
    path = tmp_path / "fresh.pt"
    torch.save(torch_checkpoint(torch), path)
    _check_checkpoint(gradgen.load(path))


def test_a_state_dict_torch_saved_runs_in_gradgen() -> None:
    state = gradgen.load(CHECKPOINT)["linear"]
    model = gradgen.nn.Linear(3, 2)
    model.load_state_dict(state)
    x = [[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]]
    expected = oracle(
        "torch linear",
        lambda torch: _torch_linear(torch, x),
    )
    np.testing.assert_allclose(model(gradgen.tensor(x)).detach().numpy(), expected)


def _torch_linear(torch: Any, x: Any) -> Any:
    linear = torch.nn.Linear(3, 2)
    linear.load_state_dict(torch_checkpoint(torch)["linear"])
    return linear(torch.tensor(x))


def _gradgen_checkpoint() -> dict[str, Any]:
    base = gradgen.arange(12.0).reshape(3, 4)
    linear = gradgen.nn.Linear(2, 2)
    weight = gradgen.tensor([[0.5, -1.0], [2.0, 0.25]])
    linear.load_state_dict({"weight": weight, "bias": gradgen.tensor([0.1, -0.2])})
    return {
        "matrix": base,
        "column": base[:, 1],
        "transposed": base.t(),
        "long": gradgen.tensor([1, -2, 3]),
        "double": gradgen.tensor(2.5, dtype=gradgen.float64),
        "bool": gradgen.tensor([True, False]),
        "complex": gradgen.tensor([1 + 2j, -3j]),
        "requires": gradgen.tensor([1.0, 2.0], requires_grad=True),
        "parameter": Parameter(gradgen.tensor([3.0])),
        "state": linear.state_dict(),
        "nested": [1, (2.0, None, "s"), {"k": b"xy"}],
        "dtype": gradgen.float64,
    }


def _what_torch_reads(torch: Any, payload: bytes, **options: Any) -> dict[str, Any]:
    loaded = torch.load(io.BytesIO(payload), **options)
    return {
        "matrix": loaded["matrix"],
        "column": loaded["column"],
        "transposed": (loaded["transposed"], tuple(loaded["transposed"].stride())),
        "dtypes": [
            str(loaded[key].dtype) for key in ("long", "double", "bool", "complex")
        ],
        "values": [loaded[key] for key in ("long", "double", "bool", "complex")],
        "requires": (loaded["requires"], loaded["requires"].requires_grad),
        "parameter": (type(loaded["parameter"]).__name__, loaded["parameter"]),
        "state": {key: value for key, value in loaded["state"].items()},
        "nested": repr(loaded["nested"]),  # bytes are not recordable: their repr
        "dtype": str(loaded["dtype"]),
        "shares": loaded["column"].data_ptr() - loaded["matrix"].data_ptr(),
    }


def test_torch_loads_what_gradgen_saved() -> None:
    saved = _gradgen_checkpoint()
    buffer = io.BytesIO()
    gradgen.save(saved, buffer)
    read = oracle(
        "torch reads", lambda torch: _what_torch_reads(torch, buffer.getvalue())
    )
    np.testing.assert_array_equal(read["matrix"], saved["matrix"].numpy())
    np.testing.assert_array_equal(read["column"], saved["column"].numpy())
    np.testing.assert_array_equal(read["transposed"][0], saved["transposed"].numpy())
    assert read["transposed"][1] == (1, 4)  # a view with torch's strides
    assert read["shares"] == 4  # column 1 is 4 bytes into the matrix's storage
    assert read["dtypes"] == [
        "torch.int64",
        "torch.float64",
        "torch.bool",
        "torch.complex64",
    ]
    assert read["requires"][1] is True
    assert read["parameter"][0] == "Parameter"
    for key, value in saved["state"].items():
        np.testing.assert_array_equal(read["state"][key], value.numpy())
    assert read["nested"] == repr([1, (2.0, None, "s"), {"k": b"xy"}])
    assert read["dtype"] == "torch.float64"


def test_the_archive_has_torchs_records(tmp_path: Any) -> None:
    path = tmp_path / "x.pt"
    gradgen.save({"a": gradgen.ones(3), "b": gradgen.zeros(2)}, str(path))
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        assert names[0] == "archive/data.pkl" and "archive/version" in names
        assert archive.read("archive/byteorder") == b"little"
        assert archive.read("archive/data/0") == np.ones(3, np.float32).tobytes()
        for info in archive.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            if info.filename.startswith("archive/data/"):
                start = info.header_offset + 30 + len(info.filename) + len(info.extra)
                assert start % 64 == 0
    if torch_available():  # torch's mmap loader needs the 64-byte alignment
        torch = require_torch()
        loaded = torch.load(path, mmap=True)
        assert loaded["a"].tolist() == [1.0, 1.0, 1.0]


def test_round_trip_keeps_views_and_accepts_paths_and_files(tmp_path: Any) -> None:
    saved = _gradgen_checkpoint()
    path = tmp_path / "round.pt"
    gradgen.save(saved, path)  # pathlib
    with open(path, "rb") as file:
        from_file = gradgen.load(file)
    for loaded in (gradgen.load(str(path)), from_file):
        for key in ("matrix", "column", "transposed", "long", "complex", "requires"):
            np.testing.assert_array_equal(loaded[key].detach(), saved[key].detach())
            assert loaded[key].dtype == saved[key].dtype
        assert loaded["requires"].requires_grad
        assert type(loaded["parameter"]) is Parameter
        loaded["matrix"][0, 1] = 50.0
        assert loaded["column"][0].item() == 50.0
        assert loaded["transposed"][1, 0].item() == 50.0


def test_map_location_forms() -> None:
    buffer = io.BytesIO()
    gradgen.save({"w": gradgen.ones(2)}, buffer)
    payload = buffer.getvalue()
    for where in (
        "cpu",
        gradgen.device("cpu"),
        {"cpu": "cpu"},
        lambda storage, location: storage,
        lambda storage, location: None,
    ):
        loaded = gradgen.load(io.BytesIO(payload), map_location=where)
        assert loaded["w"].tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="deserialize object on a CUDA device"):
        gradgen.load(io.BytesIO(payload), map_location="cuda:0")


def _cuda_checkpoint(monkeypatch: Any) -> bytes:
    """A checkpoint whose storage says 'cuda:0' (as torch writes on a GPU)."""
    original = serialization._Pickler._persistent_storage

    def on_cuda(self: Any, array: np.ndarray) -> tuple[Any, ...]:
        kind, storage_type, key, _, numel = original(self, array)
        return kind, storage_type, key, "cuda:0", numel

    monkeypatch.setattr(serialization._Pickler, "_persistent_storage", on_cuda)
    buffer = io.BytesIO()
    gradgen.save({"w": gradgen.ones(2)}, buffer)
    monkeypatch.undo()
    return buffer.getvalue()


def test_a_cuda_checkpoint_needs_a_map_location(monkeypatch: Any) -> None:
    payload = _cuda_checkpoint(monkeypatch)
    with pytest.raises(RuntimeError) as raised:
        gradgen.load(io.BytesIO(payload))
    assert str(raised.value) == serialization.CUDA_LOCATION
    for where in ("cpu", {"cuda:0": "cpu"}, lambda storage, location: storage.cpu()):
        loaded = gradgen.load(io.BytesIO(payload), map_location=where)
        assert loaded["w"].tolist() == [1.0, 1.0]


class Custom:
    """A class of the test module: refused by weights-only loads."""

    def __init__(self) -> None:
        self.value = 42


def test_weights_only_refuses_other_globals_as_torch_does() -> None:
    buffer = io.BytesIO()
    gradgen.save({"custom": Custom()}, buffer)
    payload = buffer.getvalue()
    name = f"{Custom.__module__}.Custom"
    refused = f"Unsupported global: GLOBAL {name} was not an allowed global by default"
    error = oracle(
        "torch refuses",
        lambda torch: outcome(lambda: torch.load(io.BytesIO(payload))),
    )
    assert type(error).__name__ == "UnpicklingError" and refused in str(error)
    with pytest.raises(pickle.UnpicklingError) as raised:
        gradgen.load(io.BytesIO(payload))
    assert "Weights only load failed" in str(raised.value)
    assert refused in str(raised.value)
    loaded = gradgen.load(io.BytesIO(payload), weights_only=False)
    assert isinstance(loaded["custom"], Custom) and loaded["custom"].value == 42


def test_safe_globals_allow_a_class_the_user_trusts() -> None:
    buffer = io.BytesIO()
    gradgen.save([Custom()], buffer)
    payload = buffer.getvalue()
    with serialization.safe_globals([Custom]):
        assert serialization.get_safe_globals() == [Custom]
        assert gradgen.load(io.BytesIO(payload))[0].value == 42
    assert serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        gradgen.load(io.BytesIO(payload))
    serialization.add_safe_globals([(Custom, f"{Custom.__module__}.Custom")])
    try:
        assert gradgen.load(io.BytesIO(payload))[0].value == 42
    finally:
        serialization.clear_safe_globals()


def _archive(data_pkl: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", data_pkl)
        archive.writestr("archive/version", b"3\n")
    return buffer.getvalue()


class _RunsCode:
    def __init__(self, canary: str) -> None:
        self.canary = canary

    def __reduce__(self) -> Any:
        return (os.mkdir, (self.canary,))


def test_weights_only_never_imports_or_calls_a_hostile_global(tmp_path: Any) -> None:
    canary = tmp_path / "canary"
    hostile = _archive(pickle.dumps({"x": _RunsCode(str(canary))}, protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL posix.mkdir"):
        gradgen.load(io.BytesIO(hostile))
    assert not canary.exists()
    # weights_only=False runs it: PyTorch's warning about untrusted files stands
    gradgen.load(io.BytesIO(hostile), weights_only=False)
    assert canary.exists()


def test_weights_only_sets_attributes_only_on_ordered_dicts() -> None:
    # BUILD on an allowed class: would set Size's attributes if it were allowed
    hostile = (
        b"\x80\x02ctorch\nSize\nq\x00)\x81q\x01}q\x02X\x03\x00\x00\x00newq\x03K\x01sb."
    )
    with pytest.raises(pickle.UnpicklingError, match="setting the state of a Size"):
        gradgen.load(io.BytesIO(_archive(hostile)))
    with pytest.raises(pickle.UnpicklingError, match="not an allowed global"):
        gradgen.load(io.BytesIO(_archive(b"\x80\x02cbuiltins\neval\nq\x00.")))


def test_whole_modules_save_and_load_with_weights_only_false() -> None:
    model = gradgen.nn.Sequential(gradgen.nn.Linear(3, 4), gradgen.nn.Linear(4, 1))
    buffer = io.BytesIO()
    gradgen.save(model, buffer)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        gradgen.load(io.BytesIO(buffer.getvalue()))
    loaded = gradgen.load(io.BytesIO(buffer.getvalue()), weights_only=False)
    x = gradgen.tensor([[1.0, -2.0, 0.5]])
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
    assert all(type(p) is Parameter for p in loaded.parameters())


def test_a_dtype_gradgen_lacks_is_named() -> None:
    storage = b"\x80\x02ctorch\nComplexHalfStorage\nq\x00."
    with pytest.raises(
        pickle.UnpicklingError, match="torch.ComplexHalfStorage, tensor"
    ):
        gradgen.load(io.BytesIO(_archive(storage)))
    with pytest.raises(pickle.UnpicklingError, match="the dtype torch.complex32"):
        gradgen.load(io.BytesIO(_archive(b"\x80\x02ctorch\ncomplex32\nq\x00.")))


def test_bad_files_get_clear_errors(tmp_path: Any) -> None:
    legacy = tmp_path / "legacy.pt"
    legacy.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(RuntimeError, match="not a zip archive"):
        gradgen.load(legacy)
    with pytest.raises(FileNotFoundError):
        gradgen.load(tmp_path / "missing.pt")


DATA_SOURCES = [
    pathlib.Path(serialization.__file__),
    *sorted(pathlib.Path(gradgen.utils.data.__file__).parent.glob("*.py")),
]


@pytest.mark.parametrize("source", DATA_SOURCES, ids=[p.name for p in DATA_SOURCES])
def test_errors_md_explains_every_checkpoint_and_data_error(
    source: pathlib.Path,
) -> None:
    from test_docs import ERRORS, RUNTIME_EXCEPTIONS, _explained_text, error_fragments

    text = _explained_text(ERRORS)
    exceptions = RUNTIME_EXCEPTIONS | {"UnpicklingError", "PicklingError"}
    missing = [
        f"{source.name}:{line}: {fragment!r}"
        for line, fragment in error_fragments(source, exceptions)
        if fragment not in text
    ]
    assert not missing, "docs/errors.md does not explain:\n" + "\n".join(missing)


if __name__ == "__main__":  # write tests/data/torch_checkpoint.pt again
    import torch as _torch

    _torch.save(torch_checkpoint(_torch), CHECKPOINT)

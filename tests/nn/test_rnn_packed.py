"""gradgen.nn.utils.rnn (PackedSequence, pack_padded_sequence, pad_packed_sequence,
pack_sequence, pad_sequence, unpad_sequence, unpack_sequence) and the recurrent layers
over packed sequences, against torch: the same data, batch sizes, permutations,
padded results, gradients and errors. Recorded in tests/golden/."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.nn.utils import rnn as rnn_utils
from torch_oracle import oracle, outcome

RNG = np.random.default_rng(2028)


def _normal(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape)


def _array(value: Any) -> Any:
    return None if value is None else value.detach().numpy()


def _packed_arrays(packed: Any) -> list[Any]:
    return [_array(part) for part in packed]


PADDED = _normal(5, 4, 2)  # (T, B, features)

PACK_CASES: dict[str, tuple[list[int], dict[str, Any]]] = {
    "sorted": ([5, 4, 2, 1], {}),
    "sorted-equal-lengths": ([5, 3, 3, 1], {}),
    "unsorted": ([2, 5, 1, 4], {"enforce_sorted": False}),
    "unsorted-ties": ([3, 5, 3, 1], {"enforce_sorted": False}),
    "batch-first": ([4, 3, 3, 2], {"batch_first": True}),
    "batch-first-unsorted": (
        [1, 4, 2, 3],
        {"batch_first": True, "enforce_sorted": False},
    ),
}


def _pack_and_pad(lib: Any, case: str) -> dict[str, Any]:
    lengths, kwargs = PACK_CASES[case]
    batch_first = kwargs.get("batch_first", False)
    values = PADDED.transpose(1, 0, 2) if batch_first else PADDED
    padded = lib.tensor(values, requires_grad=True)
    packed = lib.nn.utils.rnn.pack_padded_sequence(padded, lengths, **kwargs)
    again, lengths_out = lib.nn.utils.rnn.pad_packed_sequence(
        packed, batch_first=batch_first, padding_value=-1.5, total_length=6
    )
    weights = lib.tensor(np.linspace(-1, 2, again.numel()).reshape(again.shape))
    (again * weights).sum().backward()
    return {
        "packed": _packed_arrays(packed),
        "fields": list(type(packed)._fields),
        "padded": again.detach().numpy(),
        "lengths": lengths_out.numpy(),
        "grad": padded.grad.numpy(),
    }


@pytest.mark.parametrize("case", sorted(PACK_CASES))
def test_pack_and_pad_match_torch(case: str) -> None:
    ours = _pack_and_pad(gradgen, case)
    theirs = oracle("pack and pad", lambda torch: _pack_and_pad(torch, case))
    assert ours["fields"] == theirs["fields"]
    for mine, want in zip(ours["packed"], theirs["packed"], strict=True):
        if want is None:
            assert mine is None
        else:
            np.testing.assert_array_equal(mine, want)
    for key in ("padded", "lengths", "grad"):
        np.testing.assert_array_equal(ours[key], theirs[key])


SEQUENCES = [_normal(3, 2), _normal(5, 2), _normal(1, 2)]


def _sequences(lib: Any) -> list[Any]:
    return [lib.tensor(s, requires_grad=True) for s in SEQUENCES]


SEQUENCE_CASES: dict[str, Callable[[Any, list[Any]], Any]] = {
    "pad_sequence": lambda lib, s: lib.nn.utils.rnn.pad_sequence(s),
    "pad_sequence-batch-first": lambda lib, s: lib.nn.utils.rnn.pad_sequence(
        s, batch_first=True, padding_value=2.0
    ),
    "pad_sequence-left": lambda lib, s: lib.nn.utils.rnn.pad_sequence(
        s, padding_side="left"
    ),
    "pack_sequence": lambda lib, s: lib.nn.utils.rnn.pack_sequence(
        s, enforce_sorted=False
    ).data,
    "unpack_sequence": lambda lib, s: lib.cat(
        lib.nn.utils.rnn.unpack_sequence(
            lib.nn.utils.rnn.pack_sequence(s, enforce_sorted=False)
        )
    ),
    "unpad_sequence": lambda lib, s: lib.cat(
        lib.nn.utils.rnn.unpad_sequence(
            lib.nn.utils.rnn.pad_sequence(s, batch_first=True),
            lib.tensor([3, 5, 1]),
            batch_first=True,
        )
    ),
}


@pytest.mark.parametrize("case", sorted(SEQUENCE_CASES))
def test_sequence_functions_match_torch(case: str) -> None:
    def run(lib: Any) -> dict[str, Any]:
        sequences = _sequences(lib)
        out = SEQUENCE_CASES[case](lib, sequences)
        weights = lib.tensor(np.linspace(-1, 2, out.numel()).reshape(out.shape))
        (out * weights).sum().backward()
        return {
            "out": out.detach().numpy(),
            "grads": [s.grad.numpy() for s in sequences],
        }

    ours, theirs = run(gradgen), oracle("sequences", run)
    np.testing.assert_array_equal(ours["out"], theirs["out"])
    for mine, want in zip(ours["grads"], theirs["grads"], strict=True):
        np.testing.assert_array_equal(mine, want)


ERRORS: dict[str, Callable[[Any], Any]] = {
    "not-sorted": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(
        lib.zeros(4, 3, 2), [2, 3, 1]
    ),
    "lengths-count": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(
        lib.zeros(4, 3, 2), [3, 2]
    ),
    "zero-length": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(
        lib.zeros(4, 3, 2), [3, 0, 0]
    ),
    "2d-lengths": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(
        lib.zeros(4, 3, 2), lib.tensor([[3, 2, 1]])
    ),
    "total-length": lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_sequence([lib.zeros(3), lib.zeros(2)]), total_length=2
    ),
    "padding-side": lambda lib: lib.nn.utils.rnn.pad_sequence(
        [lib.ones(2), lib.ones(3)], padding_side="middle"
    ),
    "empty": lambda lib: lib.nn.utils.rnn.pad_sequence([]),
    "pack-sequence-unsorted": lambda lib: lib.nn.utils.rnn.pack_sequence(
        [lib.ones(2), lib.ones(3)]
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    def run(lib: Any) -> Any:
        return outcome(lambda: ERRORS[name](lib))

    ours, theirs = run(gradgen), oracle("error", run)
    assert isinstance(theirs, Exception), theirs
    assert type(ours).__name__ == type(theirs).__name__
    assert str(ours) == str(theirs)


def test_a_length_longer_than_the_padding_is_refused() -> None:
    # PyTorch reads past the end of the input here; gradgen says so instead.
    with pytest.raises(RuntimeError, match="the longest length, 5, is longer than"):
        rnn_utils.pack_padded_sequence(gradgen.zeros(4, 3, 2), [5, 3, 1])


# -- the layers over packed sequences -------------------------------------------------------

LAYERS: dict[str, tuple[Callable[[Any], Any], bool]] = {
    "LSTM": (lambda lib: lib.nn.LSTM(2, 3), False),
    "LSTM-bidirectional-2-layers-state": (
        lambda lib: lib.nn.LSTM(2, 3, 2, bidirectional=True),
        True,
    ),
    "LSTM-proj-bidirectional": (
        lambda lib: lib.nn.LSTM(2, 4, proj_size=2, bidirectional=True),
        True,
    ),
    "GRU-bidirectional": (lambda lib: lib.nn.GRU(2, 3, bidirectional=True), True),
    "GRU-2-layers": (lambda lib: lib.nn.GRU(2, 3, 2), False),
    "RNN-relu-bidirectional": (
        lambda lib: lib.nn.RNN(2, 3, nonlinearity="relu", bidirectional=True),
        False,
    ),
}
LENGTHS = [2, 5, 1, 4]  # unsorted: the layers see sorted_indices


def _states(lib: Any, module: Any) -> Any:
    generator = np.random.default_rng(5)
    directions = 2 if module.bidirectional else 1
    layers = module.num_layers * directions
    size = module.proj_size if getattr(module, "proj_size", 0) else module.hidden_size
    h = lib.tensor(generator.normal(size=(layers, 4, size)), requires_grad=True)
    if not isinstance(module, lib.nn.LSTM):
        return h, [h]
    c = lib.tensor(generator.normal(size=(layers, 4, module.hidden_size)))
    c.requires_grad_(True)
    return (h, c), [h, c]


def _run_packed(lib: Any, name: str) -> dict[str, Any]:
    build, with_state = LAYERS[name]
    module = build(lib).double()
    generator = np.random.default_rng(9)
    for parameter in module.parameters():
        parameter.data = lib.tensor(generator.normal(size=tuple(parameter.shape)) * 0.5)
    padded = lib.tensor(PADDED, requires_grad=True)
    packed = lib.nn.utils.rnn.pack_padded_sequence(
        padded, LENGTHS, enforce_sorted=False
    )
    state, leaves = _states(lib, module) if with_state else (None, [])
    output, hidden = module(packed, state)
    unpacked, _ = lib.nn.utils.rnn.pad_packed_sequence(output)
    finals = list(hidden) if isinstance(hidden, tuple) else [hidden]
    loss = (unpacked * unpacked).sum() + sum((f * 1.5).sum() for f in finals)
    loss.backward()
    return {
        "output": unpacked.detach().numpy(),
        "indices": _packed_arrays(output)[1:],
        "finals": [f.detach().numpy() for f in finals],
        "grads": [padded.grad.numpy()] + [leaf.grad.numpy() for leaf in leaves],
        "param grads": {n: p.grad.numpy() for n, p in module.named_parameters()},
    }


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers_over_packed_sequences_match_torch(name: str) -> None:
    ours = _run_packed(gradgen, name)
    theirs = oracle("packed layer", lambda torch: _run_packed(torch, name))

    def close(mine: Any, want: Any) -> None:
        np.testing.assert_allclose(mine, want, rtol=1e-10, atol=1e-12)

    close(ours["output"], theirs["output"])
    for mine, want in zip(ours["indices"], theirs["indices"], strict=True):
        np.testing.assert_array_equal(mine, want)
    for key in ("finals", "grads"):
        for mine, want in zip(ours[key], theirs[key], strict=True):
            close(mine, want)
    assert sorted(ours["param grads"]) == sorted(theirs["param grads"])
    for key, mine in ours["param grads"].items():
        close(mine, theirs["param grads"][key])


def test_packed_sequence_conversions_keep_the_batch_sizes() -> None:
    packed = rnn_utils.pack_sequence([gradgen.ones(3, 2), gradgen.ones(1, 2)])
    converted = packed.double()
    assert converted.data.dtype == gradgen.float64
    assert converted.batch_sizes is packed.batch_sizes
    assert packed.to(gradgen.float32) is packed
    assert packed.float().data.dtype == gradgen.float32
    assert not packed.is_cuda

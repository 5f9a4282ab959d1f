"""gradgen.utils.data.DataLoader: batching, shuffling, lengths, checks, workers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    SequentialSampler,
    Subset,
    TensorDataset,
    get_worker_info,
)
from torch_oracle import oracle, outcome

from .test_datasets import _plain, same_error


class Squares(Dataset[dict[str, Any]]):
    """Sample i: a dict with an int, a float array and a string."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {"i": i, "x": np.full(2, i * i, dtype=np.float32), "name": f"s{i}"}


class Numbers(IterableDataset[int]):
    """0..n-1; in worker processes each worker yields its share (i % workers)."""

    def __init__(self, n: int, sized: bool = True) -> None:
        self.n = n
        self.sized = sized

    def __iter__(self) -> Any:
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self) -> int:
        if not self.sized:
            raise TypeError("no length")
        return self.n


def _batches(module: Any, dataset: Any, **options: Any) -> Any:
    return [_plain(batch) for batch in module.DataLoader(dataset, **options)]


def _torch_squares(torch: Any) -> Any:
    class TorchSquares(torch.utils.data.Dataset):  # type: ignore[misc]
        __len__ = Squares.__len__
        __getitem__ = Squares.__getitem__

        def __init__(self, n: int) -> None:
            self.n = n

    return TorchSquares


SEQUENTIAL = [
    ("batch 3", {"batch_size": 3}),
    ("drop last", {"batch_size": 3, "drop_last": True}),
    ("no batching", {"batch_size": None}),
    ("batch sampler", {"batch_sampler": [[4, 0], [2]]}),
    ("sampler", {"sampler": [3, 1], "batch_size": 2}),
    ("collate_fn", {"batch_size": 2, "collate_fn": lambda batch: len(batch)}),
]


@pytest.mark.parametrize("name,options", SEQUENTIAL, ids=[s[0] for s in SEQUENTIAL])
def test_batches_as_pytorch(name: str, options: dict[str, Any]) -> None:
    expected = oracle(
        name,
        lambda torch: _batches(torch.utils.data, _torch_squares(torch)(5), **options),
    )
    assert _batches(gradgen.utils.data, Squares(5), **options) == expected


def test_tensor_dataset_batches() -> None:
    data = TensorDataset(gradgen.arange(10.0).reshape(5, 2), gradgen.arange(5))
    x, y = next(iter(DataLoader(data, batch_size=2)))
    assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]] and y.tolist() == [0, 1]
    assert y.dtype == gradgen.int64


def test_shuffle_visits_every_sample_once_reproducibly() -> None:
    loader = DataLoader(range(10), batch_size=4, shuffle=True)
    seen = [i for batch in loader for i in batch.tolist()]
    assert sorted(seen) == list(range(10))
    gradgen.manual_seed(0)
    first = [b.tolist() for b in DataLoader(range(10), batch_size=4, shuffle=True)]
    gradgen.manual_seed(0)
    assert [
        b.tolist() for b in DataLoader(range(10), batch_size=4, shuffle=True)
    ] == first
    seeded = DataLoader(range(10), shuffle=True, generator=np.random.default_rng(5))
    again = DataLoader(range(10), shuffle=True, generator=np.random.default_rng(5))
    assert [b.item() for b in seeded] == [b.item() for b in again]


def _lengths(module: Any, numbers: Callable[..., Any]) -> Any:
    loader = module.DataLoader
    return [
        len(loader(range(10), batch_size=3)),
        len(loader(range(10), batch_size=3, drop_last=True)),
        len(loader(range(10), batch_size=None)),
        len(loader(numbers(10), batch_size=3)),
        len(loader(numbers(10), batch_size=3, drop_last=True)),
        len(loader(numbers(10), batch_size=None)),
    ]


def test_len_as_pytorch() -> None:
    def torch_numbers(torch: Any) -> Any:
        class TorchNumbers(torch.utils.data.IterableDataset):  # type: ignore[misc]
            def __init__(self, n: int) -> None:
                self.n = n

            def __iter__(self) -> Any:
                return iter(range(self.n))

            def __len__(self) -> int:
                return self.n

        return TorchNumbers

    expected = oracle(
        "lengths", lambda torch: _lengths(torch.utils.data, torch_numbers(torch))
    )
    assert _lengths(gradgen.utils.data, Numbers) == expected
    with pytest.raises(TypeError):
        len(DataLoader(Numbers(3, sized=False)))


OPTION_ERRORS: list[tuple[str, dict[str, Any]]] = [
    ("batch_sampler exclusive", {"batch_sampler": [[0]], "batch_size": 2}),
    ("sampler and shuffle", {"sampler": [0], "shuffle": True}),
    ("batch_size None", {"batch_size": None, "drop_last": True}),
    ("num_workers", {"num_workers": -1}),
    ("persistent", {"persistent_workers": True}),
    ("timeout", {"timeout": -1}),
    ("prefetch", {"prefetch_factor": 2}),
]


@pytest.mark.parametrize(
    "name,options", OPTION_ERRORS, ids=[e[0] for e in OPTION_ERRORS]
)
def test_option_errors_as_pytorch(name: str, options: dict[str, Any]) -> None:
    same_error(
        name,
        lambda: DataLoader(range(3), **options),
        lambda torch: torch.utils.data.DataLoader(range(3), **options),
    )


def test_iterable_dataset_option_errors_as_pytorch() -> None:
    for option, value in [
        ("shuffle", True),
        ("sampler", [0]),
        ("batch_sampler", [[0]]),
    ]:
        expected = oracle(
            option,
            lambda torch: outcome(
                lambda: torch.utils.data.DataLoader(
                    _torch_iterable(torch), **{option: value}
                )
            ),
        )
        with pytest.raises(ValueError) as raised:
            DataLoader(Numbers(3), **{option: value})
        assert str(raised.value) == str(expected)


def _torch_iterable(torch: Any) -> Any:
    class Empty(torch.utils.data.IterableDataset):  # type: ignore[misc]
        def __iter__(self) -> Any:
            return iter(())

    return Empty()


def test_iterable_dataset_batches() -> None:
    batches = [b.tolist() for b in DataLoader(Numbers(7), batch_size=3)]
    assert batches == [[0, 1, 2], [3, 4, 5], [6]]
    dropped = DataLoader(Numbers(7), batch_size=3, drop_last=True)
    assert [b.tolist() for b in dropped] == [[0, 1, 2], [3, 4, 5]]
    assert list(DataLoader(Numbers(3), batch_size=None)) == [0, 1, 2]  # as PyTorch


# -- worker processes --------------------------------------------------------------------


def test_workers_give_the_same_batches_in_order() -> None:
    data = Squares(11)
    alone = [_plain(b) for b in DataLoader(data, batch_size=2)]
    workers = DataLoader(data, batch_size=2, num_workers=2, persistent_workers=True)
    assert [_plain(b) for b in workers] == alone
    assert [_plain(b) for b in workers] == alone  # a second epoch
    pinned = DataLoader(data, batch_size=2, num_workers=1, pin_memory=True)
    assert [_plain(b) for b in pinned] == alone


def test_persistent_workers_serve_every_epoch() -> None:
    loader = DataLoader(
        Squares(5), batch_size=2, num_workers=2, persistent_workers=True
    )
    first = iter(loader)
    next(first)  # an epoch abandoned after one batch
    for _ in range(2):
        assert [b["i"].tolist() for b in loader] == [[0, 1], [2, 3], [4]]
    assert iter(loader) is first and all(w.is_alive() for w in first.workers)  # type: ignore[attr-defined]
    streams = DataLoader(
        Numbers(4), batch_size=2, num_workers=2, persistent_workers=True
    )
    for _ in range(2):
        assert [b.tolist() for b in streams] == [[0, 2], [1, 3]]


def test_spawned_workers() -> None:
    # a dataset of gradgen's own: the spawned process need not import this module
    data = TensorDataset(gradgen.arange(4.0))
    loader = DataLoader(
        data, batch_size=2, num_workers=1, multiprocessing_context="spawn"
    )
    assert [b[0].tolist() for b in loader] == [[0.0, 1.0], [2.0, 3.0]]


class WhoLoads(Dataset[Any]):
    """Sample i: (i, the loading worker's id, its seed, what worker_init_fn set)."""

    seen = "main"

    def __len__(self) -> int:
        return 6

    def __getitem__(self, i: int) -> Any:
        info = get_worker_info()
        assert info is not None and info.dataset is self  # the worker's copy
        return (i, info.id, info.seed, WhoLoads.seen, info.num_workers)


def _mark_worker(worker_id: int) -> None:
    WhoLoads.seen = f"init {worker_id}"


def test_worker_info_and_worker_init_fn() -> None:
    assert get_worker_info() is None
    loader = DataLoader(
        WhoLoads(), batch_size=None, num_workers=2, worker_init_fn=_mark_worker
    )
    rows = [
        tuple(item if isinstance(item, (int, str)) else item.item() for item in row)
        for row in loader
    ]
    assert [row[0] for row in rows] == list(range(6))
    assert {row[1] for row in rows} == {0, 1}
    for i, worker, seed, seen, count in rows:
        assert seen == f"init {worker}" and count == 2
    seeds = {row[1]: row[2] for row in rows}
    assert seeds[1] == seeds[0] + 1  # base seed + worker id, as PyTorch
    assert WhoLoads.seen == "main"


def test_iterable_dataset_in_workers() -> None:
    loader = DataLoader(Numbers(10), batch_size=3, num_workers=2)
    batches = [b.tolist() for b in loader]
    # as PyTorch: workers take turns, each batching its own share
    assert batches == [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]


class Fails(Dataset[int]):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> int:
        if i == 2:
            raise ValueError("sample 2 is broken")
        return i


def test_a_worker_error_is_raised_in_the_main_process() -> None:
    loader = DataLoader(Fails(), batch_size=1, num_workers=2)
    with pytest.raises(ValueError) as raised:
        list(loader)
    message = str(raised.value)
    assert message.startswith("Caught ValueError in DataLoader worker process 0.")
    assert "sample 2 is broken" in message


def test_breaking_out_early_stops_the_workers() -> None:
    loader = DataLoader(Squares(100), batch_size=2, num_workers=2)
    iterator = iter(loader)
    first = next(iterator)
    assert first["i"].tolist() == [0, 1]
    iterator.close()  # type: ignore[attr-defined]
    assert all(not worker.is_alive() for worker in iterator.workers)  # type: ignore[attr-defined]


def test_sampler_objects_are_accepted() -> None:
    sampler = BatchSampler(SequentialSampler(range(5)), 2, drop_last=False)
    loader = DataLoader(range(5), batch_sampler=sampler)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4]]
    assert len(loader) == 3


class Batched(Dataset[int]):
    """Reads a whole batch at once (`__getitems__`), and counts how often."""

    def __init__(self) -> None:
        self.calls: list[list[int]] = []

    def __len__(self) -> int:
        return 5

    def __getitem__(self, i: int) -> int:
        raise AssertionError("the DataLoader reads batches through __getitems__")

    def __getitems__(self, indices: list[int]) -> list[int]:
        self.calls.append(list(indices))
        return [10 * i for i in indices]


def test_getitems_reads_a_batch_at_once() -> None:
    data = Batched()
    assert [b.tolist() for b in DataLoader(data, batch_size=2)] == [
        [0, 10],
        [20, 30],
        [40],
    ]
    assert data.calls == [[0, 1], [2, 3], [4]]
    subset = Subset(data, [4, 3])
    assert [b.tolist() for b in DataLoader(subset, batch_size=2)] == [[40, 30]]
    assert data.calls[-1] == [4, 3]
    workers = DataLoader(Batched(), batch_size=3, num_workers=1)
    assert [b.tolist() for b in workers] == [[0, 10, 20], [30, 40]]

"""torch.utils.data.DataLoader: batches from a dataset, in this process or in worker
processes.

Which indices make a batch is the batch sampler's job (a `BatchSampler` over
`SequentialSampler` or, with `shuffle=True`, `RandomSampler`); turning the samples
into a batch is `collate_fn`'s (`default_collate`, or `default_convert` when
`batch_size=None`). With `num_workers > 0`, each worker process (multiprocessing)
receives lists of indices through its own queue and sends the collated batch back
through one shared queue; the main process hands them out in sampler order. An
IterableDataset is iterated in every worker, each a copy: `get_worker_info()` tells a
worker its id, the number of workers, its seed and its copy of the dataset.
"""

from __future__ import annotations

import itertools
import multiprocessing
import queue
import random
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ...random import manual_seed
from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, draw_seed

__all__ = ["DataLoader", "get_worker_info"]


@dataclass(frozen=True)
class WorkerInfo:
    """What a worker process knows about itself (PyTorch's WorkerInfo)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker process: its WorkerInfo; in the main process: None."""
    return _worker_info


def _check_iterable_options(shuffle: Any, sampler: Any, batch_sampler: Any) -> None:
    for name, value in [
        ("shuffle", shuffle),
        ("sampler", sampler),
        ("batch_sampler", batch_sampler),
    ]:
        if value not in (None, False):
            raise ValueError(
                "DataLoader with IterableDataset: expected unspecified "
                f"{name} option, but got {name}={value}"
            )


def _check_worker_options(
    num_workers: int, timeout: float, persistent_workers: bool, prefetch_factor: Any
) -> None:
    if num_workers < 0:
        raise ValueError(
            "num_workers option should be non-negative; "
            "use num_workers=0 to disable multiprocessing."
        )
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError(
            "prefetch_factor option could only be specified in multiprocessing."
            "let num_workers > 0 to enable multiprocessing, otherwise set "
            "prefetch_factor to None."
        )
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")


class DataLoader:
    """Iterates over `dataset` in batches (PyTorch's arguments and checks;
    `pin_memory` is accepted and does nothing: gradgen has the CPU only)."""

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Iterable[Any] | None = None,
        batch_sampler: Iterable[list[Any]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[Any], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        _check_worker_options(num_workers, timeout, persistent_workers, prefetch_factor)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = (
            2 if prefetch_factor is None and num_workers else prefetch_factor
        )
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            _check_iterable_options(shuffle, sampler, batch_sampler)
        elif sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, "
                    "shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually "
                "exclusive with drop_last"
            )
        if sampler is None and not self._iterable:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None and batch_sampler is None and not self._iterable:
            assert sampler is not None
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._workers: _MultiProcessIterator | None = None  # persistent_workers

    def __getstate__(self) -> dict[str, Any]:
        """What a worker started by `spawn` receives: not the other workers."""
        state = dict(self.__dict__)
        state["_workers"] = None
        return state

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None or (
            self._iterable and self.batch_size is not None
        )

    def _index_sampler(self) -> Iterable[Any]:
        found = self.batch_sampler if self.batch_sampler is not None else self.sampler
        assert found is not None
        return found

    def __len__(self) -> int:
        if self._iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler())  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[Any]:
        if self.num_workers == 0:
            return _single_process_batches(self)
        if not self.persistent_workers:
            return _MultiProcessIterator(self)
        if self._workers is None or self._workers.closed:
            self._workers = _MultiProcessIterator(self)
        else:
            self._workers.start_epoch()
        return self._workers


def _iterable_batches(
    items: Iterator[Any], batch_size: int | None, drop_last: bool
) -> Iterator[list[Any]]:
    """An iterable dataset's samples grouped by `batch_size` (lists)."""
    while True:
        batch = list(itertools.islice(items, batch_size))
        if not batch or (drop_last and len(batch) < (batch_size or 0)):
            return
        yield batch


def _fetches(loader: DataLoader, dataset: Any) -> Iterator[Any]:
    """Every batch (or sample) the loader yields, computed here."""
    collate = loader.collate_fn
    if loader._iterable:
        items = iter(dataset)
        if not loader._auto_collation:
            return (collate(item) for item in items)
        batches = _iterable_batches(items, loader.batch_size, loader.drop_last)
        return (collate(batch) for batch in batches)
    if loader._auto_collation:
        return (
            collate(_samples(dataset, indices)) for indices in loader._index_sampler()
        )
    return (collate(dataset[i]) for i in loader._index_sampler())


def _samples(dataset: Any, indices: list[Any]) -> list[Any]:
    """The samples of one batch: the dataset's `__getitems__` when it has one (a
    dataset that reads a batch at once), else one `dataset[i]` each."""
    getitems = getattr(dataset, "__getitems__", None)
    if callable(getitems):
        return getitems(indices)  # type: ignore[no-any-return]
    return [dataset[i] for i in indices]


def _single_process_batches(loader: DataLoader) -> Iterator[Any]:
    yield from _fetches(loader, loader.dataset)


# -- worker processes --------------------------------------------------------------------


@dataclass
class _WorkerError:
    """An exception raised in a worker, sent to the main process to raise there."""

    worker_id: int
    error: BaseException
    text: str

    def reraise(self) -> None:
        message = (
            f"Caught {type(self.error).__name__} in DataLoader worker process "
            f"{self.worker_id}.\nOriginal {self.text}"
        )
        try:
            replacement = type(self.error)(message)
        except Exception:
            replacement = RuntimeError(message)
        raise replacement


class _Exhausted:
    """A worker's answer once its copy of an iterable dataset has no more batches."""


def _worker_fetch(loader: DataLoader, dataset: Any, task: Any, stream: Any) -> Any:
    if loader._iterable:
        return next(stream, _Exhausted())
    if loader._auto_collation:
        return loader.collate_fn(_samples(dataset, task))
    return loader.collate_fn(dataset[task])


def _worker_loop(
    loader: DataLoader,
    worker_id: int,
    seed: int,
    tasks: Any,
    results: Any,
) -> None:
    """A worker process: seed, run worker_init_fn, then answer `(epoch, number, task)`
    messages until None (a task of a new epoch restarts an iterable dataset)."""
    global _worker_info
    manual_seed(seed)
    random.seed(seed)
    dataset = loader.dataset
    _worker_info = WorkerInfo(worker_id, loader.num_workers, seed, dataset)
    stream: Any = None
    epoch = -1
    error: _WorkerError | None = None
    try:
        if loader.worker_init_fn is not None:
            loader.worker_init_fn(worker_id)
    except Exception as raised:
        error = _WorkerError(worker_id, raised, traceback.format_exc())
    while (message := tasks.get()) is not None:
        task_epoch, number, task = message
        try:
            if error is not None:
                raise error.error
            if loader._iterable and task_epoch != epoch:
                stream, epoch = _fetches(loader, dataset), task_epoch
            answer = _worker_fetch(loader, dataset, task, stream)
        except Exception as raised:
            answer = error or _WorkerError(worker_id, raised, traceback.format_exc())
        results.put((task_epoch, number, answer))
    results.cancel_join_thread()  # the main process stopped reading: exit regardless


class _MultiProcessIterator:
    """Hands tasks to the workers round-robin (at most `prefetch_factor` pending per
    worker) and yields their answers in task order. With `persistent_workers` the
    loader keeps it, and each epoch starts again over the same processes."""

    def __init__(self, loader: DataLoader) -> None:
        self.closed = True  # until the workers exist
        # The loader's facts, not the loader: a persistent loader holds this iterator,
        # and a cycle would leave closing the workers to the garbage collector, which
        # finalizes the queues first.
        self.index_sampler = None if loader._iterable else loader._index_sampler()
        self.num_workers = loader.num_workers
        self.prefetch = loader.num_workers * (loader.prefetch_factor or 2)
        self.timeout = loader.timeout
        self.persistent = loader.persistent_workers
        context = loader.multiprocessing_context
        if context is None or isinstance(context, str):
            context = multiprocessing.get_context(context)
        base_seed = draw_seed(loader.generator)
        self.results = context.Queue()
        self.task_queues = [context.Queue() for _ in range(loader.num_workers)]
        self.workers = [
            context.Process(
                target=_worker_loop,
                args=(loader, i, base_seed + i, self.task_queues[i], self.results),
                daemon=True,
            )
            for i in range(loader.num_workers)
        ]
        for worker in self.workers:
            worker.start()
        self.closed = False
        self.epoch = -1
        self.start_epoch()

    def start_epoch(self) -> None:
        """A new pass over the dataset: fresh sampler order, first tasks sent."""
        self.epoch += 1
        sampler = self.index_sampler
        self.indices = None if sampler is None else iter(sampler)
        self.active = list(range(self.num_workers))
        self.owner: dict[int, int] = {}  # task number -> worker
        self.answers: dict[int, Any] = {}
        self.sent = self.received = 0
        self.turn = 0
        for _ in range(self.prefetch):
            self._send()

    def _send(self) -> None:
        if not self.active:
            return
        if self.indices is not None:
            task = next(self.indices, None)
            if task is None:
                return
        else:
            task = None
        worker = self.active[self.turn % len(self.active)]
        self.turn += 1
        self.task_queues[worker].put((self.epoch, self.sent, task))
        self.owner[self.sent] = worker
        self.sent += 1

    def __iter__(self) -> _MultiProcessIterator:
        return self

    def __next__(self) -> Any:
        while self.received < self.sent:
            answer = self._answer(self.received)
            worker = self.owner.pop(self.received)
            self.received += 1
            if isinstance(answer, _WorkerError):
                self.close()
                answer.reraise()
            if isinstance(answer, _Exhausted):
                if worker in self.active:
                    self.active.remove(worker)
                continue
            self._send()
            return answer
        if not self.persistent:
            self.close()
        raise StopIteration

    def _answer(self, number: int) -> Any:
        """The answer to task `number`, waiting for it (keeping any that come early)."""
        while number not in self.answers:
            try:
                wait = self.timeout or 5.0
                epoch, got, answer = self.results.get(timeout=wait)
            except queue.Empty:
                self._check_alive()
                continue
            if epoch == self.epoch:  # not an answer left from an abandoned epoch
                self.answers[got] = answer
        return self.answers.pop(number)

    def _check_alive(self) -> None:
        if self.timeout:
            self.close()
            raise RuntimeError(f"DataLoader timed out after {self.timeout} seconds")
        dead = [str(w.pid) for w in self.workers if not w.is_alive()]
        if dead:
            self.close()
            raise RuntimeError(
                f"DataLoader worker (pid(s) {', '.join(dead)}) exited unexpectedly"
            )

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for tasks in self.task_queues:
            tasks.put(None)
        for worker in self.workers:
            # at interpreter exit the queues' threads may be gone: do not wait
            worker.join(timeout=0 if sys.is_finalizing() else 5.0)
            if worker.is_alive():
                worker.terminate()
        for tasks in [*self.task_queues, self.results]:
            tasks.cancel_join_thread()
            tasks.close()

    def __del__(self) -> None:
        self.close()

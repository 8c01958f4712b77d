"""Run a function over many items in worker processes, and survive a worker that dies.

`run_all(function, items, workers, initializer=None, on_crash=...)` yields `function(item)` for
every item, in completion order. multiprocessing.Pool loses the tasks of a worker killed by a
signal (the OOM killer; a crash in a parser's C code) and then waits for them forever, which
left `repomap index` hung with its lock held. Here a dead worker breaks the pool
(concurrent.futures' BrokenProcessPool): the items that were in flight are run again one at a
time, each in a fresh process, so the item that kills its process is named (`on_crash(item)`
is yielded for it) and the others are done; the remaining items go on in a new pool.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

CHUNK = 4  # items per task: fewer round trips than one, little to redo after a crash
IN_FLIGHT_PER_WORKER = 2  # tasks queued per worker: none idles, few are redone after a crash


def run_all(
    function: Callable[[Item], Result],
    items: Iterable[Item],
    workers: int,
    *,
    on_crash: Callable[[Item], Result],
    initializer: Callable[[], Any] | None = None,
) -> Iterator[Result]:
    """function(item) for each item, computed in `workers` processes, in completion order."""
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    pending = deque(items)
    while pending:
        suspects: list[Item] = []
        yield from _pooled(function, pending, workers, context, initializer, suspects)
        for item in suspects:  # one of them killed its process: find which, alone
            yield _alone(function, item, context, initializer, on_crash)


def _apply(function: Callable[[Item], Result], chunk: list[Item]) -> list[Result]:
    return [function(item) for item in chunk]


def _pooled(
    function: Callable[[Item], Result],
    pending: deque[Item],
    workers: int,
    context: Any,
    initializer: Callable[[], Any] | None,
    suspects: list[Item],
) -> Iterator[Result]:
    """Take items from `pending` until it is empty or a worker dies; then `suspects` holds the
    items that were in flight and got no result."""
    in_flight: dict[Future[list[Result]], list[Item]] = {}
    with ProcessPoolExecutor(workers, mp_context=context, initializer=initializer) as pool:
        while pending or in_flight:
            while pending and len(in_flight) < workers * IN_FLIGHT_PER_WORKER:
                chunk = [pending.popleft() for _ in range(min(CHUNK, len(pending)))]
                in_flight[pool.submit(_apply, function, chunk)] = chunk
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            broken = False
            for future in done:
                chunk = in_flight.pop(future)
                try:
                    yield from future.result()
                except BrokenProcessPool:
                    suspects.extend(chunk)
                    broken = True
            if broken:  # every other task in flight fails too, or finished just before
                for future, chunk in in_flight.items():
                    try:
                        yield from future.result()
                    except BrokenProcessPool:
                        suspects.extend(chunk)
                return


def _alone(
    function: Callable[[Item], Result],
    item: Item,
    context: Any,
    initializer: Callable[[], Any] | None,
    on_crash: Callable[[Item], Result],
) -> Result:
    with ProcessPoolExecutor(1, mp_context=context, initializer=initializer) as pool:
        try:
            return pool.submit(_apply, function, [item]).result()[0]
        except BrokenProcessPool:
            return on_crash(item)


class Ahead(Iterator[Result]):
    """`results`, taken by a thread as soon as they are ready, up to `limit` before the consumer
    asks for them; `close()` (or leaving a `with` block) stops the thread and closes `results`.

    run_all only hands out new tasks when its consumer asks for a result. The index's writer
    stops asking for 0.3-0.8 s at the end of each batch, while SQLite adds the batch's text to
    FTS5 (without the GIL): both workers then finished their few tasks and sat idle, a tenth of
    a cold run's wall time. Taken ahead, the workers keep extracting meanwhile.
    """

    _END = object()

    def __init__(self, results: Iterator[Result], limit: int) -> None:
        self._results = results
        # results, then _END or a _Raised: no one type
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=limit)
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._feed, name="repomap-ahead", daemon=True)
        self._thread.start()

    def _put(self, item: object) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _feed(self) -> None:
        try:
            for result in self._results:
                if not self._put(result):
                    return
            self._put(self._END)
        except BaseException as error:  # noqa: BLE001 - handed to the consumer, raised there
            self._put(_Raised(error))
        finally:
            close = getattr(self._results, "close", None)
            if close:
                close()  # a generator: shuts its pool down

    def __next__(self) -> Result:
        if self._done:
            raise StopIteration
        item = self._queue.get()
        if item is self._END:
            self._done = True
            raise StopIteration
        if isinstance(item, _Raised):
            self._done = True
            raise item.error
        return item

    def close(self) -> None:
        self._done = True
        self._stop.set()
        self._thread.join()

    def __enter__(self) -> Ahead[Result]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Raised:
    def __init__(self, error: BaseException) -> None:
        self.error = error

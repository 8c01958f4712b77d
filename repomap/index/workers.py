"""Run a function over many items in worker processes, and survive a worker that dies.

`run_all(function, items, workers, initializer=None, on_crash=...)` yields `function(item)` for
every item, in the items' order (but for the items of a dead worker: see below).
multiprocessing.Pool loses the tasks of a worker killed by a signal (the OOM killer; a crash
in a parser's C code) and then waits for them forever, which left `repomap index` hung with
its lock held. Here a dead worker breaks the pool (concurrent.futures' BrokenProcessPool): the
items that were in flight are run again one at a time, each in a fresh process, so the item
that kills its process is named (`on_crash(item)` is yielded for it) and the others are done;
the remaining items go on in a new pool.

Stopping is the parent's job. Workers ignore SIGINT (Ctrl-C reaches the whole process group,
and each worker printed a KeyboardInterrupt traceback) and take SIGTERM's default action (the
pool terminates the survivors of a broken pool with it). When `stop` is set, or the consumer
closes the generator, the pool's processes are killed at once: ProcessPoolExecutor's shutdown
waited for every queued task, and a parent that died of SIGTERM left its workers blocked on
the task queue forever.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import queue
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

# Items per task: fewer round trips than one, little to redo after a crash. 8 rather than 4
# since results come in submission order (ids no longer follow the task size): the parent's
# side of Django's pool 0.41 -> 0.35 s of CPU (16: 0.28 s, with more to redo after a crash).
CHUNK = 8
IN_FLIGHT_PER_WORKER = 2  # tasks queued per worker: none idles, few are redone after a crash
HELD_PER_WORKER = 8  # tasks per worker submitted and not yet yielded (results held for order)
POLL_SECONDS = 0.1  # how soon a thread waiting on workers sees `stop`


def run_all(
    function: Callable[[Item], Result],
    items: Iterable[Item],
    workers: int,
    *,
    on_crash: Callable[[Item], Result],
    initializer: Callable[[], Any] | None = None,
    stop: threading.Event | None = None,
    forked: threading.Event | None = None,
) -> Iterator[Result]:
    """function(item) for each item, computed in `workers` processes, in the items' order (an
    item run again alone after a worker died comes after the others of its pool); setting
    `stop` (from another thread) kills the workers and ends the results early. `forked` is
    set once the first pool's processes are started (or there is none to start)."""
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    start = functools.partial(_start_worker, initializer)
    stop = stop or threading.Event()
    forked = forked or threading.Event()
    pending = deque(items)
    try:
        while pending and not stop.is_set():
            suspects: list[Item] = []
            yield from _pooled(function, pending, workers, context, start, suspects, stop, forked)
            for item in suspects:  # one of them killed its process: find which, alone
                yield from _alone(function, item, context, start, on_crash, stop)
    finally:
        forked.set()  # nothing to start, or it failed: no one waits for it


def _start_worker(initializer: Callable[[], Any] | None) -> None:
    """The parent stops its workers (see the module's docstring); forked workers also inherit
    the parent's Python handlers, which would raise inside a task."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if initializer:
        initializer()


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """End the pool's processes now, so its shutdown() returns at once (ProcessPoolExecutor has
    no public way to do this before Python 3.14's kill_workers()).

    A worker killed while sending a result left the pool's reader thread waiting for the rest
    of it forever, and shutdown() with it (a full disk stopped `repomap index` that way): the
    parent holds the result pipe's write end too, so the read never met its end. Closing the
    parent's copy once the workers are killed ends that read; the pool then shuts down as
    broken."""
    for process in list(pool._processes.values()):
        process.kill()
    pool._result_queue._writer.close()  # type: ignore[attr-defined]


def _apply(function: Callable[[Item], Result], chunk: list[Item]) -> list[Result]:
    return [function(item) for item in chunk]


def _pooled(
    function: Callable[[Item], Result],
    pending: deque[Item],
    workers: int,
    context: Any,
    start: Callable[[], Any],
    suspects: list[Item],
    stop: threading.Event,
    forked: threading.Event,
) -> Iterator[Result]:
    """Take items from `pending` until it is empty, a worker dies or `stop` is set, yielding
    their results in the order they were taken; then `suspects` holds the items that were in
    flight when a worker died and got no result.

    Results come in submission order, not completion order: the index numbers files (and
    their rows) in the order it writes them, and FTS answers tied at a LIMIT are in id order,
    so ids that followed the workers' timing made two runs of one tree answer differently. A
    task finished ahead of an earlier one is held (at most HELD_PER_WORKER per worker), and
    new tasks go out meanwhile, so no worker waits for a slow one."""
    # Submitted and not yet yielded, in submission order (a dict keeps it).
    in_flight: dict[Future[list[Result]], list[Item]] = {}
    running = workers * IN_FLIGHT_PER_WORKER  # tasks running or queued, none idles
    held = workers * HELD_PER_WORKER
    with ProcessPoolExecutor(workers, mp_context=context, initializer=start) as pool:
        try:
            while (pending or in_flight) and not stop.is_set():
                unfinished = [future for future in in_flight if not future.done()]
                while pending and len(unfinished) < running and len(in_flight) < held:
                    chunk = [pending.popleft() for _ in range(min(CHUNK, len(pending)))]
                    try:
                        future = pool.submit(_apply, function, chunk)
                    except BrokenProcessPool:  # a worker died: its task, in flight, says so
                        pending.extendleft(reversed(chunk))
                        break
                    in_flight[future] = chunk
                    unfinished.append(future)
                    forked.set()  # the first submit started every process of the pool
                if not in_flight:  # broken with nothing in flight (an idle worker killed)
                    return  # run_all goes on with a new pool
                head = next(iter(in_flight))
                if not head.done():
                    wait(unfinished, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                    continue
                chunk = in_flight.pop(head)
                try:
                    yield from head.result()
                except BrokenProcessPool:
                    # Every other task in flight fails too, or finished just before.
                    suspects.extend(chunk)
                    while in_flight:
                        future, chunk = next(iter(in_flight.items()))
                        del in_flight[future]
                        try:
                            yield from future.result()
                        except BrokenProcessPool:
                            suspects.extend(chunk)
                    return
        finally:
            if in_flight:  # stopped, or the consumer left: their results are not wanted
                _kill_workers(pool)


def _alone(
    function: Callable[[Item], Result],
    item: Item,
    context: Any,
    start: Callable[[], Any],
    on_crash: Callable[[Item], Result],
    stop: threading.Event,
) -> Iterator[Result]:
    """function(item) in a process of its own, or on_crash(item) if that process dies; nothing
    if `stop` is set first."""
    with ProcessPoolExecutor(1, mp_context=context, initializer=start) as pool:
        future = pool.submit(_apply, function, [item])
        try:
            while not wait([future], timeout=POLL_SECONDS).done:
                if stop.is_set():
                    return
            try:
                result = future.result()[0]
            except BrokenProcessPool:
                result = on_crash(item)
        finally:
            if not future.done():
                _kill_workers(pool)
        yield result


class Ahead(Iterator[Result]):
    """`results`, taken by a thread as soon as they are ready, up to `limit` before the consumer
    asks for them; `close()` (or leaving a `with` block) stops the thread and closes `results`.

    run_all only hands out new tasks when its consumer asks for a result. The index's writer
    stops asking for 0.3-0.8 s at the end of each batch, while SQLite adds the batch's text to
    FTS5 (without the GIL): both workers then finished their few tasks and sat idle, a tenth of
    a cold run's wall time. Taken ahead, the workers keep extracting meanwhile.
    """

    _END = object()

    def __init__(
        self, results: Iterator[Result], limit: int, stop: threading.Event | None = None
    ) -> None:
        self._results = results
        # results, then _END or a _Raised: no one type
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=limit)
        self._stop = stop or threading.Event()  # run_all's `stop`: close() ends its wait too
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

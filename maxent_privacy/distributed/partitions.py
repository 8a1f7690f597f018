"""A component's partitions on the workers, and sums over them added up on the workers.

:class:`Partitions` holds one future per partition (e.g. a :class:`~.cg.Block`, kept on
the worker that made it) and runs functions of the partitions where they lie:

* :meth:`Partitions.map`: ``fn(partition, ...)`` per partition, each result kept on the
  partition's worker (a future);
* :meth:`Partitions.reduce`: the sum over the partitions of vectors each partition
  makes as ``(positions, values, tail)`` (positions among ``size``, possibly repeated;
  ``tail``: ``extra`` numbers, or None). The sum is made on the workers: one chain of
  tasks per worker over the partitions it holds, each step adding one partition's part
  into the worker's dense accumulator; the workers' accumulators are then added (on the
  client when they are small in all, else pairwise on the workers). The client receives
  one vector of ``size + extra`` numbers, or keeps a future of it (``fetch=False``);
* :meth:`Partitions.share`: a vector the partitions' tasks need, sent once to every
  worker (scattered) unless it is small; each partition takes its slice there.

So the client never holds one vector per partition: its memory is one vector over the
component's rows per sum, whatever the number of partitions (a partition's classes may
touch nearly every row: classes are spread over partitions by a hash).

>>> import numpy as np
>>> acc = _into(None, (np.array([0, 2, 0]), np.array([1.0, 2.0, 3.0]), np.array([5.0])), 3, 1)
>>> acc.tolist()
[4.0, 0.0, 2.0, 5.0]
"""

from __future__ import annotations

import numpy as np

__all__ = ["CLIENT_SUM_BYTES", "INLINE_BYTES", "Partitions", "add", "total"]

#: vectors up to this many bytes travel with the tasks; larger ones are scattered first
#: (task messages holding data stay in the scheduler's memory, which is the client's
#: process with a LocalCluster)
INLINE_BYTES = 2**20
#: partial sums up to this many bytes in all are added up on the client (one round
#: trip); larger ones pairwise on the workers
CLIENT_SUM_BYTES = 64 * 2**20


def add(a, b):
    return a + b


def total(client, futures, size: int = 1, fetch: bool = True):
    """The sum of ``futures`` (arrays of ``size`` floats, or numbers); ``fetch=False``:
    added up on the workers, the sum left there (a future)."""
    level = list(futures)
    if fetch and len(level) * size * 8 <= CLIENT_SUM_BYTES:
        return sum(client.gather(level))
    while len(level) > 1:
        nxt = [
            client.submit(add, a, b, pure=False)
            for a, b in zip(level[::2], level[1::2], strict=False)
        ]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0].result() if fetch else level[0]


def _into(acc, part, size: int, extra: int) -> np.ndarray:
    """``acc`` (None: zeros) plus one partition's part ``(positions, values, tail)``."""
    at, values, tail = part
    if acc is None:
        acc = np.zeros(size + extra)
    np.add.at(acc, at, values)
    if extra:
        acc[size:] += tail
    return acc


def _step(fn, size: int, extra: int, acc, partition, *args) -> np.ndarray:
    """One link of a worker's chain: ``fn(partition, *args)`` added into ``acc``."""
    return _into(acc, fn(partition, *args), size, extra)


class Partitions:
    """Futures of a component's partitions on the workers (see the module). ``calls``
    counts the rounds of tasks over the partitions."""

    def __init__(self, client, partitions):
        self.client, self.blocks = client, list(partitions)
        self.calls = 0

    def owners(self) -> list:
        """The worker holding each partition (None when not known: lost, or not done)."""
        who = self.client.who_has(self.blocks)
        return [next(iter(who.get(f.key) or ()), None) for f in self.blocks]

    @staticmethod
    def _where(worker) -> dict:
        """Run where the partition lies (elsewhere if that worker is gone)."""
        return {"workers": [worker], "allow_other_workers": True} if worker else {}

    def share(self, v):
        """``v`` for the partitions' tasks: as it is when small (it travels with the
        tasks), else sent to every worker once (a future)."""
        if isinstance(v, np.ndarray) and v.nbytes <= INLINE_BYTES:
            return v
        return self.client.scatter(v, broadcast=True, hash=False)

    def map(self, fn, *columns, args=()) -> list:
        """``fn(partition, column[i]..., *args)`` for every partition i, kept on the
        partition's worker: a future each."""
        self.calls += 1
        return [
            self.client.submit(fn, b, *(c[i] for c in columns), *args, pure=False,
                               **self._where(w))
            for i, (b, w) in enumerate(zip(self.blocks, self.owners(), strict=True))
        ]  # fmt: skip

    def reduce(self, fn, *columns, args=(), size: int, extra: int = 0, fetch: bool = True):
        """The sum over the partitions of ``fn(partition, column[i]..., *args)`` (parts
        ``(positions, values, tail)``), added up on the workers (see the module): an array
        of ``size + extra`` numbers, or a future of it (``fetch=False``)."""
        self.calls += 1
        chains: dict = {}
        for i, w in enumerate(self.owners()):
            chains.setdefault(w, []).append(i)
        accs = []
        for w, members in chains.items():
            acc = None
            for i in members:
                acc = self.client.submit(
                    _step, fn, size, extra, acc, self.blocks[i], *(c[i] for c in columns),
                    *args, pure=False, **self._where(w),
                )  # fmt: skip
            accs.append(acc)
        return total(self.client, accs, size + extra, fetch)

    def total(self, fn, *columns, args=()):
        """The sum over the partitions of a number ``fn(partition, column[i]..., *args)``."""
        return total(self.client, self.map(fn, *columns, args=args))

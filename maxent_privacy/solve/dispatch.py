"""Running the backends over the parts: closed form, then Newton batches or conic
components, locally or on Dask, with a progress bar; answers of earlier passes reused.

Newton takes many components at once (one batch locally; balanced batches, four per
worker, on Dask); a conic solver takes one component at a time. A component solved in an
earlier pass of the same solve (before forced zeros were found elsewhere) is not solved
again: :class:`Memo` keeps its answer under its global cells.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

from .._validation import progress_bar
from . import tolerances as tl
from .closed_form import ClosedForm, MatrixScaling
from .components import Parts, PartSolution
from .forced_zeros import ForcedZeros
from .newton_backend import Newton, run_job

__all__ = ["Memo", "batches", "runner", "solve_parts"]


class Memo:
    """Per-component answers kept across the passes of one solve.

    An answer is reused for a component of a later pass with the same free cells and the
    same rows: the implied data row dropped per bucket (:mod:`.rank`) can change when
    cells of another component of the bucket are fixed, and the answer's multipliers
    belong to the rows it was solved with."""

    def __init__(self):
        self.store: dict[bytes, tuple[bytes, PartSolution]] = {}

    @staticmethod
    def _rows(red, part) -> bytes:
        """The part's rows by global identity (data block and row, fact rows)."""
        ids = [red.d_block[part.dk], red.d_row[part.dk], part.ek, part.ik]
        return b"|".join(np.asarray(a, dtype=np.int64).tobytes() for a in ids)

    def keep(self, red, solutions) -> None:
        for sol in solutions:
            for piece in sol.split():
                key = red.free[piece.part.cells].tobytes()
                self.store[key] = (self._rows(red, piece.part), piece)

    def lookup(self, red, parts: Parts, comps: np.ndarray) -> tuple[list, np.ndarray]:
        """Answers found for ``comps`` (retargeted to this pass's parts), and the rest."""
        if not self.store:
            return [], comps
        found, rest = [], []
        for k in comps:
            hit = self.store.get(red.free[parts.cells_of(int(k))].tobytes())
            part = parts.take([k]) if hit is not None else None
            if hit is None or hit[0] != self._rows(red, part):
                rest.append(k)
            else:
                found.append(hit[1].retarget(part))
        return found, np.asarray(rest, dtype=int)


def batches(todo: np.ndarray, cells_per_comp: np.ndarray, client) -> list[np.ndarray]:
    """The components to solve, in one batch locally or balanced over Dask workers."""
    if client is None or len(todo) <= 1:
        return [todo]
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    n_batches = min(len(todo), 4 * workers)
    size = cells_per_comp[todo]
    load = np.zeros(n_batches)
    which = np.empty(len(todo), dtype=int)
    for pos in np.argsort(-size, kind="stable"):  # largest first, to the lightest batch
        b = int(np.argmin(load))
        which[pos] = b
        load[b] += size[pos]
    return [todo[which == b] for b in range(n_batches) if (which == b).any()]


@contextmanager
def runner(client):
    """The Dask client to use (``"local"``: a local cluster started and closed here)."""
    if not isinstance(client, str):
        yield client
        return
    from dask.distributed import Client, LocalCluster

    own = Client(LocalCluster(processes=True, threads_per_worker=1))
    try:
        yield own
    finally:
        cluster = own.cluster
        own.close()
        cluster.close()


def _run_newton(red, parts: Parts, todo, backend: Newton, client, progress) -> list:
    t0 = time.perf_counter()
    groups = batches(todo, parts.cells_per_component(), client)
    jobs = [(part, backend.prepare(red, part)) for part in (parts.take(g) for g in groups)]
    cells = sum(len(part.cells) for part, _ in jobs)
    auto = client is not None or cells > tl.PROGRESS_NEWTON_CELLS
    kw = backend.options(t0, local=client is None)
    if client is None:
        outs = []
        with progress_bar(progress, total=len(jobs), desc="maxent", unit="batch", auto=auto) as bar:
            for _, args in jobs:
                outs.append(run_job(args, kw))
                bar.update()
    else:
        outs = _on_dask(client, jobs, kw, (progress, auto))
    elapsed = time.perf_counter() - t0
    done, errors = [], []
    for (part, args), outcome in zip(jobs, outs, strict=True):
        try:
            # each batch's record gets its share (by cells) of the stage's time, so that
            # the records add up to it (Dask runs the batches side by side)
            share = elapsed * len(part.cells) / max(cells, 1)
            done.append(backend.finish(red, part, args, outcome, share))
        except Exception as err:  # noqa: BLE001 - re-raised below, after the others
            errors.append(err)
    if errors:
        first = errors[0]
        if isinstance(first, ForcedZeros):
            first.kept.extend(done)
        raise first
    return done


def _on_dask(client, jobs, kw, show) -> list:
    """The jobs on the Dask ``client``; ``show``: (progress, shown by default)."""
    from dask.distributed import as_completed

    futures = [client.submit(run_job, args, kw, pure=False) for _, args in jobs]
    index = {f.key: i for i, f in enumerate(futures)}
    out = [None] * len(futures)
    progress, auto = show
    bar = progress_bar(progress, total=len(futures), desc="maxent (dask)", unit="batch", auto=auto)
    with bar:
        for fut in as_completed(futures):
            out[index[fut.key]] = fut.result()
            bar.update()
    return out


def _run_conic(red, parts: Parts, todo, backend, progress) -> list:
    """One component at a time; the bar counts cells (a component's time grows with its
    cells) and shows the largest component so far with its iteration count."""
    sizes = parts.cells_per_component()
    n_cells = int(sizes[todo].sum()) if len(todo) else 0
    auto = len(todo) > tl.PROGRESS_COMPONENTS or n_cells > tl.PROGRESS_CELLS
    out, largest = [], -1
    with progress_bar(progress, total=n_cells, desc=backend.name, unit="cell", auto=auto) as bar:
        for k in todo:
            sol = backend.solve(red, parts.take([k]))
            out.append(sol)
            if sizes[k] >= largest:
                largest = int(sizes[k])
                iters = sol.records[0].get("iterations") or 0
                bar.set_postfix_str(f"largest {largest:,} cells, {iters} iterations")
            bar.update(int(sizes[k]))
    return out


def solve_parts(parts: Parts, backend, memo: Memo, client, progress) -> list[PartSolution]:
    """Every component's answer: closed form, memo, then the backend."""
    red = parts.red
    out = []
    closed = np.flatnonzero(parts.closed)
    if len(closed):
        closed_form = MatrixScaling() if red.problem.weighted else ClosedForm()
        out.append(closed_form.solve(red, parts.take(closed)))
    reused, todo = memo.lookup(red, parts, np.flatnonzero(~parts.closed))
    out.extend(reused)
    if not len(todo):
        return out
    if isinstance(backend, Newton):
        out.extend(_run_newton(red, parts, todo, backend, client, progress))
    else:
        out.extend(_run_conic(red, parts, todo, backend, progress))
    return out

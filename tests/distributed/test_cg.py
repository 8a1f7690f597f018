"""The distributed Newton-CG forced on one component split over 4 partitions: the same
posteriors as the in-memory Newton solver, a certificate reduced across partitions (also
with every sum added up and the preconditioner made and applied on the workers, as for
big components); a component whose data force cells to 0 (no presolve on this path) fails
with one clear line and writes nothing."""

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel, SolverFailed
from maxent_privacy.distributed import (
    DaskBucketized,
    build_distributed,
    cg,
    partitions,
    solve_distributed,
)
from maxent_privacy.distributed.cg import Block, _layout, _pairs
from maxent_privacy.distributed.synthetic import QI, SA, write_synthetic

dd = pytest.importorskip("dask.dataframe")


def _build(paths, client):
    rels = [
        DaskBucketized(dd.read_parquet(p), QI, SA, "group", "pid", name=f"release {r + 1}",
                       client=client)
        for r, p in enumerate(paths)
    ]  # fmt: skip
    return build_distributed(rels, client)


def _reference(paths):
    model = MaxEntModel(
        [Bucketized(pd.read_parquet(p), QI, SA, "group", person="pid") for p in paths]
    )
    return model.solve(solver="maxent", progress=False)


@pytest.fixture(scope="module")
def chained(tmp_path_factory):
    """2,000 people over 3 releases chained into one component, and the in-memory answer."""
    folder = tmp_path_factory.mktemp("chained")
    paths = write_synthetic(folder, 2000, releases=3, regions=1, chunk=700, seed=2)
    reference = _reference(paths)
    # every cell positive: the in-memory presolve fixed no cell to 0 (the CG path has none)
    assert (reference.x[reference.fixed] > 0).all()
    assert reference.solver_stats["components"] == 1
    return paths, reference


@pytest.mark.heavy
@pytest.mark.parametrize("where", ["client", "workers"])
def test_distributed_cg_equals_in_memory_newton(client, chained, tmp_path, monkeypatch, where):
    paths, reference = chained
    if where == "workers":  # as for a big component: nothing added up on the client
        monkeypatch.setattr(cg, "CLIENT_BLOCKS_BYTES", 0)
        monkeypatch.setattr(partitions, "CLIENT_SUM_BYTES", 0)
        monkeypatch.setattr(partitions, "INLINE_BYTES", 0)
        monkeypatch.setattr(cg, "INLINE_BYTES", 0)
    s = _build(paths, client)
    result = solve_distributed(s, tmp_path / "out", client=client, max_worker_cells=0,
                               cg_partitions=4)  # fmt: skip
    assert result.solver_stats["newton_cg"] == 1 and result.solver_stats["in_memory"] == 0
    comps = pd.read_parquet(tmp_path / "out" / "components")
    assert comps["method"].tolist() == ["distributed Newton-CG"]
    assert comps["cg_iterations"].iloc[0] > comps["iterations"].iloc[0] > 0

    post = pd.read_parquet(tmp_path / "out" / "posterior").set_index("person").sort_index()
    ref = reference.person_posterior().sort_index()
    ref.columns = [str(c) for c in ref.columns]
    assert post.index.equals(ref.index)
    assert np.abs(post[ref.columns].to_numpy() - ref.to_numpy()).max() <= 1e-9
    cert, theirs = result.certificate, reference.certificate
    assert cert.primal_residual <= 1e-9
    assert abs(cert.entropy - theirs.entropy) <= 1e-9
    assert abs(cert.dual_bound - theirs.dual_bound) <= 1e-9
    assert abs(cert.gap) <= 1e-9


@pytest.mark.heavy
@pytest.mark.parametrize("limit", [partitions.CLIENT_SUM_BYTES, 0])
def test_partition_sums_are_added_up_on_the_workers(client, monkeypatch, limit):
    """Parts (positions, values, tail) of 5 partitions: the sum is the plain sum, whether
    the workers' accumulators are added on the client or on the workers; a vector the
    partitions need is scattered when big, and each takes its slice on the worker."""
    monkeypatch.setattr(partitions, "CLIENT_SUM_BYTES", limit)
    monkeypatch.setattr(partitions, "INLINE_BYTES", 0)
    rng = np.random.default_rng(0)
    data = [rng.integers(0, 50, size=30) for _ in range(5)]
    parts = partitions.Partitions(client, client.scatter(data, hash=False))
    v = parts.share(np.arange(50.0))
    assert not isinstance(v, np.ndarray)  # a future: sent to the workers once
    got = parts.reduce(_part, args=(v,), size=50, extra=1)
    want = np.zeros(51)
    for at in data:
        np.add.at(want, at, np.arange(50.0)[at])
        want[50] += len(at)
    assert np.allclose(got, want)
    assert parts.total(_count) == 150


def _part(at, v):
    return at, v[at], np.array([float(len(at))])


def _count(at):
    return len(at)


@pytest.mark.heavy
def test_forced_zeros_fail_with_a_clear_error(client, tmp_path):
    # buckets of 4 in windows of 8: many values the data force to 0
    paths = write_synthetic(tmp_path / "in", 400, releases=3, regions=1, bucket=4, window=8,
                            chunk=200, seed=3)  # fmt: skip
    reference = _reference(paths)
    assert (reference.x[reference.fixed] == 0).any()
    s = _build(paths, client)
    message = (
        r"^component 0 \(\d+ people, \d+ Relation rows\): Newton with distributed conjugate "
        r"gradients stopped at .*cells going to 0.*no presolve"
    )
    with pytest.raises(SolverFailed, match=message):
        solve_distributed(s, tmp_path / "out", client=client, max_worker_cells=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]  # nothing written


def test_block_products_and_blocks_match_the_hessian():
    """One partition's H v and bucket blocks against H = O P O' formed densely."""
    # release 0: bucket 0 (rows 0, 1: values 0, 1); release 1: bucket 1 (rows 2, 3),
    # bucket 2 (row 4: value 0 only)
    classes = pd.DataFrame({
        "cls": [0, 1, 2], "n": [2, 1, 3], "mask": [0b11, 0b01, 0b11], "comp": 0,
        "b0": [0, 0, 0], "m0": [0b11, 0b11, 0b11], "o0": [0, 0, 0],
        "b1": [1, 2, 1], "m1": [0b11, 0b01, 0b11], "o1": [2, 4, 2],
    })  # fmt: skip
    rows = pd.DataFrame({"row": [0, 1, 2, 3, 4], "bucket": [0, 0, 1, 1, 2], "n": 1})
    block = Block.of(classes, rows["row"].to_numpy(), 2)
    x, _ = block.state(np.array([0.3, -0.2, 0.1, 0.0, 0.4])[block.rows])
    A = np.zeros((5, len(x)))  # O of the module
    A[block.rows[block.row], block.cell] = 1.0
    assert A.sum() == 2 * len(x)  # every class is in both releases
    P = np.diag(x)
    for c in range(3):
        at = np.flatnonzero(block.cls == c)
        P[np.ix_(at, at)] -= np.outer(x[at], x[at]) / block.R[c]
    H = A @ P @ A.T
    v = np.arange(1.0, 6.0)
    assert np.allclose(block.Hv(x, v[block.rows]), (H @ v)[block.rows])
    layout = _layout(rows)
    flat = block.blocks(x, layout)
    for b_, (first, k) in enumerate(zip(layout["first"], layout["k"], strict=True)):
        dense = flat[layout["off"][b_] : layout["off"][b_] + k * k].reshape(k, k)
        assert np.allclose(dense, H[first : first + k, first : first + k])
    first, second = _pairs(np.array([0, 2, 3]))
    assert list(zip(first.tolist(), second.tolist(), strict=True)) == [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),
        (2, 2),
    ]


def test_a_partition_holds_six_bytes_a_cell_and_eight_a_pair():
    """What the workers keep hot for a giant component's whole solve: 32-bit indices, a
    16-bit value code, no per-cell base measure (it is the class size)."""
    classes = pd.DataFrame({
        "cls": [0, 1, 2], "n": [2, 1, 3], "mask": [0b11, 0b01, 0b11], "comp": 0,
        "b0": [0, 0, 0], "m0": [0b11, 0b11, 0b11], "o0": [0, 0, 0],
        "b1": [1, 2, 1], "m1": [0b11, 0b01, 0b11], "o1": [2, 4, 2],
    })  # fmt: skip
    block = Block.of(classes, np.arange(5), 2)
    cells, pairs = len(block.cls), len(block.cell)
    per_cell = block.cls.nbytes + block.s.nbytes
    per_pair = block.cell.nbytes + block.row.nbytes
    assert (cells, pairs) == (5, 10)
    assert per_cell == 6 * cells and per_pair == 8 * pairs
    # the state's log W carries the base measure back: sum_c R_c log W_c at lam = 0
    x, logW = block.state(np.zeros(len(block.rows)))
    assert np.allclose(logW, np.log(block.R * np.array([2, 1, 2])))
    assert np.allclose(np.bincount(block.cls, weights=x), block.R)


def test_dask_counts_what_a_partition_holds():
    from dask.sizeof import sizeof

    classes = pd.DataFrame({
        "cls": [0, 1], "n": [2, 1], "mask": [0b11, 0b01], "comp": 0,
        "b0": [0, 0], "m0": [0b11, 0b11], "o0": [0, 0],
    })  # fmt: skip
    block = Block.of(classes, np.arange(2), 1)
    arrays = [
        block.cls,
        block.starts,
        block.R,
        block.cell,
        block.row,
        block.rows,
        block.cls_id,
        block.s,
    ]
    assert sizeof(block) >= sum(a.nbytes for a in arrays)

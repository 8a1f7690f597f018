"""Presolve's forced-zero rules on pooled releases (solve/flows.py, solve/support.py):
sound on random tiny sequences against brute force over every possible world, and
complete where they claim to be.

Each sequence: 2-4 releases of at most 7 people (person ids, one QI attribute with two
values, 2-3 sensitive values), groups of 2 or 3, people leaving and arriving between
releases. Half are drawn at random, half keep signatures (release 1 in groups of
distinct values; later ones regroup each signature's people so that every group holds
each of its values, duplicates allowed; arrivals join a signature holding their value),
the kind where three releases force zeros together. A *world* assigns every person one
value so that every group publishes exactly its counts; the true values are one.

* **Sound**: a cell presolve fixes at 0 is 0 in every world, and in every feasible table
  of the data rows (the LP relaxation, which is what the solve works on); a cell fixed at
  another value has that value in every world.
* **Complete**: on the pieces the flows decide exactly (:func:`exact_by_flows`: one
  release, or two releases and two values) the flows alone fix every zero of the LP; with
  the support LP on every other piece (its gate off), presolve fixes every LP zero; with
  the gate on, too (measured here on every instance: the gate skips only pieces with a
  positive table). World zeros beyond the LP's are no cell's business: the maximum-entropy
  answer is over the tables, and an odd cycle of "one of these two" groups has fractional
  tables but no world.
"""

import itertools
import time

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from paper_models import three_release_frames

from maxent_privacy import Bucketized, MaxEntModel
from maxent_privacy.solve import support
from maxent_privacy.solve.forced_zeros import max_support
from maxent_privacy.solve.presolve import FixForcedCells

N_SEQUENCES = 320
VALUES = ["a", "b", "c"]


def _split(people: np.ndarray, rng) -> list[np.ndarray]:
    """``people`` (at least 2) cut into groups of 2 or 3, in a random order."""
    people = rng.permutation(people)
    sizes, left = [], len(people)
    while left:
        k = 3 if left in (3, 5) or (left > 5 and rng.random() < 0.5) else 2
        sizes.append(k)
        left -= k
    return np.split(people, np.cumsum(sizes)[:-1])


def _presence(n_people: int, n_rel: int, rng) -> list[np.ndarray]:
    """Who is published in each release: departures and arrivals, at least 2 each time."""
    here = rng.random(n_people) < 0.75
    out = []
    for r in range(n_rel):
        if r:
            leave = here & (rng.random(n_people) < 0.25)
            come = ~here & (rng.random(n_people) < 0.4)
            here = (here & ~leave) | come
        if here.sum() < 2:
            here[rng.choice(n_people, 2, replace=False)] = True
        out.append(np.flatnonzero(here))
    return out


def random_sequence(rng):
    """Random groups of 2 or 3 in each release."""
    n_people, n_rel = int(rng.integers(4, 8)), int(rng.integers(2, 5))
    value = rng.integers(0, int(rng.integers(2, 4)), n_people)
    groups = [_split(p, rng) for p in _presence(n_people, n_rel, rng)]
    return value, groups


def signature_sequence(rng):
    """Signature-keeping groups (see the module docstring)."""
    n_people, n_rel = int(rng.integers(5, 8)), int(rng.integers(3, 5))
    n_val = int(rng.integers(2, 4))
    value = rng.integers(0, n_val, n_people)
    sig: dict[int, tuple] = {}
    present = _presence(n_people, n_rel, rng)
    groups = []
    for r, here in enumerate(present):
        out = []
        new = [p for p in rng.permutation(here) if p not in sig]
        if r:  # arrivals join a signature holding their value, when there is one
            known = sorted(set(sig[p] for p in here if p in sig))
            for p in list(new):
                fits = [s for s in known if value[p] in s]
                if fits:
                    sig[p] = fits[int(rng.integers(len(fits)))]
                    new.remove(p)
            for s in known:
                by = {v: [p for p in rng.permutation(here) if sig.get(p) == s and value[p] == v]
                      for v in s}  # fmt: skip
                k = min(len(m) for m in by.values())
                rows = [[by[v][i] for v in s] for i in range(k)]
                for p in [p for v in s for p in by[v][k:]]:  # extras, up to 3 a group
                    room = [g for g in rows if len(g) < 3]
                    if room:
                        room[int(rng.integers(len(room)))].append(p)
                out += [np.array(g) for g in rows]
        while new:  # the others in groups of distinct values, when they can
            g = []
            for p in list(new):
                if value[p] not in value[g] and len(g) < 3:
                    g.append(p)
                    new.remove(p)
            if len(g) < 2:
                break
            sig.update((p, tuple(sorted(value[g]))) for p in g)
            out.append(np.array(g))
        groups.append(out)
    if sum(len(g) for g in groups) == 0 or any(not g for g in groups):
        return random_sequence(rng)
    return value, groups


def frames_of(value, groups, qi) -> list[pd.DataFrame]:
    out = []
    for release in groups:
        pid = np.concatenate(release)
        g = np.repeat(np.arange(len(release)), [len(m) for m in release])
        s = [VALUES[v] for v in value[pid]]
        out.append(pd.DataFrame({"pid": pid, "q": qi[pid], "s": s, "g": g}))
    return out


def model_of(frames) -> MaxEntModel:
    rels = [Bucketized(f, qi=["q"], sa="s", group="g", person="pid") for f in frames]
    return MaxEntModel(rels)


def worlds(frames, n_people: int) -> np.ndarray:
    """Every world (rows: assignments of a value code to each person 0 .. n-1; people in
    no release get value 0 and count once)."""
    seen = sorted(set().union(*[set(f["pid"]) for f in frames]))
    n_val = len(VALUES)
    grid = np.array(list(itertools.product(range(n_val), repeat=len(seen))), dtype=np.int8)
    ok = np.ones(len(grid), dtype=bool)
    col = {p: i for i, p in enumerate(seen)}
    for f in frames:
        for _, grp in f.groupby("g"):
            members = [col[p] for p in grp["pid"]]
            for v in range(n_val):
                want = int((grp["s"] == VALUES[v]).sum())
                ok &= (grid[:, members] == v).sum(axis=1) == want
    out = np.zeros((int(ok.sum()), n_people), dtype=np.int8)
    out[:, seen] = grid[ok]
    return out


def world_values(model, frames, n_people):
    """(cells positive in some world, the set of values each cell takes over the worlds)."""
    W = worlds(frames, n_people)
    cls = model.structure.person_class
    people = sorted(cls.index)
    cells = zip(model.cells["cls"], model.cells["s"], strict=True)
    key = {(c, v): j for j, (c, v) in enumerate(cells)}
    counts = np.zeros((len(W), model.n_cells))
    for p in people:
        for v in range(len(VALUES)):
            j = key.get((cls[p], VALUES[v]))
            if j is not None:
                counts[:, j] += W[:, p] == v
            else:  # a value outside the person's candidates never appears in a world
                assert not (W[:, p] == v).any()
    return counts


def lp_zeros(model) -> np.ndarray:
    A, b, _ = model.invariant_matrix(drop_redundant=False)
    sup = max_support(sp.csr_array(A), np.asarray(b, float), None, None,
                      np.ones(model.n_cells, dtype=bool))  # fmt: skip
    assert sup is not None
    return ~sup


def presolved(model, **patch):
    """Presolve's fixed values, with the module constants / functions of support.py in
    ``patch`` replaced meanwhile."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in patch.items():
            mp.setattr(support, name, value)
        red, _ = FixForcedCells().apply(model.compile())
    return red


def _never_converges(cls, row_of, R, C, piece, row_piece, k=None, sweeps=None, x=None):
    return np.zeros(int(piece.max(initial=-1)) + 1 if k is None else k, dtype=bool)


def _exact_pieces(model, fixed) -> np.ndarray:
    """Free cells (global) lying in a piece the flows decide exactly."""
    from maxent_privacy.solve.flows import PooledRows

    rows = PooledRows.of(model.structure)
    idx = np.flatnonzero(np.isnan(fixed))
    if not len(idx):
        return idx
    row_of = rows.rows_of(idx)
    piece, _ = support.pieces_of(rows, idx, row_of)
    exact = support.exact_by_flows(piece, row_of, support.value_labels(row_of, len(rows.row_n)))
    return idx[exact[piece]]


def test_rules_are_sound_and_complete_where_claimed():
    rng = np.random.default_rng(2024)
    t0 = time.perf_counter()
    tally = dict(instances=0, lp_zeros=0, support=0, flows_left=0, world_only=0, gate_missed=0)
    while tally["instances"] < N_SEQUENCES:
        kind = tally["instances"] % 2
        value, groups = (signature_sequence if kind else random_sequence)(rng)
        n_people = len(value)
        frames = frames_of(value, groups, rng.integers(0, 2, n_people))
        model = model_of(frames)
        counts = world_values(model, frames, n_people)
        assert len(counts), "the true values are a world"
        in_world = (counts > 0).any(axis=0)
        lp = lp_zeros(model)
        assert not (lp & in_world).any()  # the LP relaxation holds every world
        tally["world_only"] += int((~in_world & ~lp).sum())

        red = presolved(model)  # the default: gated support LP
        fixed = red.fixed
        zero = fixed == 0
        assert not (zero & in_world).any(), "a rule removed a value some world allows"
        assert not (zero & ~lp).any(), "a rule removed a value some table allows"
        pinned = ~np.isnan(fixed)
        assert np.all(np.abs(counts[:, pinned] - fixed[pinned]) < 1e-9)
        tally["gate_missed"] += int((lp & ~zero).sum())

        tally["instances"] += 1
        if not lp.any():
            continue  # nothing to be complete about
        # flows alone (support LP off): complete on the pieces they decide exactly
        flows_only = presolved(model, LP_MAX_CELLS=0).fixed
        assert not (flows_only == 0)[~lp].any()
        exact = _exact_pieces(model, flows_only)
        assert not lp[exact].any(), "a zero left free in a piece the flows decide"
        tally["flows_left"] += int((lp & ~(flows_only == 0)).sum())

        # every non-exact piece through the LP: complete
        full = presolved(model, scaling_converges=_never_converges)
        assert np.array_equal(full.fixed == 0, lp)
        tally["support"] += full.rules["support LP"]
        tally["lp_zeros"] += int(lp.sum())
    elapsed = time.perf_counter() - t0
    print(tally, f"{elapsed:.1f} s")
    assert tally["flows_left"] > 0 and tally["support"] == tally["flows_left"]
    assert tally["gate_missed"] == 0
    assert elapsed < 120  # a budget against a slow rule, loose for loaded CI machines


def test_three_releases_force_what_no_pair_does():
    """The module docstring's example of solve/support.py: P0 holds a in every world; the
    flows alone leave P0's b free, the support LP fixes it."""
    frames = three_release_frames()
    model = model_of(frames)
    counts = world_values(model, frames, 5)
    p0_b = np.flatnonzero(
        (model.cells["cls"] == model.structure.person_class[0]) & (model.cells["s"] == "b")
    )
    assert (counts[:, p0_b] == 0).all()
    assert np.isnan(presolved(model, LP_MAX_CELLS=0).fixed[p0_b]).all()
    red = presolved(model)
    assert (red.fixed[p0_b] == 0).all() and red.rules["support LP"] == 1


def test_a_cut_short_lp_fixes_nothing(monkeypatch):
    """A support LP that does not finish (here: no LP answers) leaves the cells free."""
    frames = three_release_frames()
    model = model_of(frames)
    monkeypatch.setattr(support, "max_support", lambda *a, **k: None)
    red = presolved(model)
    assert red.rules["support LP"] == 0
    assert model.solve().certificate.primal_residual < 1e-8

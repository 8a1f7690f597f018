"""Published tables, acceptance (issue 40): tiny tables against brute force written here.

* random three-way tables (2x2x2, 2x3x2, ...) of 4..7 records published as their three
  two-way margins: the exact (integral) cell bounds equal the per-cell min / max over every
  nonnegative integral table with those margins (enumerated here by a plain recursion);
  the LP bounds equal an LP solved here with scipy's linprog and contain the exact ones;
  the maximum-entropy table equals iterative proportional fitting written here;
* suppressed cells (a rectangle marked "x" in a two-way table with its margins, cells of a
  three-way table with its two-way margins) and a table rounded to base 3: exact bounds
  equal the enumeration over every table consistent with what was published;
* ``model.reconstruction()`` against the same enumerations.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from maxent_privacy import MaxEntModel, Tabulated

NAMES = ("a", "b", "c")


def values_of(shape):
    return [[f"{name}{i}" for i in range(size)] for name, size in zip(NAMES, shape, strict=True)]


def random_table(seed: int, shape, total: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cells = int(np.prod(shape))
    return rng.multinomial(total, rng.dirichlet(np.full(cells, 0.6))).reshape(shape)


def frame_of(counts: np.ndarray, names, values, drop_zero_rows=False) -> pd.DataFrame:
    """A published table: one row per combination of ``names``, the count in 'count'."""
    rows = []
    for index in itertools.product(*(range(len(values[NAMES.index(n)])) for n in names)):
        row = {n: values[NAMES.index(n)][i] for n, i in zip(names, index, strict=True)}
        row["count"] = counts[index]
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[*names, "count"])
    if drop_zero_rows:
        frame = frame[frame["count"] != 0].reset_index(drop=True)
    return frame


def margin(table: np.ndarray, names) -> np.ndarray:
    keep = tuple(NAMES.index(n) for n in names)
    drop = tuple(i for i in range(table.ndim) if i not in keep)
    return table.sum(axis=drop)


PAIRS = (("a", "b"), ("a", "c"), ("b", "c"))


def verified(certificate) -> bool:
    """The certificate's ``verified`` flag (docs/tables.md names its fields; whether they
    are read as attributes or keys is left open)."""
    if isinstance(certificate, dict):
        return bool(certificate["verified"])
    return bool(certificate.verified)


# --- brute force: every integral table with the three two-way margins --------------------


def enumerate_three_way(ab: np.ndarray, ac: np.ndarray, bc: np.ndarray) -> np.ndarray:
    """Every nonnegative integral I x J x K table with these two-way margins, by a plain
    recursion over the cells (each cell at most what its three margins still allow)."""
    shape = (ab.shape[0], ab.shape[1], ac.shape[1])
    cells = list(itertools.product(*(range(s) for s in shape)))
    ab, ac, bc = ab.copy(), ac.copy(), bc.copy()
    current = np.zeros(shape, dtype=int)
    found = []

    def walk(position):
        if position == len(cells):
            if not ab.any() and not ac.any() and not bc.any():
                found.append(current.copy())
            return
        i, j, k = cells[position]
        for v in range(min(ab[i, j], ac[i, k], bc[j, k]) + 1):
            current[i, j, k] = v
            ab[i, j] -= v
            ac[i, k] -= v
            bc[j, k] -= v
            walk(position + 1)
            ab[i, j] += v
            ac[i, k] += v
            bc[j, k] += v
        current[i, j, k] = 0

    walk(0)
    return np.array(found)


def independent_lp_bounds(ab, ac, bc):
    """Per-cell LP bounds of the three-way table with these margins, solved here with
    scipy's linprog (HiGHS): one equality row per margin cell."""
    shape = (ab.shape[0], ab.shape[1], ac.shape[1])
    n = int(np.prod(shape))
    rows, rhs = [], []
    idx = np.arange(n).reshape(shape)
    for (i, j), v in np.ndenumerate(ab):
        row = np.zeros(n)
        row[idx[i, j, :]] = 1
        rows.append(row)
        rhs.append(v)
    for (i, k), v in np.ndenumerate(ac):
        row = np.zeros(n)
        row[idx[i, :, k]] = 1
        rows.append(row)
        rhs.append(v)
    for (j, k), v in np.ndenumerate(bc):
        row = np.zeros(n)
        row[idx[:, j, k]] = 1
        rows.append(row)
        rhs.append(v)
    A, b = np.array(rows), np.array(rhs, dtype=float)
    lower, upper = np.zeros(n), np.zeros(n)
    for t in range(n):
        c = np.zeros(n)
        c[t] = 1
        lo = linprog(c, A_eq=A, b_eq=b, bounds=(0, None), method="highs")
        hi = linprog(-c, A_eq=A, b_eq=b, bounds=(0, None), method="highs")
        assert lo.status == 0 and hi.status == 0
        lower[t], upper[t] = lo.fun, -hi.fun
    return lower.reshape(shape), upper.reshape(shape)


def ipf(ab, ac, bc, support, tol=1e-10, max_sweeps=200_000):
    """Iterative proportional fitting: start uniform (over the cells some real table with
    these margins makes positive; the others are structural zeros, which is where the
    limit of IPF from a uniform start puts them anyway, only after very many sweeps), then
    scale to the ab, ac and bc margins in turn until every margin is within ``tol``."""
    x = support.astype(float)
    for _ in range(max_sweeps):
        for target, axis in ((ab, 2), (ac, 1), (bc, 0)):
            current = x.sum(axis=axis)
            ratio = np.divide(target, current, out=np.zeros_like(current), where=current > 0)
            x = x * np.expand_dims(ratio, axis)
        error = max(
            np.abs(x.sum(axis=2) - ab).max(),
            np.abs(x.sum(axis=1) - ac).max(),
            np.abs(x.sum(axis=0) - bc).max(),
        )
        if error < tol:
            return x
    raise AssertionError(f"IPF did not converge (error {error})")


# --- the package's answers as grids -------------------------------------------------------


def grid(frame: pd.DataFrame, column: str, values) -> np.ndarray:
    """One column of a frame indexed by (a, b, c) (or holding them as columns) as an
    array a x b x c; every combination exactly once."""
    flat = frame.reset_index() if "a" not in frame.columns else frame
    flat = flat.set_index(list(NAMES[: len(values)]))
    assert not flat.index.duplicated().any()
    shape = tuple(len(v) for v in values)
    assert len(flat) == int(np.prod(shape)), (len(flat), shape)
    out = np.zeros(shape)
    for index in itertools.product(*(range(s) for s in shape)):
        key = tuple(values[d][i] for d, i in enumerate(index))
        out[index] = float(flat.loc[key, column])
    return out


def check_against_worlds(model, worlds: np.ndarray, values, total: int, lp=None):
    """Exact bounds equal the min / max over the enumerated ``worlds``; LP bounds (``lp``:
    "equal" or "contain", None: not asked) equal or contain them; then
    :func:`check_reconstruction` (its summary is returned)."""
    low, high = worlds.min(axis=0), worlds.max(axis=0)
    exact = model.bounds(by="cell", exact=True)
    np.testing.assert_array_equal(grid(exact, "lower", values), low)
    np.testing.assert_array_equal(grid(exact, "upper", values), high)
    if lp is not None:
        bounds = model.bounds(by="cell")
        if lp == "equal":
            np.testing.assert_allclose(grid(bounds, "lower", values), low, atol=1e-6)
            np.testing.assert_allclose(grid(bounds, "upper", values), high, atol=1e-6)
        else:
            assert (grid(bounds, "lower", values) <= low + 1e-6).all()
            assert (grid(bounds, "upper", values) >= high - 1e-6).all()
    return check_reconstruction(model, worlds, total)


def check_reconstruction(model, worlds: np.ndarray, total: int):
    """``model.reconstruction()`` against the enumeration of every consistent table."""
    low, high = worlds.min(axis=0), worlds.max(axis=0)
    summary = model.reconstruction()
    assert summary["records"] == total
    assert summary["combinations"] == low.size
    assert summary["certain_records"] == low.sum()
    assert summary["pinned"] == int((low == high).sum())
    assert summary["pinned_positive"] == int(((low == high) & (low >= 1)).sum())
    assert summary["proved"]
    return summary


# --- random three-way tables with their two-way margins -----------------------------------


def three_way_case(shape, seed, total, drop_zero_rows=False):
    table = random_table(seed, shape, total)
    values = values_of(shape)
    ab, ac, bc = (margin(table, p) for p in PAIRS)
    tables = [
        Tabulated(frame_of(m, p, values, drop_zero_rows), qi=list(p), name="".join(p))
        for m, p in zip((ab, ac, bc), PAIRS, strict=True)
    ]
    domains = dict(zip(NAMES, values, strict=True)) if drop_zero_rows else None
    model = MaxEntModel(tables, domains=domains) if domains else MaxEntModel(tables)
    return table, values, (ab, ac, bc), model


def check_three_way(shape, seed, total, drop_zero_rows=False):
    table, values, (ab, ac, bc), model = three_way_case(shape, seed, total, drop_zero_rows)
    worlds = enumerate_three_way(ab, ac, bc)
    assert len(worlds) >= 1
    assert any((w == table).all() for w in worlds)
    low, high = worlds.min(axis=0), worlds.max(axis=0)

    exact = model.bounds(by="cell", exact=True)
    assert list(exact.index.names) == list(NAMES)
    np.testing.assert_array_equal(grid(exact, "lower", values), low)
    np.testing.assert_array_equal(grid(exact, "upper", values), high)
    assert exact["lower_exact"].all() and exact["upper_exact"].all()

    lp_low, lp_high = independent_lp_bounds(ab, ac, bc)
    lp = model.bounds(by="cell")
    got_low, got_high = grid(lp, "lower", values), grid(lp, "upper", values)
    np.testing.assert_allclose(got_low, lp_low, atol=1e-6)
    np.testing.assert_allclose(got_high, lp_high, atol=1e-6)
    assert (got_low <= low + 1e-6).all() and (got_high >= high - 1e-6).all()

    expected = ipf(ab, ac, bc, lp_high > 1e-9)
    result = model.solve()
    np.testing.assert_allclose(grid(result.table(), "count", values), expected, atol=1e-6)
    assert verified(result.certificate)

    check_reconstruction(model, worlds, int(table.sum()))
    return worlds


SHAPES = [(2, 2, 2), (2, 3, 2), (3, 2, 2), (2, 2, 3)]
# 3x3x3: no side of size 2, so the LP of the margins is not integral in general


@pytest.mark.parametrize("seed", range(6))
def test_three_way_margins_seeded(seed):
    rng = np.random.default_rng(seed)
    shape = SHAPES[seed % len(SHAPES)]
    total = int(rng.integers(4, 8))
    check_three_way(shape, seed, total, drop_zero_rows=seed >= 3)


def test_three_way_margins_leave_freedom():
    """A fixed case where the margins do not pin the table: the check above is exercised
    with lower < upper, and with LP bounds strictly wider than the integral ones (the
    three-way margins polytope is not integral)."""
    ab = np.array([[1, 1], [1, 1]])
    ac = np.array([[1, 1], [1, 1]])
    bc = np.array([[1, 1], [1, 1]])
    worlds = enumerate_three_way(ab, ac, bc)
    # the two Latin squares of order 2: x[i, j, k] = 1 where i + j + k is even, or odd
    assert len(worlds) == 2
    lp_low, lp_high = independent_lp_bounds(ab, ac, bc)
    np.testing.assert_allclose(lp_high, np.ones((2, 2, 2)), atol=1e-9)

    values = values_of((2, 2, 2))
    tables = [
        Tabulated(frame_of(m, p, values), qi=list(p), name="".join(p))
        for m, p in zip((ab, ac, bc), PAIRS, strict=True)
    ]
    model = MaxEntModel(tables)
    exact = model.bounds(by="cell", exact=True)
    np.testing.assert_array_equal(grid(exact, "lower", values), worlds.min(axis=0))
    np.testing.assert_array_equal(grid(exact, "upper", values), worlds.max(axis=0))
    np.testing.assert_allclose(grid(model.solve().table(), "count", values), 0.5, atol=1e-6)
    check_reconstruction(model, worlds, 4)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([*SHAPES, (3, 3, 3)]),
    st.integers(0, 2**32 - 1),
    st.integers(4, 7),
    st.booleans(),
)
def test_three_way_margins_hypothesis(shape, seed, total, drop):
    check_three_way(shape, seed, total, drop_zero_rows=drop)


# --- a sensitive attribute: unique_pinned -------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_three_way_with_sensitive_attribute(seed):
    """The same margins with c as the sensitive attribute (tables a x b, a x c, b x c with
    c as ``sa``): the bounds do not change, and ``unique_pinned`` counts the combinations
    pinned at 1 whose QI part (a, b) is pinned at 1 (here: published as 1)."""
    rng = np.random.default_rng(100 + seed)
    shape = SHAPES[seed % len(SHAPES)]
    table = random_table(100 + seed, shape, int(rng.integers(4, 8)))
    values = values_of(shape)
    ab, ac, bc = (margin(table, p) for p in PAIRS)
    tables = [
        Tabulated(frame_of(ab, ("a", "b"), values), qi=["a", "b"], name="ab"),
        Tabulated(frame_of(ac, ("a", "c"), values), qi=["a"], sa="c", name="ac"),
        Tabulated(frame_of(bc, ("b", "c"), values), qi=["b"], sa="c", name="bc"),
    ]
    model = MaxEntModel(tables)
    assert list(model.attributes) == ["a", "b", "c"]
    worlds = enumerate_three_way(ab, ac, bc)
    low, high = worlds.min(axis=0), worlds.max(axis=0)
    summary = check_against_worlds(model, worlds, values, int(table.sum()))
    qi_counts = worlds.sum(axis=3)  # worlds: (world, a, b, c)
    qi_pinned_one = (qi_counts.min(axis=0) == 1) & (qi_counts.max(axis=0) == 1)
    unique = (low == 1) & (high == 1) & qi_pinned_one[:, :, None]
    assert summary["unique_pinned"] == int(unique.sum())


# --- suppressed cells ---------------------------------------------------------------------


def enumerate_with_free_cells(fixed: np.ndarray, free: np.ndarray, cap, check) -> np.ndarray:
    """Every table equal to ``fixed`` outside the ``free`` cells, each free cell any count
    0..cap[cell] (the smallest published margin through that cell), that passes
    ``check``."""
    cells = [tuple(i) for i in np.argwhere(free)]
    found = []
    current = fixed.copy()
    current[free] = 0

    def walk(position):
        if position == len(cells):
            if check(current):
                found.append(current.copy())
            return
        for v in range(int(cap[cells[position]]) + 1):
            current[cells[position]] = v
            walk(position + 1)
        current[cells[position]] = 0

    walk(0)
    return np.array(found)


def suppressed_frame(table, free, names, values, mark="x"):
    frame = frame_of(table, names, values).astype({"count": object})
    for position, index in enumerate(
        itertools.product(*(range(len(values[NAMES.index(n)])) for n in names))
    ):
        if free[index]:
            frame.loc[position, "count"] = mark
    return frame


def two_way_values(shape):
    return [[f"a{i}" for i in range(shape[0])], [f"b{j}" for j in range(shape[1])]]


MARKS = ["x", "", np.nan, " x ", "x"]  # suppression marks: compared after stripping, NaN is ""


@pytest.mark.parametrize("seed", range(5))
def test_suppressed_rectangle_two_way(seed):
    """A 3x4 table with a 2x2 rectangle of cells published as 'x' (or '', NaN, ' x '),
    with both one-way margins: the suppressed cells' intervals from the enumeration of
    every completion."""
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 4, size=(3, 4))
    table[0, 0] = max(table[0, 0], 1)
    rows = rng.choice(3, size=2, replace=False)
    cols = rng.choice(4, size=2, replace=False)
    free = np.zeros(table.shape, dtype=bool)
    free[np.ix_(rows, cols)] = True
    values = two_way_values(table.shape)
    full = suppressed_frame(table, free, ("a", "b"), values, mark=MARKS[seed])
    t_ab = Tabulated(full, qi=["a", "b"], name="a by b")
    t_a = Tabulated(frame_of(table.sum(axis=1), ("a",), values), qi=["a"], name="by a")
    t_b = Tabulated(frame_of(table.sum(axis=0), ("b",), values), qi=["b"], name="by b")
    model = MaxEntModel([t_ab, t_a, t_b])
    assert model.total == table.sum()
    r, c = table.sum(axis=1), table.sum(axis=0)
    worlds = enumerate_with_free_cells(
        table,
        free,
        np.minimum(r[:, None], c[None, :]),
        lambda x: (x.sum(axis=1) == r).all() and (x.sum(axis=0) == c).all(),
    )
    assert any((w == table).all() for w in worlds)
    low, high = worlds.min(axis=0), worlds.max(axis=0)
    # a 2x2 rectangle with its margins is a transportation problem: the LP is integral
    check_against_worlds(model, worlds, values, int(table.sum()), lp="equal")

    # the audit view: one row per published cell of the suppressed table
    audit = model.bounds(by="cell", table=t_ab, protection=2)
    again = model.bounds(by="cell", table=0, protection=2)
    pd.testing.assert_frame_equal(audit, again)
    assert list(audit.index.names) == ["a", "b"]
    np.testing.assert_allclose(grid(audit, "lower", values), low, atol=1e-6)
    np.testing.assert_allclose(grid(audit, "upper", values), high, atol=1e-6)
    np.testing.assert_allclose(grid(audit, "width", values), high - low, atol=1e-6)
    assert np.array_equal(grid(audit, "suppressed", values).astype(bool), free)
    exposed = grid(audit, "exposed", values).astype(bool)
    assert np.array_equal(exposed, free & (high - low < 2))


def test_suppressed_cells_three_way():
    """A 2x2x2 table with four cells suppressed (a = b, any c), published with its a x b
    margin and the margin of c: one degree of freedom is left (the suppressed cells
    trade records between (a0, b0) and (a1, b1) along c)."""
    free = np.zeros((2, 2, 2), dtype=bool)
    free[0, 0, :] = free[1, 1, :] = True
    values = values_of((2, 2, 2))
    for seed in range(50):
        table = random_table(seed, (2, 2, 2), 7)
        ab, c = margin(table, ("a", "b")), margin(table, ("c",))
        cap = np.minimum(ab[:, :, None], c[None, None, :])
        worlds = enumerate_with_free_cells(
            table,
            free,
            cap,
            lambda x, ab=ab, c=c: (x.sum(axis=2) == ab).all() and (x.sum(axis=(0, 1)) == c).all(),
        )
        if (worlds.min(axis=0) < worlds.max(axis=0)).any():
            break
    low, high = worlds.min(axis=0), worlds.max(axis=0)
    assert (low < high).any()  # some freedom left
    assert any((w == table).all() for w in worlds)
    tables = [
        Tabulated(suppressed_frame(table, free, NAMES, values), qi=list(NAMES), name="abc"),
        Tabulated(frame_of(ab, ("a", "b"), values), qi=["a", "b"], name="ab"),
        Tabulated(frame_of(c, ("c",), values), qi=["c"], name="c"),
    ]
    model = MaxEntModel(tables)
    check_against_worlds(model, worlds, values, int(table.sum()), lp="contain")


def test_interval_and_suppressed_counts_two_way():
    """A 3x3 table with one count published as an interval '[1-3]' (both ends included)
    and four suppressed cells, with both margins: every completion enumerated here."""
    table = np.array([[2, 1, 1], [1, 3, 1], [0, 2, 2]])
    values = two_way_values(table.shape)
    frame = frame_of(table, ("a", "b"), values).astype({"count": object})
    free = [(0, 2), (1, 1), (1, 2), (2, 1)]
    frame.loc[1, "count"] = "[1-3]"  # rows are in (a, b) order: row 1 is (a0, b1)
    for i, j in free:
        frame.loc[3 * i + j, "count"] = "x"
    t_ab = Tabulated(frame, qi=["a", "b"], name="a by b")
    r, c = table.sum(axis=1), table.sum(axis=0)
    t_a = Tabulated(frame_of(r, ("a",), values), qi=["a"], name="by a")
    t_b = Tabulated(frame_of(c, ("b",), values), qi=["b"], name="by b")
    model = MaxEntModel([t_ab, t_a, t_b])
    assert model.total == table.sum()
    worlds = []
    for v01, *rest in itertools.product(range(1, 4), *(range(0, 8) for _ in free)):
        x = table.copy()
        x[0, 1] = v01
        for (i, j), v in zip(free, rest, strict=True):
            x[i, j] = v
        if (x.sum(axis=1) == r).all() and (x.sum(axis=0) == c).all():
            worlds.append(x)
    worlds = np.array(worlds)
    low, high = worlds.min(axis=0), worlds.max(axis=0)
    assert any((w == table).all() for w in worlds)
    assert 1 <= low[0, 1] < high[0, 1] <= 3  # the interval cell is not pinned
    check_against_worlds(model, worlds, values, int(table.sum()), lp="equal")


# --- rounded counts -----------------------------------------------------------------------


def round_randomly(counts: np.ndarray, base: int, rng) -> np.ndarray:
    """Random rounding to a multiple of ``base`` (down or up; multiples stay)."""
    down = counts // base * base
    up = np.where(counts % base == 0, counts, down + base)
    return np.where(rng.random(counts.shape) < 0.5, down, up)


@pytest.mark.parametrize("seed", range(4))
def test_rounded_two_way_table(seed):
    """A 2x3 table rounded to base 3 (zeros left unlisted: the published 0 is rounded too),
    the margin of b rounded to base 3, the margin of a exact (it gives the total). Every
    true count lies in max(0, c-2) .. c+2; the enumeration goes over all of them."""
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 5, size=(2, 3))
    values = two_way_values(table.shape)
    published = round_randomly(table, 3, rng)
    published_b = round_randomly(table.sum(axis=0), 3, rng)
    # some unlisted combination (published 0) holds records: the rounded 0 is exercised
    assert ((published == 0) & (table > 0)).any() or (
        (published_b == 0) & (table.sum(axis=0) > 0)
    ).any()
    t_ab = Tabulated(
        frame_of(published, ("a", "b"), values, drop_zero_rows=True),
        qi=["a", "b"],
        rounding=3,
        name="a by b",
    )
    t_b = Tabulated(
        frame_of(published_b, ("b",), values, drop_zero_rows=True), qi=["b"], rounding=3
    )
    t_a = Tabulated(frame_of(table.sum(axis=1), ("a",), values), qi=["a"], name="by a")
    model = MaxEntModel([t_ab, t_b, t_a], domains={"a": values[0], "b": values[1]})
    assert model.total == table.sum()

    r = table.sum(axis=1)
    lo_cell, hi_cell = np.maximum(0, published - 2), published + 2
    lo_b, hi_b = np.maximum(0, published_b - 2), published_b + 2
    worlds = []
    ranges = [range(lo_cell[i], hi_cell[i] + 1) for i in np.ndindex(table.shape)]
    for counts in itertools.product(*ranges):
        x = np.array(counts).reshape(table.shape)
        if (x.sum(axis=1) == r).all() and ((lo_b <= x.sum(axis=0)) & (x.sum(axis=0) <= hi_b)).all():
            worlds.append(x)
    worlds = np.array(worlds)
    assert any((w == table).all() for w in worlds)
    check_against_worlds(model, worlds, values, int(table.sum()), lp="contain")


def test_rounded_three_way_with_exact_margin():
    """A 2x2x2 table rounded to base 3 with its exact a x b margin."""
    rng = np.random.default_rng(7)
    table = random_table(7, (2, 2, 2), 7)
    values = values_of((2, 2, 2))
    published = round_randomly(table, 3, rng)
    ab = margin(table, ("a", "b"))
    assert ((published == 0) & (table > 0)).any()  # an unlisted combination holds records
    tables = [
        Tabulated(
            frame_of(published, NAMES, values, drop_zero_rows=True),
            qi=list(NAMES),
            rounding=3,
            name="abc",
        ),
        Tabulated(frame_of(ab, ("a", "b"), values), qi=["a", "b"], name="ab"),
    ]
    model = MaxEntModel(tables, domains=dict(zip(NAMES, values, strict=True)))
    lo, hi = np.maximum(0, published - 2), published + 2
    # per (a, b) the two counts over c add up to the exact ab margin: choose the first
    choices = [
        [
            (v, ab[i, j] - v)
            for v in range(lo[i, j, 0], hi[i, j, 0] + 1)
            if lo[i, j, 1] <= ab[i, j] - v <= hi[i, j, 1]
        ]
        for i, j in np.ndindex(ab.shape)
    ]
    worlds = [np.array(pick).reshape(table.shape) for pick in itertools.product(*choices)]
    worlds = np.array(worlds)
    assert any((w == table).all() for w in worlds)
    check_against_worlds(model, worlds, values, int(table.sum()))

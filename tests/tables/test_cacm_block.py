"""Published tables, acceptance (issue 40): a census block in the style of Garfinkel, Abowd
and Martindale ("Understanding database reconstruction attacks on public data", CACM
2019): seven people with age, sex, race and marital status; the block's published tables
give counts, mean ages and median ages by sex, race, marital status and sex x race, with
the statistics of one-person cells suppressed and the medians of even-sized rows left out.

The test finds every candidate microdata table (multiset of seven records) consistent
with those tables by its own pruned search, written here (not the package): cell by cell
(the sex x race counts are published), each cell's age multisets from its own count, sum
and median, the last cell of a published sum fixed to what that sum leaves; every
candidate is then checked against every published row. ``model.bounds(by="cell",
exact=True)`` must agree with it: every combination's lower and upper counts are the min
and max over the candidates, and a unique candidate means everything is pinned.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict

import pandas as pd

from maxent_privacy import MaxEntModel, Tabulated

AGES = range(0, 61)
SEXES = ("F", "M")
RACES = ("B", "W")
MARITAL = ("M", "S")  # married, single

# (age, sex, race, marital): two blocks made by the test, both laid out like the paper's
# (three black women, one white woman, one black man, two white men; four married), the
# ages chosen so that every published mean of an odd-sized row is a whole number. The
# first is rebuilt uniquely from its tables; the second is not (seven candidates).
BLOCK = [
    (18, "M", "B", "M"),
    (19, "M", "W", "M"),
    (23, "F", "B", "M"),
    (24, "F", "B", "M"),
    (31, "F", "B", "S"),
    (57, "F", "W", "S"),
    (59, "M", "W", "S"),
]
AMBIGUOUS_BLOCK = [
    (20, "F", "B", "M"),
    (31, "M", "W", "M"),
    (32, "F", "W", "S"),
    (38, "M", "B", "M"),
    (51, "M", "W", "S"),
    (55, "F", "B", "S"),
    (60, "F", "B", "M"),
]

ATTRIBUTES = ("age", "sex", "race", "marital")

# the rows the block publishes: every grouping, each row a dict of conditions
GROUPINGS = [(), ("sex",), ("race",), ("marital",), ("sex", "race")]


def rows_of(grouping):
    """The rows of a grouping: every combination of its attributes' values."""
    values = {"sex": SEXES, "race": RACES, "marital": MARITAL}
    combos = itertools.product(*(values[g] for g in grouping))
    return [dict(zip(grouping, combo, strict=True)) for combo in combos]


def members(records, where):
    return [r for r in records if all(r[ATTRIBUTES.index(k)] == v for k, v in where.items())]


def median_of(ages):
    ages = sorted(ages)
    return ages[len(ages) // 2]


def publish(records, groupings=GROUPINGS):
    """What the block publishes, as (a) the published facts, a list of dicts with
    ``where``, ``count``, ``sum`` (mean x count, None when suppressed) and ``median``
    (None when not published), and (b) the pandas tables an office would print."""
    facts = []
    for grouping in groupings:
        for where in rows_of(grouping):
            ages = [r[0] for r in members(records, where)]
            n = len(ages)
            facts.append(
                {
                    "where": where,
                    "count": n,
                    # one-person rows (and empty ones) keep their statistics secret
                    "sum": sum(ages) if n >= 2 else None,
                    # medians of odd-sized rows only
                    "median": median_of(ages) if n % 2 == 1 and n >= 3 else None,
                }
            )
    tables = []
    for grouping in groupings:
        rows = [f for f in facts if tuple(f["where"]) == grouping]
        qi = list(grouping)
        label = "total" if not grouping else " x ".join(grouping)
        counts = pd.DataFrame(
            [{**f["where"], "count": f["count"]} for f in rows if f["count"] > 0],
            columns=[*qi, "count"],
        )
        tables.append(Tabulated(counts, qi=qi, count="count", name=f"count by {label}"))
        # mean age: the suppressed rows are published as "x"
        means = pd.DataFrame(
            [
                {**f["where"], "age": "x" if f["sum"] is None else f["sum"] / f["count"]}
                for f in rows
                if f["count"] > 0
            ],
            columns=[*qi, "age"],
        )
        if (means["age"] != "x").any():
            tables.append(Tabulated(means, qi=qi, stat="mean", of="age", name=f"mean by {label}"))
        # median age: even-sized (and one-person) rows are left out, as offices do
        medians_frame = pd.DataFrame(
            [{**f["where"], "age": f["median"]} for f in rows if f["median"] is not None],
            columns=[*qi, "age"],
        )
        if len(medians_frame):
            tables.append(
                Tabulated(medians_frame, qi=qi, stat="median", of="age", name=f"median by {label}")
            )
    return facts, tables


# --- the test's own search ------------------------------------------------------------------


def age_tuples(n, total=None, median=None, low=AGES.start, high=AGES.stop - 1):
    """Non-decreasing tuples of n ages in low..high, with this sum and median if given."""
    out = []

    def walk(prefix, start, left):
        k = n - len(prefix)
        if k == 0:
            if (total is None or left == 0) and (median is None or prefix[n // 2] == median):
                out.append(tuple(prefix))
            return
        for age in range(start, high + 1):
            if total is not None and (age * k > left or high * k < left):
                if age * k > left:
                    break
                continue
            if median is not None:
                position = len(prefix)
                if position == n // 2 and age != median:
                    if age > median:
                        break
                    continue
                if position < n // 2 and age > median:
                    break
            walk([*prefix, age], age, None if total is None else left - age)

    walk([], low, total)
    return out


def cell_candidates(n, total=None, median=None):
    """Every multiset of n (age, marital) pairs with these age statistics, as a sorted
    tuple; grouped by the sum of its ages."""
    by_sum = defaultdict(set)
    for ages in age_tuples(n, total, median):
        for labels in itertools.product(MARITAL, repeat=n):
            by_sum[sum(ages)].add(tuple(sorted(zip(ages, labels, strict=True))))
    return by_sum


def satisfies(records, facts):
    for f in facts:
        ages = [r[0] for r in members(records, f["where"])]
        if len(ages) != f["count"]:
            return False
        if f["sum"] is not None and sum(ages) != f["sum"]:
            return False
        if f["median"] is not None and median_of(ages) != f["median"]:
            return False
    return True


def enumerate_blocks(facts):
    """Every multiset of records consistent with the published facts (the test's search).

    The sex x race counts are published, so a candidate is one multiset of (age, marital)
    per sex x race cell. A cell's candidates come from its own published sum and median;
    cells are chosen in turn, and a cell that completes a published sum (sex, race or the
    total) takes only the candidates with the sum that is left. Each full candidate is
    then checked against every published row."""
    cells = list(itertools.product(SEXES, RACES))
    fact_of = {tuple(sorted(f["where"].items())): f for f in facts}

    def fact(**where):
        return fact_of.get(tuple(sorted(where.items())))

    sizes = {c: fact(sex=c[0], race=c[1])["count"] for c in cells}
    candidates = {}
    for c in cells:
        f = fact(sex=c[0], race=c[1])
        candidates[c] = cell_candidates(sizes[c], f["sum"], f["median"]) if sizes[c] else {0: {()}}
    sum_groups = []  # (cells, published sum)
    for f in facts:
        keys = set(f["where"])
        if f["sum"] is not None and keys <= {"sex", "race"}:
            group = [
                c
                for c in cells
                if all(dict(sex=c[0], race=c[1])[k] == v for k, v in f["where"].items())
            ]
            sum_groups.append((group, f["sum"]))

    found = set()
    chosen = {}

    def walk(position):
        if position == len(cells):
            records = [(age, c[0], c[1], marital) for c in cells for age, marital in chosen[c]]
            if satisfies(records, facts):
                found.add(tuple(sorted(records)))
            return
        cell = cells[position]
        done = set(cells[:position])
        need = None
        for group, total in sum_groups:
            if cell in group and set(group) - {cell} <= done:
                left = total - sum(sum(a for a, _ in chosen[c]) for c in group if c != cell)
                if need is not None and need != left:
                    return
                need = left
        pools = [candidates[cell].get(need, ())] if need is not None else candidates[cell].values()
        for pool in pools:
            for option in pool:
                chosen[cell] = option
                walk(position + 1)
        chosen.pop(cell, None)

    walk(0)
    return [Counter(records) for records in found]


# --- the package against the search -----------------------------------------------------------


def normalized_bounds(frame):
    """The bounds frame as {(age, sex, race, marital): (lower, upper)}."""
    flat = frame.reset_index()
    out = {}
    for row in flat.itertuples(index=False):
        row = row._asdict()
        key = (
            int(round(float(row["age"]))),
            str(row["sex"]),
            str(row["race"]),
            str(row["marital"]),
        )
        assert key not in out
        out[key] = (row["lower"], row["upper"], row["lower_exact"], row["upper_exact"])
    return out


def check_block(block, overall=True):
    """``overall``: the block's total row (its count, mean and median age: tables with no
    QI column, ``qi=[]``) is published too; without it the sums by sex still give the
    total and the overall mean, only the overall median is left out."""
    groupings = GROUPINGS if overall else [g for g in GROUPINGS if g]
    facts, tables = publish(block, groupings)
    candidates = enumerate_blocks(facts)
    assert Counter(block) in candidates  # the true block is one of them

    model = MaxEntModel(tables, domains={"age": AGES})
    assert model.total == len(block)
    assert model.n_combinations == len(AGES) * 8
    bounds = normalized_bounds(model.bounds(by="cell", exact=True))
    assert len(bounds) == len(AGES) * 8

    seen = set().union(*candidates)
    for key in itertools.product(AGES, SEXES, RACES, MARITAL):
        lower, upper, lower_exact, upper_exact = bounds[key]
        assert lower_exact and upper_exact, key
        if key in seen:
            counts = [c[key] for c in candidates]
            assert (lower, upper) == (min(counts), max(counts)), (key, lower, upper, counts)
        else:
            assert (lower, upper) == (0, 0), (key, lower, upper)
    return model, candidates


def test_block_is_rebuilt_uniquely():
    """With every table the block publishes, the search finds one candidate: the block
    itself; the package pins every combination and rebuilds every record."""
    model, candidates = check_block(BLOCK, overall=True)
    assert len(candidates) == 1
    summary = model.reconstruction()
    assert summary["records"] == 7
    assert summary["certain_records"] == 7
    assert summary["pinned"] == model.n_combinations
    assert summary["pinned_positive"] == len(set(BLOCK))
    assert summary["proved"]


def test_ambiguous_block_matches_every_candidate():
    """A block its tables do not pin down: several candidates, and the bounds of every
    combination are the min and max over them (some combinations free, some pinned).
    Published without the total row (the tables without QI columns), so the sums by sex
    give the total and the overall median is not published."""
    model, candidates = check_block(AMBIGUOUS_BLOCK, overall=False)
    assert len(candidates) == 7
    keys = set().union(*candidates)
    lowest = {key: min(c[key] for c in candidates) for key in keys}
    highest = {key: max(c[key] for c in candidates) for key in keys}
    assert any(lowest[k] < highest[k] for k in keys)
    summary = model.reconstruction()
    assert summary["records"] == 7
    assert summary["certain_records"] == sum(lowest.values())
    assert summary["pinned"] == model.n_combinations - sum(lowest[k] < highest[k] for k in keys)
    assert summary["pinned_positive"] == sum(lowest[k] == highest[k] >= 1 for k in keys)
    assert summary["proved"]

"""The structure of a model: record classes, cells and data rows, as one documented object.

Every builder returns a :class:`Structure`: :func:`build_single` for one bucketized
release, :func:`maxent_privacy.releases.pooled.build_pooled` for several releases or generalized
ones. The model holds it (``model.structure``); the solver, the results, the metrics and
the rule miner read its public fields, never the model's private state.

On the count scale (DESIGN.md) a *record class* is a set of records that nothing published
or known tells apart, and a *cell* is the variable ``x[j] >= 0``: how many records of a
class hold one sensitive value (and, in pooled releases whose groups are not known, sit in
one group). The data rows, all ``A @ x == b``:

* **class rows** (QI-invariants of Du et al. Eq. 4; One constraints of Wang et al.): the
  value cells of a class add up to its size;
* **shared rows**: QI-invariants of a (QI value, bucket) pair when some class's bucket is
  unknown (a person singled out, Du et al. Figure 4), and the *link* rows of pooled
  releases (placements of a class in the groups of a release add up to its value cell);
* **SA rows**: per bucket and value, the records holding it (SA-invariants, Eq. 5; the
  Relation constraints of pooled releases).

>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> s = model.structure
>>> s.n_cells, len(s.classes), s.n_records
(27, 9, 10)
>>> A, b, rows = s.data_rows(drop_redundant=True)
>>> A.shape, rows["kind"].value_counts().to_dict()    # g + h - 1 rows per bucket
((15, 27), {'QI': 9, 'SA': 6})
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import listed
from ..errors import KnowledgeError

__all__ = ["Structure", "build_single", "remap_matrix"]


class _Made:
    """A frame field of :class:`Structure` set to the frame or to a function making it,
    which is called on the first read (the frame is then kept).

    >>> @dataclass
    ... class Tables:
    ...     frame: pd.DataFrame = _Made()
    >>> t = Tables(lambda: pd.DataFrame({"a": [1, 2]}))
    >>> callable(t.__dict__["_frame"]), len(t.frame), callable(t.__dict__["_frame"])
    (True, 2, False)
    """

    def __set_name__(self, owner, name: str) -> None:
        self.key = "_" + name

    def __get__(self, obj, owner=None) -> pd.DataFrame:
        if obj is None:
            raise AttributeError(self.key[1:])  # no default: the field must be given
        value = obj.__dict__[self.key]
        if not isinstance(value, pd.DataFrame):
            value = obj.__dict__[self.key] = value()
        return value

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.key] = value


@dataclass(eq=False)
class Structure:
    """Record classes, cells and data rows of a model (read-only once built).

    Frames
        ``records``: one row per record (pooled: per person) with the QI columns (and the
        group column for one release): the denominators n(q) of P(s | q).
        ``classes``: one row per record class (QI columns, group, ``n``, ``person``).
        ``cells``: one row per variable (QI columns, group, sensitive value, ``cls``,
        ``n``, ``person``; pooled: ``kind``, "z" for a value cell, "y r<k>:<group>" for a
        placement). ``group_values``: one row per SA row (group, value, ``n``).
        ``shared_table``: one row per shared QI-invariant (QI, group, ``n``).
        ``records``, ``classes``, ``cells`` and ``group_values`` may be given as functions
        making them:
        they are made on first use (pooled releases of millions of people: seconds and
        GBs that solving does not need), then kept.
    Arrays over cells
        ``cell_class`` (class index), ``cell_n`` (base measure: the class size),
        ``cell_shared`` (shared QI-invariant row or -1), ``cell_sa`` (one release: the SA
        row of the cell; None for pooled releases, which use ``sa_matrix``),
        ``placement_of`` (pooled: the value cell a placement cell refines, else -1).
    Arrays over rows
        ``class_n`` (class sizes), ``class_member`` (True when the class's bucket is
        unknown), ``sa_n`` and ``sa_bucket`` (right side and bucket code of each SA row),
        ``sa_has_placement`` (an SA row holding placement cells), ``shared_n``,
        ``sa_release`` (pooled: the release of each SA row, ``group_values["release"]``).
    Other
        ``sa_matrix`` (pooled Relation rows over cells), ``link_matrix`` (pooled link rows,
        right side 0), ``person_class`` (person id -> class index, or None), ``kind``
        ("single" or "pooled").
    Counterfeit records (:mod:`.counterfeits`)
        ``class_phantom``: True for the phantom class of a group's counterfeit records
        (None: no release has any); ``classes`` and ``cells`` then have a ``phantom``
        column, and their QI (and person) cells are missing. Phantom classes come last.
        ``records``, ``person_class`` and ``n_records`` count real people only.
    """

    kind: str
    qi: list
    sa: str
    group: str
    records: pd.DataFrame = _Made()
    classes: pd.DataFrame = _Made()
    cells: pd.DataFrame = _Made()
    group_values: pd.DataFrame = _Made()
    cell_class: np.ndarray
    cell_n: np.ndarray
    class_n: np.ndarray
    class_member: np.ndarray
    sa_n: np.ndarray
    sa_bucket: np.ndarray
    cell_sa: np.ndarray | None
    sa_matrix: sp.csr_array | None
    sa_has_placement: np.ndarray
    cell_shared: np.ndarray
    shared_n: np.ndarray
    shared_table: pd.DataFrame
    link_matrix: sp.csr_array
    placement_of: np.ndarray
    person_class: pd.Series | None
    key_fn: Callable[[], list] = field(repr=False)
    _keys: list | None = field(default=None, repr=False)
    sa_release: np.ndarray | None = None
    class_phantom: np.ndarray | None = None

    @property
    def n_cells(self) -> int:
        """Number of variables."""
        return len(self.cell_class)

    @property
    def n_records(self) -> int:
        """Number of records (pooled releases: of people); counterfeit records not."""
        if self.kind == "pooled":  # one person_class entry per person, records not made
            return len(self.person_class)
        return len(self.records)

    def records_by(self, keys: list) -> pd.Series:
        """How many records (pooled releases: people) each value of ``keys`` has: the
        denominators of P(s | keys). A pooled class's groups across releases ("r1:1, r2:2")
        are a column of the classes only, so those keys are counted there (real people's
        classes only: counterfeits are no one's records)."""
        if set(keys) <= set(self.records.columns):
            return self.records.groupby(keys, sort=True, observed=True).size()
        classes = self.classes[~self.phantom] if self.has_phantoms else self.classes
        return classes.groupby(keys, sort=True, observed=True)["n"].sum()

    @property
    def value_cell(self) -> np.ndarray:
        """True for cells that hold a sensitive value (False for placement cells)."""
        return self.placement_of < 0

    @property
    def has_phantoms(self) -> bool:
        """Whether some class is the phantom class of counterfeit records."""
        return self.class_phantom is not None and bool(self.class_phantom.any())

    @property
    def phantom(self) -> np.ndarray:
        """Per class: True for a phantom class (counterfeit records, no one's)."""
        if self.class_phantom is None:
            return np.zeros(len(self.class_n), dtype=bool)
        return self.class_phantom

    @property
    def phantom_cell(self) -> np.ndarray:
        """Per cell: True for a cell of a phantom class."""
        if self.class_phantom is None:
            return np.zeros(self.n_cells, dtype=bool)
        return self.class_phantom[self.cell_class]

    @property
    def person_cell(self) -> np.ndarray:
        """Value cells of real people: what person-facing outputs read (no placement
        cells, no counterfeit records)."""
        return self.value_cell & ~self.phantom_cell

    def cell_keys(self) -> list[tuple]:
        """One key per cell ``(person or "", ...)`` that names it across rebuilds."""
        if self._keys is None:
            self._keys = self.key_fn()
        return self._keys

    # ------------------------------------------------------------- data rows
    def class_rows(self) -> tuple[sp.csr_array, np.ndarray]:
        """Class rows (QI-invariants / One constraints) over the value cells."""
        n = self.n_cells
        z = self.value_cell
        cols = np.flatnonzero(z)
        A = sp.csr_array(
            (np.ones(len(cols)), (self.cell_class[cols], cols)), shape=(len(self.class_n), n)
        )
        return A, self.class_n

    def shared_rows(self) -> tuple[sp.csr_array, np.ndarray]:
        """Shared QI-invariants of (QI value, bucket) pairs, then the link rows."""
        n = self.n_cells
        has = self.cell_shared >= 0
        cols = np.flatnonzero(has)
        A = sp.csr_array(
            (np.ones(len(cols)), (self.cell_shared[cols], cols)), shape=(len(self.shared_n), n)
        )
        A = sp.vstack([A, sp.csr_array(self.link_matrix)], format="csr")
        b = np.concatenate([self.shared_n, np.zeros(self.link_matrix.shape[0])])
        return A, b

    def sa_rows(self) -> tuple[sp.csr_array, np.ndarray]:
        """SA-invariants (one release) or Relation rows (pooled releases)."""
        if self.cell_sa is None:
            return sp.csr_array(self.sa_matrix), self.sa_n
        n = self.n_cells
        A = sp.csr_array((np.ones(n), (self.cell_sa, np.arange(n))), shape=(len(self.sa_n), n))
        return A, self.sa_n

    def data_rows(
        self, drop_redundant: bool = False
    ) -> tuple[sp.csr_array, np.ndarray, pd.DataFrame]:
        """All data rows as ``(A, b, rows)``: ``A @ x == b`` on the count scale.

        ``rows`` names each row: ``kind`` is ``"QI"`` (a class row), ``"QI (shared)"``,
        ``"link"`` or ``"SA"``. With ``drop_redundant`` the last SA row of every bucket is
        left out (it is implied by the others: g + h - 1 rows, Du et al. Theorem 3).
        """
        A_cls, b_cls = self.class_rows()
        A_sh, b_sh = self.shared_rows()
        A_sa, b_sa = self.sa_rows()
        keep = np.ones(len(b_sa), dtype=bool)
        if drop_redundant and len(b_sa):
            last = (
                pd.Series(np.arange(len(b_sa)))
                .groupby(self.sa_bucket, observed=True)
                .max()
                .to_numpy()
            )
            keep[last] = False
        A = sp.vstack([A_cls, A_sh, A_sa[keep]], format="csr")
        b = np.concatenate([b_cls, b_sh, b_sa[keep]])
        n_link = self.link_matrix.shape[0]
        rows = stack(
            [
                self.classes.assign(kind="QI"),
                self.shared_table.assign(kind="QI (shared)"),
                pd.DataFrame({"kind": ["link"] * n_link}),
                self.group_values.loc[keep].assign(kind="SA"),
            ]
        )
        return A, b, rows


def stack(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """``pd.concat(parts, ignore_index=True)`` without its empty or all-NA entries.

    pandas 2.x warns (a FutureWarning) when an empty part or an all-NA column takes part
    in choosing a column's dtype; such entries add no value, so they are left out and the
    columns put back in the order concat gives (a column no part fills is all NaN).

    >>> a = pd.DataFrame({"x": [1, 2], "p": [None, None]})
    >>> out = stack([a, pd.DataFrame({"x": pd.Series([], dtype=object)}), pd.DataFrame({"y": [3]})])
    >>> out.columns.tolist(), out["x"].tolist()
    (['x', 'p', 'y'], [1.0, 2.0, nan])
    """
    columns = list(dict.fromkeys(c for part in parts for c in part.columns))
    kept = [part.dropna(axis=1, how="all") for part in parts if len(part)]
    if not kept:
        return pd.DataFrame(columns=columns)
    return pd.concat(kept, ignore_index=True).reindex(columns=columns)


# ------------------------------------------------------------ one release
#: names of the structure's own columns that share a frame with the user's QI, sensitive
#: and group columns: the documented columns of ``model.cells`` and ``model.classes``
#: (``n``, ``cls``, ``person``; pooled releases: ``kind``, ``groups``; the data rows'
#: ``kind``) and the estimated count ``x`` of the results' tables, read by these names
#: across the package. A QI, sensitive or group column with one of them would be
#: overwritten by ours (a crash, or, for pooled releases, the sensitive values read as
#: the class sizes): refused in one line. The columns used only while the structure is
#: built are namespaced instead (``_QG``, ``_QG_ROW``, ``_MEMBER``, ``_GS``, ``_COUNT``).
RESERVED = ("n", "cls", "person", "kind", "groups", "x")

#: per (QI value, group): its row number, and the shared QI-invariant a cell counts in
#: (-1: none); per class: True when its bucket is unknown; per published (group, value):
#: its SA row (``cell_sa``). Built next to the user's columns: names no user's column has
_QG, _QG_ROW, _MEMBER, _GS = "__mp_qg", "__mp_qg_row", "__mp_member", "__mp_gs"


def check_column_names(releases, pooled: bool = False) -> None:
    """A one-line ``ReleaseError`` when a release's QI, sensitive or group column has a
    name of :data:`RESERVED` (the person column may have any name); ``pooled``: nor a QI
    column named ``pid`` (the person ids of ``structure.records``, read by that name).

    >>> import pandas as pd
    >>> from maxent_privacy import Bucketized
    >>> frame = pd.DataFrame({"age": [30, 31], "n": ["flu", "hiv"], "g": [1, 1]})
    >>> check_column_names([Bucketized(frame, ["age"], "n", "g")])
    Traceback (most recent call last):
    ...
    maxent_privacy.errors.ReleaseError: the sensitive column is named 'n', a name the \
model uses for its own columns ('n', 'cls', 'person', 'kind', 'groups' or 'x'); rename \
it (frame.rename(columns={'n': 'n_'}))
    """
    from ..errors import ReleaseError

    for rel in releases:
        roles = [(c, "quasi-identifier") for c in rel.qi]
        roles += [(rel.sa, "sensitive"), (rel.group, "group")]
        for column, role in roles:
            taken = RESERVED + (("pid",) if pooled and role == "quasi-identifier" else ())
            if isinstance(column, str) and column in taken:
                raise ReleaseError(
                    f"the {role} column is named {column!r}, a name the model uses for its "
                    f"own columns ({listed(taken)}); rename it "
                    f"(frame.rename(columns={{{column!r}: {column + '_'!r}}}))"
                )


def build_single(release, persons=()) -> Structure:
    """The structure of one bucketized release, with ``persons`` singled out.

    Records nothing tells apart form a class: those with the same QI value in the same
    bucket. A person singled out is a class of one; when their QI value occurs in several
    buckets, which one is theirs is unknown, so their class (and the rest of the records
    with that QI value) has cells in every such bucket, and per bucket a shared
    QI-invariant ties the classes together (Du et al. Section 6, Figure 4).
    """
    from .counterfeits import add_phantoms

    check_column_names([release])
    frame = release.people  # real people (no counterfeits)
    qi, grp, sa = list(release.qi), release.group, release.sa
    qg = frame.groupby(qi + [grp], sort=True, observed=True).size().rename("n").reset_index()
    qg[_QG] = np.arange(len(qg))
    # the published counts: counterfeit records' values too
    counts = (
        release.frame.groupby([grp, sa], sort=True, observed=True)
        .size()
        .rename(_COUNT)
        .reset_index()
    )
    counts[_GS] = np.arange(len(counts))

    classes = qg.assign(person=None, **{_MEMBER: False})
    if persons:
        classes = _person_classes(qg, qi, grp, persons)
    classes = classes.reset_index(drop=True)
    classes["cls"] = np.arange(len(classes))
    cells = _single_cells(classes, qg, counts, qi, grp)
    member = classes[_MEMBER].to_numpy(dtype=bool)
    # shared QI-invariants of the (q, g) pairs used by classes whose bucket is unknown
    qg_row = cells[_QG_ROW].to_numpy()
    used = np.unique(qg_row[qg_row >= 0])
    remap = np.full(len(qg), -1)
    remap[used] = np.arange(len(used))
    n_cells = len(cells)

    def key_fn():
        kind = np.where(member[cells["cls"].to_numpy()], "member", "fixed")
        who = cells["person"].fillna("").astype(str)
        rest = [cells[c] for c in qi] + [cells[grp], cells[sa]]
        return list(zip(who, kind, *rest, strict=True))

    built = Structure(
        kind="single",
        qi=qi,
        sa=sa,
        group=grp,
        records=frame,
        classes=classes[qi + [grp, "n", "person"]].copy(),
        cells=cells[qi + [grp, sa, "cls", "n", "person"]].copy(),
        group_values=counts.rename(columns={_COUNT: "n"}).drop(columns=_GS),
        cell_class=cells["cls"].to_numpy(),
        cell_n=cells["n"].to_numpy(dtype=float),
        class_n=classes["n"].to_numpy(dtype=float),
        class_member=member,
        sa_n=counts[_COUNT].to_numpy(dtype=float),
        sa_bucket=pd.factorize(counts[grp])[0],
        cell_sa=cells[_GS].to_numpy(),
        sa_matrix=None,
        sa_has_placement=np.zeros(len(counts), dtype=bool),
        cell_shared=np.where(qg_row >= 0, remap[np.maximum(qg_row, 0)], -1),
        shared_n=qg["n"].to_numpy(dtype=float)[used],
        shared_table=qg.iloc[used][qi + [grp, "n"]].reset_index(drop=True),
        link_matrix=sp.csr_array((0, n_cells)),
        placement_of=np.full(n_cells, -1),
        person_class=_release_person_class(release, classes),
        key_fn=key_fn,
    )
    return add_phantoms(built, [release])


#: the published count of a (group, value) while the structure is built: a name no
#: user's column has (a column named ``count`` clashed)
_COUNT = "__maxent_count__"


def _single_cells(classes, qg, counts, qi, grp) -> pd.DataFrame:
    """One cell per (class, value of a bucket the class may be in), sorted by class."""
    is_member = classes[_MEMBER].to_numpy(dtype=bool)
    fixed = classes[~is_member].copy()
    fixed[grp] = fixed[grp].astype(qg[grp].dtype)
    member = classes[is_member]
    parts = [
        fixed.drop(columns=[_QG])
        .merge(qg[qi + [grp, _QG]], on=qi + [grp], how="left")
        .merge(counts, on=grp)
    ]
    parts[0][_QG_ROW] = -1
    if len(member):
        m = member.drop(columns=[grp, _QG]).merge(qg[qi + [grp, _QG]], on=qi)
        m = m.merge(counts, on=grp)
        m[_QG_ROW] = m[_QG]
        parts.append(m)
        # a person placed in a known bucket shares that (QI value, bucket) row too
        shared = parts[0][_QG].isin(m[_QG]).to_numpy()
        parts[0].loc[shared, _QG_ROW] = parts[0].loc[shared, _QG]
    cells = pd.concat(parts, ignore_index=True)
    return cells.sort_values(["cls", _GS], kind="stable").reset_index(drop=True)


def _release_person_class(release, classes) -> pd.Series | None:
    """Person id -> class index, for a release with a person column."""
    if release.person is None:
        return None
    frame = release.people
    qi, grp = list(release.qi), release.group
    pid = frame[release.person].to_numpy()
    key = classes.set_index(qi + [grp])["cls"]
    idx = pd.MultiIndex.from_frame(frame[qi + [grp]])
    plain = ~classes[_MEMBER].to_numpy(dtype=bool) & classes["person"].isna().to_numpy()
    cls_of = key[plain].reindex(idx).to_numpy()
    own = classes.dropna(subset=["person"]).set_index("person")["cls"]
    pid_str = pd.Series(pid).astype(str)
    cls_of = np.where(
        pid_str.isin(own.index.astype(str)), pid_str.map(own.rename(index=str)), cls_of
    )
    return pd.Series(cls_of, index=pid)


def _person_classes(qg: pd.DataFrame, qi, grp, persons) -> pd.DataFrame:
    """Classes with every person singled out as a class of one."""
    keys = list(zip(*(qg[c] for c in qi), strict=True))
    by_q: dict[tuple, list[int]] = {}
    for i, k in enumerate(keys):
        by_q.setdefault(k, []).append(i)
    singled = {p.q for p in persons}
    keep = [i for i, k in enumerate(keys) if k not in singled]
    rows = []
    for q in sorted(singled, key=str):
        idx = by_q[q]
        groups = qg[grp].to_numpy()[idx].tolist()
        sizes = qg["n"].to_numpy()[idx].tolist()
        ps = [p for p in persons if p.q == q]
        rows.extend(_classes_of_q(dict(zip(qi, q, strict=True)), grp, groups, sizes, ps))
    extra = pd.DataFrame(rows, columns=list(qg.columns) + ["person", _MEMBER])
    kept = qg.iloc[keep].assign(person=None, **{_MEMBER: False})
    return pd.concat([kept, extra], ignore_index=True)


def _classes_of_q(qd: dict, grp, groups: list, sizes: list, ps: list) -> list[dict]:
    """The classes of one QI value q once the persons ``ps`` with q are singled out."""
    n_q = sum(sizes)
    if len(ps) > n_q:
        shown = ", ".join(f"{a}={v}" for a, v in qd.items())
        raise KnowledgeError(
            f"{len(ps)} persons have {shown} but the release holds {n_q} such records"
        )

    def row(g, n, person, member):
        return {**qd, grp: g, "n": n, "person": person, _MEMBER: member, _QG: -1}

    rows = []
    if len(groups) > 1 and any(p.group is None for p in ps):
        # some person's bucket is unknown: the persons and the rest are members of q
        rows = [row(p.group, 1, p.name, p.group is None) for p in ps]
        if n_q > len(ps):
            rows.append(row(None, n_q - len(ps), None, True))
        return rows
    taken = dict.fromkeys(groups, 0)
    for p in ps:
        g = groups[0] if p.group is None else p.group
        taken[g] += 1
        rows.append(row(g, 1, p.name, False))
    for g, n in zip(groups, sizes, strict=True):
        if n - taken[g] < 0:
            raise KnowledgeError(f"more persons than records in group {g!r}")
        if n - taken[g] > 0:
            rows.append(row(g, n - taken[g], None, False))
    return rows


# ------------------------------------------------------------ carrying facts over
def remap_matrix(old: Structure, new: Structure, old_persons: set) -> sp.csr_array:
    """``T`` with ``old cell = sum of new cells``: facts over ``old`` become ``A @ T``.

    Cells are matched by their keys; a new cell of a person singled out since ``old`` maps
    to the old cell of the records it was split from. A new cell with no old cell (every
    record of that QI value and bucket is a person placed there) is 0 in every feasible
    answer, and old facts ignore it.
    """
    old_keys = old.cell_keys()
    index = {k: i for i, k in enumerate(old_keys)}
    single = old.kind == "single"
    member_q, by_person = set(), index
    if single:  # keys (who, member/fixed, QI..., group, value): a person's kind may change
        k_q = len(old.qi)
        member_q = {k[2 : 2 + k_q] for k in old_keys if k[1] == "member"}
        by_person = {(k[0], *k[2:]): i for i, k in enumerate(old_keys) if k[0]}
    rows, cols = [], []
    for j, key in enumerate(new.cell_keys()):
        who, rest = key[0], key[1:]
        if who in old_persons:
            i = by_person.get((who, *key[2:]) if single else key)
        elif single:
            q = rest[1 : 1 + len(old.qi)]
            i = index.get(("", "member" if q in member_q else "fixed", *rest[1:]))
        else:
            i = index.get(("", *rest))
        if i is not None:
            rows.append(i)
            cols.append(j)
    return sp.csr_array(
        (np.ones(len(rows)), (np.array(rows, dtype=int), np.array(cols, dtype=int))),
        shape=(len(old_keys), new.n_cells),
    )

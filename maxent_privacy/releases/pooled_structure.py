"""Where every construction of pooled releases ends: their :class:`Structure`.

:func:`structure` makes the pooled model's structure from the frames and arrays a
construction made (:mod:`.pooled`: the general and the placed ones; :mod:`.pooled_arrays`:
bucketized releases, with array operations); :func:`z_structure` is its case of value
cells only, and :func:`shown` spells a group label as they all do.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .structure import Structure

__all__ = ["shown", "structure", "z_structure"]


def structure(rels, persons, person_class, frames, rows, A_sa, A_link, sa_has_y, ref):
    """The pooled model's structure (both constructions end here).

    ``frames``: ``make_classes`` and ``make_cells`` (made once, on first use) and the
    arrays ``cell_class``, ``cell_n`` and ``class_n``; ``rows``: ``group_values`` (the
    frame or its maker), ``n_rows`` and the arrays ``sa_n``, ``sa_bucket``, ``sa_release``.
    """
    qi, sa = list(rels[0].qi), rels[0].sa
    make_cells = cache(frames["make_cells"])

    def key_fn():  # (who, QI..., groups, value, kind)
        cells = make_cells()
        split = cells["person"].fillna("").astype(str).to_numpy()
        rest = [cells[c] for c in qi] + [cells["groups"], cells[sa], cells["kind"]]
        return list(zip(split, *rest, strict=True))

    n_cells, n_cls = len(frames["cell_class"]), len(frames["class_n"])
    return Structure(
        kind="pooled",
        qi=qi,
        sa=sa,
        group="groups",
        records=persons,
        classes=frames["make_classes"],
        cells=make_cells,
        group_values=rows["group_values"],
        cell_class=frames["cell_class"],
        cell_n=frames["cell_n"],
        class_n=frames["class_n"],
        class_member=np.zeros(n_cls, dtype=bool),
        sa_n=rows["sa_n"],
        sa_bucket=rows["sa_bucket"],
        cell_sa=None,
        sa_matrix=A_sa,
        sa_has_placement=sa_has_y,
        cell_shared=np.full(n_cells, -1),
        shared_n=np.zeros(0),
        shared_table=pd.DataFrame(columns=qi + ["groups", "n"]),
        link_matrix=A_link,
        placement_of=ref,
        person_class=person_class,
        key_fn=key_fn,
        sa_release=rows["sa_release"],
    )


def shown(g) -> str:
    return str(int(g)) if isinstance(g, float) and g.is_integer() else str(g)


def z_structure(rels, pid, records, codes, frames, rows, A_sa) -> Structure:
    """The structure of pooled releases whose cells are all value (z) cells: no link rows,
    no placements. ``records``: the frame of persons or its maker, ``pid`` its ids."""
    n_cells = len(frames["cell_class"])
    return structure(
        rels,
        persons=records,
        person_class=pd.Series(codes, index=pid.to_numpy()),
        frames=frames,
        rows=rows,
        A_sa=A_sa,
        A_link=sp.csr_array((0, n_cells)),
        sa_has_y=np.zeros(rows["n_rows"], dtype=bool),
        ref=np.full(n_cells, -1),
    )
